//! The conformance suite itself under test: it must reject every deliberately broken
//! implementation on exactly the requirements that implementation breaks, and the IUT
//! contract's external path must give the same verdicts as the in-process reference.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use squall::iut::Iut;
use squall::scenario::Catalogue;
use squall::suite::{run_suite, SuiteConfig, SuiteOutcome, Verdict};
use squall_reference::mutants::Mutant;

use super::support::require;

/// Suite runs are timing-sensitive: one at a time in this binary.
static ONE_SUITE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn config(iut: Iut) -> SuiteConfig {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let catalogue = Catalogue::load_dir(&root.join("scenarios")).expect("catalogue");
    SuiteConfig::new(iut, root.join("features"), catalogue)
}

fn failing(outcome: &SuiteOutcome) -> BTreeSet<String> {
    outcome
        .requirements
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Fail | Verdict::Error))
        .map(|r| r.id.clone())
        .collect()
}

fn verdicts(outcome: &SuiteOutcome) -> BTreeMap<(String, String), Verdict> {
    outcome.cases.iter().map(|c| ((c.feature.clone(), c.name.clone()), c.verdict)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn the_suite_rejects_every_mutant_on_exactly_the_requirements_it_breaks() {
    let _one = ONE_SUITE_AT_A_TIME.lock().await;
    let mut wrong = Vec::new();
    for mutant in Mutant::ALL {
        let outcome =
            run_suite(&config(Iut::Reference { mutant: Some(mutant.name().to_owned()) })).await.expect("suite runs");
        let expected: BTreeSet<String> = mutant.breaks().iter().map(|s| (*s).to_owned()).collect();
        let seen = failing(&outcome);
        if seen != expected {
            let unexpected: Vec<String> = outcome
                .cases
                .iter()
                .filter(|c| {
                    c.verdict != Verdict::Pass
                        && c.verdict != Verdict::NotApplicable
                        && c.requirements.iter().any(|r| !expected.contains(r))
                })
                .flat_map(|c| {
                    c.checks.iter().filter(|k| k.verdict == Verdict::Fail).map(move |k| {
                        format!("    {} / {}: expected {}; observed {}", c.name, k.name, k.expected, k.observed)
                    })
                })
                .collect();
            wrong.push(format!(
                "{}: expected failures {expected:?}, the suite failed {seen:?}\n{}",
                mutant.name(),
                unexpected.join("\n")
            ));
        }
    }
    require(wrong.is_empty(), &wrong.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn the_external_contract_path_gives_the_same_verdicts_as_in_process() {
    let _one = ONE_SUITE_AT_A_TIME.lock().await;
    let in_process = run_suite(&config(Iut::Reference { mutant: None })).await.expect("suite runs");
    let command = format!("'{}' reference-iut", env!("CARGO_BIN_EXE_squall"));
    let external = run_suite(&config(Iut::Command(command))).await.expect("suite runs");
    require(in_process.passed(), &format!("the reference must pass: {:?}", failing(&in_process)));
    let (inside, outside) = (verdicts(&in_process), verdicts(&external));
    let differing: Vec<_> = inside
        .iter()
        .filter(|(case, v)| outside.get(*case) != Some(*v))
        .map(|(case, v)| format!("{case:?}: in-process {v:?}, external {:?}", outside.get(case)))
        .collect();
    require(differing.is_empty() && inside.len() == outside.len(), &differing.join("\n"));
    require(in_process.cases.len() >= 50, &format!("only {} cases ran", in_process.cases.len()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn checks_above_the_declared_level_are_not_applicable_never_failed() {
    let _one = ONE_SUITE_AT_A_TIME.lock().await;
    let mut wire_only = config(Iut::Reference { mutant: None });
    wire_only.level = squall::suite::Level::Wire;
    let outcome = run_suite(&wire_only).await.expect("suite runs");
    require(outcome.passed(), &format!("failing at the wire level: {:?}", failing(&outcome)));
    let task_cases: Vec<_> = outcome.cases.iter().filter(|c| c.tags.iter().any(|t| t.ends_with("tasks"))).collect();
    assert!(!task_cases.is_empty());
    assert!(task_cases.iter().all(|c| c.verdict == Verdict::NotApplicable), "task cases must be n/a at the wire level");
    let events_checks = outcome.cases.iter().flat_map(|c| &c.checks).filter(|c| c.level > squall::suite::Level::Wire);
    assert!(events_checks.into_iter().all(|c| c.verdict == Verdict::NotApplicable));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn a_crashing_implementation_fails_with_its_stderr_as_evidence() {
    let _one = ONE_SUITE_AT_A_TIME.lock().await;
    let mut crashing = config(Iut::Command("echo 'adapter exploded' >&2; exit 3".to_owned()));
    crashing.tags = Some("@REQ-0006-020".to_owned());
    let outcome = run_suite(&crashing).await.expect("suite runs");
    assert!(!outcome.cases.is_empty());
    for case in &outcome.cases {
        assert_eq!(case.verdict, Verdict::Fail, "{}", case.name);
        assert!(case.evidence.stderr.contains("adapter exploded"), "{:?}", case.evidence.stderr);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn cucumber_json_output_is_available() {
    let _one = ONE_SUITE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cucumber.json");
    let mut with_json = config(Iut::Reference { mutant: None });
    with_json.tags = Some("@REQ-0006-002".to_owned());
    with_json.cucumber_json = Some(path.clone());
    let outcome = run_suite(&with_json).await.expect("suite runs");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let features: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let scenarios = features
        .as_array()
        .map_or(0, |f| f.iter().map(|f| f["elements"].as_array().map_or(0, Vec::len)).sum::<usize>());
    require(
        scenarios == outcome.cases.len() && scenarios == 3,
        &format!("{scenarios} scenarios in cucumber.json, {} cases run", outcome.cases.len()),
    );
}
