//! The judge as a service: the cases as data, runs created for them, and verdicts on what a
//! client posts — the same verdict `squall run` gives, case by case, for the independent
//! implementation driven from outside as any test runner would drive it (for the reference:
//! `mostly_waiting::service`); and the admin API's answers to requests it cannot take.

use serde_json::{json, Value};
use squall::scenario::Catalogue;
use squall::server::{Server, ServerConfig};
use squall_suite::service::CaseService;

use crate::kit::command::{squall, squall_bin};
use crate::kit::service_client::Judge;
use crate::kit::suites::root;

/// A server whose judge offers this repository's features.
pub(crate) async fn judging_server() -> Server {
    let catalogue = Catalogue::load_dir(&root().join("scenarios")).expect("catalogue");
    let judge =
        CaseService::from_features(Some(&root().join("features")), catalogue.clone()).expect("the features read");
    let mut config = ServerConfig::loopback(catalogue);
    config.judge = Some(squall::server::Judge::new(judge));
    Server::start(config).await.expect("server starts")
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
    // The server's metrics count the verdict and the judge's requests apart from the admin API's.
    let metrics = reqwest::get(format!("{}/metrics", server.origin())).await.expect("/metrics answers");
    let metrics = metrics.text().await.expect("the text");
    for series in [
        "squall_verdicts_total{verdict=\"fail\"} 1",
        "squall_judge_requests_total{endpoint=\"verdict\",method=\"POST\",status=\"200\"} 1",
        "squall_judge_requests_total{endpoint=\"case_runs\",method=\"POST\",status=\"201\"} 1",
    ] {
        assert!(metrics.lines().any(|line| line == series), "{series} in:\n{metrics}");
    }
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
