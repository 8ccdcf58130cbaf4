//! The independent implementation (`crates/squall-cli/tests/iut/prd0006`, Python, no code shared
//! with the reference) and its twins, each a whole suite, run once side by side
//! (`kit::independent_suites`), and every check that judges from them. Each check runs even when
//! one before it failed; the test fails naming every check that did.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::kit::harness::require;
use crate::kit::independent_suites::{run_independent_suites, IndependentSuites};

/// A check of what the suites show, by name: it panics on what it finds wrong.
type Check = (&'static str, fn(&IndependentSuites));

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
async fn the_independent_implementation_and_its_twins_get_the_verdicts_the_seeds_give() {
    let suites = run_independent_suites().await;
    let checks: [Check; 5] = [
        ("the correct one", super::independent_iut::passes_every_profile_with_its_should_misses_as_warnings),
        ("on the sped-up clock", super::sped_up_clock::on_the_sped_up_clock_the_verdicts_it_gets_scaled),
        ("started warm", super::warm_start::started_warm_the_verdicts_it_gets_cold),
        ("slow and jittery twins", super::slow_clients::slow_and_jittery_twins_get_its_verdicts),
        (
            "work after one kind of failure",
            super::slow_clients::work_after_one_kind_of_failure_never_passes_a_lower_bound,
        ),
    ];
    let failed: Vec<String> = checks
        .iter()
        .filter_map(|(name, check)| {
            let panic = catch_unwind(AssertUnwindSafe(|| check(&suites))).err()?;
            let message =
                panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|m| m.to_string()));
            Some(format!("{name}: {}", message.unwrap_or_default()))
        })
        .collect();
    require(failed.is_empty(), &failed.join("\n\n"));
}
