//! Slow clients: correct in every decision, but spending real time of their own before each
//! retry — what a busy interpreted or JIT-compiled client does on a loaded machine. That time is
//! not policy: it does not shrink with the time scale, and the client's own sense of elapsed
//! policy time leaves it out. The suite must give them exactly the verdicts of the reference.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::clock::{Clock, SleepFuture};
use crate::decide::backoff::SplitMix64;

/// A clock whose every sleep (the engine sleeps once before each retry) first spends an
/// unscaled real overhead drawn from `low..=high` milliseconds.
#[derive(Debug)]
pub struct SlowClock {
    inner: Arc<dyn Clock>,
    /// The inner clock's time scale: policy time per real time.
    scale: f64,
    low_ms: f64,
    high_ms: f64,
    draws: Mutex<SplitMix64>,
    /// Real nanoseconds spent on overhead so far, left out of policy time.
    spent_ns: Arc<AtomicU64>,
}

impl SlowClock {
    /// `inner` (at `scale` of real time), slowed by `low_ms..=high_ms` of real time before each
    /// sleep, drawn from `seed`.
    pub fn new(inner: Arc<dyn Clock>, scale: f64, low_ms: f64, high_ms: f64, seed: u64) -> Self {
        SlowClock { inner, scale, low_ms, high_ms, draws: Mutex::new(SplitMix64(seed)), spent_ns: Arc::default() }
    }

    fn draw(&self) -> Duration {
        let unit = self.draws.lock().unwrap_or_else(std::sync::PoisonError::into_inner).next_unit();
        Duration::from_secs_f64((self.low_ms + unit * (self.high_ms - self.low_ms)) / 1000.0)
    }
}

impl Clock for SlowClock {
    fn now(&self) -> Duration {
        let overhead = Duration::from_nanos(self.spent_ns.load(Ordering::Relaxed));
        self.inner.now().saturating_sub(overhead.div_f64(self.scale.max(f64::MIN_POSITIVE)))
    }

    fn sleep(&self, duration: Duration) -> SleepFuture {
        let (overhead, spent, inner) = (self.draw(), self.spent_ns.clone(), self.inner.clone());
        Box::pin(async move {
            tokio::time::sleep(overhead).await;
            spent.fetch_add(overhead.as_nanos() as u64, Ordering::Relaxed);
            // Made only now: a sleep's deadline is set when it is made.
            inner.sleep(duration).await;
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ScaledClock;

    #[tokio::test]
    async fn the_overhead_is_real_time_and_not_policy_time() {
        let clock = SlowClock::new(Arc::new(ScaledClock::new(0.01)), 0.01, 50.0, 50.0, 1);
        let started = std::time::Instant::now();
        clock.sleep(Duration::from_secs(1)).await;
        let real = started.elapsed();
        assert!(real >= Duration::from_millis(60), "50 ms of overhead, then 10 ms of scaled sleep: {real:?}");
        let policy = clock.now();
        assert!(policy >= Duration::from_millis(900) && policy < Duration::from_secs(4), "{policy:?}");
    }
}
