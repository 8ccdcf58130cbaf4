//! Hardening: security defaults, bad input, load. Each test can fail.

use std::io::{Read, Write};

use crate::kit::command::{serve_at, squall};
use crate::kit::server::server_with;
use serde_json::{json, Value};
use squall::embedded::MockProvider;
use squall::journal::EndKind;
use squall::scenario::{Attempt, Scenario};

/// A plain Responses request to `run`, answered.
pub(crate) async fn responses(client: &reqwest::Client, run: &squall::embedded::ScriptedRun) -> reqwest::Response {
    client
        .post(format!("{}/responses", run.base_url()))
        .json(&json!({"model": "m", "input": "x"}))
        .send()
        .await
        .expect("sent")
}

/// Wait (up to 2 s) for the server to have no connection left.
pub(crate) async fn connections_drain(provider: &MockProvider) -> usize {
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
pub(crate) async fn listed_runs(provider: &MockProvider) -> Vec<(String, u64)> {
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
