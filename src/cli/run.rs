//! `squall run`: the conformance suite against an implementation, with progress, a summary
//! per requirement and the acceptance reports. Exit codes: 0 every judged requirement passes
//! (warnings allowed), 1 some fail or could not be judged, 2 usage or harness error, or a run
//! that judged nothing (returned as `Err`).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context as _};

use squall::iut::Iut;
use squall::report::{write_all, ReportMeta};
use squall::scenario::validate::check_name;
use squall::scenario::Catalogue;

use super::stdout;
use squall::suite::features::features_dir;
use squall::suite::summary::{exit_code, findings, requirement_table};
use squall::suite::{run_suite, CaseRecord, Level, ProfileSelection, Progress, SuiteConfig};

/// The options of `squall run`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// The implementation: `reference`, `reference:<mutant>`, or a command run through `sh -c`.
    #[arg(long, default_value = "reference")]
    pub iut: String,
    /// How much of the IUT contract it follows: wire | events | tasks
    /// (default: tasks for the reference, events for a command).
    #[arg(long)]
    pub level: Option<String>,
    /// The profiles to judge: prd-0006 (the default, the PRD sign-off), prd-0003, seed-001,
    /// seed-002, seed-004, custom, or all. Repeat the flag or separate with commas.
    #[arg(long = "profile", value_name = "PROFILE")]
    pub profiles: Vec<String>,
    /// Only the cases matching a tag expression, e.g. `@REQ-0006-010 and not @should`.
    #[arg(long)]
    pub tags: Option<String>,
    /// Accept a run in which every case is n/a (exit 0 instead of 2).
    #[arg(long)]
    pub allow_empty: bool,
    /// Run production values at this fraction of real time.
    #[arg(long, default_value_t = 0.01)]
    pub time_scale: f64,
    /// The most a case's time scale may be raised to, so that its timing checks can judge the
    /// implementation's measured reaction time (checks that need more are `error`).
    #[arg(long, default_value_t = 1.0)]
    pub max_time_scale: f64,
    /// Where the reports go (default: target/squall/<name>).
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
    /// A name for the implementation in reports (default: derived from --iut).
    #[arg(long)]
    pub name: Option<String>,
    /// The features directory (default: ./features if present, else the built-in features).
    #[arg(long)]
    pub features: Option<PathBuf>,
    /// The scenario catalogue (default: ./scenarios if present, else the built-in one).
    #[arg(long)]
    pub scenarios: Option<PathBuf>,
    /// Cases run side by side (each waits mostly on scaled sleeps).
    #[arg(long, default_value_t = 8, value_parser = super::at_least_one)]
    pub concurrency: usize,
    /// A jitter seed passed to the implementation as SQUALL_SEED, to reproduce a run (by
    /// default it picks its own).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Real seconds an implementation gets per case before it is killed.
    #[arg(long, default_value_t = 60.0)]
    pub case_timeout: f64,
}

pub async fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let iut = parse_iut(&args.iut)?;
    let level = match &args.level {
        Some(text) => Level::parse(text).with_context(|| format!("--level {text}: expected wire, events or tasks"))?,
        None if matches!(iut, Iut::Reference { .. }) => Level::Tasks,
        None => Level::Events,
    };
    if !(args.time_scale > 0.0 && args.time_scale <= 1.0) {
        bail!("--time-scale {}: expected a number in (0, 1]", args.time_scale);
    }
    if !(args.max_time_scale > 0.0 && args.max_time_scale <= 1.0) {
        bail!("--max-time-scale {}: expected a number in (0, 1]", args.max_time_scale);
    }
    let name = args.name.clone().unwrap_or_else(|| default_name(&iut));
    check_name(&name).map_err(|e| anyhow::anyhow!("--name: {e}"))?;
    let report_dir = args.report_dir.clone().unwrap_or_else(|| Path::new("target").join("squall").join(&name));
    let profiles = ProfileSelection::parse(&args.profiles).map_err(|e| anyhow::anyhow!("--profile: {e}"))?;
    let catalogue = Catalogue::from_dir_or_embedded(args.scenarios.as_deref())?;
    let features = features_dir(args.features.as_deref())?;

    let mut config = SuiteConfig::new(iut.clone(), features.path().to_owned(), catalogue);
    config.level = level;
    config.tags = args.tags.clone();
    config.profiles = profiles.clone();
    config.concurrency = args.concurrency.max(1);
    config.seed = args.seed;
    config.time_scale = args.time_scale;
    config.max_time_scale = args.max_time_scale;
    if !(args.case_timeout > 0.0 && args.case_timeout.is_finite()) {
        bail!("--case-timeout {}: expected a positive number of seconds", args.case_timeout);
    }
    config.case_timeout = std::time::Duration::from_secs_f64(args.case_timeout);
    config.progress = Some(progress_printer());
    eprintln!(
        "squall run: {} at level {}, profile {}, features from {}, time scale {}",
        iut.describe(),
        level.as_str(),
        profiles.describe(),
        features.describe(),
        args.time_scale
    );
    let outcome = run_suite(&config).await?;
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[2K");
    }
    eprintln!("squall run: {}", outcome.calibration.summary());
    // The summary is for a person; the reports are written whether or not anyone reads it.
    if !outcome.cases.is_empty() {
        let summary = format!(
            "{}\n{}cases: {} in {:.1} s",
            requirement_table(&outcome).trim_end(),
            findings(&outcome),
            outcome.cases_tally().describe(),
            outcome.duration.as_secs_f64()
        );
        let _ = stdout::line(summary);
    }
    let code = exit_code(&outcome, args.allow_empty)
        .map_err(|e| anyhow::anyhow!("{e} (--level, --tags, --profile, --allow-empty)"))?;
    let meta = ReportMeta {
        name,
        command: iut.describe(),
        run_as: args.iut.trim().to_owned(),
        level,
        time_scale: args.time_scale,
        max_time_scale: args.max_time_scale,
        case_timeout: config.case_timeout,
        concurrency: config.concurrency,
    };
    let written = write_all(&report_dir, &meta, &outcome)?;
    let _ = stdout::line(format_args!(
        "reports: {}",
        written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    ));
    Ok(ExitCode::from(code))
}

fn parse_iut(text: &str) -> anyhow::Result<Iut> {
    match text.trim() {
        "" => bail!("--iut: give `reference` or a command"),
        "reference" => Ok(Iut::Reference { mutant: None }),
        other => match other.strip_prefix("reference:") {
            Some(mutant) => {
                check_mutant(mutant)?;
                Ok(Iut::Reference { mutant: Some(mutant.to_owned()) })
            }
            None => Ok(Iut::Command(other.to_owned())),
        },
    }
}

#[cfg(feature = "reference")]
fn check_mutant(name: &str) -> anyhow::Result<()> {
    use squall_reference::mutants::Mutant;
    if Mutant::parse(name).is_none() {
        let known: Vec<&str> = Mutant::ALL.iter().map(|m| m.name()).collect();
        bail!("--iut reference:{name}: no such mutant; known: {}", known.join(", "));
    }
    Ok(())
}

#[cfg(not(feature = "reference"))]
fn check_mutant(name: &str) -> anyhow::Result<()> {
    bail!("--iut reference:{name}: squall was built without the reference implementation (cargo feature `reference`)")
}

/// `reference`, `reference-<mutant>`, or the command's program name.
fn default_name(iut: &Iut) -> String {
    match iut {
        Iut::Reference { mutant: None } => "reference".to_owned(),
        Iut::Reference { mutant: Some(m) } => format!("reference-{m}"),
        Iut::Command(command) => {
            let program = command.split_whitespace().find(|w| !w.contains('=')).unwrap_or("iut");
            let base = Path::new(program).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let safe: String =
                base.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).collect();
            if safe.is_empty() {
                "iut".to_owned()
            } else {
                safe
            }
        }
    }
}

/// On a terminal, one line rewritten per case; otherwise a plain line per case.
fn progress_printer() -> Progress {
    let done = Arc::new(AtomicUsize::new(0));
    let terminal = std::io::stderr().is_terminal();
    Progress(Arc::new(move |case: &CaseRecord| {
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        let requirement = case.requirements.first().map_or("", String::as_str);
        let mut stderr = std::io::stderr().lock();
        let _ = if terminal {
            write!(
                stderr,
                "\r\x1b[2K[{n:>3}] {:<5} {requirement:<24} {}",
                case.verdict.as_str(),
                case.name.chars().take(70).collect::<String>()
            )
        } else {
            writeln!(stderr, "[{n:>3}] {:<5} {requirement:<24} {}", case.verdict.as_str(), case.name)
        };
        let _ = stderr.flush();
    }))
}
