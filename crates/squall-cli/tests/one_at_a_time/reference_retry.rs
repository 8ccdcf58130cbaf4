//! The reference pipeline against squall over real HTTP: REQ-0006-001, -002, -010, the gate,
//! the profiles and `on_retry`. Each test can fail: it judges the wire (journal) and events.

use std::sync::{Arc, Mutex};

use squall_reference::decide::classify::RETRYABLE_STATUSES;
use squall_reference::decide::policy::{AgentProfile, RetryPolicy};
use squall_reference::provider::{Api, OutputMode};

use crate::kit::reference::{scenario, Call, OK};

#[tokio::test]
async fn req_0006_001_timeout_then_success_ends_without_runtime_error() {
    let outcome = Call::default().against(&scenario(&["delay_ms = 120000", OK])).await;
    assert_eq!(outcome.result.as_ref().map(|o| o.text.as_str()).ok(), Some("done"));
    assert!(outcome.of_type("runtime.error").is_empty());
    assert_eq!(outcome.of_type("provider.retry")[0]["error_type"], "ProviderTimeoutException");
    assert_eq!(outcome.of_type("result")[0]["stop_reason"], "end_turn");
    assert_eq!(outcome.attempts(), 2);
}

#[tokio::test]
async fn req_0006_001_5xx_then_success() {
    let outcome = Call::default().against(&scenario(&["status = 502", OK])).await;
    assert!(outcome.result.is_ok());
    assert_eq!(outcome.types(), ["provider.retry", "result"]);
}

#[tokio::test]
async fn req_0006_001_each_retryable_status_is_retried() {
    for status in RETRYABLE_STATUSES {
        let outcome = Call::default().against(&scenario(&[&format!("status = {status}"), OK])).await;
        assert!(outcome.result.is_ok(), "status {status} was not retried: {:?}", outcome.events);
        assert_eq!(outcome.attempts(), 2, "status {status}");
    }
}

#[tokio::test]
async fn req_0006_001_other_statuses_are_final() {
    for status in [400, 401, 403, 404, 409, 422] {
        let outcome = Call::default().against(&scenario(&[&format!("status = {status}"), OK])).await;
        assert_eq!(outcome.attempts(), 1, "status {status} was retried");
        assert_eq!(outcome.types(), ["runtime.error", "result"], "status {status}");
        assert_eq!(outcome.of_type("runtime.error")[0]["decision"]["outcome"], "not_retryable");
    }
}

#[tokio::test]
async fn req_0006_001_retry_after_is_honoured_in_each_form() {
    // At 1/20 of real time a 1.5 s ask is 75 ms on the wire: precise enough to tell 1.5 s from 2 s.
    const PRECISE: f64 = 0.05;
    for (headers, asked_ms, granularity_ms) in [
        (r#"{ "retry-after-ms" = "1500", "retry-after" = "9" }"#, 1500.0, 0.0),
        (r#"{ "retry-after" = "2" }"#, 2000.0, 0.0),
        (r#"{ "retry-after" = "@now+3s" }"#, 3000.0, 1000.0),
    ] {
        let outcome = Call { scale: PRECISE, ..Call::default() }
            .against(&scenario(&[&format!("status = 429\nheaders = {headers}"), OK]))
            .await;
        assert!(outcome.result.is_ok());
        let gap = outcome.gaps_ms()[0];
        // squall rounds an HTTP-date up to the next whole second, so that wait may be up to a
        // second longer than asked, never shorter.
        // 15 ms of real time (300 ms of policy time) for scheduling on a loaded machine: still
        // well short of the 500 ms that tells a 1.5 s ask from a 2 s one.
        let tolerance = 15.0 / PRECISE;
        assert!(gap >= asked_ms - 1.0, "{headers}: waited {gap:.0} ms for {asked_ms} ms");
        assert!(gap <= asked_ms + granularity_ms + tolerance, "{headers}: waited {gap:.0} ms for {asked_ms} ms");
        let source = &outcome.of_type("provider.retry")[0]["decision"]["delay_source"];
        assert!(source.as_str().is_some_and(|s| s.starts_with("retry-after")), "{source}");
    }
}

#[tokio::test]
async fn req_0006_001_exhausting_max_retries_ends_in_runtime_error_and_stop_reason_error() {
    let outcome = Call::default().against(&scenario(&["status = 503"])).await;
    assert_eq!(outcome.attempts(), 7);
    assert_eq!(outcome.types().last(), Some(&"result"));
    assert_eq!(outcome.of_type("result")[0]["stop_reason"], "error");
    let error = outcome.of_type("runtime.error");
    assert_eq!(error.len(), 1);
    assert_eq!(
        (error[0]["phase"].as_str(), error[0]["decision"]["outcome"].as_str()),
        (Some("provider"), Some("exhausted"))
    );
}

#[tokio::test]
async fn req_0006_002_defaults_make_seven_attempts_with_capped_exponential_delays() {
    let outcome = Call::default().against(&scenario(&["status = 500"])).await;
    assert_eq!(outcome.attempts(), 7);
    let planned: Vec<u64> =
        outcome.of_type("provider.retry").iter().map(|e| e["delay_ms"].as_u64().unwrap_or(0)).collect();
    // Seed 002's 1 s × 2^n + 0-1 s, capped at 30 s.
    let bases = [1000, 2000, 4000, 8000, 16000, 30000];
    assert_eq!(planned.len(), 6);
    for (delay, base) in planned.iter().zip(bases) {
        assert!(*delay >= base && *delay <= (base + 1000).min(30000), "planned {planned:?}");
    }
    // What the wire saw follows the plan.
    for (gap, delay) in outcome.gaps_ms().iter().zip(&planned) {
        assert!(*gap >= *delay as f64 * 0.95, "gap {gap:.0} ms for a planned {delay} ms");
    }
}

#[tokio::test]
async fn req_0006_010_every_stream_break_becomes_a_retried_provider_timeout() {
    for fault in [
        r#"{ kind = "eof", after_events = 2 }"#,
        r#"{ kind = "reset", after_events = 2 }"#,
        r#"{ kind = "truncate", after_events = 2 }"#,
        r#"{ kind = "stall", after_events = 2 }"#,
        r#"{ kind = "garbage", after_events = 2 }"#,
    ] {
        let outcome = Call::default()
            .against(&scenario(&[&format!("stream = {{ text = \"never\" }}\nfault = {fault}"), OK]))
            .await;
        assert!(outcome.result.is_ok(), "{fault}: {:?}", outcome.events);
        let retry = outcome.of_type("provider.retry");
        assert_eq!(retry.len(), 1, "{fault}");
        assert_eq!(retry[0]["error_type"], "ProviderTimeoutException", "{fault}");
    }
}

#[tokio::test]
async fn req_0006_010_a_break_that_exhausts_retries_is_a_provider_phase_timeout() {
    let outcome = Call::default()
        .against(&scenario(&["stream = { text = \"x\" }\nfault = { kind = \"eof\", after_events = 1 }"]))
        .await;
    let error = outcome.of_type("runtime.error");
    assert_eq!(
        (error[0]["phase"].as_str(), error[0]["error_type"].as_str()),
        (Some("provider"), Some("ProviderTimeoutException"))
    );
    assert_eq!(outcome.final_error_type(), Some("ProviderTimeoutException"));
}

#[tokio::test]
async fn gate_never_replays_after_visible_output() {
    let broken = "stream = { text = \"half of an answer\" }\nfault = { kind = \"eof\", after_events = 6 }";
    let outcome = Call::default().against(&scenario(&[broken, OK])).await;
    assert!(!outcome.shown.is_empty(), "text reached the user");
    assert_eq!(outcome.attempts(), 1);
    let decision = &outcome.of_type("runtime.error")[0]["decision"];
    assert_eq!(
        (decision["technically_retryable"].as_bool(), decision["gate"].as_str()),
        (Some(true), Some("visible_output"))
    );
    // The same break while output is buffered (a sub-session) is replayed.
    let buffered = Call { mode: OutputMode::Buffered, ..Call::default() }.against(&scenario(&[broken, OK])).await;
    assert!(buffered.result.is_ok());
    assert_eq!(buffered.attempts(), 2);
}

#[tokio::test]
async fn gate_never_replays_after_a_tool_call_started() {
    let broken = "stream = { function_call = { name = \"write_file\", arguments = '{\"path\": \"a\"}' } }\nfault = { kind = \"reset\", after_events = 4 }";
    let outcome = Call::default().against(&scenario(&[broken, OK])).await;
    assert_eq!(outcome.attempts(), 1);
    assert_eq!(outcome.of_type("runtime.error")[0]["decision"]["gate"], "tool_call");
}

#[tokio::test]
async fn quota_and_context_overflow_are_never_retried() {
    for attempt in [
        "status = 429\nerror = { code = \"insufficient_quota\" }",
        "stream = { fail = { code = \"context_length_exceeded\" } }",
        "stream = { fail = { code = \"insufficient_quota\" } }",
    ] {
        let outcome = Call::default().against(&scenario(&[attempt, OK])).await;
        assert_eq!(outcome.attempts(), 1, "{attempt}");
        assert!(outcome.result.is_err());
    }
}

#[tokio::test]
async fn in_stream_rate_limit_waits_the_asked_time() {
    let failed = "stream = { fail = { code = \"rate_limit_exceeded\", message = \"Please try again in 1.5s.\" } }";
    let outcome = Call::default().against(&scenario(&[failed, OK])).await;
    assert!(outcome.result.is_ok());
    assert_eq!(outcome.of_type("provider.retry")[0]["decision"]["delay_source"], "message");
    assert!(outcome.gaps_ms()[0] >= 1490.0, "gap {:?}", outcome.gaps_ms());
}

#[tokio::test]
async fn x_should_retry_false_overrides_a_retryable_status() {
    let outcome =
        Call::default().against(&scenario(&["status = 503\nheaders = { \"x-should-retry\" = \"false\" }", OK])).await;
    assert_eq!(outcome.attempts(), 1);
}

#[tokio::test]
async fn seed_004_fast_fail_limits_attempts_per_error_kind() {
    let reset = "stream = { text = \"x\" }\nfault = { kind = \"reset\", after_events = 1 }";
    assert_eq!(Call::policy(RetryPolicy::fast_fail()).against(&scenario(&[reset])).await.attempts(), 2);
    assert_eq!(Call::policy(RetryPolicy::fast_fail()).against(&scenario(&["status = 503"])).await.attempts(), 3);
    assert_eq!(Call::policy(RetryPolicy::fast_fail()).against(&scenario(&["status = 429"])).await.attempts(), 3);
}

#[tokio::test]
async fn seed_002_agent_profiles() {
    let writer = Call::policy(RetryPolicy::for_agent(AgentProfile::Writer)).against(&scenario(&["status = 503"])).await;
    assert_eq!(writer.attempts(), 1);
    let reader =
        Call::policy(RetryPolicy::for_agent(AgentProfile::ReadOnly)).against(&scenario(&["status = 503"])).await;
    assert_eq!(reader.attempts(), 2);
}

#[tokio::test]
async fn seed_001_reasoning_ladder_is_60s_then_120s_and_no_third_attempt() {
    let stall = "stream = { reasoning = \"thinking\" }\nfault = { kind = \"stall\", after_events = 1 }";
    let outcome = Call { mode: OutputMode::Buffered, ..Call::policy(RetryPolicy::reasoning_ladder()) }
        .against(&scenario(&[stall]))
        .await;
    assert_eq!(outcome.attempts(), 2);
    let timeouts: Vec<u64> = outcome.events.iter().filter_map(|e| e["decision"]["timeout_ms"].as_u64()).collect();
    assert_eq!(timeouts, [60_000, 120_000]);
    let lasted = outcome.durations_ms();
    assert!(lasted[0] >= 59_000.0 && lasted[0] < 75_000.0, "first attempt lasted {:.0} ms", lasted[0]);
    assert!(lasted[1] >= 119_000.0 && lasted[1] < 140_000.0, "second attempt lasted {:.0} ms", lasted[1]);
}

#[tokio::test]
async fn on_retry_fires_before_each_sleep_with_attempt_and_delay() {
    let notices = Arc::new(Mutex::new(Vec::new()));
    let on_retry = {
        let notices = notices.clone();
        Arc::new(move |notice: &squall_reference::run::engine::RetryNotice| {
            notices.lock().expect("lock").push((notice.clone(), std::time::Instant::now()))
        })
    };
    let outcome = Call { on_retry: Some(on_retry), ..Call::default() }
        .against(&scenario(&["status = 503", "status = 503", OK]))
        .await;
    let notices = notices.lock().expect("lock").clone();
    assert_eq!(notices.len(), 2);
    assert_eq!((notices[0].0.attempt, notices[0].0.max_attempts), (1, 7));
    assert!(notices[1].0.message().contains("attempt 3/7"), "{}", notices[1].0.message());
    // Each notice precedes its retry by at least the planned delay: it came before the sleep.
    for (i, gap) in outcome.gaps_ms().iter().enumerate() {
        assert!(*gap >= notices[i].0.delay.as_millis() as f64 * 0.95, "retry {i}: gap {gap:.0} ms");
    }
}

#[tokio::test]
async fn chat_completions_provider_is_retried_the_same_way() {
    let broken = "stream = { text = \"x\" }\nfault = { kind = \"reset\", after_events = 1 }";
    let outcome = Call { api: Api::Chat, ..Call::default() }.against(&scenario(&[broken, "status = 503", OK])).await;
    assert!(outcome.result.is_ok());
    assert_eq!(outcome.attempts(), 3);
    assert!(outcome.journal.iter().all(|e| e.path == "/chat/completions"));
}

/// Over the Responses API's WebSocket the reference retries what it retries over HTTP: a 503 at
/// the upgrade (its `retry-after` honoured), a reset without a close frame, a close frame with
/// 1011, a 429 at the next upgrade (each retry opens a new socket); and a 400 is final.
#[tokio::test]
async fn the_websocket_provider_is_retried_the_same_way() {
    let ws = || Call { api: Api::ResponsesWebSocket, ..Call::default() };
    let reset = "stream = { text = \"a b c\" }\nfault = { kind = \"reset\", after_events = 1 }";
    let closed = "stream = { text = \"a b c\" }\nfault = { kind = \"truncate\", after_events = 1, close_code = 1011 }";
    let refused = "status = 503\nheaders = { retry-after = \"2\" }";
    let outcome = ws().against(&scenario(&[refused, reset, closed, "status = 429", OK])).await;
    assert!(outcome.result.is_ok(), "{:?}", outcome.events);
    let methods: Vec<&str> = outcome.journal.iter().map(|e| e.method.as_str()).collect();
    assert_eq!(methods, ["GET", "WS", "WS", "GET", "WS"], "the 503 and the 429 refused upgrades");
    let sockets: Vec<Option<u32>> = outcome.journal.iter().map(|e| e.socket).collect();
    assert_eq!(sockets, [None, Some(1), Some(2), None, Some(3)], "each retry opened a socket");
    assert!(outcome.gaps_ms()[0] >= 2000.0, "the upgrade's retry-after: {:?}", outcome.gaps_ms());
    let refused_final = ws().against(&scenario(&["status = 400"])).await;
    assert_eq!(
        (refused_final.attempts(), refused_final.final_error_type()),
        (1, Some("ProviderInvalidRequestException"))
    );
}

fn catalogue_file(name: &str) -> String {
    let path = crate::kit::suites::root().join("scenarios").join(format!("{name}.toml"));
    std::fs::read_to_string(path).expect("a catalogue file")
}

#[tokio::test]
async fn the_messages_backend_retries_claudes_overloads_from_the_catalogue() {
    for name in ["anthropic-overloaded-529-then-ok", "anthropic-overloaded-in-stream-then-ok"] {
        let outcome = Call { api: Api::Messages, ..Call::default() }.against(&catalogue_file(name)).await;
        assert!(outcome.result.is_ok(), "{name}: {:?}", outcome.events);
        assert_eq!(outcome.attempts(), 2, "{name}");
        assert!(
            outcome.journal.iter().all(|e| e.api == Some(squall::journal::Api::Messages)),
            "{name}: spoke Messages"
        );
    }
}

#[tokio::test]
async fn a_reset_during_a_tool_use_block_is_not_replayed_in_any_api() {
    for api in [Api::Responses, Api::Chat, Api::Messages] {
        let outcome = Call { api, ..Call::default() }.against(&catalogue_file("reset-during-tool-use")).await;
        assert_eq!(outcome.attempts(), 1, "{api:?}: {:?}", outcome.events);
        let error = outcome.of_type("runtime.error");
        assert_eq!(error.first().map(|e| &e["decision"]["gate"]), Some(&serde_json::json!("tool_call")), "{api:?}");
        assert_eq!(outcome.final_error_type(), Some("ProviderTimeoutException"), "{api:?}");
    }
}
