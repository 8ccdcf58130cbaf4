//! No input can crash squall: crafted scenarios, extreme numbers, scenarios built in code, huge
//! bodies written before the reply is read, a closed stdout, a journal that would grow without
//! bound, and arbitrary JSON as an inline scenario. After each, the server still serves.

use std::io::{Read, Write};
use std::process::Stdio;
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Value};
use squall::embedded::MockProvider;
use squall::scenario::{Attempt, Catalogue, Scenario};
use squall::server::{Server, ServerConfig};

use crate::kit::command::squall;
use crate::kit::harness::require;
use crate::kit::machine::{take_turn, take_turn_blocking};
use crate::kit::server::create_run;

async fn server() -> Server {
    Server::start(ServerConfig::loopback(Catalogue::default())).await.expect("starts")
}

async fn still_serving(server: &Server) {
    let health = reqwest::get(format!("{}/__squall/health", server.origin())).await.expect("the server answers");
    assert_eq!(health.status().as_u16(), 200);
}

/// An OpenAI-shaped error: `{"error": {"message", "type", "code", "param"}}`.
fn is_openai_error(body: &Value) -> bool {
    body["error"]["message"].is_string() && body["error"]["type"].is_string() && body["error"].get("param").is_some()
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_writes_a_huge_body_before_reading_gets_the_413() {
    let _one = take_turn().await;
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

#[test]
fn arbitrary_json_as_an_inline_scenario_is_a_201_or_an_openai_4xx_and_a_created_run_answers() {
    let _one = take_turn_blocking();
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
