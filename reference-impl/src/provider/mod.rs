//! Providers: one model call attempt over HTTP (or the Responses API's WebSocket), streamed,
//! classified on failure.
//!
//! [`HttpProvider::attempt`] sends one request and reads the event stream with the attempt's
//! timeout applied to the headers and to every gap between chunks. A stream that ends without
//! its terminal event is an error (`Truncated`), never a silent success. Every failure comes
//! back as an [`AttemptFailure`]: the classified error plus what the attempt observed, which is
//! what the gate needs.

pub mod bedrock;
pub mod chat;
pub mod event_stream;
pub mod gemini;
pub mod http;
pub mod messages;
pub mod responses;
pub mod sse;
pub mod websocket;

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::clock::Clock;
use crate::decide::classify::ProviderError;
use crate::decide::gate::AttemptObservation;

pub use http::{HttpProvider, HttpVersion, Transport};

/// Which model API to speak: OpenAI's Responses or Chat Completions, Anthropic's Messages,
/// Google's Gemini API, or Amazon Bedrock's Converse API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Api {
    #[default]
    /// OpenAI's Responses API (`/responses`).
    Responses,
    /// OpenAI's Chat Completions (`/chat/completions`).
    Chat,
    /// Anthropic's Messages API (`/messages`).
    Messages,
    /// Google's Gemini API (`:streamGenerateContent`).
    Gemini,
    /// The Responses API over WebSocket (OpenAI's WebSocket mode).
    ResponsesWebSocket,
    /// Amazon Bedrock's Converse API (`/model/{modelId}/converse-stream`).
    Bedrock,
}

impl Api {
    /// `responses`, `chat`, `messages`, `gemini`, `responses-websocket` or `bedrock`.
    pub fn parse(name: &str) -> Option<Api> {
        match name {
            "responses" => Some(Api::Responses),
            "responses-websocket" => Some(Api::ResponsesWebSocket),
            "chat" => Some(Api::Chat),
            "messages" => Some(Api::Messages),
            "gemini" => Some(Api::Gemini),
            "bedrock" => Some(Api::Bedrock),
            _ => None,
        }
    }
}

/// What an attempt gets to know about itself: its number, its timeout, and the clock that
/// times it (the engine numbers attempts and picks timeouts; the provider applies them).
#[derive(Debug, Clone)]
pub struct AttemptContext {
    /// 0-based attempt number.
    pub attempt: u32,
    /// The attempt's timeout in policy time: how long it waits on any one I/O step.
    pub timeout: Duration,
    /// The clock the timeout runs on.
    pub clock: Arc<dyn Clock>,
}

impl AttemptContext {
    /// `future`, or `None` when it waits longer than the attempt's timeout.
    pub async fn within<F: std::future::Future>(&self, future: F) -> Option<F::Output> {
        crate::clock::within(self.clock.as_ref(), self.timeout, future).await
    }

    /// Wall-clock time now, on the attempt's clock.
    pub fn wall_now(&self) -> std::time::SystemTime {
        self.clock.wall_now()
    }
}

/// A failed attempt: the classified error and what was observed before it.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptFailure {
    /// The classified error.
    pub error: ProviderError,
    /// What the attempt showed before it failed.
    pub observed: AttemptObservation,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The name the model calls it by.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// Its arguments' JSON schema.
    pub parameters: Value,
}

/// One conversation item sent to the model.
#[derive(Debug, Clone, PartialEq)]
pub enum InputItem {
    /// What the user said.
    User(String),
    /// What the model answered earlier.
    Assistant(String),
    /// The model's earlier call of a tool.
    FunctionCall(FunctionCall),
    /// A tool's output for `call_id`.
    FunctionOutput {
        /// The call answered.
        call_id: String,
        /// What the tool returned.
        output: String,
    },
}

/// What to ask the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// The model to ask.
    pub model: String,
    /// System instructions.
    pub instructions: Option<String>,
    /// The conversation so far.
    pub input: Vec<InputItem>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// Sent as `x-session-id` on every attempt: a retry keeps its session (seed 002).
    pub session_id: Option<String>,
}

impl ModelRequest {
    /// One user prompt to `model`, without tools.
    pub fn prompt(model: &str, prompt: &str) -> Self {
        ModelRequest {
            model: model.to_owned(),
            instructions: None,
            input: vec![InputItem::User(prompt.to_owned())],
            tools: Vec::new(),
            session_id: None,
        }
    }
}

/// A function call the model made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionCall {
    /// The id that pairs the call with its output.
    pub call_id: String,
    /// The tool called.
    pub name: String,
    /// Its arguments, as JSON text.
    pub arguments: String,
}

/// Tool calls gathered by content-block index (the Messages and Bedrock streams), in the order
/// they were opened; a call whose input had no deltas has the empty object as its input.
fn assembled_calls(calls: Vec<(u64, FunctionCall)>) -> Vec<FunctionCall> {
    calls
        .into_iter()
        .map(|(_, mut call)| {
            if call.arguments.is_empty() {
                call.arguments = "{}".to_owned();
            }
            call
        })
        .collect()
}

/// What a successful attempt produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelOutput {
    /// The visible answer.
    pub text: String,
    /// The model's reasoning, when it shows it.
    pub reasoning: String,
    /// The tools it called.
    pub function_calls: Vec<FunctionCall>,
}

/// Whether streamed output reaches the user as it arrives (which makes a replay unsafe) or is
/// buffered until the call succeeds (a sub-session before its report).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    /// Shown to the user as it streams.
    Visible,
    /// Kept until the call succeeds.
    Buffered,
}

/// A piece of streamed output, for display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delta<'a> {
    /// Answer text.
    Text(&'a str),
    /// Reasoning text.
    Reasoning(&'a str),
}
