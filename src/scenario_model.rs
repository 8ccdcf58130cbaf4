//! The scenario model: what a scripted run tells the server to do, attempt by attempt.
//!
//! These types are the public scenario format (`docs/scenarios.md`). TOML files in
//! `scenarios/` and inline JSON sent to the admin API deserialize into the same structs;
//! unknown fields are rejected so a typo never silently changes a scenario.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One scripted conversation: per-attempt replies, optionally split into tracks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Scenario {
    /// Catalogue name: in a file, its stem unless given (and then it must be the stem).
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    /// What the scenario is for, in one or two sentences.
    pub description: String,
    /// Requirement ids this scenario exercises, e.g. `REQ-0006-010`.
    #[serde(default)]
    pub requirements: Vec<String>,
    /// What requests beyond the script get (for the implicit default track).
    #[serde(default)]
    pub after: AfterScript,
    /// The default track's attempts: requests not claimed by a `tracks` entry land here.
    #[serde(default)]
    pub attempts: Vec<Attempt>,
    /// Tracks route requests by content; the first match wins.
    #[serde(default)]
    pub tracks: Vec<Track>,
    /// Run-wide outages: windows of run time in which model requests get the outage's reply
    /// instead of their track's script (`[[outage]]` in TOML).
    #[serde(default)]
    pub outage: Vec<Outage>,
    /// Seeded chaos: a share of the run's model requests, drawn one by one, get an error status or
    /// a fault instead of their track's reply (`[chaos]` in TOML).
    #[serde(default)]
    pub chaos: Option<Chaos>,
    /// A rate quota shared by every model request of the run (`[quota]` in TOML).
    #[serde(default)]
    pub quota: Option<Quota>,
}

/// A rate quota shared by every model request of the run, kept by token buckets that refill
/// continuously in policy time and hold a minute's worth. A request over it gets a 429 with the
/// headers the provider's API sends, true to the buckets; every reply carries the buckets' state.
/// Outages come first; the quota is asked before chaos and the track.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quota {
    /// Requests per minute of policy time.
    #[serde(default)]
    pub requests_per_minute: Option<u32>,
    /// Tokens per minute: a request costs its input, estimated from its body (a token per 4
    /// characters), and its reply's output, estimated from the scripted text the same way.
    #[serde(default)]
    pub tokens_per_minute: Option<u32>,
}

/// Seeded chaos over a whole run. Each model request is drawn for from the seed and its place
/// (its track and attempt number) alone: whether chaos takes it, what it gets, and where in the
/// stream a fault fires — so one seed replays the same faults exactly. Outages come first: chaos
/// draws only for requests no outage took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chaos {
    /// The draws' seed; absent, the run draws one and reports it (`chaos_seed` in the run's
    /// summary, and in each journal entry chaos answers) so that the run can be replayed.
    #[serde(default)]
    pub seed: Option<u64>,
    /// The share of model requests chaos takes, 0 to 1.
    pub rate: f64,
    /// What a taken request gets, by weight: the statuses `"429"`, `"500"`, `"502"`, `"503"`,
    /// `"529"` and the faults `reset`, `eof`, `truncate`, `stall` (two minutes of policy time),
    /// `garbage`, fired at a drawn output delta of the track's reply. Default: all, alike. A
    /// fault drawn for a request whose track answers with a status leaves it to the track.
    #[serde(default)]
    pub mix: BTreeMap<String, u32>,
}

/// What chaos gives a request it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChaosOutcome {
    /// An error reply with this status.
    Status(u16),
    /// This fault, at a drawn output delta of the track's streamed reply.
    Fault(FaultKind),
}

impl ChaosOutcome {
    /// Every outcome chaos can draw, as `mix` names them.
    pub const ALL: [(&'static str, ChaosOutcome); 10] = [
        ("429", ChaosOutcome::Status(429)),
        ("500", ChaosOutcome::Status(500)),
        ("502", ChaosOutcome::Status(502)),
        ("503", ChaosOutcome::Status(503)),
        ("529", ChaosOutcome::Status(529)),
        ("reset", ChaosOutcome::Fault(FaultKind::Reset)),
        ("eof", ChaosOutcome::Fault(FaultKind::Eof)),
        ("truncate", ChaosOutcome::Fault(FaultKind::Truncate)),
        ("stall", ChaosOutcome::Fault(FaultKind::Stall)),
        ("garbage", ChaosOutcome::Fault(FaultKind::Garbage)),
    ];

    /// The outcome `mix` names `name`.
    pub fn parse(name: &str) -> Option<ChaosOutcome> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, outcome)| *outcome)
    }
}

/// A seed for a run whose chaos names none, or a soak that names none: different for every call (the standard library's
/// per-process random hash keys, and the time).
pub fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    hasher.finish()
}

/// A window of run time in which the provider is down. Every model request that arrives in it
/// gets `reply` — a status reply or a fault — instead of its track's reply; with a `rate` below
/// 1, a share of them does, drawn from `seed` and the request's place (its track and attempt),
/// so a run replays the same way. Times are policy milliseconds since the run was created (a run
/// at time scale 1/100 is down for 400 real ms of a 40 s outage). The track still counts every
/// attempt the outage answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outage {
    /// Where the window opens, in policy ms since the run was created.
    #[serde(default)]
    pub from_ms: u64,
    /// Where it closes (exclusive).
    pub until_ms: u64,
    /// What a request it takes gets.
    pub reply: Attempt,
    /// The share of requests it takes where it opens (default 1: all of them).
    #[serde(default)]
    pub rate: Option<f64>,
    /// The share where it closes, reached linearly across the window (default: `rate`): a ramp.
    #[serde(default)]
    pub rate_until: Option<f64>,
    /// The seed of the draws when a rate is below 1.
    #[serde(default)]
    pub seed: u64,
}

/// What a track replies once its scripted attempts are used up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AfterScript {
    /// Replay the last scripted attempt for every further request.
    #[default]
    RepeatLast,
    /// A plain successful reply.
    Ok,
    /// A `500 server_error` reply.
    Fail,
}

/// A named group of attempts that claims the requests its `match` selects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Track {
    /// The track's name, as the journal reports it (`main`, `sub`).
    pub name: String,
    /// Which requests this track claims; absent means "every request not claimed before".
    #[serde(default, rename = "match")]
    pub matcher: Option<TrackMatch>,
    #[serde(default)]
    /// The track's attempts: its n-th request gets the n-th.
    pub attempts: Vec<Attempt>,
    /// Overrides the scenario's `after` for this track.
    #[serde(default)]
    pub after: Option<AfterScript>,
}

/// Request selectors for a track. Exactly one field is set (checked by validation).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrackMatch {
    /// The request offers a tool with this name (`tools[].name` or `tools[].function.name`).
    #[serde(default)]
    pub tool: Option<String>,
    /// The raw request body contains this text.
    #[serde(default)]
    pub body_contains: Option<String>,
    /// Every listed request header has exactly this value (names are case-insensitive).
    #[serde(default)]
    pub header: Option<BTreeMap<String, String>>,
}

/// One scripted reply. A status reply when `status` is set (and not 200); otherwise a stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Attempt {
    /// HTTP status for an error reply (`429`, `503`, ...).
    #[serde(default)]
    pub status: Option<u16>,
    /// Extra response headers. A value `@now+Ns` is sent as the HTTP-date N seconds later.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The OpenAI error object of a status reply; defaults depend on the status.
    #[serde(default)]
    pub error: Option<ErrorSpec>,
    /// A raw body that replaces the generated one (status replies only).
    #[serde(default)]
    pub body: Option<String>,
    /// The content of a successful reply, streamed or not as the client asked.
    #[serde(default)]
    pub stream: Option<StreamSpec>,
    /// A transport fault injected into the reply.
    #[serde(default)]
    pub fault: Option<Fault>,
    /// Wait before sending the response headers.
    #[serde(default)]
    pub delay_ms: Option<u64>,
    /// Wait between stream events (also accepted inside `stream`).
    #[serde(default)]
    pub event_delay_ms: Option<u64>,
}

/// OpenAI error fields; any field left out gets the default for the status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorSpec {
    #[serde(default, rename = "type")]
    /// The error's `type` (`requests`, `server_error`, `insufficient_quota`, ...).
    pub kind: Option<String>,
    #[serde(default)]
    /// The error's `code` (`rate_limit_exceeded`, `insufficient_quota`, ...).
    pub code: Option<String>,
    #[serde(default)]
    /// The error's `message`.
    pub message: Option<String>,
    #[serde(default)]
    /// The error's `param`.
    pub param: Option<String>,
}

/// What a successful reply contains.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamSpec {
    /// Assistant text. Absent with no other output means the text `OK`.
    #[serde(default)]
    pub text: Option<String>,
    /// How many deltas the text is cut into (default: one per word).
    #[serde(default)]
    pub chunks: Option<u32>,
    /// A reasoning summary, streamed before the text.
    #[serde(default)]
    pub reasoning: Option<String>,
    /// A function (tool) call, streamed after the text.
    #[serde(default)]
    pub function_call: Option<FunctionCallSpec>,
    /// End the stream with a failure event instead of completion.
    #[serde(default)]
    pub fail: Option<StreamFailure>,
    /// Wait between events.
    #[serde(default)]
    pub event_delay_ms: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// A tool call the model makes, its arguments streamed in deltas.
pub struct FunctionCallSpec {
    /// The tool's name (`Task`, `web_search`, ...).
    pub name: String,
    /// JSON arguments as text, streamed in deltas. A scenario may give them as JSON text or as a
    /// table (an object), which is sent as its JSON text.
    #[serde(default = "empty_object", deserialize_with = "arguments_text")]
    pub arguments: String,
    #[serde(default)]
    /// The call's id; generated when absent.
    pub call_id: Option<String>,
}

fn empty_object() -> String {
    "{}".to_owned()
}

/// `arguments` as written: JSON text as is, anything else (a table) as its JSON text.
fn arguments_text<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::String(text) => Ok(text),
        other => Ok(other.to_string()),
    }
}

/// A failure reported inside the stream (`response.failed`, an `error` event, an error chunk).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamFailure {
    /// OpenAI error code: `rate_limit_exceeded`, `server_error`, `insufficient_quota`, ...
    pub code: String,
    #[serde(default)]
    /// The failure's message; a default for the code when absent.
    pub message: Option<String>,
    /// How the Responses API reports it: `response.failed` (default) or a bare `error` event.
    #[serde(default)]
    pub event: FailureEvent,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
/// How a failure inside a stream is sent.
pub enum FailureEvent {
    #[default]
    #[serde(rename = "response.failed")]
    /// `response.failed` (Responses API) or an error chunk (Chat).
    ResponseFailed,
    #[serde(rename = "error")]
    /// A bare `error` event.
    Error,
}

/// A transport fault at an exact point of the reply body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fault {
    /// What happens to the connection.
    pub kind: FaultKind,
    /// Fire after this many complete events (default 0: right after the headers).
    #[serde(default)]
    pub after_events: Option<u32>,
    /// Fire after this many output deltas — pieces of text, reasoning or tool-call arguments —
    /// counted alike in every API; 0 fires right before the first, after the framing events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_deltas: Option<u32>,
    /// Fire after this many body bytes (may cut an event in half).
    #[serde(default)]
    pub after_bytes: Option<u64>,
    /// For `stall`: how long the silence lasts; absent means forever.
    #[serde(default)]
    pub ms: Option<u64>,
    /// For `truncate` over WebSocket (the Responses API's WebSocket mode): the close frame's
    /// code (1000 when absent; 1001 going away, 1011 internal error, 1012 service restart, 1013
    /// try again later, ...). Plain HTTP replies have no close frame and ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub close_code: Option<u16>,
    /// For `reset` over HTTP/2: the RST_STREAM frame's error code (`internal_error` when
    /// absent); over HTTP/1.1 a reset is a TCP RST, which carries no code. For `goaway`: the
    /// GOAWAY's code (`no_error` when absent: a graceful GOAWAY; any other: the connection cut).
    /// For `refuse`: the RST_STREAM's code (`refused_stream` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h2_code: Option<H2Code>,
}

/// An HTTP/2 error code (RFC 9113 §7), named as the RFC names it, lower-cased.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum H2Code {
    /// 0x0: graceful shutdown, or a stream no longer needed.
    NoError,
    /// 0x1: the peer broke the protocol.
    ProtocolError,
    /// 0x2: the server broke (a reset's default).
    #[default]
    InternalError,
    /// 0x3: flow control was violated.
    FlowControlError,
    /// 0x4: SETTINGS went unacknowledged.
    SettingsTimeout,
    /// 0x5: a frame came on a half-closed stream.
    StreamClosed,
    /// 0x6: a frame of the wrong size.
    FrameSizeError,
    /// 0x7: the stream was refused before any processing: always safe to retry.
    RefusedStream,
    /// 0x8: the stream is no longer needed.
    Cancel,
    /// 0x9: the header compression context broke.
    CompressionError,
    /// 0xa: a CONNECT tunnel broke.
    ConnectError,
    /// 0xb: the peer is generating too much load.
    EnhanceYourCalm,
    /// 0xc: the transport's security is too weak.
    InadequateSecurity,
    /// 0xd: the request must be sent over HTTP/1.1.
    #[serde(rename = "http_1_1_required")]
    Http11Required,
}

impl H2Code {
    /// The code as sent on the wire.
    pub fn value(self) -> u32 {
        self as u32
    }
}

/// The ways a reply breaks. Each is a real transport behaviour, not an error message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// FIN mid-body: the chunked framing is left incomplete.
    Eof,
    /// A TCP RST (SO_LINGER 0) mid-body.
    Reset,
    /// A well-formed end of body without the terminal event.
    Truncate,
    /// Silence for `ms`, then the rest; or silence until the client gives up.
    Stall,
    /// Bytes that are not SSE, then a clean end and close.
    Garbage,
    /// The connection goes away: with `h2_code` absent or `no_error`, gracefully (an HTTP/2
    /// GOAWAY with the true last-stream-id; HTTP/1.1 closes after this reply), the reply itself
    /// complete; with an error code, at once (GOAWAY with that code, then the connection closed;
    /// over HTTP/1.1 a FIN), every reply on the connection cut.
    Goaway,
    /// The request refused before any byte of a reply: over HTTP/2 RST_STREAM with `h2_code`
    /// (`refused_stream` when absent, which tells the client the request was never processed
    /// and is safe to retry, RFC 9113 §8.7), before the response's HEADERS; over HTTP/1.1 the
    /// connection closed (FIN) with no byte of a reply. It takes no position and no reply.
    Refuse,
    /// The connection closed under the reply with no GOAWAY: a FIN that cuts every stream in
    /// flight on it, as a crashed server or a load balancer dropping the connection does (over
    /// HTTP/1.1 the same FIN as `eof`).
    Close,
}

impl FaultKind {
    /// Every fault kind, in the order docs list them.
    pub const ALL: [FaultKind; 8] = [
        FaultKind::Eof,
        FaultKind::Reset,
        FaultKind::Truncate,
        FaultKind::Stall,
        FaultKind::Garbage,
        FaultKind::Goaway,
        FaultKind::Refuse,
        FaultKind::Close,
    ];

    /// The kind's name in scenarios (`eof`, `reset`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::Eof => "eof",
            FaultKind::Reset => "reset",
            FaultKind::Truncate => "truncate",
            FaultKind::Stall => "stall",
            FaultKind::Garbage => "garbage",
            FaultKind::Goaway => "goaway",
            FaultKind::Refuse => "refuse",
            FaultKind::Close => "close",
        }
    }
}

/// Where in the body a fault fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultPoint {
    /// After this many complete events.
    Events(u32),
    /// After this many output deltas (0: right before the first one).
    Deltas(u32),
    /// After this many body bytes (possibly mid-event).
    Bytes(u64),
}

impl Fault {
    /// A fault of `kind` firing at `point`.
    pub fn at(kind: FaultKind, point: FaultPoint) -> Fault {
        let mut fault = Fault {
            kind,
            after_events: None,
            after_deltas: None,
            after_bytes: None,
            ms: None,
            close_code: None,
            h2_code: None,
        };
        match point {
            FaultPoint::Events(n) => fault.after_events = Some(n),
            FaultPoint::Deltas(n) => fault.after_deltas = Some(n),
            FaultPoint::Bytes(n) => fault.after_bytes = Some(n),
        }
        fault
    }

    /// Where the fault fires: `after_bytes` if set, else `after_deltas`, else `after_events`,
    /// else right after the headers. (Loading rejects a fault with more than one of them.)
    pub fn point(&self) -> FaultPoint {
        match (self.after_bytes, self.after_deltas, self.after_events) {
            (Some(bytes), ..) => FaultPoint::Bytes(bytes),
            (None, Some(deltas), _) => FaultPoint::Deltas(deltas),
            (None, None, events) => FaultPoint::Events(events.unwrap_or(0)),
        }
    }

    /// The offset fields that are set, by name.
    pub fn offsets_set(&self) -> Vec<&'static str> {
        let fields = [
            ("after_events", self.after_events.is_some()),
            ("after_deltas", self.after_deltas.is_some()),
            ("after_bytes", self.after_bytes.is_some()),
        ];
        fields.into_iter().filter(|(_, set)| *set).map(|(name, _)| name).collect()
    }
}

impl Attempt {
    /// The code an attempt that refuses its request resets the stream with, if it does.
    pub fn refusal(&self) -> Option<H2Code> {
        let fault = self.fault.as_ref().filter(|f| f.kind == FaultKind::Refuse)?;
        Some(fault.h2_code.unwrap_or(H2Code::RefusedStream))
    }

    /// The status this attempt replies with.
    pub fn status_code(&self) -> u16 {
        self.status.unwrap_or(200)
    }

    /// A status reply carries an OpenAI error body instead of content.
    pub fn is_status_reply(&self) -> bool {
        self.status_code() != 200
    }

    /// The stream content, or the default "OK" reply.
    pub fn content(&self) -> StreamSpec {
        self.stream.clone().unwrap_or_default()
    }

    /// The wait between events, wherever it was scripted (0 when none).
    pub fn event_delay_ms(&self) -> u64 {
        self.event_delay_ms.or(self.stream.as_ref().and_then(|s| s.event_delay_ms)).unwrap_or(0)
    }

    /// The reply used for `after = "ok"`.
    pub fn plain_ok() -> Attempt {
        Attempt::default()
    }

    /// The reply used for `after = "fail"`.
    pub fn plain_fail() -> Attempt {
        Attempt { status: Some(500), ..Attempt::default() }
    }
}

impl StreamSpec {
    /// The text the reply carries: the scripted text, or `OK` when nothing else is scripted.
    pub fn effective_text(&self) -> Option<&str> {
        match (&self.text, &self.function_call, &self.reasoning, &self.fail) {
            (Some(text), ..) => Some(text.as_str()),
            (None, None, None, None) => Some("OK"),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::load::{from_json_value, from_toml_str};

    #[test]
    fn tool_call_arguments_are_json_text_or_a_table() {
        let text = r#"
name = "args"
[[attempts]]
stream = { function_call = { name = "Task", arguments = { agent = "deep-research", prompt = "x" } } }
[[attempts]]
stream = { function_call = { name = "Task", arguments = '{"agent": "deep-research"}' } }
"#;
        let scenario = from_toml_str("args.toml", text).expect("both forms load");
        let arguments: Vec<String> = scenario
            .attempts
            .iter()
            .map(|a| a.stream.as_ref().and_then(|s| s.function_call.as_ref()).expect("a call").arguments.clone())
            .collect();
        assert_eq!(arguments, [r#"{"agent":"deep-research","prompt":"x"}"#, r#"{"agent": "deep-research"}"#]);
        let inline = serde_json::json!({"name": "j", "attempts": [{"stream": {"function_call": {"name": "T", "arguments": {"q": 1}}}}]});
        let scenario = from_json_value(inline).expect("an object in JSON too");
        assert_eq!(
            scenario.attempts[0].stream.as_ref().and_then(|s| s.function_call.as_ref()).map(|c| c.arguments.as_str()),
            Some(r#"{"q":1}"#)
        );
    }
}
