//! A journal entry as the admin API and the suite see it, and the facts known on arrival.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::recorded::RecordedHeaders;
use crate::api::Api;
use crate::scenario_model::FaultKind;

/// How a reply ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndKind {
    /// The whole scripted reply was sent (success body or in-stream failure event).
    Completed,
    /// A scripted error status with its body was sent.
    ErrorStatus,
    /// FIN mid-body (fault `eof`).
    Eof,
    /// TCP RST mid-body (fault `reset`).
    Reset,
    /// The connection cut under the reply (fault `goaway` with an error code): over HTTP/2 by
    /// a GOAWAY with that code, over HTTP/1.1 by a FIN.
    #[serde(rename = "goaway")]
    GoAway,
    /// A clean end of body without the terminal event (fault `truncate`).
    Truncated,
    /// The client gave up during a stall (fault `stall`).
    Stalled,
    /// Non-SSE bytes were sent, then the body ended (fault `garbage`).
    Garbage,
    /// The connection closed under the reply with no GOAWAY (fault `close`): a FIN.
    Closed,
    /// The request refused before any byte of a reply (fault `refuse`): over HTTP/2 an
    /// RST_STREAM before the response's HEADERS, over HTTP/1.1 the connection closed.
    Refused,
    /// The client closed the connection before the reply ended.
    ClientClosed,
    /// A proxied reply's upstream failed mid-body — it reset, closed early, broke its framing
    /// or went silent past the read timeout — and squall reset the client's connection. No
    /// fault was injected: `upstream.error` says what the upstream did.
    UpstreamFailed,
}

impl EndKind {
    /// The kind's name as the journal writes it (`completed`, `error_status`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            EndKind::Completed => "completed",
            EndKind::ErrorStatus => "error_status",
            EndKind::Eof => "eof",
            EndKind::Reset => "reset",
            EndKind::GoAway => "goaway",
            EndKind::Truncated => "truncated",
            EndKind::Stalled => "stalled",
            EndKind::Garbage => "garbage",
            EndKind::Closed => "closed",
            EndKind::Refused => "refused",
            EndKind::ClientClosed => "client_closed",
            EndKind::UpstreamFailed => "upstream_failed",
        }
    }
}

/// The HTTP version a request came over, named as ALPN names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Protocol {
    /// HTTP/1.1 (journals written before squall served HTTP/2 read as this).
    #[default]
    #[serde(rename = "http/1.1")]
    Http1,
    /// HTTP/2: over cleartext with prior knowledge (h2c) or over TLS.
    #[serde(rename = "h2")]
    Http2,
}

impl Protocol {
    /// The protocol a request's version names (HTTP/1.0 is served as HTTP/1.1 is).
    pub fn of(version: http::Version) -> Protocol {
        if version == http::Version::HTTP_2 {
            Protocol::Http2
        } else {
            Protocol::Http1
        }
    }
}

/// One request as the server saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JournalEntry {
    /// 0-based position in the run.
    pub index: usize,
    /// The herd client whose base URL (`/runs/{id}/clients/{k}/v1`) the request came to; null
    /// on the run's own base URL.
    #[serde(default)]
    pub client: Option<u32>,
    /// The track that answered; null for requests that are not model calls.
    pub track: Option<String>,
    /// 0-based attempt within the track (counted per herd client); null for requests that are
    /// not model calls.
    pub attempt: Option<u32>,
    /// `GET`, `POST`, ...
    pub method: String,
    /// Relative to the base URL, e.g. `/responses`.
    pub path: String,
    /// The HTTP version it came over.
    #[serde(default)]
    pub protocol: Protocol,
    /// The model API the request spoke — `responses`, `chat` or `messages` — or null for a
    /// request that is not a model call (`/models`, an unknown path).
    #[serde(default)]
    pub api: Option<Api>,
    /// The request headers, names lower-cased.
    pub headers: BTreeMap<String, String>,
    /// The request body: parsed JSON, or the raw text when it is not JSON or is nested deeper
    /// than common JSON parsers accept (then `body_note` says so).
    pub body: Value,
    /// Why `body` is the raw text rather than the JSON the client sent; absent when it is that
    /// JSON (or empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_note: Option<String>,
    /// Whether the client asked for a streamed reply.
    pub stream: bool,
    /// Milliseconds since the run was created (monotonic clock).
    pub received_at_ms: f64,
    /// When the reply ended; null while it is in progress.
    pub finished_at_ms: Option<f64>,
    /// The status sent; null until the reply starts.
    pub status: Option<u16>,
    /// The fault that fired, if any.
    pub fault: Option<FaultKind>,
    /// How the reply ended; null while it is in progress.
    pub end: Option<EndKind>,
    /// Complete events written.
    pub events_sent: u32,
    /// Body bytes written.
    pub bytes_sent: u64,
    /// Whether the terminal success event (`response.completed`, `[DONE]`) was written.
    pub terminal_sent: bool,
    /// Over HTTP/2, the frame squall ended a scripted reply's stream with: `END_STREAM`, or
    /// `RST_STREAM` and its error code (`RST_STREAM INTERNAL_ERROR`); absent over HTTP/1.1, and
    /// where the client ended the stream or the reply has not ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_frame: Option<String>,
    /// The response headers squall sent (templates such as `@now+3s` as rendered).
    #[serde(default)]
    pub response_headers: BTreeMap<String, String>,
    /// The run-wide condition that answered instead of the track's script — `outage[0]` — or
    /// null when the script answered.
    #[serde(default)]
    pub condition: Option<String>,
    /// The WebSocket the request came over (`GET /responses` upgraded: numbered per run from
    /// 1, the same for every `response.create` of one socket); null for a plain HTTP request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<u32>,
    /// What the upstream did with a forwarded request (`squall serve --upstream`); absent when
    /// squall answered itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<UpstreamCall>,
}

/// A forwarded request as the upstream answered it, beside what the client got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpstreamCall {
    /// The upstream's base URL.
    pub url: String,
    /// The upstream's status; null when it could not be reached.
    pub status: Option<u16>,
    /// Milliseconds from forwarding the request to the upstream's response headers.
    pub headers_after_ms: Option<f64>,
    /// Why the upstream failed: it could not be reached, sent no response head within the read
    /// timeout, or broke off or went silent mid-body (then `end` is `upstream_failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Facts about a request known when it arrives.
#[derive(Debug, Clone)]
pub struct Arrival {
    /// The herd client that sent it, when it came to a client's base URL.
    pub client: Option<u32>,
    /// `GET`, `POST`, ...
    pub method: String,
    /// Relative to the base URL, e.g. `/responses`.
    pub path: String,
    /// The HTTP version it came over.
    pub protocol: Protocol,
    /// The request headers, as they arrived.
    pub headers: RecordedHeaders,
}

#[cfg(test)]
mod tests {
    use super::EndKind;

    #[test]
    fn end_kinds_are_named_as_the_journal_writes_them() {
        use EndKind::*;
        for kind in [Completed, ErrorStatus, Eof, Reset, Truncated, Stalled, Garbage, ClientClosed] {
            assert_eq!(serde_json::to_value(kind).expect("serializes"), kind.as_str());
        }
    }
}
