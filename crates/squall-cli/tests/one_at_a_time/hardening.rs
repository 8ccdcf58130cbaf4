//! Load: a thousand concurrent streams complete intact, on shared serving threads and on threads
//! of their own; the reference under concurrent load loses no events.

use crate::kit::harness::require;
use crate::kit::server::server_with;
use crate::suite::hardening::connections_drain;
use futures_util::future::join_all;
use serde_json::{json, Value};
use squall::clock::TimeScale;
use squall::journal::EndKind;
use squall::scenario::{Attempt, Scenario};
use squall::server::Serving;
use std::num::NonZeroUsize;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_streams_complete_intact_and_connections_close() {
    a_thousand_concurrent_streams(Serving::CallerRuntime).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_serving_threads_of_its_own_a_thousand_concurrent_streams_complete_intact() {
    // What `squall serve` does: connections dealt to single-threaded runtimes.
    a_thousand_concurrent_streams(Serving::OwnThreads(NonZeroUsize::new(2).expect("2"))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_under_concurrent_load_loses_no_events() {
    // Heavy: never beside a timing-sensitive suite run.
    use squall_reference::clock::ScaledClock;
    use squall_reference::decide::policy::RetryPolicy;
    use squall_reference::provider::{Api, HttpProvider, ModelRequest, OutputMode};
    use squall_reference::run::call::stream_call;
    use squall_reference::run::engine::RetryEngine;
    use squall_reference::run::events::{EventSink, JsonlEvents};

    let server = server_with(|_| {}).await;
    let dir = tempfile::tempdir().expect("tempdir");
    // At 1/10 the reference's timeouts are seconds of real time: a hundred streams served at once
    // on a busy machine stay within them (at 1/100 one once timed out and was retried again).
    let calls = (0..100).map(|i| {
        let run = server.run_scaled(
            Scenario::named("load").attempt(Attempt::status(503)).attempt(Attempt::text("ok")),
            TimeScale::of(0.1),
        );
        let (base_url, path) = (run.base_url().to_owned(), dir.path().join(format!("events-{i}.jsonl")));
        async move {
            let sink: Arc<dyn EventSink> = Arc::new(JsonlEvents::create(&path).expect("events file"));
            let engine = RetryEngine::new(RetryPolicy::default(), Arc::new(ScaledClock::new(0.1)), sink.clone());
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

async fn a_thousand_concurrent_streams(serving: Serving) {
    // Heavy: never beside a timing-sensitive suite run.
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
