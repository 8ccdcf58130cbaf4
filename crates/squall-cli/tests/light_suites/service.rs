//! Through the service, the independent implementation gets `squall run`'s verdict on every case.

use crate::kit::harness::require;
use crate::kit::independent_suites::verdicts_agree;
use crate::kit::service_client::Judge;
use crate::kit::suites::{config, independent_command, staggered};
use crate::suite::service::judging_server;
use squall_suite::iut::Iut;
use squall_suite::{run_suite, CaseRecord, Level, Verdict};
use std::collections::BTreeMap;

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
async fn through_the_service_the_independent_implementation_gets_squall_runs_verdict_on_every_case() {
    let verdicts = same_verdicts_both_ways(&independent_command(None)).await;
    // Its SHOULD misses warn through the service as under squall run: the checks were judged.
    require(verdicts.values().any(|v| *v == Verdict::Warn), &format!("some warn: {verdicts:?}"));
    require(verdicts.values().all(|v| v.is_acceptable()), &format!("none fails: {verdicts:?}"));
}

/// The jitter seed both ways: the independent implementation draws its jitter from it, so a wait
/// near a bound (its first backoff, 1–2 s, against an in-stream ask of 3 s) is the same wait.
const SEED: u64 = 1;

/// Every case the service exports, judged through it and by `squall run`'s suite: the verdicts
/// are the same case by case. Returns the service's verdicts by case name.
pub(crate) async fn same_verdicts_both_ways(command: &str) -> BTreeMap<String, Verdict> {
    let server = judging_server().await;
    let judge = Judge::new(server.origin());
    let (status, cases) = judge.get("/__squall/cases?profile=all&level=events").await;
    assert_eq!(status, 200, "{cases}");
    let calibration = judge.calibrate(command, "equality", &cases).await;
    require(calibration["missing"].is_null(), &format!("the session is calibrated: {calibration}"));

    // Both ways side by side, as two suites of processes run elsewhere (each mostly waits): a
    // verdict does not depend on what else the machine does. The suite measures its client's
    // reaction before the service's clients start.
    let mut suite = config(Iut::Command(command.to_owned()));
    suite.level = Level::Events;
    suite.seed = Some(SEED);
    suite.concurrency = 8;
    let through_service = judge.judge_all(command, "equality", "events", SEED, &cases, 8);
    let (outcome, judged) = staggered(run_suite(&suite), through_service).await;
    let outcome = outcome.expect("the suite runs");
    let by_name: BTreeMap<(String, String), &CaseRecord> =
        outcome.cases.iter().map(|c| ((c.feature.clone(), c.name.clone()), c)).collect();

    let exported = cases["cases"].as_array().expect("cases");
    assert_eq!(judged.len(), exported.len());
    let mut service = BTreeMap::new();
    let mut differ = Vec::new();
    for (id, verdict) in &judged {
        let case = exported.iter().find(|c| c["id"] == id.as_str()).expect("an exported case");
        let key = (case["feature"].as_str().unwrap_or("").to_owned(), case["name"].as_str().unwrap_or("").to_owned());
        let through_service: Verdict = serde_json::from_value(verdict["verdict"].clone()).expect("a verdict");
        let by_squall_run = by_name.get(&key).copied();
        let herd = |c: &CaseRecord| c.tags.iter().any(|t| t == "herd");
        let agree = by_squall_run.is_some_and(|c| verdicts_agree(c.verdict, through_service, herd(c)));
        if !agree {
            // Both sides' records: why each decided as it did.
            let squall_run = by_squall_run.map(|c| serde_json::to_string(c).unwrap_or_default());
            differ.push(format!("{id}: service {through_service:?}: {verdict}\nsquall run: {squall_run:?}"));
        }
        service.insert(key.1, through_service);
    }
    require(differ.is_empty(), &format!("{} cases differ:\n{}", differ.len(), differ.join("\n")));
    service
}
