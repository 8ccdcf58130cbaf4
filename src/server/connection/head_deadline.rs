//! The header timeout (`--header-timeout`): a connection has so long to send a complete request
//! head from its opening or the end of its last reply; a silent, trickling or idle one is then
//! closed. hyper's own (`header_read_timeout`) makes and drops a timer for every request, and
//! with a timer pending a serving thread sleeps in `epoll_wait` with a timeout, which the kernel
//! arms as a timer of its own each time: about 4 % of a served request's CPU on one connection
//! (BENCHMARKS.md). Here the connections' deadlines are swept by one task on the
//! runtime that accepts them, so a serving thread waits for its sockets with no timeout; a
//! request costs two counter updates and a reading of the clock when its reply ends.

use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::sync::futures::Notified;
use tokio::sync::Notify;
use tokio::time::Instant;

/// Every open connection's deadline, swept by [`HeadWatch::sweep`].
#[derive(Debug)]
pub(in crate::server) struct HeadWatch {
    timeout: Duration,
    open: Mutex<Vec<Weak<Shared>>>,
}

impl HeadWatch {
    pub(in crate::server) fn new(timeout: Duration) -> Self {
        HeadWatch { timeout, open: Mutex::new(Vec::new()) }
    }

    /// The deadline of a connection opened now.
    pub(in crate::server) fn watch(&self) -> HeadDeadline {
        let deadline = HeadDeadline::new(Instant::now());
        self.open.lock().unwrap_or_else(|e| e.into_inner()).push(Arc::downgrade(&deadline.0));
        deadline
    }

    /// How often the deadlines are looked at: a connection is closed at most this late.
    fn every(&self) -> Duration {
        (self.timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(1))
    }

    /// Close the connections whose wait for a head has run out, for as long as the server runs.
    pub(in crate::server) async fn sweep(self: Arc<Self>) {
        let mut ticks = tokio::time::interval(self.every());
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let now = Instant::now();
            self.open.lock().unwrap_or_else(|e| e.into_inner()).retain(|connection| {
                let Some(shared) = connection.upgrade() else { return false };
                if shared.waited_out(now, self.timeout) {
                    shared.timed_out.notify_one();
                }
                true
            });
        }
    }
}

/// One connection's wait for request heads.
#[derive(Debug, Clone)]
pub(in crate::server) struct HeadDeadline(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    opened: Instant,
    /// Requests whose head came and whose reply has not ended: no head is awaited meanwhile.
    replying: AtomicU32,
    /// When the last reply ended, in microseconds after `opened` (0: none has).
    idle_since_us: AtomicU64,
    /// Told when the wait for a head has run out.
    timed_out: Notify,
}

impl HeadDeadline {
    fn new(opened: Instant) -> Self {
        let (replying, idle_since_us, timed_out) = (AtomicU32::new(0), AtomicU64::new(0), Notify::new());
        HeadDeadline(Arc::new(Shared { opened, replying, idle_since_us, timed_out }))
    }

    /// Ready when the sweep finds the wait for a head run out: the connection is to be closed.
    pub(in crate::server) fn timed_out(&self) -> Notified<'_> {
        self.0.timed_out.notified()
    }

    /// A request's head came: no head is awaited until the reply `ReplyEnd` marks ends.
    pub(in crate::server) fn head_came(&self) -> ReplyEnd {
        self.0.replying.fetch_add(1, Ordering::Relaxed);
        ReplyEnd(self.clone())
    }
}

impl Shared {
    /// Whether the connection, at `now`, has waited `timeout` for a head: since it opened or
    /// its last reply ended, with no reply under way.
    fn waited_out(&self, now: Instant, timeout: Duration) -> bool {
        // The count first: a reply seen ended has its end seen too (`ReplyEnd` stores the end,
        // then releases the count).
        if self.replying.load(Ordering::Acquire) > 0 {
            return false;
        }
        self.opened + Duration::from_micros(self.idle_since_us.load(Ordering::Relaxed)) + timeout <= now
    }
}

/// Marks the end of a reply when dropped (with its body, or with the request when no reply came).
#[derive(Debug)]
pub(in crate::server) struct ReplyEnd(HeadDeadline);

impl Drop for ReplyEnd {
    fn drop(&mut self) {
        let shared = &(self.0).0;
        let after = Instant::now().saturating_duration_since(shared.opened).as_micros();
        shared.idle_since_us.store(u64::try_from(after).unwrap_or(u64::MAX), Ordering::Relaxed);
        shared.replying.fetch_sub(1, Ordering::Release);
    }
}

/// A reply's body that marks the reply's end when hyper drops it (sent, or given up).
#[derive(Debug)]
pub(in crate::server) struct Marked<B> {
    body: B,
    _end: ReplyEnd,
}

impl<B> Marked<B> {
    pub(in crate::server) fn new(body: B, end: ReplyEnd) -> Self {
        Marked { body, _end: end }
    }
}

impl<B: Body<Data = Bytes> + Unpin> Body for Marked<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUT: Duration = Duration::from_secs(60);

    #[test]
    fn a_head_is_awaited_from_the_opening_and_from_the_end_of_each_reply_and_never_during_one() {
        let opened = Instant::now();
        let deadline = HeadDeadline::new(opened);
        let waited_out = |at: Instant| deadline.0.waited_out(at, TIMEOUT);
        // Silent since it opened: closed at the timeout, not before.
        assert!(!waited_out(opened + TIMEOUT - Duration::from_millis(1)));
        assert!(waited_out(opened + TIMEOUT));
        // While a reply is on its way (however long), no head is awaited.
        let end = deadline.head_came();
        assert!(!waited_out(opened + 10 * TIMEOUT));
        // Two requests in flight (a WebSocket's opening may outlive its reply): both must end.
        let other = deadline.head_came();
        drop(end);
        assert!(!waited_out(opened + 10 * TIMEOUT));
        let before_end = Instant::now();
        drop(other);
        let after_end = Instant::now();
        // From the end of the last reply, the whole timeout again.
        assert!(!waited_out(before_end + TIMEOUT - Duration::from_millis(1)));
        assert!(waited_out(after_end + TIMEOUT));
    }
}
