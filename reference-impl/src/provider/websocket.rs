//! The Responses API over WebSocket (OpenAI's WebSocket mode): one attempt is a
//! `response.create` on a socket, read event by event with the attempt's timeout on the
//! handshake and on every gap between events.
//!
//! Sockets are kept between calls, one idle pool per session id (a socket carries the headers
//! it was opened with, `x-session-id` among them), and reused for the next turn; after any
//! failure — an `error` event too — the socket is dropped and the retry opens a new one. How each failure
//! is classified, the same as over HTTP:
//!
//! - a status at the upgrade (429, 503, …): as that HTTP status, with its headers;
//! - an `error` event with a `status`: as that status, with the headers the event carries
//!   (`retry-after`, `x-should-retry`);
//! - no close frame (FIN or RST, 1006): `eof` or `reset`; a close frame with 1000 before the
//!   terminal event: `truncated`; any other close code: a broken stream (`eof`), named;
//! - a frame that is not JSON: garbage; no event within the timeout: an idle timeout.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;

use super::responses::{self, Observed, Progress, ResponsesAccumulator};
use super::sse::SseMessage;
use super::{AttemptContext, ModelOutput, ModelRequest};
use crate::decide::classify::{classify_status, classify_transport, ProviderError, TransportFailure};

type Socket = WebSocketStream<TcpStream>;

/// Idle sockets by session id (`""` for calls without one).
#[derive(Debug, Default)]
pub struct SocketPool {
    idle: Mutex<HashMap<String, Vec<Socket>>>,
}

impl SocketPool {
    fn take(&self, session: &str) -> Option<Socket> {
        self.lock().get_mut(session).and_then(Vec::pop)
    }

    fn put_back(&self, session: &str, socket: Socket) {
        self.lock().entry(session.to_owned()).or_default().push(socket);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Socket>>> {
        self.idle.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Where and as whom sockets are opened.
#[derive(Debug, Clone)]
pub struct WebSocketTarget {
    /// `ws://…/v1/responses`.
    pub url: String,
    /// Sent as the provider key on the upgrade.
    pub api_key: String,
    /// Open sockets, reused from one response to the next.
    pub sockets: Arc<SocketPool>,
}

impl WebSocketTarget {
    /// The socket URL of an OpenAI `base_url` (ending in `/v1`).
    pub fn new(base_url: &str, api_key: &str) -> Self {
        let ws = base_url.replacen("https://", "wss://", 1).replacen("http://", "ws://", 1);
        WebSocketTarget { url: format!("{ws}/responses"), api_key: api_key.to_owned(), sockets: Arc::default() }
    }

    /// One attempt: `response.create` on an idle socket of the session, or a new one.
    pub async fn attempt(
        &self,
        request: &ModelRequest,
        context: AttemptContext,
        observe: &mut (dyn FnMut(Observed<'_>) + Send),
    ) -> Result<ModelOutput, ProviderError> {
        let session = request.session_id.clone().unwrap_or_default();
        let mut socket = match self.sockets.take(&session) {
            Some(socket) => socket,
            None => self.open(request, &context).await?,
        };
        let mut event = responses::request_body(request);
        if let Value::Object(fields) = &mut event {
            fields.remove("stream");
            fields.insert("type".to_owned(), Value::from("response.create"));
        }
        if let Err(e) = socket.send(Message::text(event.to_string())).await {
            return Err(socket_error(&e));
        }
        let outcome = read_response(&mut socket, &context, observe).await;
        // A socket that answered in full is kept for the next turn; a failed one is dropped.
        if outcome.socket_usable {
            self.sockets.put_back(&session, socket);
        }
        outcome.result
    }

    async fn open(&self, request: &ModelRequest, context: &AttemptContext) -> Result<Socket, ProviderError> {
        let mut handshake = self
            .url
            .as_str()
            .into_client_request()
            .map_err(|e| classify_transport(TransportFailure::Connect, &e.to_string()))?;
        let headers = handshake.headers_mut();
        let mut add = |name: &'static str, value: &str| {
            if let Ok(value) = value.parse() {
                headers.insert(name, value);
            }
        };
        add("authorization", &format!("Bearer {}", self.api_key));
        if let Some(session_id) = &request.session_id {
            add("x-session-id", session_id);
        }
        let host = handshake.uri().authority().map(|a| a.as_str().to_owned()).unwrap_or_default();
        let connect = async {
            let tcp = TcpStream::connect(&host).await.map_err(|e| io_failure(&e))?;
            let _ = tcp.set_nodelay(true);
            match tokio_tungstenite::client_async(handshake, tcp).await {
                Ok((socket, _)) => Ok(socket),
                Err(WsError::Http(response)) => {
                    let body = response.body().as_deref().map(String::from_utf8_lossy).unwrap_or_default().into_owned();
                    let header =
                        |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
                    Err(classify_status(response.status().as_u16(), &header, &body, context.wall_now()))
                }
                Err(e) => Err(socket_error(&e)),
            }
        };
        match context.within(connect).await {
            None => Err(classify_transport(TransportFailure::RequestTimeout, "no WebSocket handshake")),
            Some(result) => result,
        }
    }
}

/// How a response on a socket ended, and whether the socket can take the next one.
struct Outcome {
    result: Result<ModelOutput, ProviderError>,
    socket_usable: bool,
}

async fn read_response(
    socket: &mut Socket,
    context: &AttemptContext,
    observe: &mut (dyn FnMut(Observed<'_>) + Send),
) -> Outcome {
    let broken = |error: ProviderError| Outcome { result: Err(error), socket_usable: false };
    let mut accumulator = ResponsesAccumulator::default();
    loop {
        let text = match context.within(socket.next()).await {
            None => return broken(classify_transport(TransportFailure::IdleTimeout, "")),
            Some(None) => {
                return broken(classify_transport(TransportFailure::Eof, "the socket ended without a close frame"))
            }
            Some(Some(Err(e))) => return broken(socket_error(&e)),
            Some(Some(Ok(Message::Close(frame)))) => {
                return broken(closed(frame.map(|f| (f.code, f.reason.to_string()))))
            }
            Some(Some(Ok(Message::Text(text)))) => text.to_string(),
            Some(Some(Ok(Message::Binary(bytes)))) => String::from_utf8_lossy(&bytes).into_owned(),
            Some(Some(Ok(_))) => continue,
        };
        let message = SseMessage { event: None, data: text };
        if let Some(error) = status_error(&message, context.wall_now()) {
            // The socket could take the next turn, but a retry opens a new one, as after a
            // break: every retry of this client then costs it the same (its reaction, which
            // the suite measures once, includes a handshake whatever failed).
            return broken(error);
        }
        match accumulator.on_message(&message, observe) {
            Ok(Progress::Done) => return Outcome { result: Ok(accumulator.into_output()), socket_usable: true },
            Ok(Progress::Continue) => {}
            Err(error) => return broken(error),
        }
    }
}

/// An `error` event with a `status`: what the server would have answered over HTTP, classified
/// as that status with the headers the event carries.
fn status_error(message: &SseMessage, now: std::time::SystemTime) -> Option<ProviderError> {
    let event: Value = serde_json::from_str(&message.data).ok()?;
    if event["type"] != "error" {
        return None;
    }
    let status = u16::try_from(event["status"].as_u64()?).ok()?;
    let error = &event["error"];
    let header = |name: &str| {
        let headers = error["headers"].as_object()?;
        headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).and_then(|(_, v)| v.as_str()).map(str::to_owned)
    };
    let body = serde_json::json!({ "error": error }).to_string();
    Some(classify_status(status, &header, &body, now))
}

/// A close frame before the terminal event: 1000 is a clean end too early (truncated); any
/// other code a broken stream.
fn closed(frame: Option<(CloseCode, String)>) -> ProviderError {
    match frame {
        Some((CloseCode::Normal, _)) => classify_transport(TransportFailure::Truncated, "the socket closed (1000)"),
        Some((code, reason)) => {
            classify_transport(TransportFailure::Eof, &format!("the socket closed with {} {reason}", u16::from(code)))
        }
        None => classify_transport(TransportFailure::Eof, "the socket closed without a code"),
    }
}

fn socket_error(error: &WsError) -> ProviderError {
    match error {
        WsError::Io(io) => io_failure(io),
        other => classify_transport(TransportFailure::Eof, &other.to_string()),
    }
}

fn io_failure(io: &std::io::Error) -> ProviderError {
    let failure = match io.kind() {
        std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::ConnectionAborted => TransportFailure::Reset,
        std::io::ErrorKind::ConnectionRefused => TransportFailure::Connect,
        _ => TransportFailure::Eof,
    };
    classify_transport(failure, &io.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::classify::ErrorKind;
    use std::time::Duration;

    fn message(event: Value) -> SseMessage {
        SseMessage { event: None, data: event.to_string() }
    }

    #[test]
    fn an_error_event_with_a_status_is_that_status_with_its_headers() {
        let event = serde_json::json!({"type": "error", "status": 429, "error": {
            "type": "requests", "code": "rate_limit_exceeded", "message": "slow down",
            "headers": {"Retry-After": "2"}}});
        let error = status_error(&message(event), std::time::SystemTime::now()).expect("a status error");
        assert_eq!(error.kind, ErrorKind::RateLimit);
        assert_eq!(error.retry_after.map(|r| r.delay), Some(Duration::from_secs(2)));
        let refused = serde_json::json!({"type": "error", "status": 400, "error": {"message": "bad"}});
        assert!(!crate::decide::classify::is_retryable(
            &status_error(&message(refused), std::time::SystemTime::now()).expect("a status error")
        ));
        let in_stream = serde_json::json!({"type": "error", "code": "server_error", "message": "x"});
        assert!(
            status_error(&message(in_stream), std::time::SystemTime::now()).is_none(),
            "without a status the accumulator decides"
        );
    }

    #[test]
    fn a_close_frame_is_a_truncation_only_with_1000() {
        let truncated = closed(Some((CloseCode::Normal, String::new())));
        assert_eq!(truncated.transport, Some(TransportFailure::Truncated));
        let going_away = closed(Some((CloseCode::from(1011), "restart".to_owned())));
        assert_eq!(going_away.transport, Some(TransportFailure::Eof));
        assert!(going_away.message.contains("1011"), "{}", going_away.message);
    }
}
