//! Engine: the mechanics of retry, and nothing else (seed 001's layering; tower's `Retry`).
//!
//! It numbers attempts, runs each under its timeout, advances the backoff schedule, asks the
//! policy what to do with each failure ([`RetryPolicy::decide`], which consults the classifier
//! and the gate and names the wait), notifies `on_retry` *before* each sleep, sleeps on the
//! injected clock, and writes one decision record per failure (`provider.retry` or
//! `runtime.error`). It holds no "is this retryable" logic of its own. After exhaustion every
//! path ends in the same error type, [`CallFailure`].

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::Clock;
use crate::decide::classify::ProviderError;
use crate::decide::decision::DecisionRecord;
use crate::decide::policy::RetryPolicy;
use crate::run::events::{Event, EventSink, FailureCause};

// An attempt's context and failure are the provider's interface (`crate::provider`); the engine
// runs attempts through it, and names them here as it always has.
pub use crate::provider::{AttemptContext, AttemptFailure};

/// The one error a call ends with when it fails, whatever the cause.
#[derive(Debug, Clone, PartialEq)]
pub struct CallFailure {
    /// The last attempt's error.
    pub error: ProviderError,
    /// Attempts made.
    pub attempts: u32,
    /// The decision that ended the call.
    pub decision: DecisionRecord,
}

impl CallFailure {
    /// What a degraded outcome records as its cause.
    pub fn cause(&self) -> FailureCause {
        FailureCause {
            error_type: self.error.error_type().to_owned(),
            error_message: self.error.message.clone(),
            attempts: self.attempts,
        }
    }
}

impl std::fmt::Display for CallFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "provider unavailable after {} attempt(s): {}", self.attempts, self.error)
    }
}

impl std::error::Error for CallFailure {}

/// Sent to `on_retry` before each sleep (seeds 002 and 004).
#[derive(Debug, Clone, PartialEq)]
pub struct RetryNotice {
    /// 1-based number of the attempt that failed.
    pub attempt: u32,
    /// Attempts allowed for this kind of failure.
    pub max_attempts: u32,
    /// The wait before the next attempt.
    pub delay: Duration,
    /// Why it is retried, in words.
    pub reason: String,
    /// The failure's kind, as observability names it.
    pub error_type: &'static str,
}

impl RetryNotice {
    /// What to tell the user: "retrying (attempt 2/7) in 4.0 s: ...".
    pub fn message(&self) -> String {
        format!(
            "retrying (attempt {}/{}) in {:.1} s: {}",
            self.attempt + 1,
            self.max_attempts,
            self.delay.as_secs_f64(),
            self.reason
        )
    }
}

/// Called before each retry's sleep (the PRD's `onRetry`).
pub type OnRetry = Arc<dyn Fn(&RetryNotice) + Send + Sync>;

#[derive(Clone)]
/// Carries a call out: attempts, the decision after each failure, the sleeps, the events.
pub struct RetryEngine {
    policy: RetryPolicy,
    clock: Arc<dyn Clock>,
    events: Arc<dyn EventSink>,
    on_retry: Option<OnRetry>,
}

impl std::fmt::Debug for RetryEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetryEngine").field("policy", &self.policy).finish_non_exhaustive()
    }
}

impl RetryEngine {
    /// An engine with `policy`, sleeping on `clock`, recording to `events`.
    pub fn new(policy: RetryPolicy, clock: Arc<dyn Clock>, events: Arc<dyn EventSink>) -> Self {
        RetryEngine { policy, clock, events, on_retry: None }
    }

    /// The same engine, calling `on_retry` before each retry.
    pub fn with_on_retry(mut self, on_retry: OnRetry) -> Self {
        self.on_retry = Some(on_retry);
        self
    }

    /// Its policy.
    pub fn policy(&self) -> &RetryPolicy {
        &self.policy
    }

    /// Run attempts until one succeeds or the policy, the classifier or the gate says stop.
    pub async fn run<T, F, Fut>(&self, mut attempt_once: F) -> Result<T, CallFailure>
    where
        F: FnMut(AttemptContext) -> Fut,
        Fut: Future<Output = Result<T, AttemptFailure>>,
    {
        let start = self.clock.now();
        let mut backoff = self.policy.backoff.schedule(self.policy.max_retries, self.policy.jitter_seed);
        let mut attempt = 0u32;
        loop {
            let remaining = self.policy.remaining_time(self.clock.now() - start);
            let timeout =
                remaining.map_or(self.policy.timeout_for(attempt), |left| self.policy.timeout_for(attempt).min(left));
            let context = AttemptContext { attempt, timeout, clock: self.clock.clone() };
            let failure = match attempt_once(context).await {
                Ok(value) => return Ok(value),
                Err(failure) => failure,
            };
            let elapsed = self.clock.now() - start;
            let decision = self.policy.decide(attempt, &failure.error, &failure.observed, backoff.next(), elapsed);
            let record = decision.record(attempt, &failure.error, timeout);
            let Some(delay) = decision.retry_after() else {
                self.events.emit(&Event::RuntimeError {
                    phase: "provider",
                    error_type: record.error_type.clone(),
                    error_message: record.error_message.clone(),
                    decision: Some(record.clone()),
                });
                return Err(CallFailure { error: failure.error, attempts: attempt + 1, decision: record });
            };
            let notice = RetryNotice {
                attempt: attempt + 1,
                max_attempts: record.max_attempts,
                delay,
                reason: failure.error.message.clone(),
                error_type: failure.error.error_type(),
            };
            if let Some(on_retry) = &self.on_retry {
                on_retry(&notice);
            }
            self.events.emit(&Event::ProviderRetry {
                attempt: record.attempt,
                max_attempts: record.max_attempts,
                delay_ms: record.delay_ms,
                reason: notice.reason.clone(),
                error_type: record.error_type.clone(),
                timeout_ms: record.timeout_ms,
                message: notice.message(),
                decision: record,
            });
            self.clock.sleep(delay).await;
            attempt += 1;
        }
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
