//! Decision records: one per failed attempt, carrying both the engine's and the gate's
//! answers, so observability never re-derives predicates (seed 001).

use serde::Serialize;

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
    pub error_type: String,
    pub error_message: String,
    pub status: Option<u16>,
    pub technically_retryable: bool,
    /// `allowed`, or why the gate blocked (`visible_output`, `tool_call`, `quota`, ...).
    pub gate: String,
    pub retried: bool,
    /// The timeout this attempt ran under (policy time, unscaled).
    pub timeout_ms: u64,
    /// The wait before the next attempt (policy time, unscaled), when retried.
    pub delay_ms: Option<u64>,
    /// Where the delay came from: `backoff`, `retry-after-ms`, `retry-after`, `retry-after-date`, `message`.
    pub delay_source: Option<String>,
    pub outcome: Outcome,
}
