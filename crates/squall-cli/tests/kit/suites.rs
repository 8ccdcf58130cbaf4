//! Test kit for running the conformance suite itself: a suite config over this repository's
//! features and catalogue, the independent Python implementation as an IUT, several suites at
//! once, and what failed.

use std::collections::BTreeSet;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use futures_util::stream::{self, StreamExt as _};
use squall::scenario::Catalogue;
use squall_suite::iut::Iut;
use squall_suite::requirements::ProfileSelection;
use squall_suite::{run_suite, SuiteConfig, SuiteOutcome, Verdict};

/// Suites of the in-process reference run at once by [`run_side_by_side`]: they mostly wait.
pub(crate) const IN_PROCESS_SIDE_BY_SIDE: usize = 4;

/// Suites of an implementation started as processes run at once: each start costs CPU, and a
/// burst of starts holds every client on the machine back for a moment. Three keep the
/// independent implementation's verdicts exact and its suites fastest (docs/history.md).
pub(crate) const PROCESSES_SIDE_BY_SIDE: usize = 3;

/// The requirements the independent implementation warns on (its SHOULD misses: no
/// `x-should-retry`, no in-stream "try again in", `ProviderStreamException`, garbage not
/// retried); it passes every other.
pub(crate) const INDEPENDENT_WARNS: [&str; 3] = ["REQ-0006-001", "REQ-0006-002", "REQ-0006-010"];

/// Cases side by side: they wait on scaled sleeps far more than they compute.
pub(crate) const CONCURRENCY: usize = 16;

/// The repository's root (the tests belong to `crates/squall-cli`, two folders down).
pub(crate) fn root() -> &'static Path {
    static ROOT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        here.canonicalize().unwrap_or(here)
    })
}

/// The suite over this repository's features and catalogue, every profile judged.
pub(crate) fn config(iut: Iut) -> SuiteConfig {
    let catalogue = Catalogue::load_dir(&root().join("scenarios")).expect("catalogue");
    let mut config = SuiteConfig::new(iut, root().join("features"), catalogue);
    config.profiles = ProfileSelection::parse(&["all"]).expect("all");
    config.concurrency = CONCURRENCY;
    config
}

/// The command that runs the independent PRD-0006 implementation (`crates/squall-cli/tests/iut/prd0006`),
/// with a bug switched on.
pub(crate) fn independent_command(bug: Option<&str>) -> String {
    let program: PathBuf = root().join("crates/squall-cli/tests/iut/prd0006");
    let bug = bug.map(|b| format!("PRD0006_BUG={b} ")).unwrap_or_default();
    format!("{bug}{} '{}'", python(), program.display())
}

/// How the tests start Python: the interpreter itself, not a version manager's shim found
/// on `PATH` (pyenv's costs 50 ms of CPU a start), with its compiled modules kept under
/// `target/pycache` even where `PYTHONDONTWRITEBYTECODE` is set (compiling the independent
/// implementation on every start costs as much again). The suites start thousands of Python
/// processes; on 2 cores this halves the CPU they take. A shell command's words.
pub(crate) fn python() -> &'static str {
    static PYTHON: OnceLock<String> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let cache = target_dir().join("pycache");
        format!("PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX='{}' '{}'", cache.display(), python_interpreter())
    })
}

/// The path of the `python3` on `PATH` as it names itself (`sys.executable`; `python3` when it
/// cannot say).
pub(crate) fn python_interpreter() -> &'static str {
    static INTERPRETER: OnceLock<String> = OnceLock::new();
    INTERPRETER.get_or_init(|| {
        let found = Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output();
        match found {
            Ok(out) if out.status.success() && !out.stdout.trim_ascii().is_empty() => {
                String::from_utf8_lossy(out.stdout.trim_ascii()).into_owned()
            }
            _ => "python3".to_owned(),
        }
    })
}

/// Where cargo builds: `CARGO_TARGET_DIR` or this repository's `target/`.
pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("target"))
}

/// The independent implementation spending `overhead` ms of real time of its own before each
/// retry (`"150"`, or `"20-300"` drawn anew each time), started warm ([`independent_warm`]).
pub(crate) fn slow_independent_config(overhead: &str) -> SuiteConfig {
    let command = format!("PRD0006_OVERHEAD_MS={overhead} {}", independent_command(None));
    SuiteConfig { iut: Iut::Command(command), ..independent_warm(None) }
}

/// [`independent_config`] started warm (`--warm`): each case's process is forked from one that
/// imported the implementation. Python's start is most of what these suites cost on 2 cores; the
/// suites of [`independent_config`] show that the cold start gets the same verdicts.
pub(crate) fn independent_warm(bug: Option<&str>) -> SuiteConfig {
    SuiteConfig { warm: true, ..independent_config(bug) }
}

/// The suite against the independent implementation at the default time scale, fewer
/// processes at once than in-process cases (each costs CPU to start).
pub(crate) fn independent_config(bug: Option<&str>) -> SuiteConfig {
    let mut config = config(Iut::Command(independent_command(bug)));
    config.concurrency = 8;
    config
}

/// Run every config's suite: those on the virtual clock [`VIRTUAL_SIDE_BY_SIDE`] at a time, the
/// other in-process ones [`IN_PROCESS_SIDE_BY_SIDE`] at a time, then those started as processes
/// [`PROCESSES_SIDE_BY_SIDE`] at a time, each group in the configs' order (put the longest
/// first). In real time each group's first suite starts alone, the others [`STAGGER`] later.
/// Outcomes come in the configs' order; each suite's time and measured reaction go to stderr
/// (shown when a test fails).
pub(crate) async fn run_side_by_side(configs: Vec<SuiteConfig>) -> Vec<SuiteOutcome> {
    let (virtual_time, real_time): (Vec<Numbered>, Vec<Numbered>) =
        configs.into_iter().enumerate().partition(|(_, c)| c.iut.runs_on_virtual_clock());
    let (in_process, processes): (Vec<Numbered>, Vec<Numbered>) =
        real_time.into_iter().partition(|(_, c)| matches!(c.iut, Iut::Reference { .. }));
    // One group after the other: both real-time groups at once on 2 cores once measured a 150 ms
    // client's reaction 111-523 ms wide, and its timed cases could then not be judged at all.
    let mut outcomes = run_group(virtual_time, VIRTUAL_SIDE_BY_SIDE, Duration::ZERO).await;
    outcomes.extend(run_group(in_process, IN_PROCESS_SIDE_BY_SIDE, STAGGER).await);
    outcomes.extend(run_group(processes, PROCESSES_SIDE_BY_SIDE, STAGGER).await);
    outcomes.sort_by_key(|(n, _)| *n);
    outcomes.into_iter().map(|(_, outcome)| outcome).collect()
}

/// Suites on the virtual clock run at once: each keeps a core busy, and none waits in real time.
pub(crate) const VIRTUAL_SIDE_BY_SIDE: usize = 2;

/// A config with its place in the caller's list.
type Numbered = (usize, SuiteConfig);

/// How long a group's first suite runs alone: each suite measures its client's reaction as it
/// starts, and one measured while the others start too sees the machine at its busiest and
/// runs every timed case slower (docs/history.md).
const STAGGER: Duration = Duration::from_secs(3);

/// Two runs side by side, the second starting [`STAGGER`] after the first (which measures its
/// client's reaction alone first): for a test that compares two suites, both mostly waiting.
pub(crate) async fn staggered<A, B>(first: impl Future<Output = A>, second: impl Future<Output = B>) -> (A, B) {
    let later = async {
        tokio::time::sleep(STAGGER).await;
        second.await
    };
    tokio::join!(first, later)
}

/// Runs a group's suites `at_once` at a time, the first alone for `stagger`.
async fn run_group(configs: Vec<Numbered>, at_once: usize, stagger: Duration) -> Vec<(usize, SuiteOutcome)> {
    stream::iter(configs.into_iter().enumerate())
        .map(|(place, (n, config))| async move {
            if place > 0 && place < at_once {
                tokio::time::sleep(stagger).await;
            }
            (n, run_shown(&config).await)
        })
        .buffer_unordered(at_once)
        .collect()
        .await
}

/// Runs a suite, then writes its time, its measured reaction and its slowest cases to stderr
/// (shown when a test fails): where a suite's time went.
pub(crate) async fn run_shown(config: &SuiteConfig) -> SuiteOutcome {
    let outcome = run_suite(config).await.expect("the suite runs");
    let slowed = outcome.cases.iter().filter(|c| c.time_scale_note.is_some()).count();
    eprintln!(
        "{:.1} s, {slowed} cases slowed: {} — {}",
        outcome.duration.as_secs_f64(),
        config.iut.describe(),
        outcome.calibration.summary()
    );
    let mut slowest: Vec<_> = outcome.cases.iter().filter_map(|c| Some((c.evidence.duration_ms?, c))).collect();
    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (ms, case) in slowest.iter().take(3) {
        let note = case.time_scale_note.as_deref().unwrap_or("");
        eprintln!("    {:.1} s, {} at {:?}: {note}", ms / 1000.0, case.name, case.time_scale);
    }
    outcome
}

/// Each requirement's verdict.
pub(crate) fn verdicts(outcome: &SuiteOutcome) -> Vec<(String, Verdict)> {
    outcome.requirements.iter().map(|r| (r.id.clone(), r.verdict)).collect()
}

/// The requirements that failed or could not be judged.
pub(crate) fn failing(outcome: &SuiteOutcome) -> BTreeSet<String> {
    outcome.requirements.iter().filter(|r| !r.verdict.is_acceptable()).map(|r| r.id.clone()).collect()
}

/// Every failed check and case error outside `expected`, for a message.
pub(crate) fn unexpected_findings(outcome: &SuiteOutcome, expected: &BTreeSet<String>) -> String {
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
