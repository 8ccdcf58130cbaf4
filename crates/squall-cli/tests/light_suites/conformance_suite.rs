//! The conformance suite itself under test: checks above the declared level are `n/a`, cucumber's
//! JSON is written. (The IUT contract's external path, and an implementation that dies or hangs:
//! `mostly_waiting::conformance_suite`.)

use squall_suite::iut::Iut;
use squall_suite::{run_suite, Level, Verdict};

use crate::kit::harness::require;
use crate::kit::suites::{config, failing};

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
async fn checks_above_the_declared_level_are_not_applicable_never_failed() {
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
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
async fn cucumber_json_output_is_available() {
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
