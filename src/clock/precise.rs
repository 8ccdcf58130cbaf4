//! A sleep that lands on its deadline instead of the timer wheel's next millisecond tick:
//! tokio's timers fire up to 1 ms late, so the last millisecond is waited by yielding to the
//! scheduler. A fault injector's stalls and delays are the thing being measured.

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
        PreciseSleep { coarse: Box::pin(tokio::time::sleep_until(coarse_deadline)), deadline }
    }
}

impl Future for PreciseSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        std::task::ready!(self.coarse.as_mut().poll(cx));
        if Instant::now() >= self.deadline {
            return Poll::Ready(());
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn never_wakes_before_the_deadline() {
        for _ in 0..20 {
            let deadline = Instant::now() + Duration::from_micros(2500);
            PreciseSleep::until(deadline).await;
            assert!(Instant::now() >= deadline);
        }
    }
}
