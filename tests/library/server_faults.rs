//! Each fault, observed by a real reqwest client over loopback TCP.

use std::io::ErrorKind;
use std::time::Duration;

use squall::clock::TimeScale;
use squall::journal::EndKind;
use squall::scenario::FaultKind;

use squall_testkit::first_within;
use squall_testkit::harness::{read_body, Harness};

fn one_attempt(stream: &str, fault: &str) -> String {
    format!("name = \"t\"\n[[attempts]]\nstream = {stream}\nfault = {fault}\n")
}

#[tokio::test]
async fn reset_is_a_connection_reset_after_exactly_the_scripted_events() {
    let h = Harness::new(&one_attempt(
        r#"{ text = "The quick brown fox", chunks = 6 }"#,
        r#"{ kind = "reset", after_events = 3 }"#,
    ))
    .await;
    let read = read_body(h.stream_responses().await).await;
    assert_eq!(read.io_error_kind(), Some(ErrorKind::ConnectionReset), "chain: {}", read.error_chain());
    assert_eq!(read.event_names(), ["response.created", "response.in_progress", "response.output_item.added"]);
    let journal = h.settled_journal().await;
    assert_eq!(
        (journal[0].end, journal[0].fault, journal[0].events_sent),
        (Some(EndKind::Reset), Some(FaultKind::Reset), 3)
    );
}

#[tokio::test]
async fn eof_is_an_incomplete_body_not_a_reset() {
    let h = Harness::new(&one_attempt(r#"{ text = "The quick brown fox" }"#, r#"{ kind = "eof", after_events = 5 }"#))
        .await;
    let read = read_body(h.stream_responses().await).await;
    let error = read.error.as_ref().expect("the body must fail");
    assert!(error.is_body() || error.is_decode(), "chain: {}", read.error_chain());
    assert_ne!(read.io_error_kind(), Some(ErrorKind::ConnectionReset), "an eof must be a FIN, not a RST");
    assert_eq!(read.events().len(), 5);
    let journal = h.settled_journal().await;
    assert_eq!((journal[0].end, journal[0].events_sent), (Some(EndKind::Eof), 5));
}

#[tokio::test]
async fn eof_at_a_byte_offset_cuts_an_event_in_half() {
    let h = Harness::new(&one_attempt(r#"{ text = "abc" }"#, r#"{ kind = "eof", after_bytes = 100 }"#)).await;
    let read = read_body(h.stream_responses().await).await;
    assert!(read.error.is_some());
    assert_eq!(read.bytes.len(), 100, "the client must get exactly the bytes before the offset");
    assert!(read.events().is_empty(), "the first event is longer than 100 bytes");
    assert_eq!(h.settled_journal().await[0].bytes_sent, 100);
}

#[tokio::test]
async fn truncate_ends_cleanly_without_the_terminal_event() {
    let h = Harness::new(&one_attempt(r#"{ text = "a b c" }"#, r#"{ kind = "truncate", after_events = 6 }"#)).await;
    let read = read_body(h.stream_responses().await).await;
    assert!(read.error.is_none(), "truncation is a clean end of body: {}", read.error_chain());
    let names = read.event_names();
    assert_eq!(names.len(), 6);
    assert!(!names.iter().any(|n| n == "response.completed"));
    let journal = h.settled_journal().await;
    assert_eq!((journal[0].end, journal[0].terminal_sent), (Some(EndKind::Truncated), false));
}

#[tokio::test]
async fn chat_truncate_has_no_done_line() {
    let h = Harness::new(&one_attempt(r#"{ text = "a b c" }"#, r#"{ kind = "truncate", after_events = 2 }"#)).await;
    let body = serde_json::json!({"model": "m", "messages": [], "stream": true});
    let read = read_body(h.post("/chat/completions", body).await).await;
    assert!(read.error.is_none());
    assert_eq!(read.events().len(), 2);
    assert!(!read.text().contains("[DONE]"));
}

/// `after_deltas` places a break by what the client has seen, whichever API it speaks: 0 is after
/// the framing and before any text, 2 right after the second text piece.
#[tokio::test]
async fn delta_offsets_break_every_api_at_the_same_output() {
    let requests = [
        ("/responses", serde_json::json!({"model": "m", "input": "hi", "stream": true})),
        ("/chat/completions", serde_json::json!({"model": "m", "messages": [], "stream": true})),
        ("/messages", serde_json::json!({"model": "m", "max_tokens": 8, "messages": [], "stream": true})),
    ];
    for (deltas, seen, unseen) in [(0, "", "alpha"), (2, "beta", "gamma")] {
        let fault = format!("{{ kind = \"eof\", after_deltas = {deltas} }}");
        let h = Harness::new(&one_attempt(r#"{ text = "alpha beta gamma omega" }"#, &fault)).await;
        for (path, body) in &requests {
            let read = read_body(h.post(path, body.clone()).await).await;
            let text = read.text();
            assert!(read.error.is_some(), "{path}: the body must break");
            assert!(!read.events().is_empty(), "{path}: the framing events arrive first");
            assert!(text.contains(seen) && !text.contains(unseen), "{path} after {deltas} deltas: {text}");
        }
    }
}

#[tokio::test]
async fn timed_stall_is_a_measured_gap_then_the_rest() {
    let _quiet = squall_testkit::quiet_turn().await;
    let script = one_attempt(r#"{ text = "a b c" }"#, r#"{ kind = "stall", after_events = 2, ms = 300 }"#);
    let measure = || async {
        let h = Harness::new(&script).await;
        let read = read_body(h.stream_responses().await).await;
        assert!(read.error.is_none());
        assert!(read.event_names().last().is_some_and(|n| n == "response.completed"));
        let entry = &h.settled_journal().await[0];
        assert_eq!((entry.end, entry.fault), (Some(EndKind::Completed), Some(FaultKind::Stall)));
        let gaps: Vec<Duration> = read.arrivals.windows(2).map(|w| w[1].0 - w[0].0).collect();
        gaps.iter().max().copied().unwrap_or_default()
    };
    // The client reads the gap: a late read of the event before it shortens it, of the one
    // after lengthens it (once 292 ms beside the integration binary).
    let the_stall =
        |longest: &Duration| *longest >= Duration::from_millis(295) && *longest < Duration::from_millis(450);
    let taken = first_within(3, measure, the_stall).await;
    assert!(taken.last().is_some_and(the_stall), "the longest gap, try by try: {taken:?}");
}

#[tokio::test]
async fn stall_forever_lasts_until_the_client_gives_up_and_is_journaled() {
    let h = Harness::new(&one_attempt(r#"{ text = "a" }"#, r#"{ kind = "stall", after_events = 1 }"#)).await;
    let response = h.stream_responses().await;
    let read = tokio::time::timeout(Duration::from_millis(300), read_body(response)).await;
    assert!(read.is_err(), "a stall without `ms` must not end by itself");
    // The timeout dropped the response, closing the connection: the server must notice.
    let entry = &h.settled_journal().await[0];
    assert_eq!((entry.end, entry.events_sent), (Some(EndKind::Stalled), 1));
    assert!(entry.finished_at_ms.unwrap_or(0.0) - entry.received_at_ms >= 295.0, "{entry:?}");
}

#[tokio::test]
async fn garbage_is_a_parse_failure_for_the_client() {
    let h = Harness::new(&one_attempt(r#"{ text = "a" }"#, r#"{ kind = "garbage", after_events = 2 }"#)).await;
    let read = read_body(h.stream_responses().await).await;
    assert!(read.error.is_none());
    let events = read.events();
    let unparsable = events.iter().filter(|(_, data)| serde_json::from_str::<serde_json::Value>(data).is_err()).count();
    assert_eq!(unparsable, 1, "exactly one data line that is not JSON: {events:?}");
    assert_eq!(h.settled_journal().await[0].end, Some(EndKind::Garbage));
}

#[tokio::test]
async fn time_scale_shrinks_server_delays() {
    let toml = "name = \"t\"\n[[attempts]]\ndelay_ms = 2000\nstream = { text = \"a\" }\n";
    let h = Harness::scaled(toml, TimeScale::of(0.05)).await;
    let started = std::time::Instant::now();
    let read = read_body(h.stream_responses().await).await;
    let took = started.elapsed();
    assert!(read.error.is_none());
    assert!(took >= Duration::from_millis(95) && took < Duration::from_millis(600), "took {took:?}");
}

#[tokio::test]
async fn a_reset_on_one_connection_leaves_other_clients_alone() {
    let toml = "name = \"t\"\n[[attempts]]\nstream = { text = \"a b\", event_delay_ms = 20 }\nfault = { kind = \"reset\", after_events = 2 }\n[[attempts]]\nstream = { text = \"a b\", event_delay_ms = 20 }\n";
    let h = Harness::new(toml).await;
    let (first, second) = tokio::join!(h.stream_responses(), async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        // A separate client so the two requests use separate connections.
        reqwest::Client::new()
            .post(format!("{}/responses", h.base_url))
            .json(&serde_json::json!({"model": "m", "input": "x", "stream": true}))
            .send()
            .await
            .expect("sent")
    });
    let (first, second) = tokio::join!(read_body(first), read_body(second));
    assert_eq!(first.io_error_kind(), Some(ErrorKind::ConnectionReset));
    assert!(second.error.is_none(), "{}", second.error_chain());
    assert!(second.event_names().iter().any(|n| n == "response.completed"));
}
