//! No input can crash squall: crafted scenarios, extreme numbers, scenarios built in code, huge
//! bodies written before the reply is read, a closed stdout, a journal that would grow without
//! bound, and arbitrary JSON as an inline scenario. After each, the server still serves.

use std::process::Stdio;

use serde_json::{json, Value};
use squall::embedded::MockProvider;
use squall::scenario::{Attempt, Catalogue, Scenario};
use squall::server::{Server, ServerConfig};

use crate::kit::command::squall;
use crate::kit::harness::require;
use crate::kit::server::create_run;

pub(crate) async fn server() -> Server {
    Server::start(ServerConfig::loopback(Catalogue::default())).await.expect("starts")
}

pub(crate) async fn still_serving(server: &Server) {
    let health = reqwest::get(format!("{}/__squall/health", server.origin())).await.expect("the server answers");
    assert_eq!(health.status().as_u16(), 200);
}

#[tokio::test]
async fn a_type_error_under_a_header_name_with_brackets_is_a_400_naming_it() {
    let server = server().await;
    let body = json!({"scenario": {"name": "x", "attempts": [{"status": 429, "headers": {"a]b[c": 7}}]}});
    let (status, reply) = create_run(server.origin(), &body).await;
    assert_eq!(status, 400, "{reply}");
    assert_eq!(reply["error"]["param"], r#"scenario.attempts[0].headers["a]b[c"]"#, "{reply}");
    still_serving(&server).await;
}

#[tokio::test]
async fn numbers_out_of_range_are_refused_where_they_are_read() {
    let server = server().await;
    for (attempt, param, range) in [
        (
            json!({"status": 429, "headers": {"retry-after": "@now+1e300s"}}),
            "scenario.attempts[0].headers.retry-after",
            "a year",
        ),
        (json!({"delay_ms": u64::MAX}), "scenario.attempts[0].delay_ms", "a week"),
        (
            json!({"stream": {"text": "x", "event_delay_ms": 9_000_000_000_u64}}),
            "scenario.attempts[0].stream.event_delay_ms",
            "a week",
        ),
        (
            json!({"stream": {"text": "x"}, "fault": {"kind": "stall", "ms": u64::MAX}}),
            "scenario.attempts[0].fault.ms",
            "a week",
        ),
    ] {
        let (status, reply) =
            create_run(server.origin(), &json!({"scenario": {"name": "x", "attempts": [attempt]}})).await;
        assert_eq!(status, 400, "{reply}");
        assert_eq!(reply["error"]["param"], param, "{reply}");
        let message = reply["error"]["message"].as_str().unwrap_or("");
        assert!(message.contains("out of range") && message.contains(range), "{message}");
    }
    let (status, reply) = create_run(server.origin(), &json!({"scenario": {"name": "x"}, "time_scale": 1e300})).await;
    assert_eq!((status, reply["error"]["param"].as_str()), (400, Some("time_scale")), "{reply}");
    still_serving(&server).await;
}

#[tokio::test]
async fn scenarios_built_in_code_are_checked_like_files() {
    let provider = MockProvider::start().await;
    let slash = provider.try_run(Scenario::named("a/b")).expect_err("a name with a slash");
    assert_eq!(slash.field.to_string(), "name", "{slash}");
    let mut header = Attempt::status(429);
    header.headers.insert("bad header".to_owned(), "1".to_owned());
    let bad = provider.try_run(Scenario::named("h").attempt(header)).expect_err("a bad header name");
    assert_eq!(bad.field.to_string(), r#"attempts[0].headers["bad header"]"#, "{bad}");
    let scale = squall::clock::TimeScale::new(f64::NAN).expect_err("a NaN time scale");
    assert_eq!(scale.to_string(), "time scale NaN is not a number in (0, 100]");
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| provider.run(Scenario::named("a/b"))));
    require(panicked.is_err(), "run() refuses what try_run() refuses");
    assert!(provider.try_run(Scenario::named("fine").attempt(Attempt::text("ok"))).is_ok());
}

#[test]
fn a_closed_stdout_is_a_clean_exit_for_every_listing_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = dir.path().join("good.toml");
    std::fs::write(&good, "name = \"good\"\n").expect("write");
    let good = good.display().to_string();
    for args in [vec!["scenarios", "list"], vec!["scenarios", "check", good.as_str()], vec!["--help"]] {
        let mut child = squall()
            .args(&args)
            .current_dir(crate::kit::suites::root())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("squall starts");
        drop(child.stdout.take()); // the reader goes away before anything is written
        let output = child.wait_with_output().expect("squall ends");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[tokio::test]
async fn a_journal_keeps_its_cap_and_counts_what_it_dropped() {
    let mut config = ServerConfig::loopback(Catalogue::default());
    config.journal_max = 3;
    let server = Server::start(config).await.expect("starts");
    let (status, run) = create_run(server.origin(), &json!({"scenario": {"name": "soak"}})).await;
    assert_eq!(status, 201, "{run}");
    let client = reqwest::Client::new();
    for _ in 0..5 {
        let url = format!("{}/responses", run["base_url"].as_str().expect("base_url"));
        client.post(url).json(&json!({"model": "m", "input": "x"})).send().await.expect("sent");
    }
    let id = run["id"].as_str().expect("id");
    let journal: Value = reqwest::get(format!("{}/__squall/runs/{id}/journal", server.origin()))
        .await
        .expect("sent")
        .json()
        .await
        .expect("json");
    let indexes: Vec<u64> =
        journal["requests"].as_array().expect("requests").iter().filter_map(|e| e["index"].as_u64()).collect();
    assert_eq!((indexes, journal["dropped"].as_u64()), (vec![2, 3, 4], Some(2)), "{journal}");
    let listed: Value = reqwest::get(format!("{}/__squall/runs/{id}", server.origin()))
        .await
        .expect("sent")
        .json()
        .await
        .expect("json");
    assert_eq!((listed["requests"].as_u64(), listed["dropped"].as_u64()), (Some(5), Some(2)), "{listed}");
}
