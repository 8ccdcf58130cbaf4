//! `squall soak`: one implementation run many times under a chaos scenario, the distribution
//! judged ([`squall_suite::soak`]), `soak.json` and `soak.md` written. Exit codes: 0 every check
//! holds, 1 some check fails, 2 usage or harness error.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;

use squall::scenario::Catalogue;
use squall_suite::iut::ClockMode;
use squall_suite::settings::{parse_iut, Source, DEFAULT_CASE_TIMEOUT_S, DEFAULT_CONCURRENCY, DEFAULT_TIME_SCALE};
use squall_suite::soak::{report, run_soak, SoakConfig};
use squall_suite::Verdict;

use super::stdout;
use squall::clock::TimeScale;

/// The options of `squall soak`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct SoakArgs {
    /// The implementation: `reference`, `reference:<mutant>`, or a command run through `sh -c`.
    #[arg(long, default_value = "reference")]
    pub iut: String,
    /// The catalogue scenario every run gets; it must have `[chaos]` (e.g. `chaos-30-percent`).
    #[arg(long)]
    pub scenario: String,
    /// How many times the implementation runs.
    #[arg(long, default_value_t = 200, value_parser = super::at_least_one)]
    pub runs: usize,
    /// The soak's seed: run k draws its chaos (and SQUALL_SEED) from seed + k (default: drawn,
    /// and reported).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run production values at this fraction of real time.
    #[arg(long, default_value_t = DEFAULT_TIME_SCALE)]
    pub time_scale: TimeScale,
    /// The clock an outside implementation's process runs on: `scaled`, `accelerated` or `auto`
    /// (as for `squall run`).
    #[arg(long, env = "SQUALL_CLOCK", default_value = "auto")]
    pub clock: String,
    /// `providerRetry.maxRetries` for every run (SQUALL_MAX_RETRIES), and the budget the
    /// predicted success rate assumes (ECN-0003's default: 6).
    #[arg(long, default_value_t = 6)]
    pub max_retries: u32,
    /// Runs side by side.
    #[arg(long, default_value_t = DEFAULT_CONCURRENCY, value_parser = super::at_least_one)]
    pub concurrency: usize,
    /// Real seconds one run gets before it is killed.
    #[arg(long, default_value_t = DEFAULT_CASE_TIMEOUT_S)]
    pub case_timeout: f64,
    /// The scenario catalogue (default: ./scenarios if present, else the built-in one).
    #[arg(long)]
    pub scenarios: Option<PathBuf>,
    /// Where soak.json and soak.md go (default: target/squall/soak-<scenario>).
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
}

pub(crate) async fn soak(args: SoakArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.case_timeout.is_finite() && args.case_timeout > 0.0,
        "--case-timeout {}: real seconds above 0",
        args.case_timeout
    );
    let iut = parse_iut(&args.iut, Source::Flags)?;
    let clock = ClockMode::parse(&args.clock)
        .with_context(|| format!("--clock {}: expected `scaled`, `accelerated` or `auto`", args.clock))?;
    let catalogue = Catalogue::from_dir_or_embedded(args.scenarios.as_deref())?;
    let scenario = catalogue.get(&args.scenario).with_context(|| {
        let chaotic: Vec<&str> = catalogue.iter().filter(|s| s.chaos.is_some()).map(|s| s.name.as_str()).collect();
        format!("--scenario {}: no such scenario in the catalogue (with chaos: {})", args.scenario, chaotic.join(", "))
    })?;
    let config = SoakConfig {
        iut,
        catalogue: catalogue.clone(),
        scenario,
        runs: args.runs,
        seed: args.seed,
        time_scale: args.time_scale,
        clock,
        max_retries: args.max_retries,
        concurrency: args.concurrency,
        case_timeout: Duration::from_secs_f64(args.case_timeout),
        replay: replay_command(&args),
    };
    eprintln!("squall soak: {} runs of {} under `{}`", config.runs, config.iut.describe(), args.scenario);
    let outcome = run_soak(&config).await.map_err(|e| anyhow::anyhow!("--scenario {}: {e}", args.scenario))?;
    let mut summary = format!("seed {}: {} of {} runs ok\n", outcome.seed, outcome.successes, outcome.runs);
    for check in &outcome.checks {
        summary.push_str(&format!("{:5} {}: {}\n", check.verdict.as_str(), check.name, check.observed));
    }
    let _ = stdout::line(summary.trim_end());
    let dir =
        args.report_dir.clone().unwrap_or_else(|| Path::new("target/squall").join(format!("soak-{}", args.scenario)));
    let written = report::write(&dir, &outcome)?;
    let _ = stdout::line(format_args!(
        "reports: {}",
        written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    ));
    Ok(ExitCode::from(if outcome.verdict == Verdict::Fail { 1 } else { 0 }))
}

/// `squall soak` with this soak's flags, less `--runs`, `--seed` and `--report-dir`.
fn replay_command(args: &SoakArgs) -> String {
    let mut command = format!(
        "squall soak --iut {} --scenario {} --time-scale {} --clock {} --max-retries {} --case-timeout {}",
        shell_quote(&args.iut),
        shell_quote(&args.scenario),
        args.time_scale,
        args.clock,
        args.max_retries,
        args.case_timeout
    );
    if let Some(dir) = &args.scenarios {
        command.push_str(&format!(" --scenarios {}", shell_quote(&dir.display().to_string())));
    }
    command
}

/// `text` as one shell word.
fn shell_quote(text: &str) -> String {
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:/=".contains(c)) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}
