//! `squall run`: the conformance suite against an implementation, with progress, a summary
//! per requirement and the acceptance reports. Exit codes: 0 every judged requirement passes
//! (warnings allowed), 1 some fail or could not be judged, 2 usage or harness error, or a run
//! that judged nothing (returned as `Err`).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use squall::scenario::validate::check_name;
use squall_suite::iut::{ClockMode, Iut};
use squall_suite::report::{write_all, ReportMeta};

use super::stdout;
use squall::clock::TimeScale;
use squall_suite::settings::{
    Resolved, Source, SuiteSettings, DEFAULT_CASE_TIMEOUT_S, DEFAULT_CONCURRENCY, DEFAULT_HERD, DEFAULT_MAX_TIME_SCALE,
    DEFAULT_TIME_SCALE,
};
use squall_suite::summary::{exit_code, findings, requirement_table};
use squall_suite::{run_suite, CaseRecord, Progress};

/// The options of `squall run`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct RunArgs {
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
    /// The clock an outside implementation's process runs on: `accelerated` (squall's clock,
    /// sped up by 1/time-scale; the client reads SQUALL_TIME_SCALE=1 and runs unmodified),
    /// `scaled` (real time; its adapter scales its waits by SQUALL_TIME_SCALE), or `auto`
    /// (accelerated where squall's clock reaches the client, else scaled).
    #[arg(long, env = "SQUALL_CLOCK", default_value = "auto")]
    pub clock: String,
    /// Start a Python implementation (`--iut "PYTHON SCRIPT [ARG…]"`) warm: one process imports
    /// what the script imports, once, and forks each case's process (docs/iut-contract.md).
    #[arg(long)]
    pub warm: bool,
    /// Run production values at this fraction of real time.
    #[arg(long, default_value_t = DEFAULT_TIME_SCALE)]
    pub time_scale: TimeScale,
    /// The most a case's time scale may be raised to, so that its timing checks can judge the
    /// implementation's measured reaction time (checks that need more are `error`).
    #[arg(long, default_value_t = DEFAULT_MAX_TIME_SCALE)]
    pub max_time_scale: TimeScale,
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
    #[arg(long, default_value_t = DEFAULT_CONCURRENCY, value_parser = super::at_least_one)]
    pub concurrency: usize,
    /// A jitter seed passed to the implementation as SQUALL_SEED, to reproduce a run (by
    /// default it picks its own).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Instances of the implementation each herd case (tagged @herd) runs at once, each at its
    /// own base URL under one run, with SQUALL_CLIENT set to its number (10 to 500).
    #[arg(long, default_value_t = DEFAULT_HERD)]
    pub herd: u32,
    /// Serve the implementation over TLS: HTTP/2 and HTTP/1.1 by ALPN, with a certificate issued
    /// by a test CA generated for the run; the implementation is told to trust it through
    /// SQUALL_CA_FILE, SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS, AWS_CA_BUNDLE and
    /// CURL_CA_BUNDLE (docs/iut-contract.md).
    #[arg(long)]
    pub tls: bool,
    /// Real seconds an implementation gets per case before it is killed.
    #[arg(long, default_value_t = DEFAULT_CASE_TIMEOUT_S)]
    pub case_timeout: f64,
    /// Run only the K-th of N parts of the cases (split by case id), e.g. `--shard 2/4` on the
    /// second of four machines; `squall report merge` joins the shards' reports. A shard with no
    /// case writes an empty report and exits 0.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Run only the case with this id (`squall cases` lists them; each report's provenance gives
    /// the command for each case); repeatable.
    #[arg(long = "case", value_name = "ID")]
    pub cases: Vec<String>,
    /// A waivers file (TOML, docs/reports.md): failed MUST checks it names, with a reason, an
    /// owner and an expiry date, are `waived` — never `pass` — and listed in every report.
    #[arg(long, value_name = "FILE")]
    pub waivers: Option<PathBuf>,
}

impl RunArgs {
    /// The suite settings these flags ask for (resolved, with the environment's, in one place).
    fn settings(&self) -> SuiteSettings {
        let mut settings = SuiteSettings::new(Source::Flags);
        settings.iut = Some(self.iut.clone());
        settings.level = self.level.clone();
        settings.profiles = self.profiles.clone();
        settings.tags = self.tags.clone();
        settings.clock = Some(self.clock.clone());
        settings.time_scale = Some(self.time_scale);
        settings.max_time_scale = Some(self.max_time_scale);
        settings.case_timeout_s = Some(self.case_timeout);
        settings.concurrency = Some(self.concurrency);
        settings.seed = self.seed;
        settings.herd = Some(self.herd);
        settings.tls = self.tls;
        settings.warm = self.warm;
        settings.features = self.features.clone();
        settings.scenarios = self.scenarios.clone();
        settings.shard = self.shard.clone();
        settings.cases = self.cases.clone();
        settings
    }
}

pub(crate) async fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let Resolved { mut config, features } = args.settings().resolve()?;
    let waivers = match &args.waivers {
        Some(path) => {
            let known: Vec<String> =
                squall_suite::cases::from_dir(features.path())?.into_iter().map(|p| p.id).collect();
            squall_suite::waivers::read(path, &known)?
        }
        None => Vec::new(),
    };
    let iut = config.iut.clone();
    let name = args.name.clone().unwrap_or_else(|| default_name(&iut));
    check_name(&name).map_err(|e| anyhow::anyhow!("--name: {e}"))?;
    let report_dir = args.report_dir.clone().unwrap_or_else(|| Path::new("target").join("squall").join(&name));
    config.progress = Some(progress_printer());
    let shard = config.shard.map(|s| format!(", shard {s}")).unwrap_or_default();
    eprintln!(
        "squall run: {} at level {}, profile {}, features from {}, time scale {} ({} clock){shard}",
        iut.describe(),
        config.level.as_str(),
        config.profiles.describe(),
        features.describe(),
        config.time_scale,
        config.clock.as_str()
    );
    let outcome = run_suite(&config).await?;
    let outcome = match args.waivers {
        Some(_) => outcome.waive(&waivers, &squall_suite::waivers::today()),
        None => outcome,
    };
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[2K");
    }
    let calibration = outcome.calibration.summary();
    eprintln!("squall run: {calibration}");
    if let (Some(clock), ClockMode::Auto) = (&outcome.calibration.clock, config.clock) {
        // Said once: the calibration's line names the clock when it measured something.
        if outcome.clock == ClockMode::Scaled && !calibration.contains(clock.as_str()) {
            eprintln!("squall run: --clock auto: the client's clock is {clock}");
        }
    }
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
    // A shard may hold no case of the selection; the merge judges the whole.
    let allow_empty = args.allow_empty || config.shard.is_some();
    let code = match exit_code(&outcome, allow_empty) {
        Err(_) if config.shard.is_some() => 0,
        other => other.map_err(|e| anyhow::anyhow!("{e} (--level, --tags, --profile, --allow-empty)"))?,
    };
    let meta = ReportMeta {
        name,
        command: iut.describe(),
        run_as: args.iut.trim().to_owned(),
        level: config.level,
        time_scale: config.time_scale,
        max_time_scale: config.max_time_scale,
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
