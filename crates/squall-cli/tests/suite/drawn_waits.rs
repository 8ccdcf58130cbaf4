//! Random waits decided from enough draws, end to end: the reference drawing each wait as a
//! random share of its backoff (its `full-jitter` mutant, on the virtual clock) passes growth and
//! the cap on REQ-0006-002's cases, each check read over several runs of its case, each run
//! seeded anew — the record says how many runs and which seeds. (The rates over every family of
//! backoff are the simulation's: `checks::tests::drawn`; the mutation matrix holds the mutant to
//! failing seed 002's schedule only.)

use squall_suite::iut::Iut;
use squall_suite::{run_suite, CaseRecord, Draws, SuiteConfig, Verdict};

use crate::kit::harness::require;
use crate::kit::suites::config;

/// The two cases whose waits are read for growth and a cap.
const CASES: [&str; 2] =
    ["req-0006-002/waits-grow-exponentially", "req-0006-002/with-more-retries-configured-the-waits-reach-a-cap"];

/// The suite's seed: draw n of a case is given `SEED + n × 10,000`.
const SEED: u64 = 11;

/// The checks of `cases` over waits: name, verdict, the runs it was read from, what it observed.
fn wait_checks(cases: &[CaseRecord]) -> Vec<(String, Verdict, Option<Draws>, String)> {
    cases
        .iter()
        .flat_map(|case| &case.checks)
        .filter(|check| check.name.contains("grow exponentially") || check.name.contains("level off at a cap"))
        .map(|check| (check.name.clone(), check.verdict, check.draws.clone(), check.observed.clone()))
        .collect()
}

fn shown(checks: &[(String, Verdict, Option<Draws>, String)]) -> String {
    let lines: Vec<String> = checks
        .iter()
        .map(|(name, verdict, draws, observed)| format!("{name}: {verdict:?} {draws:?}: {observed}"))
        .collect();
    lines.join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_jitter_is_passed_from_runs_drawn_anew_each_seeded_and_recorded() {
    let suite = SuiteConfig {
        cases: CASES.map(str::to_owned).to_vec(),
        seed: Some(SEED),
        ..config(Iut::Reference { mutant: Some("full-jitter".to_owned()) })
    };
    let outcome = run_suite(&suite).await.expect("the suite runs");
    let checks = wait_checks(&outcome.cases);
    require(checks.len() == 3, &format!("growth twice and the cap once:\n{}", shown(&checks)));
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
