//! Decision records: one per failed attempt, carrying both the engine's and the gate's
//! answers, so observability never re-derives predicates (seed 001).

use std::time::Duration;

use serde::Serialize;

use crate::decide::classify::ProviderError;
use crate::decide::gate::GateVerdict;

/// How a failure was handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The engine scheduled another attempt.
    Retrying,
    /// Classified as not retryable.
    NotRetryable,
    /// Retryable, but the gate refused a replay.
    BlockedByGate,
    /// The attempt limit for this kind of failure was reached.
    Exhausted,
    /// The provider asked for a longer wait than the policy's ceiling.
    RetryAfterTooLong,
    /// Another attempt would exceed the call's total time bound.
    TimeBudgetExhausted,
}

/// Everything observability needs to answer: was it technically retryable, did the gate
/// allow it, was it retried, which attempt, which timeout, which delay, how did it end.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionRecord {
    /// 1-based number of the attempt that failed.
    pub attempt: u32,
    /// Attempts allowed for this kind of failure.
    pub max_attempts: u32,
    /// The failure's kind, as observability names it.
    pub error_type: String,
    /// The failure's message.
    pub error_message: String,
    /// The HTTP status, when there was one.
    pub status: Option<u16>,
    /// Whether the failure is of a retryable kind, before the gate and the limits.
    pub technically_retryable: bool,
    /// `allowed`, or why the gate blocked (`visible_output`, `tool_call`, `quota`, ...).
    pub gate: String,
    /// Whether the engine retried.
    pub retried: bool,
    /// The timeout this attempt ran under (policy time, unscaled).
    pub timeout_ms: u64,
    /// The wait before the next attempt (policy time, unscaled), when retried.
    pub delay_ms: Option<u64>,
    /// Where the delay came from: `backoff`, `retry-after-ms`, `retry-after`, `retry-after-date`, `message`.
    pub delay_source: Option<String>,
    /// What the engine did.
    pub outcome: Outcome,
}

/// The policy's answer to one failure ([`crate::decide::policy::RetryPolicy::decide`]): what to do, the
/// wait and where it comes from, and the classifier's and the gate's answers it was made from
/// (each asked once), for the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// What the engine does.
    pub outcome: Outcome,
    /// The wait before the next attempt and its source (`backoff`, `retry-after-ms`, ...); also
    /// given when a wait ended the retries (too long a Retry-After, or past the time budget).
    pub delay: Option<(Duration, &'static str)>,
    /// Whether the failure is of a retryable kind.
    pub technically_retryable: bool,
    /// The safety gate's answer.
    pub gate: GateVerdict,
    /// Attempts allowed for this kind of failure.
    pub max_attempts: u32,
}

impl Decision {
    /// The wait, when the engine is to retry.
    pub fn retry_after(&self) -> Option<Duration> {
        self.delay.filter(|_| self.outcome == Outcome::Retrying).map(|(delay, _)| delay)
    }

    /// The decision record of failed attempt `attempt` (0-based), which ran under `timeout`.
    pub fn record(&self, attempt: u32, error: &ProviderError, timeout: Duration) -> DecisionRecord {
        DecisionRecord {
            attempt: attempt + 1,
            max_attempts: self.max_attempts,
            error_type: error.error_type().to_owned(),
            error_message: error.message.clone(),
            status: error.status,
            technically_retryable: self.technically_retryable,
            gate: self.gate.as_str().to_owned(),
            retried: self.outcome == Outcome::Retrying,
            timeout_ms: timeout.as_millis() as u64,
            delay_ms: self.delay.map(|(d, _)| d.as_millis() as u64),
            delay_source: self.delay.map(|(_, source)| source.to_owned()),
            outcome: self.outcome,
        }
    }
}
