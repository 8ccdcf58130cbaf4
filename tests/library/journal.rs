//! The journal: complete under every ending, with timings a client can trust.

use std::time::{Duration, Instant};

use serde_json::json;
use squall::journal::EndKind;

use squall_testkit::first_within;
use squall_testkit::harness::{read_body, Harness};

#[tokio::test]
async fn attempts_count_per_track_and_tracks_route_by_content() {
    let toml = r#"
name = "t"
[[tracks]]
name = "main"
match = { tool = "Task" }
[[tracks.attempts]]
status = 503
[[tracks.attempts]]
stream = { text = "main ok" }
[[tracks]]
name = "sub"
[[tracks.attempts]]
stream = { text = "sub ok" }
"#;
    let h = Harness::new(toml).await;
    let main = json!({"model": "m", "input": "x", "tools": [{"type": "function", "name": "Task"}]});
    let sub = json!({"model": "m", "input": "y", "tools": [{"type": "function", "name": "web_fetch"}]});
    assert_eq!(h.post("/responses", main.clone()).await.status().as_u16(), 503);
    assert_eq!(h.post("/responses", sub).await.status().as_u16(), 200);
    assert_eq!(h.post("/responses", main).await.status().as_u16(), 200);
    let journal = h.settled_journal().await;
    let seen: Vec<(Option<&str>, Option<u32>, Option<u16>)> =
        journal.iter().map(|e| (e.track.as_deref(), e.attempt, e.status)).collect();
    assert_eq!(
        seen,
        [(Some("main"), Some(0), Some(503)), (Some("sub"), Some(0), Some(200)), (Some("main"), Some(1), Some(200))]
    );
    assert_eq!(journal[0].path, "/responses");
    assert_eq!(journal[0].body["input"], "x");
}

#[tokio::test]
async fn timings_match_what_the_client_measured() {
    let _quiet = squall_testkit::quiet_turn().await;
    let toml = "name = \"t\"\n[[attempts]]\ndelay_ms = 120\nstream = { text = \"a b c\", event_delay_ms = 10 }\n";
    let measure = || async {
        let h = Harness::new(toml).await;
        let sent = Instant::now();
        let read = read_body(h.stream_responses().await).await;
        let client_total = sent.elapsed();
        assert!(read.error.is_none());
        let entry = &h.settled_journal().await[0];
        let server_total =
            Duration::from_secs_f64((entry.finished_at_ms.expect("finished") - entry.received_at_ms) / 1000.0);
        assert!(server_total >= Duration::from_millis(120 + 10 * 10), "server {server_total:?}");
        (client_total, server_total)
    };
    let close = |(client, server): &(Duration, Duration)| client.abs_diff(*server) < Duration::from_millis(15);
    let taken = first_within(3, measure, close).await;
    assert!(taken.last().is_some_and(close), "client and server totals, try by try: {taken:?}");
}

#[tokio::test]
async fn a_client_that_hangs_up_mid_stream_is_journaled() {
    let toml = "name = \"t\"\n[[attempts]]\nstream = { text = \"a b c d e f\", event_delay_ms = 100 }\n";
    let h = Harness::new(toml).await;
    let response = h.stream_responses().await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    drop(response);
    let entry = &h.settled_journal().await[0];
    assert_eq!(entry.end, Some(EndKind::ClientClosed));
    assert!(entry.events_sent >= 1 && !entry.terminal_sent, "{entry:?}");
}

#[tokio::test]
async fn a_client_that_hangs_up_during_the_header_delay_is_journaled() {
    let h = Harness::new("name = \"t\"\n[[attempts]]\ndelay_ms = 5000\n").await;
    let request = h.stream_responses();
    assert!(tokio::time::timeout(Duration::from_millis(100), request).await.is_err());
    let entry = &h.settled_journal().await[0];
    assert_eq!((entry.end, entry.status), (Some(EndKind::ClientClosed), None));
}

#[tokio::test]
async fn entries_exist_while_the_reply_is_in_progress() {
    let h = Harness::new("name = \"t\"\n[[attempts]]\ndelay_ms = 400\n").await;
    let pending = tokio::spawn({
        let client = h.client.clone();
        let url = format!("{}/responses", h.base_url);
        async move { client.post(url).json(&json!({"model": "m", "input": "x"})).send().await.map(|r| r.status()) }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let journal = h.journal().await;
    assert_eq!(journal.len(), 1);
    assert_eq!((journal[0].end, journal[0].attempt), (None, Some(0)));
    assert!(pending.await.expect("joined").expect("reply").is_success());
}

#[tokio::test]
async fn a_client_that_hangs_up_mid_request_body_leaves_its_headers_in_the_journal() {
    use tokio::io::AsyncWriteExt;
    let h = Harness::new("name = \"t\"\n[[attempts]]\nstream = { text = \"a\" }\n").await;
    let url = reqwest::Url::parse(&h.base_url).expect("base url");
    let address = format!("{}:{}", url.host_str().expect("host"), url.port().expect("port"));
    let mut socket = tokio::net::TcpStream::connect(address).await.expect("connected");
    let head = format!(
        "POST {}/responses HTTP/1.1\r\nhost: squall\r\ncontent-type: application/json\r\nx-probe: kept\r\ncontent-length: 100\r\n\r\n{{\"model\"",
        url.path()
    );
    socket.write_all(head.as_bytes()).await.expect("head and part of the body");
    tokio::time::sleep(Duration::from_millis(50)).await;
    drop(socket);
    let journal = h.settled_journal().await;
    assert_eq!(journal.len(), 1, "{journal:?}");
    assert_eq!(journal[0].headers.get("x-probe").map(String::as_str), Some("kept"), "{:?}", journal[0]);
    assert!(journal[0].end.is_some(), "the entry is completed: {:?}", journal[0]);
}
