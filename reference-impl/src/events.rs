//! The event log (`events.jsonl`): one JSON object per line, flushed as written. The schema is
//! documented in `docs/events.md`; outside implementations are asked to write the same.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use serde_json::{json, Value};

/// Where events go.
pub trait EventSink: Send + Sync + std::fmt::Debug {
    fn emit(&self, event: Value);
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
    fn emit(&self, event: Value) {
        let mut line = event.to_string();
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
    fn emit(&self, event: Value) {
        self.events.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(event);
    }
}

/// The `result` event of a call the fallback answered (seed 004), with the failure behind it
/// (`CallFailure::cause`).
pub fn degraded_event(final_text: &str, cause: Value) -> Value {
    json!({"type": "result", "stop_reason": "degraded", "final_text": final_text, "cause": cause})
}

/// The `result` event that ends every call: success or `stop_reason = "error"`.
pub fn result_event(stop_reason: &str, final_text: Option<&str>) -> Value {
    match final_text {
        Some(text) => json!({"type": "result", "stop_reason": stop_reason, "final_text": text}),
        None => json!({"type": "result", "stop_reason": stop_reason}),
    }
}
