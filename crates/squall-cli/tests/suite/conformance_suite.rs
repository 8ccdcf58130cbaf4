//! The conformance suite itself under test: the IUT contract's external path gives the same
//! verdicts as the in-process reference, checks above the declared level are `n/a`, cucumber's
//! JSON is written. (An implementation that dies or hangs: `mostly_waiting::conformance_suite`.)

use squall_suite::iut::Iut;
use squall_suite::{run_suite, Level, SuiteOutcome, Verdict};
use std::collections::BTreeMap;

use crate::kit::command::squall_bin;
use crate::kit::harness::require;
use crate::kit::machine::take_turn;
use crate::kit::suites::{config, failing, staggered};

fn verdicts(outcome: &SuiteOutcome) -> BTreeMap<(String, String), Verdict> {
    outcome.cases.iter().map(|c| ((c.feature.clone(), c.name.clone()), c.verdict)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites; scripts/test.sh runs it (cargo test -- --include-ignored)"]
async fn the_external_contract_path_gives_the_same_verdicts_as_in_process() {
    let _one = take_turn().await;
    let command = format!("'{}' reference-iut", squall_bin());
    let (in_process_suite, external_suite) = (config(Iut::Reference { mutant: None }), config(Iut::Command(command)));
    let (in_process, external) = staggered(run_suite(&in_process_suite), run_suite(&external_suite)).await;
    let (in_process, external) = (in_process.expect("suite runs"), external.expect("suite runs"));
    require(in_process.passed(), &format!("the reference must pass: {:?}", failing(&in_process)));
    let (inside, outside) = (verdicts(&in_process), verdicts(&external));
    let differing: Vec<_> = inside
        .iter()
        .filter(|(case, v)| outside.get(*case) != Some(*v))
        .map(|(case, v)| format!("{case:?}: in-process {v:?}, external {:?}", outside.get(case)))
        .collect();
    require(differing.is_empty() && inside.len() == outside.len(), &differing.join("\n"));
    require(in_process.cases.len() >= 70, &format!("only {} cases ran", in_process.cases.len()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites; scripts/test.sh runs it (cargo test -- --include-ignored)"]
async fn checks_above_the_declared_level_are_not_applicable_never_failed() {
    let _one = take_turn().await;
    let mut wire_only = config(Iut::Reference { mutant: None });
    wire_only.level = Level::Wire;
    let outcome = run_suite(&wire_only).await.expect("suite runs");
    require(outcome.passed(), &format!("failing at the wire level: {:?}", failing(&outcome)));
    let task_cases: Vec<_> = outcome.cases.iter().filter(|c| c.tags.iter().any(|t| t == "tasks")).collect();
    assert!(!task_cases.is_empty());
    assert!(task_cases.iter().all(|c| c.verdict == Verdict::NotApplicable), "task cases must be n/a at the wire level");
    let above = outcome.cases.iter().flat_map(|c| &c.checks).filter(|c| c.level > Level::Wire);
    assert!(above.into_iter().all(|c| c.verdict == Verdict::NotApplicable));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites; scripts/test.sh runs it (cargo test -- --include-ignored)"]
async fn cucumber_json_output_is_available() {
    let _one = take_turn().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cucumber.json");
    let mut with_json = config(Iut::Reference { mutant: None });
    with_json.tags = Some("@REQ-0006-030 and not @herd".to_owned());
    with_json.cucumber_json = Some(path.clone());
    let outcome = run_suite(&with_json).await.expect("suite runs");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let features: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let scenarios = features
        .as_array()
        .map_or(0, |f| f.iter().map(|f| f["elements"].as_array().map_or(0, Vec::len)).sum::<usize>());
    require(
        scenarios == outcome.cases.len() && scenarios == 2,
        &format!("{scenarios} scenarios in cucumber.json, {} cases run", outcome.cases.len()),
    );
}
