//! Time, injected: the engine and the provider read and spend *policy time* through a
//! [`Clock`], so a test or the conformance suite can run production values (2 s backoffs,
//! 60 s timeouts) at a fraction of real time, or on tokio's paused clock.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tokio::time::Instant;

pub type SleepFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Policy time elapsed since the clock was made.
    fn now(&self) -> Duration;
    /// Sleep for a span of policy time.
    fn sleep(&self, duration: Duration) -> SleepFuture;
    /// The real duration of a span of policy time (for I/O timeouts).
    fn to_real(&self, duration: Duration) -> Duration;
}

/// Real time multiplied by `scale` (`SQUALL_TIME_SCALE`): at 0.01 a 2 s backoff sleeps 20 ms.
#[derive(Debug, Clone)]
pub struct ScaledClock {
    scale: f64,
    origin: Instant,
}

impl ScaledClock {
    pub fn new(scale: f64) -> Self {
        let scale = if scale.is_finite() && scale > 0.0 { scale } else { 1.0 };
        ScaledClock { scale, origin: Instant::now() }
    }

    pub fn scale(&self) -> f64 {
        self.scale
    }
}

impl Clock for ScaledClock {
    fn now(&self) -> Duration {
        self.origin.elapsed().div_f64(self.scale)
    }

    fn sleep(&self, duration: Duration) -> SleepFuture {
        Box::pin(tokio::time::sleep(self.to_real(duration)))
    }

    fn to_real(&self, duration: Duration) -> Duration {
        duration.mul_f64(self.scale)
    }
}

/// Simulated time: sleeping advances the clock at once. The engine runs production values in
/// zero real time, and the time it reports is exactly the time it planned.
#[derive(Debug, Default)]
pub struct VirtualClock {
    now: std::sync::Mutex<Duration>,
}

impl VirtualClock {
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

    fn to_real(&self, duration: Duration) -> Duration {
        duration
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
