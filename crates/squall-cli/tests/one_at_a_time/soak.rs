//! `squall soak` of the independent implementation: it passes, and its truncation bug is caught.

use crate::kit::suites::independent_command;
use crate::suite::soak::{config, failed, soak};
use squall_suite::iut::Iut;
use squall_suite::Verdict;
use std::collections::BTreeSet;

/// The independent implementation (crates/squall-cli/tests/iut/prd0006), correct and with its truncation bug.
#[test]
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
fn the_independent_implementation_passes_and_its_truncation_bug_is_caught() {
    let correct = soak(&config(Iut::Command(independent_command(None)), 100));
    assert_eq!(correct.verdict, Verdict::Pass, "{:#?}", correct.checks);
    let buggy = soak(&config(Iut::Command(independent_command(Some("truncation-is-success"))), 100));
    assert_eq!(
        failed(&buggy),
        BTreeSet::from(["never ok: true with a truncated or empty answer"]),
        "{:#?}",
        buggy.checks
    );
    let broken = &buggy.every_run.iter().find(|r| !r.problems.is_empty()).expect("a run with a problem");
    assert!(broken.problems[0].contains("before the terminal event"), "{:?}", broken.problems);
}
