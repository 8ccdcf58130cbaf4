//! Hardening: security defaults, bad input, load. Each test can fail.

use std::io::{Read, Write};
use std::num::NonZeroUsize;
use std::sync::Arc;

use futures_util::future::join_all;

use crate::kit::command::{serve_at, squall};
use crate::kit::harness::{json_reply, require};
use crate::kit::machine::take_turn;
use crate::kit::server::server_with;
use serde_json::{json, Value};
use squall::clock::TimeScale;
use squall::embedded::MockProvider;
use squall::journal::EndKind;
use squall::scenario::{Attempt, Scenario};
use squall::server::Serving;

/// A plain Responses request to `run`, answered.
async fn responses(client: &reqwest::Client, run: &squall::embedded::ScriptedRun) -> reqwest::Response {
    client
        .post(format!("{}/responses", run.base_url()))
        .json(&json!({"model": "m", "input": "x"}))
        .send()
        .await
        .expect("sent")
}

/// Wait (up to 2 s) for the server to have no connection left.
async fn connections_drain(provider: &MockProvider) -> usize {
    let server = provider.server();
    for _ in 0..100 {
        if server.open_connections() == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    server.open_connections()
}

#[tokio::test]
async fn the_admin_api_can_require_a_token_and_model_endpoints_stay_open() {
    let server = server_with(|c| c.admin_token = Some("s3cret".to_owned())).await;
    let client = reqwest::Client::new();
    let health = format!("{}/__squall/health", server.server().origin());
    let refused = client.get(&health).send().await.expect("sent");
    assert_eq!(refused.status().as_u16(), 401);
    let body: Value = refused.json().await.expect("json");
    assert_eq!(body["error"]["code"], "admin_token_required");
    assert_eq!(client.get(&health).bearer_auth("wrong").send().await.expect("sent").status().as_u16(), 401);
    assert_eq!(client.get(&health).bearer_auth("s3cret").send().await.expect("sent").status().as_u16(), 200);
    let run = server.run(Scenario::named("open"));
    let reply = responses(&client, &run).await;
    assert_eq!(reply.status().as_u16(), 200, "SDKs send their own keys to the model endpoints");
}

#[test]
fn binding_beyond_loopback_needs_an_explicit_flag_and_warns() {
    let refused = squall().args(["serve", "--addr", "0.0.0.0:0"]).output().expect("runs");
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--allow-remote"));
    let mut served = serve_at("0.0.0.0:0", &["--allow-remote"]);
    let _ = served.child.kill();
    let mut stderr = String::new();
    let _ = served.child.stderr.take().expect("stderr").read_to_string(&mut stderr);
    assert!(served.origin.starts_with("http://0.0.0.0:"), "{}", served.origin);
    assert!(stderr.contains("WARNING"), "{stderr}");
}

/// The runs the admin API lists: (id, requests seen).
async fn listed_runs(provider: &MockProvider) -> Vec<(String, u64)> {
    let listed: Value = reqwest::get(format!("{}/__squall/runs", provider.server().origin()))
        .await
        .expect("sent")
        .json()
        .await
        .expect("json");
    let runs = listed["runs"].as_array().cloned().unwrap_or_default();
    runs.iter().map(|r| (r["id"].as_str().unwrap_or("").to_owned(), r["requests"].as_u64().unwrap_or(0))).collect()
}

#[tokio::test]
async fn old_runs_expire_so_a_long_lived_server_does_not_grow() {
    let provider = server_with(|c| c.max_runs = 100).await;
    let ids: Vec<String> = (0..5000).map(|_| provider.run(Scenario::named("soak")).id().to_owned()).collect();
    let kept: Vec<String> = listed_runs(&provider).await.into_iter().map(|(id, _)| id).collect();
    assert_eq!(kept.len(), 100);
    assert!(!kept.contains(&ids[0]) && !kept.contains(&ids[4899]));
    assert!(kept.contains(&ids[4900]) && kept.contains(&ids[4999]));
}

#[tokio::test]
async fn bytes_that_are_not_http_do_not_disturb_other_clients() {
    let server = server_with(|_| {}).await;
    let run = server.run(Scenario::named("calm").attempt(Attempt::text("fine")));
    let addr = server.server().local_addr();
    let garbage = tokio::task::spawn_blocking(move || {
        let mut socket = std::net::TcpStream::connect(addr).expect("connects");
        socket.write_all(b"\x16\x03\x01\x02\x00 this is not HTTP\r\n\r\n").expect("writes");
        let mut reply = Vec::new();
        let _ = socket.read_to_end(&mut reply);
        reply
    });
    let client = reqwest::Client::new();
    let reply = responses(&client, &run).await;
    assert_eq!(reply.status().as_u16(), 200);
    let answer = garbage.await.expect("joined");
    assert!(answer.is_empty() || answer.starts_with(b"HTTP/1.1 400"), "{:?}", String::from_utf8_lossy(&answer));
}

#[tokio::test]
async fn a_body_over_the_configured_limit_is_a_413_naming_the_limit() {
    let server = server_with(|c| c.body_limit = 1024).await;
    let run = server.run(Scenario::named("small"));
    let big = json!({"model": "m", "input": "x".repeat(4096)});
    let reply =
        reqwest::Client::new().post(format!("{}/responses", run.base_url())).json(&big).send().await.expect("sent");
    assert_eq!(reply.status().as_u16(), 413);
    let body: Value = reply.json().await.expect("json");
    assert!(body["error"]["message"].as_str().unwrap_or("").contains("1024"), "{body}");
    let journal = run.journal();
    assert_eq!((journal.len(), journal[0].end), (1, Some(EndKind::ErrorStatus)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_streams_complete_intact_and_connections_close() {
    a_thousand_concurrent_streams(Serving::CallerRuntime).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_serving_threads_of_its_own_a_thousand_concurrent_streams_complete_intact() {
    // What `squall serve` does: connections dealt to single-threaded runtimes.
    a_thousand_concurrent_streams(Serving::OwnThreads(NonZeroUsize::new(2).expect("2"))).await;
}

async fn a_thousand_concurrent_streams(serving: Serving) {
    // Heavy: never beside a timing-sensitive suite run.
    let _one = take_turn().await;
    let server = server_with(|config| config.serving = serving).await;
    let run = server.run(Scenario::named("load").attempt(Attempt::text(&vec!["word"; 20].join(" "))));
    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().expect("client");
    let url = format!("{}/responses", run.base_url());
    let requests = (0..1000).map(|_| {
        let (client, url) = (client.clone(), url.clone());
        async move {
            let body = client
                .post(url)
                .json(&json!({"model": "m", "input": "x", "stream": true}))
                .send()
                .await?
                .text()
                .await?;
            Ok::<bool, reqwest::Error>(
                body.contains("response.completed") && body.matches("event: response.output_text.delta").count() == 20,
            )
        }
    });
    let outcomes = join_all(requests).await;
    let intact = outcomes.iter().filter(|o| matches!(o, Ok(true))).count();
    require(
        intact == 1000,
        &format!("{intact} intact; errors: {:?}", outcomes.iter().filter(|o| o.is_err()).take(3).collect::<Vec<_>>()),
    );
    drop(client);
    let left = connections_drain(&server).await;
    let journal = run.journal();
    require(journal.len() == 1000, &format!("{} journal entries", journal.len()));
    require(journal.iter().all(|e| e.end == Some(EndKind::Completed) && e.terminal_sent), "every entry completed");
    require(left == 0, &format!("{left} connections still open after the client went away"));
}

#[tokio::test]
async fn a_body_that_is_not_json_by_its_content_type_is_a_415_naming_it() {
    let server = server_with(|_| {}).await;
    let run = server.run(Scenario::named("typed"));
    let reply = reqwest::Client::new()
        .post(format!("{}/responses", run.base_url()))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(r#"{"model": "m", "input": "x"}"#)
        .send()
        .await
        .expect("sent");
    assert_eq!(reply.status().as_u16(), 415);
    let body: Value = reply.json().await.expect("json");
    assert!(body["error"]["message"].as_str().unwrap_or("").contains("application/x-www-form-urlencoded"), "{body}");
    assert!(run.journal()[0].attempt.is_none(), "a rejected request uses no scripted attempt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: runs whole suites; scripts/test.sh runs it (cargo test -- --include-ignored)"]
async fn a_soak_of_thousands_of_runs_does_not_grow() {
    // Heavy: never beside a timing-sensitive suite run.
    let _one = take_turn().await;
    let server = server_with(|c| c.max_runs = 50).await;
    let client = reqwest::Client::new();
    for _ in 0..3000 {
        let created: Value = json_reply(
            client
                .post(format!("{}/__squall/runs", server.server().origin()))
                .json(&json!({"scenario": {"name": "soak", "attempts": [{"stream": {"text": "a b c"}}]}})),
        )
        .await;
        let url = format!("{}/responses", created["base_url"].as_str().expect("base_url"));
        let body = client
            .post(url)
            .json(&json!({"model": "m", "input": "x", "stream": true}))
            .send()
            .await
            .expect("sent")
            .text()
            .await
            .expect("body");
        require(body.contains("response.completed"), "a soak reply was cut short");
        // The client's keep-alive pool serves the whole soak: connections do not pile up.
        require(
            server.server().open_connections() <= 4,
            &format!("{} connections open", server.server().open_connections()),
        );
    }
    let listed = listed_runs(&server).await;
    let retained: u64 = listed.iter().map(|(_, requests)| requests).sum();
    require(
        listed.len() == 50 && retained == 50,
        &format!("{} runs and {retained} journal entries retained", listed.len()),
    );
    drop(client);
    require(connections_drain(&server).await == 0, "the connection closed when the client went away");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_under_concurrent_load_loses_no_events() {
    // Heavy: never beside a timing-sensitive suite run.
    let _one = take_turn().await;
    use squall_reference::clock::ScaledClock;
    use squall_reference::decide::policy::RetryPolicy;
    use squall_reference::provider::{Api, HttpProvider, ModelRequest, OutputMode};
    use squall_reference::run::call::stream_call;
    use squall_reference::run::engine::RetryEngine;
    use squall_reference::run::events::{EventSink, JsonlEvents};

    let server = server_with(|_| {}).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let calls = (0..100).map(|i| {
        let run = server.run_scaled(
            Scenario::named("load").attempt(Attempt::status(503)).attempt(Attempt::text("ok")),
            TimeScale::of(0.01),
        );
        let (base_url, path) = (run.base_url().to_owned(), dir.path().join(format!("events-{i}.jsonl")));
        async move {
            let sink: Arc<dyn EventSink> = Arc::new(JsonlEvents::create(&path).expect("events file"));
            let engine = RetryEngine::new(RetryPolicy::default(), Arc::new(ScaledClock::new(0.01)), sink.clone());
            let provider = HttpProvider::new(&base_url, "k", Api::Responses);
            let outcome =
                stream_call(&engine, &provider, &ModelRequest::prompt("m", "x"), OutputMode::Visible, &|_| {}, &sink)
                    .await;
            (outcome.is_ok(), std::fs::read_to_string(path).expect("read"))
        }
    });
    for (ok, events) in join_all(calls).await {
        assert!(ok);
        let types: Vec<String> = events
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).expect("one JSON object per line")["type"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned()
            })
            .collect();
        assert_eq!(types, ["provider.retry", "result"]);
    }
}
