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
    SessionStart {
        /// Its id.
        session_id: String,
        /// The agent it runs (`main`, `deep-research`).
        agent: String,
    },
    /// The user's turn.
    #[serde(rename = "user.message")]
    UserMessage {
        /// What the user said.
        text: String,
    },
    /// The model called a tool.
    #[serde(rename = "tool.call")]
    ToolCall {
        /// The id that pairs the call with its result.
        call_id: String,
        /// The tool called.
        name: String,
        /// Its arguments, as JSON text.
        arguments: String,
    },
    /// What the tool returned.
    #[serde(rename = "tool.result")]
    ToolResult {
        /// The call answered.
        call_id: String,
        /// The tool.
        name: String,
        /// What it returned.
        output: String,
    },
    /// The model's answer.
    #[serde(rename = "assistant.message")]
    AssistantMessage {
        /// The answer.
        text: String,
    },
    /// A failed attempt that the engine retries, announced before the sleep.
    #[serde(rename = "provider.retry")]
    ProviderRetry {
        /// 1-based number of the attempt that failed.
        attempt: u32,
        /// Attempts allowed for this kind of failure.
        max_attempts: u32,
        /// The wait before the next attempt.
        delay_ms: Option<u64>,
        /// Why it is retried, in words.
        reason: String,
        /// The failure's kind.
        error_type: String,
        /// The timeout the failed attempt ran under.
        timeout_ms: u64,
        /// The provider's message.
        message: String,
        /// The decision, field by field.
        decision: DecisionRecord,
    },
    /// A failure that ends the call (`phase: provider`, with its decision record) or the
    /// session (`phase: session`).
    #[serde(rename = "runtime.error")]
    RuntimeError {
        /// `call` (a provider call) or `session`.
        phase: &'static str,
        /// The failure's kind.
        error_type: String,
        /// Its message.
        error_message: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        /// The decision that ended the call, when a call failed.
        decision: Option<DecisionRecord>,
    },
    /// How a call or a turn ended: `end_turn`, `error`, or `degraded` with its cause (seed 004).
    #[serde(rename = "result")]
    Result {
        /// `end_turn`, `error` or `degraded`.
        stop_reason: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        /// The answer, when there is one.
        final_text: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        /// Why the call failed, for a degraded result.
        cause: Option<FailureCause>,
    },
}

/// Why a call failed, as a degraded result records it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailureCause {
    /// The failure's kind.
    pub error_type: String,
    /// Its message.
    pub error_message: String,
    /// Attempts made.
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
    /// Record `event`.
    fn emit(&self, event: &Event);
}

/// Appends to a file, one line per event, flushed at once: a crash loses at most the line
/// being written.
#[derive(Debug)]
pub struct JsonlEvents {
    file: Mutex<File>,
}

impl JsonlEvents {
    /// Events appended to `path` (its directory made).
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
    /// Every event so far, as JSON.
    pub fn events(&self) -> Vec<Value> {
        self.events.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// The events of `kind` (`provider.retry`, ...).
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
