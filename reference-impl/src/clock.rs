//! Time, injected: the engine and the provider read and spend *policy time* through a
//! [`Clock`] — sleeps between attempts and the attempts' own timeouts — so a test or the
//! conformance suite can run production values (2 s backoffs, 60 s timeouts) at a fraction of
//! real time, on a virtual clock it shares with the server, or on tokio's paused clock.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, SystemTime};

use tokio::time::Instant;

/// A sleep a [`Clock`] hands out: ends when its span of policy time has passed.
pub type SleepFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Keeps a simulated clock still while alive (see [`Clock::hold`]).
pub type Hold = Box<dyn Send + Sync>;

/// Where the engine reads time and sleeps: policy time, whatever real time it takes.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Policy time elapsed since the clock was made.
    fn now(&self) -> Duration;
    /// Sleep for a span of policy time (a backoff, or how long an attempt may wait on I/O).
    fn sleep(&self, duration: Duration) -> SleepFuture;
    /// Wall-clock time now: what a `Retry-After` HTTP date is read against.
    fn wall_now(&self) -> SystemTime {
        SystemTime::now()
    }
    /// Keep a simulated clock from advancing while work off the async runtime (a file written
    /// on a blocking thread) is in flight; nothing for a clock that follows real time.
    fn hold(&self) -> Option<Hold> {
        None
    }
}

/// `future`, or `None` when `limit` of `clock`'s time passes first (a future ready when the
/// time is up still counts).
pub async fn within<F: Future>(clock: &dyn Clock, limit: Duration, future: F) -> Option<F::Output> {
    let expired = clock.sleep(limit);
    tokio::pin!(future);
    tokio::pin!(expired);
    std::future::poll_fn(|cx| {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(cx) {
            return std::task::Poll::Ready(Some(output));
        }
        expired.as_mut().poll(cx).map(|()| None)
    })
    .await
}

/// Real time multiplied by `scale` (`SQUALL_TIME_SCALE`): at 0.01 a 2 s backoff sleeps 20 ms.
#[derive(Debug, Clone)]
pub struct ScaledClock {
    scale: f64,
    origin: Instant,
}

impl ScaledClock {
    /// Policy time at `scale` of real time (`0.01`: a 1 s backoff sleeps 10 ms); anything but a positive finite scale is 1.
    pub fn new(scale: f64) -> Self {
        let scale = if scale.is_finite() && scale > 0.0 { scale } else { 1.0 };
        ScaledClock { scale, origin: Instant::now() }
    }

    /// The fraction of real time that policy time runs at.
    pub fn scale(&self) -> f64 {
        self.scale
    }
}

impl Clock for ScaledClock {
    fn now(&self) -> Duration {
        self.origin.elapsed().div_f64(self.scale)
    }

    fn sleep(&self, duration: Duration) -> SleepFuture {
        Box::pin(tokio::time::sleep(duration.mul_f64(self.scale)))
    }
}

/// Simulated time: sleeping advances the clock at once. The engine runs production values in
/// zero real time, and the time it reports is exactly the time it planned.
#[derive(Debug, Default)]
pub struct VirtualClock {
    now: std::sync::Mutex<Duration>,
}

impl VirtualClock {
    /// A clock at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Let time pass without sleeping (an attempt that took this long).
    pub fn advance(&self, duration: Duration) {
        *self.lock() += duration;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Duration> {
        self.now.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Duration {
        *self.lock()
    }

    fn sleep(&self, duration: Duration) -> SleepFuture {
        self.advance(duration);
        Box::pin(std::future::ready(()))
    }
}

/// Drive a future that never waits on I/O (the engine on a [`VirtualClock`] with attempts that
/// answer at once) to completion on the current thread, without an async runtime.
pub fn run_ready<F: std::future::Future>(future: F) -> F::Output {
    struct NoopWake;
    impl std::task::Wake for NoopWake {
        fn wake(self: std::sync::Arc<Self>) {}
    }
    let waker = std::task::Waker::from(std::sync::Arc::new(NoopWake));
    let mut context = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        std::thread::yield_now();
    }
}
