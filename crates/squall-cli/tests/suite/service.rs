//! The judge as a service: the cases as data, runs created for them, and verdicts on what a
//! client posts — the same verdict `squall run` gives, case by case, for the independent
//! implementation driven from outside as any test runner would drive it (for the reference:
//! `mostly_waiting::service`); and the admin API's answers to requests it cannot take.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use squall::scenario::Catalogue;
use squall::server::{Server, ServerConfig};
use squall_suite::iut::Iut;
use squall_suite::service::CaseService;
use squall_suite::{run_suite, CaseRecord, Level, Verdict};

use crate::kit::command::{squall, squall_bin};
use crate::kit::harness::require;
use crate::kit::machine::take_turn;
use crate::kit::service_client::Judge;
use crate::kit::suites::{config, independent_command, root, staggered};

/// The jitter seed both ways: the independent implementation draws its jitter from it, so a wait
/// near a bound (its first backoff, 1–2 s, against an in-stream ask of 3 s) is the same wait.
const SEED: u64 = 1;

/// A server whose judge offers this repository's features.
async fn judging_server() -> Server {
    let catalogue = Catalogue::load_dir(&root().join("scenarios")).expect("catalogue");
    let judge =
        CaseService::from_features(Some(&root().join("features")), catalogue.clone()).expect("the features read");
    let mut config = ServerConfig::loopback(catalogue);
    config.judge = Some(squall::server::Judge::new(judge));
    Server::start(config).await.expect("server starts")
}

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
        if by_squall_run.map(|c| c.verdict) != Some(through_service) {
            // Both sides' records: why each decided as it did.
            let squall_run = by_squall_run.map(|c| serde_json::to_string(c).unwrap_or_default());
            differ.push(format!("{id}: service {through_service:?}: {verdict}\nsquall run: {squall_run:?}"));
        }
        service.insert(key.1, through_service);
    }
    require(differ.is_empty(), &format!("{} cases differ:\n{}", differ.len(), differ.join("\n")));
    service
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites; scripts/test.sh runs it (cargo test -- --include-ignored)"]
async fn through_the_service_the_independent_implementation_gets_squall_runs_verdict_on_every_case() {
    let _one = take_turn().await;
    let verdicts = same_verdicts_both_ways(&independent_command(None)).await;
    // Its SHOULD misses warn through the service as under squall run: the checks were judged.
    require(verdicts.values().any(|v| *v == Verdict::Warn), &format!("some warn: {verdicts:?}"));
    require(verdicts.values().all(|v| v.is_acceptable()), &format!("none fails: {verdicts:?}"));
}

/// A broken client is failed through the service, with the failing check in the verdict.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_client_that_does_not_retry_fails_with_its_check_named() {
    let server = judging_server().await;
    let judge = Judge::new(server.origin());
    let command = format!("'{}' reference-iut", squall_bin());
    let run = judge.create_run("req-0006-001/status-503-is-retried", json!({})).await;
    // The bug, from outside: the client is told to make no retry.
    let mut env = run["env"].clone();
    env["SQUALL_MAX_RETRIES"] = json!("0");
    let broken = json!({"env": env, "clients": [], "verdict": run["verdict"]});
    let verdict = judge.judge_run(&command, &broken, std::time::Duration::from_secs(30)).await;
    assert_eq!(verdict["verdict"], "fail", "{verdict}");
    let failed: Vec<&Value> =
        verdict["checks"].as_array().expect("checks").iter().filter(|c| c["verdict"] == "fail").collect();
    assert_eq!(failed.len(), 1, "{verdict}");
    assert_eq!(failed[0]["name"], "the server sees exactly 2 attempts");
    assert_eq!(failed[0]["observed"], "1 attempts");
    // Asked again, the same verdict.
    let (status, again) = judge.get(run["verdict"].as_str().expect("path")).await;
    assert_eq!((status, &again), (200, &verdict));
}

#[tokio::test]
async fn requests_the_judge_cannot_take_are_refused_with_the_field_at_fault() {
    let server = judging_server().await;
    let judge = Judge::new(server.origin());
    let (status, error) = judge.post("/__squall/cases/req-0006-001/no-such-case/runs", &json!({})).await;
    assert_eq!((status, error["error"]["param"].as_str()), (404, Some("case")), "{error}");
    let tasks_case = "req-0006-020/a-deep-research-whose-stream-breaks-on-every-attempt-reports-ok-false";
    let (status, error) = judge.post(&format!("/__squall/cases/{tasks_case}/runs"), &json!({})).await;
    assert_eq!(status, 400, "{error}");
    assert!(error["error"]["message"].as_str().is_some_and(|m| m.contains("only `squall run` judges it")), "{error}");
    for (body, param) in [
        (json!({"level": "tasks"}), "level"),
        (json!({"time_scale": 2}), "time_scale"),
        (json!({"session": 3}), "session"),
        (json!({"herd": 3}), "herd"),
    ] {
        let (status, error) = judge.post("/__squall/cases/req-0006-001%2Fstatus-503-is-retried/runs", &body).await;
        assert_eq!((status, error["error"]["param"].as_str()), (400, Some(param)), "{body}: {error}");
    }
    let (status, error) = judge.get("/__squall/cases?profile=prd-9").await;
    assert_eq!((status, error["error"]["param"].as_str()), (400, Some("profile")), "{error}");

    // A run made for a case, and one that was not.
    let run = judge.create_run("req-0006-001%2Fstatus-503-is-retried", json!({"session": "s"})).await;
    assert_eq!(run["case"], "req-0006-001/status-503-is-retried");
    let path = run["verdict"].as_str().expect("a verdict path").to_owned();
    let (status, _) = judge.get(&path).await;
    assert_eq!(status, 404, "no verdict before the outcome");
    let (status, error) = judge.post(&path, &json!({"result": "ok"})).await;
    assert_eq!((status, error["error"]["param"].as_str()), (400, Some("result")), "{error}");
    let (status, verdict) = judge.post(&path, &json!({"result": null})).await;
    assert_eq!((status, &verdict["verdict"]), (200, &json!("error")), "no result: no verdict but error");
    assert!(verdict["error"].as_str().is_some_and(|e| e.contains("no usable result.json")), "{verdict}");
    let (status, _) = judge.post(&path, &json!({"result": {"ok": true}})).await;
    assert_eq!(status, 409, "judged once");
    let (_, plain) = judge.post("/__squall/runs", &json!({"scenario": "reset-after-3-events-then-ok"})).await;
    let (status, _) =
        judge.post(&format!("/__squall/runs/{}/verdict", plain["id"].as_str().expect("id")), &json!({})).await;
    assert_eq!(status, 409, "not a case run");

    // Without a judge the endpoints are not there.
    let bare = Server::start(ServerConfig::loopback(Catalogue::default())).await.expect("server starts");
    let (status, _) = Judge::new(bare.origin()).get("/__squall/cases").await;
    assert_eq!(status, 404);
}

#[test]
fn squall_cases_prints_the_cases_as_json_and_as_lines() {
    let output = squall()
        .args(["cases", "--format", "json", "--profile", "prd-0006", "--level", "wire"])
        .current_dir(root())
        .output()
        .expect("squall runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let list: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(list["schema"], "squall.cases/1");
    let cases = list["cases"].as_array().expect("cases");
    assert!(cases.len() > 30 && cases.iter().all(|c| c["level"] == "wire"), "{} cases", cases.len());
    let text = squall().args(["cases", "--level", "tasks"]).current_dir(root()).output().expect("squall runs");
    assert_eq!(text.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&text.stderr).contains("level `tasks`"),
        "{}",
        String::from_utf8_lossy(&text.stderr)
    );
}
