//! The independent implementation's suites at real time, run side by side by one test
//! (`one_at_a_time::independent_suites`): the correct one; its twins that spend 50, 150 and
//! 300 ms of their own before each retry; a jittery one (20–300 ms); the correct one unmodified on
//! the sped-up clock, waiting on a thread primitive, started cold and warm; and its twin there
//! that spends 140 ms of its own only after an in-stream failure (REQ-0006-001).

use squall_suite::iut::{ClockMode, Iut};
use squall_suite::{SuiteConfig, SuiteOutcome, Verdict};

use crate::kit::suites::{independent_config, run_shown, run_side_by_side, slow_independent_config, staggered};
use squall::clock::TimeScale;

/// What the slow twins spend of their own before each retry, ms, in [`IndependentSuites::slow`]'s
/// order.
pub(crate) const SLOW_TWINS_MS: [&str; 3] = ["50", "150", "300"];

/// The outcomes, each of its own suite.
#[derive(Debug)]
pub(crate) struct IndependentSuites {
    /// The correct implementation, nothing added.
    pub(crate) correct: SuiteOutcome,
    /// The same, slower by [`SLOW_TWINS_MS`] before each retry.
    pub(crate) slow: Vec<SuiteOutcome>,
    /// The same, slower by 20–300 ms drawn anew before each retry, judged up to 1/4 of real time.
    pub(crate) jittery: SuiteOutcome,
    /// The correct one on the sped-up clock (`--clock accelerated`), reading
    /// `SQUALL_TIME_SCALE=1` and waiting between attempts with `threading.Event().wait`.
    pub(crate) sped_up: SuiteOutcome,
    /// The same started warm (`--warm`): each case's process forked from one that imported it.
    pub(crate) warm: SuiteOutcome,
    /// The one on the sped-up clock again, spending [`PATH_WORK_MS`] of its own only after an
    /// in-stream failure, which the calibration's 429s never show: REQ-0006-001 only.
    pub(crate) path_work: SuiteOutcome,
}

/// What the path-work twin spends of its own after an in-stream failure: the Node SDK's own
/// work after one, measured on a sped-up clock (docs/requirements.md).
pub(crate) const PATH_WORK_MS: &str = "140";

/// Runs the suites, side by side.
pub(crate) async fn run_independent_suites() -> IndependentSuites {
    // The jittery one takes longest: its uncertain reaction raises its time scale. The others run
    // beside it, `kit::suites::PROCESSES_SIDE_BY_SIDE` at a time.
    let jittery = SuiteConfig { max_time_scale: TimeScale::of(0.25), ..slow_independent_config("20-300") };
    let warm = SuiteConfig { warm: true, ..sped_up_config() };
    let path_work = path_work_config();
    // Longest first (measured alone: 74, 57, 47, 44, 41, 26 and 13 s), so the short ones fill in.
    let [fifty, one_fifty, three_hundred] = SLOW_TWINS_MS.map(slow_independent_config);
    let others = vec![warm, sped_up_config(), one_fifty, three_hundred, independent_config(None), fifty, path_work];
    let (jittery, outcomes) = staggered(run_shown(&jittery), run_side_by_side(others)).await;
    let [warm, sped_up, one_fifty, three_hundred, correct, fifty, path_work] =
        <[SuiteOutcome; 7]>::try_from(outcomes).expect("an outcome for each suite");
    IndependentSuites { correct, slow: vec![fifty, one_fifty, three_hundred], jittery, sped_up, warm, path_work }
}

/// [`sped_up_config`]'s client, spending [`PATH_WORK_MS`] after in-stream failures only.
fn path_work_config() -> SuiteConfig {
    let sped_up = sped_up_config();
    let Iut::Command(command) = &sped_up.iut else { unreachable!("the independent implementation is a command") };
    let command = format!("PRD0006_OVERHEAD_MS={PATH_WORK_MS} PRD0006_OVERHEAD_AFTER=stream_error {command}");
    SuiteConfig { iut: Iut::Command(command), tags: Some("@REQ-0006-001".to_owned()), ..sped_up }
}

/// The correct implementation on the sped-up clock, waiting on a thread primitive.
fn sped_up_config() -> SuiteConfig {
    let correct = independent_config(None);
    let Iut::Command(command) = &correct.iut else { unreachable!("the independent implementation is a command") };
    SuiteConfig {
        iut: Iut::Command(format!("PRD0006_WAIT=event {command}")),
        clock: ClockMode::Accelerated,
        ..independent_config(None)
    }
}

/// Whether two runs of the same suite gave every case the same verdict ([`verdicts_agree`]):
/// `Err` names the cases that differ, each run called by its name in `names`.
pub(crate) fn same_verdicts(a: &SuiteOutcome, b: &SuiteOutcome, names: (&str, &str)) -> Result<(), String> {
    let verdicts = |outcome: &SuiteOutcome| {
        let mut verdicts: Vec<(String, Verdict, bool)> =
            outcome.cases.iter().map(|c| (c.name.to_string(), c.verdict, c.tags.iter().any(|t| t == "herd"))).collect();
        verdicts.sort_by(|x, y| x.0.cmp(&y.0));
        verdicts
    };
    let (a, b) = (verdicts(a), verdicts(b));
    let differing: Vec<String> = a
        .iter()
        .zip(&b)
        .filter(|((xn, x, herd), (yn, y, _))| xn != yn || !verdicts_agree(*x, *y, *herd))
        .map(|((name, x, _), (_, y, _))| format!("{name}: {} {}, {} {}", x.as_str(), names.0, y.as_str(), names.1))
        .collect();
    match a.len() == b.len() && differing.is_empty() {
        true => Ok(()),
        false => Err(format!("{} cases {}, {} {}; differing: {differing:#?}", a.len(), names.0, b.len(), names.1)),
    }
}

/// Whether two runs' verdicts on one case agree. A herd case left inconclusive in one run only is
/// no difference: how far a herd must spread to be read depends on how busy the machine was while
/// that run's calibration measured it, so a busy moment may leave it undecided.
pub(crate) fn verdicts_agree(a: Verdict, b: Verdict, herd: bool) -> bool {
    a == b || (herd && (a == Verdict::Inconclusive) != (b == Verdict::Inconclusive))
}
