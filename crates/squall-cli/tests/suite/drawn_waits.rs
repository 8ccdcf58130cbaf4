//! Random waits decided from enough draws, end to end: the reference drawing each wait as a
//! random share of its backoff (its `full-jitter` mutant, on the virtual clock) passes growth and
//! the cap on REQ-0006-002's cases, each check read over several runs of its case, each run
//! seeded anew — the record says how many runs and which seeds; its `decorrelated-jitter` mutant,
//! whose waits depend on each other, passes them read by its parameters. (The rates over every family of
//! backoff are the simulation's: `checks::tests::drawn`; the mutation matrix holds the mutant to
//! failing seed 002's schedule only.) On the real clock, a case drawing alone in a run of four
//! cases at once runs its draws four at a time: the independent implementation's processes,
//! drawing a full jitter, overlap. (A linear backoff with a full jitter, which 30 runs cannot tell
//! from an exponential one, failed from the runs drawn beyond them: `mostly_waiting::drawn_waits`.)

use squall_suite::iut::Iut;
use squall_suite::{run_suite, CaseRecord, Draws, SuiteConfig, Verdict};

use crate::kit::harness::require;
use crate::kit::suites::config;

/// The two cases whose waits are read for growth and a cap.
pub(crate) const CASES: [&str; 2] =
    ["req-0006-002/waits-grow-exponentially", "req-0006-002/with-more-retries-configured-the-waits-reach-a-cap"];

/// The suite's seed: draw n of a case is given `SEED + n × 10,000`.
pub(crate) const SEED: u64 = 11;

/// The checks of `cases` over waits: name, verdict, the runs it was read from, what it observed.
pub(crate) fn wait_checks(cases: &[CaseRecord]) -> Vec<(String, Verdict, Option<Draws>, String)> {
    cases
        .iter()
        .flat_map(|case| &case.checks)
        .filter(|check| check.name.contains("grow exponentially") || check.name.contains("level off at a cap"))
        .map(|check| (check.name.clone(), check.verdict, check.draws.clone(), check.observed.clone()))
        .collect()
}

pub(crate) fn shown(checks: &[(String, Verdict, Option<Draws>, String)]) -> String {
    let lines: Vec<String> = checks
        .iter()
        .map(|(name, verdict, draws, observed)| format!("{name}: {verdict:?} {draws:?}: {observed}"))
        .collect();
    lines.join("\n")
}

/// The checks over waits of the reference's `mutant` on both cases, as far as each was judged.
async fn reference_wait_checks(mutant: &str) -> Vec<(String, Verdict, Option<Draws>, String)> {
    let suite = SuiteConfig {
        cases: CASES.map(str::to_owned).to_vec(),
        seed: Some(SEED),
        ..config(Iut::Reference { mutant: Some(mutant.to_owned()) })
    };
    let outcome = run_suite(&suite).await.expect("the suite runs");
    wait_checks(&outcome.cases)
}

/// Growth twice and the cap once: each case judged to its end.
fn judged_to_the_end(checks: &[(String, Verdict, Option<Draws>, String)]) {
    require(checks.len() == 3, &format!("growth twice and the cap once:\n{}", shown(checks)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_jitter_is_passed_from_runs_drawn_anew_each_seeded_and_recorded() {
    let checks = reference_wait_checks("full-jitter").await;
    judged_to_the_end(&checks);
    require(checks.iter().all(|(_, verdict, ..)| *verdict == Verdict::Pass), &shown(&checks));
    // A full jitter under a cap takes more than one run: the cap case's checks are read over
    // several, each seeded anew.
    let capped: Vec<&Draws> = checks[1..].iter().filter_map(|(_, _, draws, _)| draws.as_ref()).collect();
    require(capped.len() == 2, &format!("the cap case read from one run:\n{}", shown(&checks)));
    for draws in capped {
        let seeds: Vec<u64> = (0..draws.runs as u64).map(|n| SEED + n * 10_000).collect();
        require(draws.runs >= 2 && draws.seeds == seeds, &format!("{draws:?}:\n{}", shown(&checks)));
    }
}

/// The reference's `decorrelated-jitter` mutant (AWS's `min(30 s, rand(1 s, 3 × the last wait))`,
/// on the virtual clock): its mean waits grow 1.5× a retry and level off under the cap, so it
/// passes growth and the cap, each read by its parameters over runs drawn anew (read retry by
/// retry, its growth failed one run in four in the simulation: docs/requirements.md).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_decorrelated_jitter_is_read_by_its_parameters_and_passes() {
    let checks = reference_wait_checks("decorrelated-jitter").await;
    judged_to_the_end(&checks);
    let read_as_decorrelated = |(_, verdict, draws, observed): &(String, Verdict, Option<Draws>, String)| {
        *verdict == Verdict::Pass && draws.is_some() && observed.contains("decorrelated jitter")
    };
    require(checks.iter().all(read_as_decorrelated), &shown(&checks));
}

/// Its `slow-decorrelated-jitter` mutant (a multiple of 2.5: mean waits growing 1.25× a retry)
/// fails growth over the eleven-attempt case, read as a decorrelated jitter too slow to be
/// exponential (the case's cap is not judged after the failed step).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_decorrelated_jitter_too_slow_to_be_exponential_fails_growth() {
    let checks = reference_wait_checks("slow-decorrelated-jitter").await;
    let read_as_too_slow = |(_, verdict, draws, observed): &(String, Verdict, Option<Draws>, String)| {
        *verdict == Verdict::Fail && draws.is_some() && observed.contains("decorrelated jitter")
    };
    require(checks.iter().any(read_as_too_slow), &shown(&checks));
}
