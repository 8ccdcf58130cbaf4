//! The event log (`events.jsonl`): one JSON object per line, flushed as written. The schema is
//! documented in `docs/events.md`; outside implementations are asked to write the same. Every
//! record is an [`Event`], so a renamed field fails to compile instead of writing another log.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use serde::Serialize;
use serde_json::Value;

use crate::decide::decision::DecisionRecord;

/// One record of `events.jsonl`, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum Event {
    /// A session began (its events are under `.agents/sessions/<session_id>/`).
    #[serde(rename = "session.start")]
    SessionStart { session_id: String, agent: String },
    /// The user's turn.
    #[serde(rename = "user.message")]
    UserMessage { text: String },
    /// The model called a tool.
    #[serde(rename = "tool.call")]
    ToolCall { call_id: String, name: String, arguments: String },
    /// What the tool returned.
    #[serde(rename = "tool.result")]
    ToolResult { call_id: String, name: String, output: String },
    /// The model's answer.
    #[serde(rename = "assistant.message")]
    AssistantMessage { text: String },
    /// A failed attempt that the engine retries, announced before the sleep.
    #[serde(rename = "provider.retry")]
    ProviderRetry {
        attempt: u32,
        max_attempts: u32,
        delay_ms: Option<u64>,
        reason: String,
        error_type: String,
        timeout_ms: u64,
        message: String,
        decision: DecisionRecord,
    },
    /// A failure that ends the call (`phase: provider`, with its decision record) or the
    /// session (`phase: session`).
    #[serde(rename = "runtime.error")]
    RuntimeError {
        phase: &'static str,
        error_type: String,
        error_message: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        decision: Option<DecisionRecord>,
    },
    /// How a call or a turn ended: `end_turn`, `error`, or `degraded` with its cause (seed 004).
    #[serde(rename = "result")]
    Result {
        stop_reason: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        final_text: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cause: Option<FailureCause>,
    },
}

/// Why a call failed, as a degraded result records it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailureCause {
    pub error_type: String,
    pub error_message: String,
    pub attempts: u32,
}

impl Event {
    /// The event as the JSON line it is written as.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// Where events go.
pub trait EventSink: Send + Sync + std::fmt::Debug {
    fn emit(&self, event: &Event);
}

/// Appends to a file, one line per event, flushed at once: a crash loses at most the line
/// being written.
#[derive(Debug)]
pub struct JsonlEvents {
    file: Mutex<File>,
}

impl JsonlEvents {
    pub fn create(path: &Path) -> std::io::Result<Self> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        Ok(JsonlEvents { file: Mutex::new(file) })
    }
}

impl EventSink for JsonlEvents {
    fn emit(&self, event: &Event) {
        let mut line = event.to_value().to_string();
        line.push('\n');
        let mut file = self.file.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // One write per line: a reader never sees half of two events interleaved.
        if let Err(e) = file.write_all(line.as_bytes()).and_then(|()| file.flush()) {
            eprintln!("squall-reference: cannot write an event: {e}");
        }
    }
}

/// Keeps events in memory (tests, embedding).
#[derive(Debug, Default)]
pub struct MemoryEvents {
    events: Mutex<Vec<Value>>,
}

impl MemoryEvents {
    pub fn events(&self) -> Vec<Value> {
        self.events.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    pub fn of_type(&self, kind: &str) -> Vec<Value> {
        self.events().into_iter().filter(|e| e["type"] == kind).collect()
    }
}

impl EventSink for MemoryEvents {
    fn emit(&self, event: &Event) {
        self.events.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(event.to_value());
    }
}

/// The `result` event of a call the fallback answered (seed 004), with the failure behind it
/// (`CallFailure::cause`).
pub fn degraded_event(final_text: &str, cause: FailureCause) -> Event {
    Event::Result { stop_reason: "degraded", final_text: Some(final_text.to_owned()), cause: Some(cause) }
}

/// The `result` event that ends every call: success or `stop_reason = "error"`.
pub fn result_event(stop_reason: &'static str, final_text: Option<&str>) -> Event {
    Event::Result { stop_reason, final_text: final_text.map(str::to_owned), cause: None }
}
