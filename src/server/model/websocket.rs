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

use super::entry_handle::EntryHandle;
use super::playback::{Cue, Playback};
use super::{answer, choose, insert_reply_headers, render_and_wait, Accepted};
use crate::api::Api;
use crate::journal::{Arrival, EndKind, Protocol, RecordedHeaders};
use crate::scenario::routing::{select, RequestView};
use crate::server::connection::conn_io::KillSwitch;
use crate::server::http_util::{openai_error, ResponseBody};
use crate::server::runs::Run;
use crate::wire::plan::{Span, GARBAGE_FRAME};

type Socket = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

/// Open a socket for `client` on `run` (closed once idle for `idle`), or refuse it: with a 400 when the handshake is not a
/// WebSocket version 13 one, with the next attempt's status reply when it has one.
pub(in crate::server) async fn open(
    switch: Arc<KillSwitch>,
    run: Arc<Run>,
    client: Option<u32>,
    (mut request, idle): (Request<Incoming>, std::time::Duration),
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
            protocol: Protocol::Http1,
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
            opened.serve(socket, idle).await;
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
    /// Answer `response.create` events until the client or a fault closes the socket. A socket
    /// with no response in flight is closed (1001, going away) once it has been idle for `idle`;
    /// a frame the protocol refuses is answered with its close code (RFC 6455 §7.4.1: 1007 for a
    /// text frame that is not UTF-8, 1009 for one too large, 1002 for any other violation).
    async fn serve(self, mut socket: Socket, idle: std::time::Duration) {
        let clock = self.run.journal.clock().clone();
        loop {
            let Some(next) = clock.timeout(idle, socket.next()).await else {
                close(&mut socket, CloseCode::Away, "squall: idle, no response in flight").await;
                return;
            };
            let message = match next {
                None => return,
                Some(Ok(message)) => message,
                Some(Err(error)) => {
                    if let Some((code, reason)) = refusal(&error) {
                        close(&mut socket, code, reason).await;
                    }
                    return;
                }
            };
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
            protocol: Protocol::Http1,
            headers: RecordedHeaders::from_http(&self.headers),
        };
        let index = self.run.journal.begin(arrival, arrived);
        self.run.journal.record_body(index, body.clone());
        let entry = EntryHandle::new(self.run.journal.clone(), index);
        entry.update(|e| {
            e.api = Some(Api::Responses);
            e.socket = Some(self.number);
        });
        let request = Accepted::responses_over_websocket(body).expect("response_create checked the object");
        let (chosen, ctx) = choose(&self.run, &entry, self.client, &request, &self.headers, arrived);
        let reply = render_and_wait(&self.run, &entry, &chosen, &request, &ctx, arrived).await;
        let close_code = chosen.script.fault.as_ref().and_then(|f| f.close_code).unwrap_or(1000);
        // A status reply is an `error` event on the socket, with the reply's headers inside.
        let error = (!reply.status.is_success()).then(|| {
            let mut headers = http::HeaderMap::new();
            let scripted = self.run.headers(chosen.track, chosen.slot);
            insert_reply_headers(&mut headers, &chosen.rate_headers, scripted, self.run.journal.client_wall_now());
            self.run.journal.record_response_headers(index, RecordedHeaders::from_http(&headers));
            ErrorEvent::new(reply.status, &headers)
        });
        let player = Player { socket, switch: &self.switch, close_code, spans: reply.spans, error, going_away: false };
        player.play(Playback::new(reply.plan.steps, entry)).await
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

/// A status reply as OpenAI sends it on a socket: an `error` event with the status and the
/// reply's headers inside.
struct ErrorEvent {
    status: StatusCode,
    headers: Map<String, Value>,
}

impl ErrorEvent {
    fn new(status: StatusCode, headers: &http::HeaderMap) -> Self {
        let headers = headers
            .iter()
            .filter_map(|(name, value)| {
                Some((name.as_str().to_owned(), Value::String(value.to_str().ok()?.to_owned())))
            })
            .collect();
        ErrorEvent { status, headers }
    }

    /// The event for the reply's JSON error `body` (its `error` object; any other body is the
    /// message).
    fn frame(&self, body: &[u8]) -> String {
        let mut error = match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(mut object)) if object.get("error").is_some_and(Value::is_object) => {
                match object.remove("error") {
                    Some(Value::Object(error)) => error,
                    _ => Map::new(),
                }
            }
            _ => Map::from_iter([("message".to_owned(), Value::String(String::from_utf8_lossy(body).into_owned()))]),
        };
        if !self.headers.is_empty() {
            error.insert("headers".to_owned(), Value::Object(self.headers.clone()));
        }
        json!({"type": "error", "status": self.status.as_u16(), "error": error}).to_string()
    }
}

/// Sends one reply's cues over a socket as frames and completes its journal entry.
struct Player<'a> {
    socket: &'a mut Socket,
    switch: &'a KillSwitch,
    close_code: u16,
    /// The pieces of the reply's body, in order: each becomes a frame once all its bytes have
    /// been played (a frame is never split).
    spans: Vec<Span>,
    /// A status reply's `error` event, which its body becomes.
    error: Option<ErrorEvent>,
    /// A graceful `goaway` fired: the socket closes with 1001 (going away) after this reply.
    going_away: bool,
}

impl Player<'_> {
    async fn play(mut self, mut playback: Playback) -> After {
        let clock = playback.entry().clock().clone();
        // The bytes of the piece being played, and which piece it is.
        let (mut unsent, mut piece) = (Vec::new(), 0);
        loop {
            let cue = if playback.in_stall() {
                // The client may give up on the silence: it closes or sends something.
                tokio::select! {
                    cue = playback.next() => cue,
                    _ = self.socket.next() => {
                        playback.entry().finish_now(EndKind::Stalled);
                        return After::Closed;
                    }
                }
            } else {
                playback.next().await
            };
            match cue {
                Some(Cue::Data { bytes, events: _, terminal, ending }) => {
                    // The end is taken before the last frame goes out, as the HTTP body does.
                    let ended_at = clock.now();
                    let frames = if ending == Some(EndKind::Garbage) {
                        vec![GARBAGE_FRAME.to_owned()]
                    } else {
                        unsent.extend_from_slice(&bytes);
                        self.whole_pieces(&mut unsent, &mut piece)
                    };
                    let events = if ending == Some(EndKind::Garbage) { 0 } else { frames.len() as u32 };
                    let len = frames.iter().map(String::len).sum::<usize>() as u64;
                    if send_all(self.socket, frames).await == After::Closed {
                        playback.entry().finish_now(EndKind::ClientClosed);
                        return After::Closed;
                    }
                    // Only the bytes and events that went out as frames count.
                    playback.entry().update(|e| {
                        e.bytes_sent += len;
                        e.events_sent += events;
                        e.terminal_sent |= terminal && unsent.is_empty();
                    });
                    if let Some(end) = ending {
                        return self.end(playback.entry(), end, ended_at).await;
                    }
                }
                Some(Cue::Stalling | Cue::StallOver) => {}
                Some(Cue::CloseConnection) => self.going_away = true,
                Some(Cue::Kill(kill)) => {
                    self.switch.arm(kill);
                    let _ = self.socket.flush().await;
                    let (fault, end) = playback.kill_ending(kill);
                    let entry = playback.entry();
                    entry.update(|e| e.fault = fault);
                    entry.finish(end, self.switch.fired_at().unwrap_or_else(|| clock.now()));
                    return After::Closed;
                }
                Some(Cue::End(end)) => return self.end(playback.entry(), end, clock.now()).await,
                None => return self.end(playback.entry(), EndKind::Completed, clock.now()).await,
            }
        }
    }

    /// The frames of the pieces whose bytes are all in `unsent`, taken out of it: an event's
    /// payload, or a status reply's body as its `error` event.
    fn whole_pieces(&self, unsent: &mut Vec<u8>, piece: &mut usize) -> Vec<String> {
        let mut frames = Vec::new();
        while let Some(span) = self.spans.get(*piece).filter(|span| span.len <= unsent.len()) {
            let bytes: Vec<u8> = unsent.drain(..span.len).collect();
            frames.push(match &self.error {
                Some(error) => error.frame(&bytes),
                None => String::from_utf8_lossy(&bytes[span.payload()]).into_owned(),
            });
            *piece += 1;
        }
        frames
    }

    /// End the reply: a `truncate` or `garbage` fault closes the socket with a close frame, a
    /// graceful `goaway` with 1001 (going away).
    async fn end(&mut self, entry: &mut EntryHandle, end: EndKind, at: Instant) -> After {
        entry.finish(end, at);
        if self.going_away {
            close(self.socket, CloseCode::Away, "squall: scripted goaway").await;
            return After::Closed;
        }
        if !matches!(end, EndKind::Truncated | EndKind::Garbage) {
            return After::Open;
        }
        close(self.socket, CloseCode::from(self.close_code), "squall: scripted close").await;
        After::Closed
    }
}

/// The close code for a frame the protocol refuses; `None` when the connection itself broke.
fn refusal(error: &tokio_tungstenite::tungstenite::Error) -> Option<(CloseCode, &'static str)> {
    use tokio_tungstenite::tungstenite::Error;
    match error {
        Error::Utf8(_) => Some((CloseCode::Invalid, "squall: a text frame that is not UTF-8")),
        Error::Capacity(_) => Some((CloseCode::Size, "squall: a message too large")),
        Error::Protocol(_) => Some((CloseCode::Protocol, "squall: a protocol violation")),
        _ => None,
    }
}

/// Close the socket with `code` (the client may already be gone).
async fn close(socket: &mut Socket, code: CloseCode, reason: &'static str) {
    let _ = socket.close(Some(CloseFrame { code, reason: reason.into() })).await;
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

#[cfg(test)]
mod tests {
    use super::*;

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
