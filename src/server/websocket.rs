//! The Responses API over WebSocket (OpenAI's WebSocket mode, `client.responses.connect()` in
//! the official SDKs): `GET {base}/responses` with an upgrade, then `response.create` client
//! events, each answered like a streamed `POST /responses` — the same server events, one per
//! text frame — from the track's next attempt. Several responses share one socket.
//!
//! How the script plays over a socket:
//!
//! - an attempt with a `status` is an `error` event (`status`, the error object, its headers —
//!   `retry-after` among them) and the socket stays open; when the *next* attempt is a status
//!   reply as a socket opens (in a scenario without tracks: tracks route by a request's
//!   content, which an upgrade has not), the upgrade itself is refused with it (a real HTTP 429
//!   or 503);
//! - `eof` and `reset` end the socket without a close frame (a real FIN or RST: the client sees
//!   1006, abnormal closure); `truncate` sends a close frame (`close_code`, 1000 by default)
//!   before the terminal event; `stall` is silence; `garbage` is a text frame that is not JSON;
//! - fault offsets count events and output deltas as on SSE; a byte offset that falls inside
//!   an event sends the events before it (a frame is never split).
//!
//! The journal has an entry per `response.create` (method `WS`, the upgrade's headers, the
//! event's fields as the body) and names its socket (`socket`, numbered per run from 1).

use std::sync::Arc;

use bytes::Bytes;
use futures_util::{SinkExt as _, StreamExt as _};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, SEC_WEBSOCKET_VERSION, UPGRADE};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Map, Value};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use super::conn_io::{Kill, KillSwitch};
use super::http_util::{openai_error, ResponseBody};
use super::model_api::{answer, choose, render_and_wait, Accepted};
use super::reply_body::EntryHandle;
use super::runs::Run;
use crate::clock::deadline_after;
use crate::journal::Api;
use crate::journal::{Arrival, EndKind, RecordedHeaders};
use crate::scenario::routing::{select, RequestView};
use crate::scenario::FaultKind;
use crate::wire::plan::Step;

type Socket = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

/// Open a socket for `client` on `run`, or refuse it: with a 400 when the handshake is not a
/// WebSocket version 13 one, with the next attempt's status reply when it has one.
pub(super) async fn open(
    switch: Arc<KillSwitch>,
    run: Arc<Run>,
    client: Option<u32>,
    mut request: Request<Incoming>,
) -> Response<ResponseBody> {
    let headers = request.headers().clone();
    let version_13 = headers.get(SEC_WEBSOCKET_VERSION).is_some_and(|v| v.as_bytes() == b"13");
    let Some(key) = headers.get(SEC_WEBSOCKET_KEY).filter(|_| version_13) else {
        let message = "A WebSocket upgrade of /responses needs Sec-WebSocket-Key and Sec-WebSocket-Version: 13";
        return openai_error(StatusCode::BAD_REQUEST, message, "invalid_websocket_handshake", None);
    };
    let arrived = run.journal.now();
    if next_attempt_is_a_status(&run, client, &headers) {
        let arrival = Arrival {
            client,
            method: "GET".to_owned(),
            path: "/responses".to_owned(),
            headers: RecordedHeaders::from_http(&headers),
        };
        let entry = EntryHandle::new(run.journal.clone(), run.journal.begin(arrival, arrived));
        entry.update(|e| e.api = Some(Api::Responses));
        let upgrade = Accepted::responses_over_websocket(Bytes::from_static(b"{}")).expect("{} is a JSON object");
        let upgrade = Accepted { stream: false, ..upgrade };
        return answer(&run, switch, entry, client, &upgrade, &headers, arrived).await;
    }
    let accept = derive_accept_key(key.as_bytes());
    let on_upgrade = hyper::upgrade::on(&mut request);
    let socket_number = run.next_socket();
    tokio::spawn(async move {
        // The client may vanish between the 101 and the upgrade: nothing was journaled yet.
        if let Ok(upgraded) = on_upgrade.await {
            let socket = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None).await;
            let opened = OpenSocket { run, switch, client, number: socket_number, headers };
            opened.serve(socket).await;
        }
    });
    let mut response = Response::new(ResponseBody::default());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let out = response.headers_mut();
    out.insert(UPGRADE, HeaderValue::from_static("websocket"));
    out.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(value) = HeaderValue::from_str(&accept) {
        out.insert(SEC_WEBSOCKET_ACCEPT, value);
    }
    response
}

/// Whether the attempt a `response.create` would get now is a status reply. Only a scenario
/// without `tracks` can tell: tracks route by the request's content (its tools, its text), and
/// an upgrade has none, so with tracks every status is an `error` event on the socket.
fn next_attempt_is_a_status(run: &Run, client: Option<u32>, headers: &http::HeaderMap) -> bool {
    if !run.scenario.tracks.is_empty() {
        return false;
    }
    let view = RequestView { raw_body: "", tools: None, headers };
    let track = select(&run.scenario, &view);
    let next = run.peek_attempt(client, track.name);
    track.attempt(track.slot_for(next)).status.is_some()
}

/// A socket that was opened, and what its responses are journaled with.
struct OpenSocket {
    run: Arc<Run>,
    switch: Arc<KillSwitch>,
    client: Option<u32>,
    number: u32,
    headers: http::HeaderMap,
}

/// Whether a socket goes on after a response.
#[derive(Debug, PartialEq, Eq)]
enum After {
    Open,
    Closed,
}

impl OpenSocket {
    /// Answer `response.create` events until the client or a fault closes the socket.
    async fn serve(self, mut socket: Socket) {
        while let Some(Ok(message)) = socket.next().await {
            let text = match message {
                Message::Text(text) => Bytes::from(text),
                Message::Binary(bytes) => bytes,
                Message::Close(_) => return,
                // tungstenite answers pings itself.
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => continue,
            };
            let after = match response_create(&text) {
                Ok(body) => self.respond(&mut socket, body).await,
                Err(message) => {
                    let error = json!({"type": "error", "status": 400, "error": {
                        "type": "invalid_request_error", "code": "invalid_client_event", "message": message}});
                    send_all(&mut socket, vec![error.to_string()]).await
                }
            };
            if after == After::Closed {
                return;
            }
        }
    }

    /// Journal one `response.create` and play its attempt's reply over the socket.
    async fn respond(&self, socket: &mut Socket, body: Bytes) -> After {
        let arrived = self.run.journal.now();
        let arrival = Arrival {
            client: self.client,
            method: "WS".to_owned(),
            path: "/responses".to_owned(),
            headers: RecordedHeaders::from_http(&self.headers),
        };
        let index = self.run.journal.begin(arrival, arrived);
        self.run.journal.record_body(index, body.clone());
        let mut entry = EntryHandle::new(self.run.journal.clone(), index);
        entry.update(|e| {
            e.api = Some(Api::Responses);
            e.socket = Some(self.number);
        });
        let request = Accepted::responses_over_websocket(body).expect("response_create checked the object");
        let (chosen, ctx) = choose(&self.run, &entry, self.client, &request, &self.headers, arrived);
        let reply = render_and_wait(&self.run, &entry, &chosen, &request, &ctx, arrived).await;
        let close_code = chosen.script.fault.as_ref().and_then(|f| f.close_code).unwrap_or(1000);
        if !reply.status.is_success() {
            let mut headers = http::HeaderMap::new();
            for (name, value) in &chosen.rate_headers {
                if let (Ok(name), Ok(value)) =
                    (http::HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value))
                {
                    headers.insert(name, value);
                }
            }
            if let Some(scripted) = self.run.headers(chosen.track, chosen.slot) {
                scripted.insert_into(&mut headers, self.run.journal.clock().wall_now());
            }
            self.run.journal.record_response_headers(index, RecordedHeaders::from_http(&headers));
            let plan = error_event_plan(reply.plan.steps, reply.status, &headers);
            return Player { socket, entry: &mut entry, switch: &self.switch, close_code }.play(plan).await;
        }
        Player { socket, entry: &mut entry, switch: &self.switch, close_code }.play(reply.plan.steps).await
    }
}

/// The body of a `response.create` event: its fields without `type`, streamed. Anything else is
/// refused with the reason.
fn response_create(text: &[u8]) -> Result<Bytes, String> {
    let Ok(Value::Object(mut event)) = serde_json::from_slice::<Value>(text) else {
        return Err("A client event must be a JSON object with a `type`.".to_owned());
    };
    match event.remove("type") {
        Some(Value::String(kind)) if kind == "response.create" => {}
        Some(Value::String(kind)) => {
            return Err(format!("Unsupported client event `{kind}`: squall answers `response.create`."));
        }
        _ => return Err("A client event must have a string `type` (`response.create`).".to_owned()),
    }
    event.insert("stream".to_owned(), Value::Bool(true));
    Ok(Bytes::from(Value::Object(event).to_string()))
}

/// A status reply's steps with its body turned into one `error` event: what OpenAI sends on a
/// socket instead of an HTTP status, with the reply's headers inside.
fn error_event_plan(
    steps: std::collections::VecDeque<Step>,
    status: StatusCode,
    headers: &http::HeaderMap,
) -> std::collections::VecDeque<Step> {
    let headers: Map<String, Value> = headers
        .iter()
        .filter_map(|(name, value)| Some((name.as_str().to_owned(), Value::String(value.to_str().ok()?.to_owned()))))
        .collect();
    steps
        .into_iter()
        .map(|step| match step {
            Step::Data { bytes, .. } => {
                let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                let mut error = match body.get("error") {
                    Some(Value::Object(error)) => error.clone(),
                    _ => Map::from_iter([(
                        "message".to_owned(),
                        Value::String(String::from_utf8_lossy(&bytes).into_owned()),
                    )]),
                };
                if !headers.is_empty() {
                    error.insert("headers".to_owned(), Value::Object(headers.clone()));
                }
                let event = json!({"type": "error", "status": status.as_u16(), "error": error});
                let mut sse = b"event: error\ndata: ".to_vec();
                sse.extend_from_slice(event.to_string().as_bytes());
                sse.extend_from_slice(b"\n\n");
                Step::Data { bytes: Bytes::from(sse), events: 1, terminal: false }
            }
            other => other,
        })
        .collect()
}

/// Plays one reply's steps over a socket and completes its journal entry.
struct Player<'a> {
    socket: &'a mut Socket,
    entry: &'a mut EntryHandle,
    switch: &'a KillSwitch,
    close_code: u16,
}

impl Player<'_> {
    async fn play(self, steps: std::collections::VecDeque<Step>) -> After {
        let Player { socket, entry, switch, close_code } = self;
        let clock = entry.clock().clone();
        let mut unsent = Vec::new();
        let mut deadline = clock.now();
        // When the reply's last frame went out: taken before it is sent, as the HTTP body does
        // (reply_body.rs), so that the wait the journal shows before the next attempt can only
        // be longer than the client's, never shorter (a serving thread held back after the
        // flush would otherwise take time from the client's wait).
        let mut ended_at: Option<Instant> = None;
        let mut steps = steps;
        while let Some(step) = steps.pop_front() {
            match step {
                Step::Data { bytes, terminal, .. } => {
                    if steps.iter().all(|s| matches!(s, Step::End(_) | Step::FaultFired(_))) {
                        ended_at = Some(clock.now());
                    }
                    unsent.extend_from_slice(&bytes);
                    let frames = whole_events(&mut unsent);
                    let (count, len) = (frames.len() as u32, frames.iter().map(String::len).sum::<usize>() as u64);
                    if send_all(socket, frames).await == After::Closed {
                        entry.finish(EndKind::ClientClosed, clock.now());
                        return After::Closed;
                    }
                    // Only the bytes and events that went out as frames count.
                    entry.update(|e| {
                        e.bytes_sent += len;
                        e.events_sent += count;
                        e.terminal_sent |= terminal && unsent.is_empty();
                    });
                }
                Step::Wait(wait) => {
                    // Waits follow one running deadline unless the reply fell behind it (a slow client).
                    let behind = clock.now().checked_sub(wait).map_or(deadline, |t| deadline.max(t));
                    deadline = deadline_after(behind, wait);
                    clock.sleep_until(deadline).await;
                }
                Step::Stall(duration) => {
                    entry.update(|e| e.fault = Some(FaultKind::Stall));
                    let silence = async {
                        match duration {
                            Some(wait) => clock.sleep(wait).await,
                            None => std::future::pending().await,
                        }
                    };
                    // The client may give up on the silence: it closes or sends something.
                    tokio::select! {
                        () = silence => {}
                        _ = socket.next() => {
                            entry.finish(EndKind::Stalled, clock.now());
                            return After::Closed;
                        }
                    }
                }
                Step::Kill(kill) => {
                    switch.arm(kill);
                    let _ = socket.flush().await;
                    let (fault, end) = match kill {
                        Kill::Eof => (FaultKind::Eof, EndKind::Eof),
                        Kill::Reset => (FaultKind::Reset, EndKind::Reset),
                    };
                    entry.update(|e| e.fault = Some(fault));
                    entry.finish(end, switch.fired_at().unwrap_or_else(|| clock.now()));
                    return After::Closed;
                }
                Step::FaultFired(kind) => entry.update(|e| e.fault = Some(kind)),
                Step::End(end @ (EndKind::Truncated | EndKind::Garbage)) => {
                    let frame =
                        CloseFrame { code: CloseCode::from(close_code), reason: "squall: scripted close".into() };
                    let closed_at = ended_at.unwrap_or_else(|| clock.now());
                    let _ = socket.close(Some(frame)).await;
                    entry.finish(end, closed_at);
                    return After::Closed;
                }
                Step::End(end) => {
                    entry.finish(end, ended_at.unwrap_or_else(|| clock.now()));
                    return After::Open;
                }
            }
        }
        entry.finish(EndKind::Completed, ended_at.unwrap_or_else(|| clock.now()));
        After::Open
    }
}

/// Send each frame; `Closed` when the client is gone.
async fn send_all(socket: &mut Socket, frames: Vec<String>) -> After {
    for frame in frames {
        if socket.feed(Message::text(frame)).await.is_err() {
            return After::Closed;
        }
    }
    match socket.flush().await {
        Ok(()) => After::Open,
        Err(_) => After::Closed,
    }
}

/// Take every whole SSE event out of `unsent` and return their data, one frame each: what the
/// reply writes as `event: …\ndata: {…}\n\n` goes over a socket as the `{…}` alone.
fn whole_events(unsent: &mut Vec<u8>) -> Vec<String> {
    let mut frames = Vec::new();
    while let Some(end) = unsent.windows(2).position(|w| w == b"\n\n") {
        let event: Vec<u8> = unsent.drain(..end + 2).collect();
        let text = String::from_utf8_lossy(&event);
        let data: Vec<&str> = text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(|data| data.strip_prefix(' ').unwrap_or(data))
            .collect();
        if !data.is_empty() {
            frames.push(data.join("\n"));
        }
    }
    frames
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_events_become_their_data_and_a_cut_event_waits() {
        let mut unsent = b"event: a\ndata: {\"n\":1}\n\nevent: b\ndata: {\"n\":2}\n\nevent: c\ndata: {\"n\"".to_vec();
        assert_eq!(whole_events(&mut unsent), vec![r#"{"n":1}"#.to_owned(), r#"{"n":2}"#.to_owned()]);
        assert_eq!(unsent, b"event: c\ndata: {\"n\"".to_vec());
    }

    #[test]
    fn a_response_create_is_its_fields_streamed_and_other_events_are_named() {
        let body = response_create(br#"{"type": "response.create", "model": "m", "input": "hi"}"#).expect("accepted");
        let body: Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(body, json!({"model": "m", "input": "hi", "stream": true}));
        let refused = response_create(br#"{"type": "session.update"}"#).expect_err("refused");
        assert!(refused.contains("session.update"), "{refused}");
        assert!(response_create(b"[1]").is_err());
    }
}
