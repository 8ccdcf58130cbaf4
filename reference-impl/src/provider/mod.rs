//! Providers: one model call attempt over HTTP (or the Responses API's WebSocket), streamed,
//! classified on failure.
//!
//! [`HttpProvider::attempt`] sends one request and reads the event stream with the attempt's
//! timeout applied to the headers and to every gap between chunks. A stream that ends without
//! its terminal event is an error (`Truncated`), never a silent success. Every failure comes
//! back as an [`AttemptFailure`]: the classified error plus what the attempt observed, which is
//! what the gate needs.

pub mod chat;
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

pub use http::HttpProvider;

/// Which model API to speak: OpenAI's Responses or Chat Completions, Anthropic's Messages, or
/// Google's Gemini API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Api {
    #[default]
    Responses,
    Chat,
    Messages,
    Gemini,
    /// The Responses API over WebSocket (OpenAI's WebSocket mode).
    ResponsesWebSocket,
}

impl Api {
    /// `responses`, `chat`, `messages`, `gemini` or `responses-websocket`.
    pub fn parse(name: &str) -> Option<Api> {
        match name {
            "responses" => Some(Api::Responses),
            "responses-websocket" => Some(Api::ResponsesWebSocket),
            "chat" => Some(Api::Chat),
            "messages" => Some(Api::Messages),
            "gemini" => Some(Api::Gemini),
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
    pub error: ProviderError,
    pub observed: AttemptObservation,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// One conversation item sent to the model.
#[derive(Debug, Clone, PartialEq)]
pub enum InputItem {
    User(String),
    Assistant(String),
    /// The model's earlier call of a tool.
    FunctionCall(FunctionCall),
    /// A tool's output for `call_id`.
    FunctionOutput {
        call_id: String,
        output: String,
    },
}

/// What to ask the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    pub model: String,
    pub instructions: Option<String>,
    pub input: Vec<InputItem>,
    pub tools: Vec<ToolSpec>,
    /// Sent as `x-session-id` on every attempt: a retry keeps its session (seed 002).
    pub session_id: Option<String>,
}

impl ModelRequest {
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
    pub call_id: String,
    pub name: String,
    pub arguments: String,
}

/// What a successful attempt produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelOutput {
    pub text: String,
    pub reasoning: String,
    pub function_calls: Vec<FunctionCall>,
}

/// Whether streamed output reaches the user as it arrives (which makes a replay unsafe) or is
/// buffered until the call succeeds (a sub-session before its report).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    Visible,
    Buffered,
}

/// A piece of streamed output, for display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delta<'a> {
    Text(&'a str),
    Reasoning(&'a str),
}
