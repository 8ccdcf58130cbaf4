//! Backoff is data: a capped exponential schedule with seedable jitter, as an iterator of
//! delays where `None` means "give up".
//!
//! # Default
//! `initial = 1 s`, `factor = 2`, `jitter = 0..1 s` added before the cap, `cap = 30 s`.
//! Base, factor and jitter are seed 002's (`base_delay × 2^retry_count + random_jitter`, base
//! 1 s, jitter 0-1 s: 1-2, 2-3, 4-5, 8-9, 16-17 s); PRD-0006 asks for a cap without naming it,
//! and OpenCode's 30 s is the one it aligns with. With ECN-0003's 6 retries the sleeps are
//! 1-2, 2-3, 4-5, 8-9, 16-17 and 30 s: at most 65 s in all.

use std::time::Duration;

/// The schedule's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BackoffConfig {
    /// The first wait.
    pub initial: Duration,
    /// Each wait is the one before times this.
    pub factor: f64,
    /// No wait is longer than this (jitter included).
    pub cap: Duration,
    /// Uniform jitter in `0..jitter`, added before the cap.
    pub jitter: Duration,
    /// Each wait a uniform share of the capped delay instead (a full jitter; `jitter` unused).
    pub full_jitter: bool,
    /// Each wait uniform from `initial` to this multiple of the wait before (the first: of
    /// `initial`), capped, instead (a decorrelated jitter, AWS's with
    /// [`DECORRELATED_MULTIPLE`]; `factor` and `jitter` unused).
    pub decorrelated: Option<f64>,
}

/// AWS's decorrelated jitter's multiple of the wait before.
pub const DECORRELATED_MULTIPLE: f64 = 3.0;

impl Default for BackoffConfig {
    fn default() -> Self {
        BackoffConfig {
            initial: Duration::from_secs(1),
            factor: 2.0,
            cap: Duration::from_secs(30),
            jitter: Duration::from_secs(1),
            full_jitter: false,
            decorrelated: None,
        }
    }
}

impl BackoffConfig {
    /// The same schedule without jitter (exact waits, for tests and records).
    pub fn without_jitter(mut self) -> Self {
        self.jitter = Duration::ZERO;
        self.full_jitter = false;
        self.decorrelated = None;
        self
    }

    /// The delay before retry `n` (0-based) without jitter, capped.
    pub fn base_delay(&self, retry: u32) -> Duration {
        let exponential = self.initial.as_secs_f64() * self.factor.powi(retry.min(64) as i32);
        Duration::from_secs_f64(exponential.min(self.cap.as_secs_f64()))
    }

    /// The largest delay the schedule can produce for retry `n`.
    pub fn max_delay(&self, retry: u32) -> Duration {
        if let Some(multiple) = self.decorrelated {
            let most = self.initial.as_secs_f64() * multiple.powi(retry.min(64) as i32 + 1);
            return Duration::from_secs_f64(most.min(self.cap.as_secs_f64()));
        }
        match self.full_jitter {
            true => self.base_delay(retry),
            false => (self.base_delay(retry) + self.jitter).min(self.cap.max(self.base_delay(retry))),
        }
    }

    /// A schedule of at most `max_retries` delays, jittered from `seed`.
    pub fn schedule(&self, max_retries: u32, seed: u64) -> Backoff {
        Backoff { config: *self, retry: 0, max_retries, rng: SplitMix64(seed), last: self.initial }
    }
}

/// The delays before each retry; `None` once the retries are used up.
#[derive(Debug, Clone)]
pub struct Backoff {
    config: BackoffConfig,
    retry: u32,
    max_retries: u32,
    rng: SplitMix64,
    /// The wait before (a decorrelated jitter's draws depend on it).
    last: Duration,
}

impl Iterator for Backoff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        if self.retry >= self.max_retries {
            return None;
        }
        let base = self.config.base_delay(self.retry);
        let draw = self.rng.next_unit();
        self.retry += 1;
        if let Some(multiple) = self.config.decorrelated {
            let (floor, ceiling) = (self.config.initial.as_secs_f64(), multiple * self.last.as_secs_f64());
            let wait = (floor + (ceiling - floor) * draw).min(self.config.cap.as_secs_f64());
            self.last = Duration::from_secs_f64(wait);
            return Some(self.last);
        }
        match self.config.full_jitter {
            true => Some(base.mul_f64(draw)),
            false => Some((base + self.config.jitter.mul_f64(draw)).min(self.config.cap.max(base))),
        }
    }
}

/// A small seedable generator (SplitMix64): reproducible jitter without a dependency.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub(crate) fn next_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_schedule_doubles_up_to_the_cap() {
        let delays: Vec<u64> = BackoffConfig::default().without_jitter().schedule(6, 0).map(|d| d.as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 30]);
    }

    #[test]
    fn jitter_stays_within_bounds_and_is_reproducible() {
        let config = BackoffConfig::default();
        let first: Vec<Duration> = config.schedule(6, 42).collect();
        assert_eq!(first, config.schedule(6, 42).collect::<Vec<_>>());
        assert_ne!(first, config.schedule(6, 43).collect::<Vec<_>>());
        for (n, delay) in first.iter().enumerate() {
            let base = config.base_delay(n as u32);
            assert!(*delay >= base && *delay <= config.max_delay(n as u32), "retry {n}: {delay:?}");
        }
    }

    #[test]
    fn a_decorrelated_jitter_draws_each_wait_below_three_times_the_one_before() {
        let config = BackoffConfig { decorrelated: Some(DECORRELATED_MULTIPLE), ..BackoffConfig::default() };
        let delays: Vec<Duration> = config.schedule(10, 7).collect();
        let mut before = config.initial;
        for (n, delay) in delays.iter().enumerate() {
            let ceiling = before.mul_f64(DECORRELATED_MULTIPLE).min(config.cap);
            assert!(*delay >= config.initial.min(ceiling) && *delay <= ceiling, "retry {n}: {delays:?}");
            assert!(*delay <= config.max_delay(n as u32), "retry {n}: {delays:?}");
            before = *delay;
        }
    }

    #[test]
    fn none_means_give_up() {
        assert_eq!(BackoffConfig::default().schedule(0, 1).next(), None);
        assert_eq!(BackoffConfig::default().schedule(2, 1).count(), 2);
    }
}
