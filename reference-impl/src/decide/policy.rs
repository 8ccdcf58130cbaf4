//! Retry policy: how many attempts, which waits, which timeouts, per error kind and agent.
//!
//! # Default (ECN-0003)
//! Retries on; `max_retries = 6` (7 attempts, whatever the retryable kind); backoff per
//! [`BackoffConfig::default`]; jitter from a random seed (a fixed one only when asked for, so
//! clients never retry in lockstep); Retry-After honoured up to a 60 s ceiling (a longer ask
//! ends the retries instead of sleeping); per-attempt timeout 60 s for headers and between
//! events; no bound on the total time beyond what the attempts and waits add up to.
//!
//! Profiles: [`RetryPolicy::fast_fail`] (seed 004: timeouts 2 attempts, 429/5xx 3, and the
//! whole call within 5 minutes, SC-002),
//! [`RetryPolicy::for_agent`] (seed 002: a writing agent 0 retries, read-only 1),
//! [`RetryPolicy::reasoning_ladder`] (seed 001: 60 s then one safe retry at 120 s, no third).

use std::time::Duration;

use crate::decide::backoff::BackoffConfig;
use crate::decide::classify::{is_retryable, ErrorKind, ProviderError};
use crate::decide::decision::{Decision, Outcome};
use crate::decide::gate::{gate, AttemptObservation};

/// Attempt limits per error kind (total attempts, first one included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KindLimits {
    /// Attempts in all while the failures are timeouts.
    pub timeout: Option<u32>,
    /// Attempts in all while the failures are 429s.
    pub rate_limit: Option<u32>,
    /// Attempts in all while the failures are 5xx statuses or broken connections.
    pub server: Option<u32>,
}

/// Agent kinds with different default retry budgets (seed 002).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentProfile {
    /// Has write side effects: no automatic retry.
    Writer,
    /// Read-only: one retry.
    ReadOnly,
}

#[derive(Debug, Clone, PartialEq)]
/// How a call retries: how often, how long it waits, and what it honours.
pub struct RetryPolicy {
    /// Retries after the first attempt; 0 disables retry.
    pub max_retries: u32,
    /// The wait between attempts when the provider asks for none.
    pub backoff: BackoffConfig,
    /// Honour the provider's Retry-After hints.
    pub honour_retry_after: bool,
    /// A Retry-After longer than this ends the retries instead of sleeping.
    pub retry_after_ceiling: Duration,
    /// Attempt limits per kind of failure, within `max_retries`.
    pub kind_limits: KindLimits,
    /// Timeout of each attempt (no headers, or no event, for this long).
    pub attempt_timeout: Duration,
    /// Per-attempt timeouts that override `attempt_timeout`; when set, also the attempt limit.
    pub timeout_ladder: Vec<Duration>,
    /// A hard bound on the whole call, sleeps and attempts included (policy time), if any.
    pub max_total_time: Option<Duration>,
    /// Seed for the backoff jitter: random by default, fixed to reproduce a run.
    pub jitter_seed: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 6,
            backoff: BackoffConfig::default(),
            honour_retry_after: true,
            retry_after_ceiling: Duration::from_secs(60),
            kind_limits: KindLimits::default(),
            attempt_timeout: Duration::from_secs(60),
            timeout_ladder: Vec::new(),
            max_total_time: None,
            jitter_seed: random_seed(),
        }
    }
}

impl RetryPolicy {
    /// Seed 004: timeouts get 2 attempts, 429 and 5xx 3, and the worst case stays within
    /// 5 minutes (SC-002).
    pub fn fast_fail() -> Self {
        RetryPolicy {
            max_retries: 2,
            kind_limits: KindLimits { timeout: Some(2), rate_limit: Some(3), server: Some(3) },
            max_total_time: Some(Duration::from_secs(300)),
            ..Self::default()
        }
    }

    /// Seed 002: a writing agent does not retry; a read-only agent retries once.
    pub fn for_agent(profile: AgentProfile) -> Self {
        let max_retries = match profile {
            AgentProfile::Writer => 0,
            AgentProfile::ReadOnly => 1,
        };
        RetryPolicy { max_retries, ..Self::default() }
    }

    /// Seed 001: a reasoning model's first attempt times out at 60 s, the one safe retry at
    /// 120 s, and there is no third attempt.
    pub fn reasoning_ladder() -> Self {
        RetryPolicy { timeout_ladder: vec![Duration::from_secs(60), Duration::from_secs(120)], ..Self::default() }
    }

    /// The same policy with `max_retries` retries.
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// A fixed jitter seed, to reproduce a run.
    pub fn with_jitter_seed(mut self, seed: u64) -> Self {
        self.jitter_seed = seed;
        self
    }

    /// What is left of the total-time bound after `elapsed`, if there is a bound.
    pub fn remaining_time(&self, elapsed: Duration) -> Option<Duration> {
        self.max_total_time.map(|bound| bound.saturating_sub(elapsed))
    }

    /// The retry decision for one failure — the policy decides and names the wait, the engine
    /// executes it. `attempt` is 0-based; `scheduled` is the backoff schedule's next wait
    /// (`None`: the schedule is spent); `elapsed` is the call's time so far. The classifier and
    /// the gate are asked once each; their answers are in the decision.
    pub fn decide(
        &self,
        attempt: u32,
        error: &ProviderError,
        observed: &AttemptObservation,
        scheduled: Option<Duration>,
        elapsed: Duration,
    ) -> Decision {
        let technically_retryable = is_retryable(error);
        let gate = gate(error, observed);
        let decision = |outcome, delay| Decision {
            outcome,
            delay,
            technically_retryable,
            gate,
            max_attempts: self.max_attempts_for(error),
        };
        if !technically_retryable {
            return decision(Outcome::NotRetryable, None);
        }
        if !gate.allows() {
            return decision(Outcome::BlockedByGate, None);
        }
        let Some(scheduled) = scheduled.filter(|_| attempt + 1 < self.max_attempts_for(error)) else {
            return decision(Outcome::Exhausted, None);
        };
        // The one place a Retry-After hint adjusts the next delay.
        let hint = error.retry_after.filter(|_| self.honour_retry_after);
        let delay = match hint {
            Some(hint) if hint.delay > self.retry_after_ceiling => {
                return decision(Outcome::RetryAfterTooLong, Some((hint.delay, hint.source.as_str())));
            }
            Some(hint) => (hint.delay, hint.source.as_str()),
            None => (scheduled, "backoff"),
        };
        if self.max_total_time.is_some_and(|bound| elapsed.saturating_add(delay.0) >= bound) {
            return decision(Outcome::TimeBudgetExhausted, Some(delay));
        }
        decision(Outcome::Retrying, Some(delay))
    }

    /// Total attempts allowed for a failure of this kind.
    pub fn max_attempts_for(&self, error: &ProviderError) -> u32 {
        let mut limit = self.max_retries + 1;
        if !self.timeout_ladder.is_empty() {
            limit = limit.min(self.timeout_ladder.len() as u32);
        }
        let kind_limit = match error.kind {
            ErrorKind::Timeout => self.kind_limits.timeout,
            ErrorKind::RateLimit => self.kind_limits.rate_limit,
            ErrorKind::Http => self.kind_limits.server,
            _ => None,
        };
        kind_limit.map_or(limit, |k| limit.min(k))
    }

    /// The most attempts any failure can get.
    pub fn max_attempts(&self) -> u32 {
        let ladder = if self.timeout_ladder.is_empty() { u32::MAX } else { self.timeout_ladder.len() as u32 };
        (self.max_retries + 1).min(ladder)
    }

    /// The timeout of attempt `n` (0-based).
    pub fn timeout_for(&self, attempt: u32) -> Duration {
        self.timeout_ladder.get(attempt as usize).copied().unwrap_or(self.attempt_timeout)
    }

    /// The worst-case total time of a call whose every attempt fails with `kind`: each attempt
    /// runs to its timeout, each sleep is the longest the schedule allows (for rate limits, the
    /// Retry-After ceiling), all bounded by `max_total_time`.
    pub fn analytic_bound_for(&self, kind: ErrorKind) -> Duration {
        let attempts = self.max_attempts_for(&ProviderError::new(kind, ""));
        let timeouts: Duration = (0..attempts).map(|n| self.timeout_for(n)).sum();
        let longest_sleep = |n: u32| {
            let backoff = self.backoff.max_delay(n);
            if kind == ErrorKind::RateLimit && self.honour_retry_after {
                backoff.max(self.retry_after_ceiling)
            } else {
                backoff
            }
        };
        let sleeps: Duration = (0..attempts.saturating_sub(1)).map(longest_sleep).sum();
        let total = timeouts + sleeps;
        self.max_total_time.map_or(total, |bound| total.min(bound))
    }

    /// The worst case over every retryable kind of failure.
    pub fn analytic_bound(&self) -> Duration {
        [ErrorKind::Timeout, ErrorKind::RateLimit, ErrorKind::Http]
            .into_iter()
            .map(|k| self.analytic_bound_for(k))
            .max()
            .unwrap_or_default()
    }
}

/// A seed for jitter that differs between processes and between calls.
pub(crate) fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher
        .write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos());
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::classify::{classify_transport, TransportFailure};

    #[test]
    fn defaults_follow_ecn_0003() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.max_retries, 6);
        assert_eq!(policy.max_attempts(), 7);
    }

    #[test]
    fn fast_fail_limits_per_kind() {
        let policy = RetryPolicy::fast_fail();
        assert_eq!(policy.max_attempts_for(&classify_transport(TransportFailure::IdleTimeout, "")), 2);
        assert_eq!(policy.max_attempts_for(&ProviderError::new(ErrorKind::RateLimit, "")), 3);
        let mut server = ProviderError::new(ErrorKind::Http, "");
        server.status = Some(503);
        assert_eq!(policy.max_attempts_for(&server), 3);
    }

    #[test]
    fn agent_profiles_and_the_reasoning_ladder() {
        assert_eq!(RetryPolicy::for_agent(AgentProfile::Writer).max_attempts(), 1);
        assert_eq!(RetryPolicy::for_agent(AgentProfile::ReadOnly).max_attempts(), 2);
        let ladder = RetryPolicy::reasoning_ladder();
        assert_eq!((ladder.timeout_for(0), ladder.timeout_for(1)), (Duration::from_secs(60), Duration::from_secs(120)));
        assert_eq!(ladder.max_attempts(), 2);
    }

    #[test]
    fn the_defaults_bound_attempts_and_fast_fail_bounds_time_as_well() {
        // ECN-0003: 7 attempts of 60 s and six waits of at most 1+1, 2+1, 4+1, 8+1, 16+1 and 30 s.
        assert_eq!(RetryPolicy::default().analytic_bound_for(ErrorKind::Timeout), Duration::from_secs(7 * 60 + 66));
        assert!(RetryPolicy::fast_fail().analytic_bound() <= Duration::from_secs(300));
        // Seed 004's fast-fail profile when every attempt times out: two 60 s attempts and one
        // backoff sleep of at most 2 s, inside the seed's ~246 s.
        assert_eq!(RetryPolicy::fast_fail().analytic_bound_for(ErrorKind::Timeout), Duration::from_secs(122));
    }

    #[test]
    fn jitter_is_seeded_at_random_unless_a_seed_is_given() {
        assert_ne!(RetryPolicy::default().jitter_seed, RetryPolicy::default().jitter_seed);
        assert_eq!(RetryPolicy::default().with_jitter_seed(7).jitter_seed, 7);
    }
}
