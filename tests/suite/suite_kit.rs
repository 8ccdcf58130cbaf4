//! Test kit for running the conformance suite itself: a suite config over this repository's
//! features and catalogue, the independent Python implementation as an IUT, and what failed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use squall::iut::Iut;
use squall::scenario::Catalogue;
use squall::suite::{ProfileSelection, SuiteConfig, SuiteOutcome, Verdict};

/// Suite runs and precise timing tests: one at a time in this binary, so that no verdict
/// depends on what else the two cores are doing.
pub static ONE_SUITE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The time scale for interpreted implementations: a Python request costs a few ms of real
/// time, which at the default 0.01 would read as tenths of a second of policy time.
pub const INTERPRETED_TIME_SCALE: f64 = 0.02;

/// Cases side by side: they wait on scaled sleeps far more than they compute.
pub const CONCURRENCY: usize = 16;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The suite over this repository's features and catalogue, every profile judged.
pub fn config(iut: Iut) -> SuiteConfig {
    let catalogue = Catalogue::load_dir(&root().join("scenarios")).expect("catalogue");
    let mut config = SuiteConfig::new(iut, root().join("features"), catalogue);
    config.profiles = ProfileSelection::parse(&["all"]).expect("all");
    config.concurrency = CONCURRENCY;
    config
}

/// The command that runs the independent PRD-0006 implementation (`tests/iut/prd0006`),
/// with a bug switched on.
pub fn independent_command(bug: Option<&str>) -> String {
    let program: PathBuf = root().join("tests/iut/prd0006");
    let bug = bug.map(|b| format!("PRD0006_BUG={b} ")).unwrap_or_default();
    format!("{bug}python3 '{}'", program.display())
}

/// The suite against the independent implementation at its time scale, fewer processes at
/// once than in-process cases (each costs CPU to start).
pub fn independent_config(bug: Option<&str>) -> SuiteConfig {
    let mut config = config(Iut::Command(independent_command(bug)));
    config.time_scale = INTERPRETED_TIME_SCALE;
    config.concurrency = 8;
    config
}

/// The requirements that failed or could not be judged.
pub fn failing(outcome: &SuiteOutcome) -> BTreeSet<String> {
    outcome.requirements.iter().filter(|r| !r.verdict.is_acceptable()).map(|r| r.id.clone()).collect()
}

/// Every failed check and case error outside `expected`, for a message.
pub fn unexpected_findings(outcome: &SuiteOutcome, expected: &BTreeSet<String>) -> String {
    outcome
        .cases
        .iter()
        .filter(|c| {
            matches!(c.verdict, Verdict::Fail | Verdict::Error) && c.requirements.iter().any(|r| !expected.contains(r))
        })
        .map(|c| {
            let checks: Vec<String> = c
                .findings(Verdict::Fail)
                .map(|k| format!("      {}: expected {}; observed {}", k.name, k.expected, k.observed))
                .collect();
            format!(
                "    {} [{}] {}\n{}",
                c.name,
                c.verdict.as_str(),
                c.error.as_deref().unwrap_or(""),
                checks.join("\n")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
