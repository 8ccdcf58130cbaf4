//! Test kit for running the conformance suite itself: a suite config over this repository's
//! features and catalogue, the independent Python implementation as an IUT, several suites at
//! once, and what failed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use futures_util::stream::{self, StreamExt as _};
use squall::iut::Iut;
use squall::scenario::Catalogue;
use squall::suite::{run_suite, ProfileSelection, SuiteConfig, SuiteOutcome, Verdict};

/// Tests that run suites or measure precise timing take turns in this binary; within one such
/// test, suites may run side by side ([`run_side_by_side`]): a verdict must not depend on
/// what else the machine is doing, and those tests show it does not.
pub static ONE_SUITE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Suites of the in-process reference run at once by [`run_side_by_side`]: they mostly wait.
pub const IN_PROCESS_SIDE_BY_SIDE: usize = 4;

/// Suites of an implementation started as processes run at once: each start costs CPU, and a
/// burst of starts holds every client on the machine back for a moment.
pub const PROCESSES_SIDE_BY_SIDE: usize = 2;

/// The requirements the independent implementation warns on (its SHOULD misses: no
/// `x-should-retry`, no in-stream "try again in", `ProviderStreamException`, garbage not
/// retried); it passes every other.
pub const INDEPENDENT_WARNS: [&str; 3] = ["REQ-0006-001", "REQ-0006-002", "REQ-0006-010"];

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

/// The independent implementation spending `overhead` ms of real time of its own before each
/// retry (`"150"`, or `"20-300"` drawn anew each time).
pub fn slow_independent_config(overhead: &str) -> SuiteConfig {
    let command = format!("PRD0006_OVERHEAD_MS={overhead} {}", independent_command(None));
    SuiteConfig { iut: Iut::Command(command), ..independent_config(None) }
}

/// The suite against the independent implementation at the default time scale, fewer
/// processes at once than in-process cases (each costs CPU to start).
pub fn independent_config(bug: Option<&str>) -> SuiteConfig {
    let mut config = config(Iut::Command(independent_command(bug)));
    config.concurrency = 8;
    config
}

/// Run every config's suite: the in-process ones [`IN_PROCESS_SIDE_BY_SIDE`] at a time, then
/// those started as processes [`PROCESSES_SIDE_BY_SIDE`] at a time, each group in the configs'
/// order (put the longest first). Outcomes come in the configs' order; each suite's time and
/// measured reaction go to stderr (shown when a test fails).
pub async fn run_side_by_side(configs: Vec<SuiteConfig>) -> Vec<SuiteOutcome> {
    let (in_process, processes): (Vec<Numbered>, Vec<Numbered>) =
        configs.into_iter().enumerate().partition(|(_, c)| matches!(c.iut, Iut::Reference { .. }));
    let mut outcomes = run_group(in_process, IN_PROCESS_SIDE_BY_SIDE).await;
    outcomes.extend(run_group(processes, PROCESSES_SIDE_BY_SIDE).await);
    outcomes.sort_by_key(|(n, _)| *n);
    outcomes.into_iter().map(|(_, outcome)| outcome).collect()
}

/// A config with its place in the caller's list.
type Numbered = (usize, SuiteConfig);

async fn run_group(configs: Vec<Numbered>, at_once: usize) -> Vec<(usize, SuiteOutcome)> {
    stream::iter(configs)
        .map(|(n, config)| async move {
            let outcome = run_suite(&config).await.expect("the suite runs");
            let slowed = outcome.cases.iter().filter(|c| c.time_scale_note.is_some()).count();
            eprintln!(
                "{:.1} s, {slowed} cases slowed: {} — {}",
                outcome.duration.as_secs_f64(),
                config.iut.describe(),
                outcome.calibration.summary()
            );
            // The slowest cases and why they ran at their scale: where a suite's time went.
            let mut slowest: Vec<_> = outcome.cases.iter().filter_map(|c| Some((c.evidence.duration_ms?, c))).collect();
            slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
            for (ms, case) in slowest.iter().take(3) {
                let note = case.time_scale_note.as_deref().unwrap_or("");
                eprintln!("    {:.1} s, {} at {:?}: {note}", ms / 1000.0, case.name, case.time_scale);
            }
            (n, outcome)
        })
        .buffer_unordered(at_once)
        .collect()
        .await
}

/// Each requirement's verdict.
pub fn verdicts(outcome: &SuiteOutcome) -> Vec<(String, Verdict)> {
    outcome.requirements.iter().map(|r| (r.id.clone(), r.verdict)).collect()
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
