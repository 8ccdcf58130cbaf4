//! The wire formats squall speaks: SSE framing; OpenAI's Responses API events and objects,
//! Chat Completions chunks and objects, and OpenAI-shaped errors; Anthropic's Messages API
//! events and message object, and Anthropic-shaped errors; Google's Gemini API chunks and
//! response, and Google-shaped errors; Ollama's native chat and generate lines (newline-delimited
//! JSON) and error bodies; Amazon Bedrock's Converse API in AWS's event-stream framing and AWS's
//! errors.
//!
//! Everything here is pure: given a scripted reply and a [`ReplyContext`] it produces the
//! events or JSON bodies (the crate's `responses`, `chat`, `messages`, `gemini`, `errors`,
//! `anthropic_errors` and `gemini_errors` modules), and [`reply`] turns a scripted attempt into a plan — the bytes,
//! the waits and the fault — which the server plays on a socket. What outside code needs is
//! public: [`reply::build_reply`] (for a [`crate::api::Api`]: which API a request spoke), [`ReplyContext`], [`SseEvent`], [`estimate_tokens`].

pub(crate) mod anthropic_errors;
pub(crate) mod bedrock;
pub(crate) mod bedrock_invoke;
pub(crate) mod chat;
pub(crate) mod errors;
pub mod event_stream;
pub(crate) mod gemini;
pub(crate) mod gemini_errors;
mod last_fill;
pub(crate) mod messages;
pub(crate) mod ollama;
pub(crate) mod plan;
pub(crate) mod real_stream;
pub(crate) mod recorded_reply;
pub mod reply;
pub(crate) mod responses;
pub(crate) mod template;
mod text;

use bytes::Bytes;
use serde_json::Value;

/// How a stream's events go on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Framing {
    /// Server-sent events: an optional `event:` line, a `data:` line, a blank line.
    #[default]
    Sse,
    /// A line of newline-delimited JSON (Ollama's streams): the data and a newline.
    JsonLine,
    /// An AWS event-stream message (Amazon Bedrock's streams): binary, with CRCs; the event's
    /// name is its `:event-type` (or `:exception-type`), its data the payload.
    AwsEventStream(event_stream::MessageType),
}

/// One event of a stream: a server-sent event, or the same in another framing ([`Framing`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    /// The `event:` line, when the API sends one (the Responses API does; chat does not); an
    /// AWS message's event or exception type.
    pub event: Option<String>,
    /// The `data:` payload: JSON text, or `[DONE]`.
    pub data: String,
    /// Whether this event ends the stream successfully (`response.completed`, `[DONE]`).
    pub terminal: bool,
    /// Whether it carries output: a piece of text, reasoning or tool-call arguments. Fault
    /// offsets in output deltas (`after_deltas`) count these, so they mean the same in every API.
    pub output: bool,
    /// How it goes on the wire.
    pub framing: Framing,
}

impl SseEvent {
    /// An event with an `event:` line (the Responses API).
    pub fn named(event: &str, data: &Value) -> Self {
        SseEvent { event: Some(event.to_owned()), ..SseEvent::data(data) }
    }

    /// An event with only a `data:` line (Chat Completions).
    pub fn data(data: &Value) -> Self {
        SseEvent { event: None, data: data.to_string(), terminal: false, output: false, framing: Framing::Sse }
    }

    /// A line of newline-delimited JSON (Ollama).
    pub fn json_line(data: &Value) -> Self {
        SseEvent { framing: Framing::JsonLine, ..SseEvent::data(data) }
    }

    /// An AWS event-stream message of `kind`, named `name` (Bedrock).
    pub fn aws_message(kind: event_stream::MessageType, name: &str, data: &Value) -> Self {
        SseEvent { event: Some(name.to_owned()), framing: Framing::AwsEventStream(kind), ..SseEvent::data(data) }
    }

    /// The same event, marked as the stream's successful end.
    pub fn terminal(mut self) -> Self {
        self.terminal = true;
        self
    }

    /// The same event, marked as an output delta.
    pub fn output(mut self) -> Self {
        self.output = true;
        self
    }

    /// The bytes on the wire: optional `event:` line, `data:` line, blank line.
    pub fn to_bytes(&self) -> Bytes {
        let mut out = Vec::with_capacity(self.data.len() + 32);
        self.write_to(&mut out);
        Bytes::from(out)
    }

    /// Append the event as it goes on the wire (`event:` line, `data:` line, blank line; a JSON
    /// line and its newline; or an AWS message); returns where its data lies in what it wrote:
    /// the bytes before it and after it.
    pub fn write_to(&self, out: &mut Vec<u8>) -> (usize, usize) {
        match self.framing {
            Framing::JsonLine => {
                out.extend_from_slice(self.data.as_bytes());
                out.push(b'\n');
                (0, 1)
            }
            Framing::AwsEventStream(kind) => {
                let at =
                    event_stream::write_message(out, kind, self.event.as_deref().unwrap_or(""), self.data.as_bytes());
                (at.from, at.trailer)
            }
            Framing::Sse => {
                let start = out.len();
                if let Some(event) = &self.event {
                    out.extend_from_slice(b"event: ");
                    out.extend_from_slice(event.as_bytes());
                    out.push(b'\n');
                }
                out.extend_from_slice(b"data: ");
                let data_from = out.len() - start;
                out.extend_from_slice(self.data.as_bytes());
                out.extend_from_slice(b"\n\n");
                (data_from, 2)
            }
        }
    }
}

/// What a generated reply needs to know about the request it answers.
#[derive(Debug, Clone)]
pub struct ReplyContext {
    /// Unique per request; the base of every generated id (`resp_…`, `msg_…`, `call_…`).
    pub id_seed: String,
    /// The model the client asked for (echoed back).
    pub model: String,
    /// Unix seconds.
    pub created_at: u64,
    /// Estimated prompt tokens, reported in usage.
    pub input_tokens: u64,
    /// The client asked for a usage chunk (`stream_options.include_usage`).
    pub include_usage: bool,
}

impl ReplyContext {
    /// A context for validation and tests, where ids and times do not matter.
    pub fn placeholder() -> Self {
        ReplyContext {
            id_seed: "squall".to_owned(),
            model: "gpt-squall".to_owned(),
            created_at: 0,
            input_tokens: 1,
            include_usage: false,
        }
    }

    /// An id unique to this reply, e.g. `resp_r1-x_0`.
    pub fn id(&self, prefix: &str) -> String {
        format!("{prefix}_{}", self.id_seed)
    }
}

/// A rough token count for usage fields: a quarter of the characters, at least one.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4).max(1)
}
