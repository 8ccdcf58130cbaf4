//! The time a server and the clients in its process read: tokio's real clock, or squall's own
//! virtual clock, which they share and which jumps to the next deadline once nobody is working.
//!
//! - [`Clock`] — what the server's journal, delays and stalls read and sleep on
//! - [`VirtualClock`] — virtual time for a server and in-process clients on one runtime: waits
//!   take no real time and every span is exact (`docs/embedded.md`, "Virtual time")
//! - [`ClientFrame`] — the wall time a client on a sped-up clock reads, for dates sent to it
//! - [`Frame`] — the file a process tree on squall's clock reads its time from
//! - [`TimeScale`] — real time per policy second, checked once
//! - `precise` — real sleeps that land on their deadline, not on the timer wheel's next tick

mod client_frame;
mod frame;
mod precise;
mod time_scale;
mod virtual_clock;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use tokio::time::Instant;

pub use self::client_frame::ClientFrame;
pub use self::frame::{Frame, FrameError, Segment};
pub(crate) use self::precise::deadline_after;
use self::precise::PreciseSleep;
pub use self::time_scale::{TimeScale, TimeScaleError};
pub use self::virtual_clock::{Hold, VirtualClock, VirtualSleep};

/// Where time comes from.
#[derive(Debug, Clone, Default)]
pub enum Clock {
    /// tokio's clock: real time (or tokio's own paused clock in a test that pauses it).
    #[default]
    Real,
    /// squall's virtual clock, shared with the clients of the same runtime.
    Virtual(VirtualClock),
}

impl Clock {
    /// Now, as an instant of this clock (a virtual instant counts from the clock's start).
    pub fn now(&self) -> Instant {
        match self {
            Clock::Real => Instant::now(),
            Clock::Virtual(clock) => clock.now(),
        }
    }

    /// Wall-clock time now (what an HTTP date in a header is read against).
    pub fn wall_now(&self) -> SystemTime {
        match self {
            Clock::Real => SystemTime::now(),
            Clock::Virtual(clock) => clock.wall_now(),
        }
    }

    /// A sleep until `deadline` (an instant of this clock).
    pub fn sleep_until(&self, deadline: Instant) -> Sleep {
        match self {
            Clock::Real => Sleep(Sleeping::Real(PreciseSleep::until(deadline))),
            Clock::Virtual(clock) => Sleep(Sleeping::Virtual(clock.sleep_until(deadline))),
        }
    }

    /// A sleep of `duration` from now.
    pub fn sleep(&self, duration: Duration) -> Sleep {
        self.sleep_until(deadline_after(self.now(), duration))
    }

    /// `future`, or `None` when `duration` passes first (the future is polled first, so one that
    /// is ready when the time is up still counts).
    pub async fn timeout<F: Future>(&self, duration: Duration, future: F) -> Option<F::Output> {
        let sleep = self.sleep(duration);
        tokio::pin!(future);
        tokio::pin!(sleep);
        std::future::poll_fn(|cx| {
            if let Poll::Ready(output) = future.as_mut().poll(cx) {
                return Poll::Ready(Some(output));
            }
            sleep.as_mut().poll(cx).map(|()| None)
        })
        .await
    }

    /// Whether this is a virtual clock.
    pub fn is_virtual(&self) -> bool {
        matches!(self, Clock::Virtual(_))
    }
}

/// A sleep on a [`Clock`].
#[derive(Debug)]
pub struct Sleep(Sleeping);

#[derive(Debug)]
enum Sleeping {
    Real(PreciseSleep),
    Virtual(VirtualSleep),
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.get_mut().0 {
            Sleeping::Real(sleep) => Pin::new(sleep).poll(cx),
            Sleeping::Virtual(sleep) => Pin::new(sleep).poll(cx),
        }
    }
}
