//! Test kit for the reference pipeline: one scripted run, one `stream_call`, the events and
//! the journal side by side.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use squall::clock::TimeScale;
use squall::journal::JournalEntry;
use squall_reference::clock::ScaledClock;
use squall_reference::decide::policy::RetryPolicy;
use squall_reference::provider::{Api, HttpProvider, ModelOutput, ModelRequest, OutputMode};
use squall_reference::run::call::stream_call;
use squall_reference::run::engine::{CallFailure, OnRetry, RetryEngine};
use squall_reference::run::events::{EventSink, MemoryEvents};

use super::harness::Harness;

/// Production values run at this fraction of real time, on both sides of the wire.
pub(crate) const SCALE: f64 = 0.005;

pub(crate) struct Outcome {
    pub scale: f64,
    pub result: Result<ModelOutput, CallFailure>,
    pub events: Vec<Value>,
    pub journal: Vec<JournalEntry>,
    pub shown: String,
}

impl Outcome {
    pub(crate) fn of_type(&self, kind: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == kind).collect()
    }

    pub(crate) fn attempts(&self) -> usize {
        self.journal.len()
    }

    pub(crate) fn types(&self) -> Vec<&str> {
        self.events.iter().filter_map(|e| e["type"].as_str()).collect()
    }

    /// How long each attempt lasted on the wire, in policy (unscaled) ms.
    pub(crate) fn durations_ms(&self) -> Vec<f64> {
        self.journal.iter().map(|e| (e.finished_at_ms.unwrap_or(0.0) - e.received_at_ms) / self.scale).collect()
    }

    /// Gaps between one attempt ending and the next starting, in policy (unscaled) ms.
    pub(crate) fn gaps_ms(&self) -> Vec<f64> {
        self.journal
            .windows(2)
            .map(|w| (w[1].received_at_ms - w[0].finished_at_ms.unwrap_or(0.0)) / self.scale)
            .collect()
    }

    pub(crate) fn final_error_type(&self) -> Option<&str> {
        self.result.as_ref().err().map(|f| f.error.error_type())
    }
}

pub(crate) struct Call {
    /// Fraction of real time both sides run at.
    pub scale: f64,
    pub policy: RetryPolicy,
    pub mode: OutputMode,
    pub api: Api,
    pub on_retry: Option<OnRetry>,
}

impl Default for Call {
    fn default() -> Self {
        Call {
            scale: SCALE,
            policy: RetryPolicy::default(),
            mode: OutputMode::Visible,
            api: Api::Responses,
            on_retry: None,
        }
    }
}

impl Call {
    pub(crate) fn policy(policy: RetryPolicy) -> Self {
        Call { policy, ..Call::default() }
    }

    /// Run one call against a run scripted by `toml` (timing-sensitive: its tests run one at a time).
    pub(crate) async fn against(self, toml: &str) -> Outcome {
        let h = Harness::scaled(toml, TimeScale::of(self.scale)).await;
        let events = Arc::new(MemoryEvents::default());
        let sink: Arc<dyn EventSink> = events.clone();
        let mut engine = RetryEngine::new(self.policy, Arc::new(ScaledClock::new(self.scale)), sink.clone());
        if let Some(on_retry) = self.on_retry {
            engine = engine.with_on_retry(on_retry);
        }
        let provider = HttpProvider::new(&h.base_url, "sk-test", self.api);
        let shown = Arc::new(Mutex::new(String::new()));
        let display = {
            let shown = shown.clone();
            move |delta: squall_reference::provider::Delta<'_>| {
                if let squall_reference::provider::Delta::Text(text) = delta {
                    shown.lock().expect("lock").push_str(text);
                }
            }
        };
        let request = ModelRequest::prompt("gpt-test", "hello");
        let result = tokio::time::timeout(
            Duration::from_secs(20),
            stream_call(&engine, &provider, &request, self.mode, &display, &sink),
        )
        .await
        .expect("the call ends within 20 s of real time");
        let journal = h.settled_journal().await;
        let shown = shown.lock().expect("lock").clone();
        Outcome { scale: self.scale, result, events: events.events(), journal, shown }
    }
}

/// A scenario: `attempts` TOML fragments, one per `[[attempts]]`.
pub(crate) fn scenario(attempts: &[&str]) -> String {
    let mut toml = String::from("name = \"t\"\n");
    for attempt in attempts {
        toml.push_str("[[attempts]]\n");
        toml.push_str(attempt);
        toml.push('\n');
    }
    toml
}

pub(crate) const OK: &str = "stream = { text = \"done\" }";
