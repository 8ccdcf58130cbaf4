//! What squall and wiremock-rs serve when the benches compare them: squall's 50-event Responses
//! stream, and the same bytes on the wire from wiremock-rs — the same body, and the same
//! chunked framing (OpenAI streams chunked; a `Content-Length` body lets a hyper client see the
//! end of the body two thread hops sooner, which moves the server's wake-ups and with them its
//! CPU per request, so a comparison across framings measures the client).

use std::time::SystemTime;

use bytes::Bytes;
use squall::journal::Api;
use squall::scenario::StreamSpec;
use squall::wire::{estimate_tokens, ReplyContext};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::common::{send_streamed, STREAMED_REQUEST};

/// A text that the Responses API streams as exactly 50 events.
pub(super) fn fifty_event_text() -> String {
    // 8 framing events + 42 deltas, one per word.
    (0..42).map(|i| format!("word{i}")).collect::<Vec<_>>().join(" ")
}

/// Requests a squall run has answered when its ids reach the length of [`fifty_event_body`]'s:
/// the benches warm each server up with this many before they compare.
pub(super) const WARM_UP_REQUESTS: u64 = 10_000;

/// The body squall streams for [`fifty_event_text`] in answer to [`STREAMED_REQUEST`], with ids
/// as long as those of a run named `cpu` from its 10,000th to its 99,999th request
/// (`resp_r1-cpu_10000`): squall's bytes, to the byte; a digit more or less per id elsewhere.
pub(super) fn fifty_event_body() -> Bytes {
    let spec = StreamSpec { text: Some(fifty_event_text()), ..StreamSpec::default() };
    let ctx = ReplyContext {
        id_seed: "r1-cpu_10000".to_owned(),
        model: "m".to_owned(),
        created_at: SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        input_tokens: estimate_tokens(STREAMED_REQUEST),
        include_usage: false,
    };
    let events = Api::Responses.stream_events(&spec, &ctx);
    assert_eq!(events.len(), 50);
    events.iter().flat_map(|e| e.to_bytes().to_vec()).collect::<Vec<_>>().into()
}

/// A wiremock-rs server answering `POST /v1/responses` with [`fifty_event_body`], chunked (hyper
/// chunk-encodes a fixed body when the response says `transfer-encoding: chunked`, as squall's
/// does: one chunk, then the last).
pub(super) async fn wiremock_same_bytes() -> MockServer {
    let mock = MockServer::start().await;
    let reply = ResponseTemplate::new(200)
        .set_body_raw(fifty_event_body().to_vec(), "text/event-stream")
        .insert_header("transfer-encoding", "chunked");
    Mock::given(method("POST")).and(path("/v1/responses")).respond_with(reply).mount(&mock).await;
    mock
}

/// How a server answered [`STREAMED_REQUEST`]: its framing and its body's length.
async fn framing_and_length(url: &str) -> (Option<String>, usize) {
    let response = send_streamed(&reqwest::Client::new(), url).await;
    let framing = response.headers().get("transfer-encoding").and_then(|v| v.to_str().ok()).map(str::to_owned);
    (framing, response.bytes().await.expect("a body").len())
}

/// Panics unless both servers answer chunked, with bodies within 1 % of each other's length
/// (past [`WARM_UP_REQUESTS`]; squall's ids grow a digit at the 100,000th request) — the
/// comparison's premise, checked before anything is measured.
pub(super) async fn assert_same_bytes(squall_url: &str, wiremock_url: &str) {
    let (ours, theirs) = (framing_and_length(squall_url).await, framing_and_length(wiremock_url).await);
    assert_eq!(ours.0.as_deref(), Some("chunked"), "squall streams chunked");
    assert_eq!(ours.0, theirs.0, "squall and wiremock-rs must frame the body the same way");
    let (a, b) = (ours.1 as f64, theirs.1 as f64);
    assert!((a - b).abs() <= 0.01 * b, "squall sends {a} body bytes, wiremock-rs {b}: not the same bytes");
}
