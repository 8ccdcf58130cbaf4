//! A sleep that lands on its deadline instead of the timer wheel's next millisecond tick:
//! tokio's timers fire up to 1 ms late, so the last millisecond is waited by yielding to the
//! scheduler. A fault injector's stalls and delays are the thing being measured. Under tokio's
//! paused clock (a test that pauses time) yielding would keep the runtime from ever being idle,
//! and so time from advancing: a clock that stands still between two polls ends the wait on the
//! timer instead.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

/// The part of a wait left to yielding rather than to the timer.
const SPIN: Duration = Duration::from_millis(1);

#[derive(Debug)]
pub(crate) struct PreciseSleep {
    coarse: Pin<Box<Sleep>>,
    deadline: Instant,
    /// When the last millisecond's yielding last looked at the clock.
    spun_at: Option<Instant>,
}

/// `from + wait`, or a year from `from` when the clock cannot reach that far (scenario waits are
/// bounded by validation; this keeps the server itself from ever panicking on a deadline).
pub(crate) fn deadline_after(from: Instant, wait: Duration) -> Instant {
    const FAR: Duration = Duration::from_secs(365 * 24 * 3600);
    from.checked_add(wait).or_else(|| from.checked_add(FAR)).unwrap_or(from)
}

impl PreciseSleep {
    pub(crate) fn until(deadline: Instant) -> Self {
        let coarse_deadline = deadline.checked_sub(SPIN).unwrap_or(deadline);
        PreciseSleep { coarse: Box::pin(tokio::time::sleep_until(coarse_deadline)), deadline, spun_at: None }
    }
}

impl Future for PreciseSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        std::task::ready!(self.coarse.as_mut().poll(cx));
        let now = Instant::now();
        if now >= self.deadline {
            return Poll::Ready(());
        }
        if self.spun_at == Some(now) {
            // The clock is paused: wait the rest on the timer, which a paused clock advances.
            let deadline = self.deadline;
            self.coarse.as_mut().reset(deadline);
            return self.coarse.as_mut().poll(cx);
        }
        self.spun_at = Some(now);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn on_a_paused_clock_it_ends_at_its_deadline_without_spinning() {
        let deadline = Instant::now() + Duration::from_secs(3600);
        PreciseSleep::until(deadline).await;
        assert_eq!(Instant::now(), deadline);
    }

    #[tokio::test]
    async fn never_wakes_before_the_deadline() {
        for _ in 0..20 {
            let deadline = Instant::now() + Duration::from_micros(2500);
            PreciseSleep::until(deadline).await;
            assert!(Instant::now() >= deadline);
        }
    }
}
