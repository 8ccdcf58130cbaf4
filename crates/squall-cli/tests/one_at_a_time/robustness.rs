//! Inputs that cost a suite's worth of work: a client that writes a huge body before reading gets
//! its 413; arbitrary JSON as an inline scenario is a 201 or an OpenAI-shaped 4xx.

use crate::kit::harness::require;
use crate::suite::robustness::{server, still_serving};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Value};
use squall::embedded::MockProvider;
use squall::scenario::Scenario;
use std::io::{Read, Write};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_writes_a_huge_body_before_reading_gets_the_413() {
    let provider = MockProvider::start().await;
    let run = provider.run(Scenario::named("small"));
    let url = run.base_url().to_owned();
    let path = url.split_once("127.0.0.1").map(|(_, rest)| rest.split_once('/').map_or("", |(_, p)| p)).unwrap_or("");
    let address = provider.server().local_addr();
    let path = format!("/{path}/responses");
    let answer = tokio::task::spawn_blocking(move || {
        let body = vec![b'x'; 64 * 1024 * 1024];
        let mut socket = std::net::TcpStream::connect(address).expect("connects");
        let head = format!(
            "POST {path} HTTP/1.1\r\nhost: squall\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        socket.write_all(head.as_bytes()).expect("head written");
        socket.write_all(&body).expect("the whole body is read by the server, not refused mid-way");
        let mut answer = Vec::new();
        socket.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
        let mut buffer = [0u8; 4096];
        while let Ok(n) = socket.read(&mut buffer) {
            if n == 0 || answer.len() > 64 * 1024 {
                break;
            }
            answer.extend_from_slice(&buffer[..n]);
            if answer.windows(4).any(|w| w == b"\r\n\r\n") && answer.ends_with(b"}") {
                break;
            }
        }
        String::from_utf8_lossy(&answer).into_owned()
    })
    .await
    .expect("joined");
    assert!(answer.starts_with("HTTP/1.1 413"), "{}", answer.chars().take(200).collect::<String>());
    assert!(answer.contains("request_too_large"), "{answer}");
    still_serving(provider.server()).await;
}

#[test]
fn arbitrary_json_as_an_inline_scenario_is_a_201_or_an_openai_4xx_and_a_created_run_answers() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let server = runtime.block_on(server());
    let client = reqwest::Client::builder().timeout(Duration::from_millis(500)).build().expect("client");
    let mut runner = TestRunner::new(Config { cases: 300, failure_persistence: None, ..Config::default() });
    let (created, refused) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    let outcome = runner.run(&scenario_like(), |scenario| {
        runtime.block_on(async {
            let reply = client
                .post(format!("{}/__squall/runs", server.origin()))
                .json(&json!({"scenario": scenario, "time_scale": 0.001}))
                .send()
                .await
                .map_err(|e| TestCaseError::fail(format!("no answer to create: {e}")))?;
            let status = reply.status().as_u16();
            let body: Value = reply.json().await.unwrap_or(Value::Null);
            match status {
                201 => {
                    created.set(created.get() + 1);
                    let base = body["base_url"].as_str().unwrap_or("").to_owned();
                    // Whatever the script does (a fault, a stall), the server takes the request.
                    let _ = client
                        .post(format!("{base}/responses"))
                        .json(&json!({"model": "m", "input": "x", "stream": true}))
                        .send()
                        .await;
                    let _ = client
                        .post(format!("{base}/chat/completions"))
                        .json(&json!({"model": "m", "messages": []}))
                        .send()
                        .await;
                    let journal: Value = reqwest::get(format!(
                        "{}/__squall/runs/{}/journal",
                        server.origin(),
                        body["id"].as_str().unwrap_or("")
                    ))
                    .await
                    .map_err(|e| TestCaseError::fail(format!("no journal: {e}")))?
                    .json()
                    .await
                    .unwrap_or(Value::Null);
                    prop_assert_eq!(journal["requests"].as_array().map(Vec::len), Some(2), "{}", journal);
                }
                400..=499 => {
                    refused.set(refused.get() + 1);
                    prop_assert!(is_openai_error(&body), "{status}: {body}");
                }
                other => prop_assert!(false, "{other}: {body}"),
            }
            Ok(())
        })
    });
    require(outcome.is_ok(), &format!("{outcome:?}"));
    let (created, refused) = (created.get(), refused.get());
    require(
        created > 10 && refused > 10,
        &format!("the search reached both sides: {created} created, {refused} refused"),
    );
    runtime.block_on(still_serving(&server));
}

/// An OpenAI-shaped error: `{"error": {"message", "type", "code", "param"}}`.
fn is_openai_error(body: &Value) -> bool {
    body["error"]["message"].is_string() && body["error"]["type"].is_string() && body["error"].get("param").is_some()
}

/// JSON shaped like a scenario, from a vocabulary of its fields and values at their extremes.
fn scenario_like() -> impl Strategy<Value = Value> {
    let keys = prop::sample::select(vec![
        "name",
        "attempts",
        "tracks",
        "status",
        "headers",
        "error",
        "body",
        "stream",
        "text",
        "chunks",
        "fault",
        "kind",
        "after_events",
        "after_bytes",
        "ms",
        "delay_ms",
        "event_delay_ms",
        "function_call",
        "arguments",
        "fail",
        "code",
        "message",
        "match",
        "tool",
        "after",
        "reasoning",
        "requirements",
        "retry-after",
        "a]b[",
        "x-should-retry",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        prop::sample::select(vec![0i64, 1, -1, 3, 200, 429, 503, 599, 600, i64::MIN, i64::MAX]).prop_map(Value::from),
        prop::sample::select(vec![u64::MAX, 1 << 53, 604_800_001]).prop_map(Value::from),
        prop::sample::select(vec![0.5, -0.0, 1e-300, 1e300, f64::MAX, f64::MIN_POSITIVE]).prop_map(Value::from),
        prop::sample::select(vec![
            "x",
            "",
            "reset",
            "eof",
            "truncate",
            "stall",
            "garbage",
            "repeat_last",
            "fail",
            "ok",
            "@now+3s",
            "@now+1e300s",
            "NaN",
            "inf",
            "-1",
            "a/b",
            "..",
            "\u{0}",
            "日本語",
            "Task",
            "rate_limit_exceeded",
            "insufficient_quota",
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(keys.clone().prop_map(str::to_owned), inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
    .prop_map(|mut value| {
        // Mostly objects with a valid name, so the search reaches past the first check.
        if let Value::Object(map) = &mut value {
            map.entry("name").or_insert_with(|| Value::from("fuzzed"));
        }
        value
    })
}
