//! An upstream that misbehaves, as real ones do: it never answers, goes silent mid-body, resets
//! mid-body or breaks its chunked framing. squall never hangs its client (a 504 past the read
//! timeout before the head; a broken reply after it) and journals the failure as the upstream's
//! (`upstream.error`, end `upstream_failed`), never as a fault it injected.

use std::time::{Duration, Instant};

use serde_json::Value;
use squall::embedded::{MockProvider, ScriptedRun};
use squall::journal::EndKind;
use squall::scenario::{Attempt, Catalogue, Scenario};
use squall::server::{ServerConfig, Upstream};
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpListener;

use super::proxy::{read_request, stream_request, STREAM};
use squall_testkit::harness::read_body;

/// What the upstream does once it has read a request.
#[derive(Debug, Clone, Copy)]
enum Misbehaviour {
    /// Sends no response head at all.
    SilentHead,
    /// Sends the head and the first event, then nothing.
    SilentMidBody,
    /// Sends the head and the first event, then resets the connection.
    ResetMidBody,
    /// Sends the head and the first event, then a chunk size that is not hexadecimal.
    BrokenFraming,
}

/// An upstream that misbehaves so on every request, at `http://…/v1`.
async fn misbehaving(how: Misbehaviour) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let _ = read_request(&mut socket).await;
                let first = STREAM.split_inclusive("\n\n").next().unwrap_or_default();
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                let chunk = format!("{:x}\r\n{first}\r\n", first.len());
                match how {
                    Misbehaviour::SilentHead => {}
                    Misbehaviour::SilentMidBody => {
                        let _ = socket.write_all(format!("{head}{chunk}").as_bytes()).await;
                    }
                    Misbehaviour::ResetMidBody => {
                        let _ = socket.write_all(format!("{head}{chunk}").as_bytes()).await;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        // A zero linger does not block on drop: the RST goes at once.
                        #[allow(deprecated)]
                        let _ = socket.set_linger(Some(Duration::ZERO));
                        return;
                    }
                    Misbehaviour::BrokenFraming => {
                        let _ = socket.write_all(format!("{head}{chunk}zz\r\nnot a chunk\r\n").as_bytes()).await;
                    }
                }
                // Hold the connection open, saying nothing more.
                tokio::time::sleep(Duration::from_secs(30)).await;
            });
        }
    });
    url
}

/// `future`'s output, or a failed test when it takes 10 s: the client must not hang.
async fn within<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), future).await.expect("the client was left hanging")
}

/// A squall forwarding to `url` with a read timeout of `timeout`, and one run.
async fn proxy(url: &str, timeout: Duration) -> (MockProvider, ScriptedRun) {
    let mut config = ServerConfig::loopback(Catalogue::default());
    config.upstream = Some(Upstream::parse(url, None).expect("a valid upstream").reading_within(timeout));
    let provider = MockProvider::start_with(config).await;
    let run = provider.run(Scenario::named("forwarded").attempt(Attempt::default()));
    (provider, run)
}

#[tokio::test]
async fn an_upstream_that_never_answers_is_a_504_naming_it_once_its_read_timeout_passes() {
    let url = misbehaving(Misbehaviour::SilentHead).await;
    let (_provider, run) = proxy(&url, Duration::from_millis(300)).await;
    let started = Instant::now();
    let response = within(stream_request(run.base_url())).await;
    assert!(started.elapsed() < Duration::from_secs(5), "answered in {:?}", started.elapsed());
    assert_eq!(response.status(), 504);
    let body: Value = response.json().await.expect("json in the API's shape");
    assert_eq!(body["error"]["code"], "upstream_timeout", "{body}");
    assert!(body["error"]["message"].as_str().is_some_and(|m| m.contains(&url) && m.contains("0.3 s")), "{body}");
    let entry = run.journal().remove(0);
    let call = entry.upstream.clone().expect("the upstream's part is journaled");
    assert!(call.error.as_deref().is_some_and(|e| e.contains("no response head")), "{call:?}");
    assert_eq!((entry.status, entry.end, entry.fault), (Some(504), Some(EndKind::ErrorStatus), None));
}

#[tokio::test]
async fn an_upstream_that_fails_mid_body_is_journaled_as_its_failure_and_not_as_a_fault() {
    for (how, says) in [
        (Misbehaviour::SilentMidBody, "sent nothing for 0.3 s"),
        (Misbehaviour::ResetMidBody, "its body broke"),
        (Misbehaviour::BrokenFraming, "its body broke"),
    ] {
        let url = misbehaving(how).await;
        let (_provider, run) = proxy(&url, Duration::from_millis(300)).await;
        let started = Instant::now();
        let response = within(stream_request(run.base_url())).await;
        assert_eq!(response.status(), 200, "{how:?}: the head passed");
        let body = within(read_body(response)).await;
        assert!(started.elapsed() < Duration::from_secs(5), "{how:?}: the client waited {:?}", started.elapsed());
        assert!(body.error.is_some(), "{how:?}: the client's reply breaks as the upstream's did");
        assert!(body.text().contains("response.created"), "{how:?}: what came before passed: {:?}", body.text());
        let entry = run.journal().remove(0);
        let call = entry.upstream.clone().expect("the upstream's part is journaled");
        assert_eq!((entry.end, entry.fault), (Some(EndKind::UpstreamFailed), None), "{how:?}: {entry:?}");
        assert!(call.error.as_deref().is_some_and(|e| e.contains(says)), "{how:?}: {call:?}");
        assert_eq!(entry.events_sent, 1, "{how:?}");
    }
}
