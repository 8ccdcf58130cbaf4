//! squall's virtual clock: time that a server and the clients of one runtime share, and that
//! passes only while every one of them waits.
//!
//! Sleeping registers a deadline. A driver task advances time straight to the earliest deadline
//! once the runtime is quiescent: a blocking thread, after a short real moment, finds the runtime
//! still in the one park it entered since the driver last ran, and (on Linux) its thread asleep
//! in `epoll_wait` — every task waits, and no socket has anything to read. (Loopback delivers a
//! write before `send` returns, so an exchange in flight always has a socket ready; the kernel's
//! view of the thread is what tells a park blocked on nothing from one that is just returning
//! with events, whatever the machine's load.)
//! tokio's own paused clock cannot serve here: it advances in the same park that delivers I/O,
//! so a client's timeout fires before the server has read the request that would answer it.
//!
//! Work done off the runtime (a file written on a blocking thread) keeps time still with a
//! [`Hold`]. A task that spins on real time, or waits on another process, has no place here.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, SystemTime};

use tokio::sync::Notify;
use tokio::time::Instant;

/// The real moment the runtime must stay parked before virtual time advances.
const SETTLE: Duration = Duration::from_micros(200);

/// Virtual time; clones share it.
#[derive(Debug, Clone)]
pub struct VirtualClock {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    /// The real instant virtual time counts from: a virtual instant is `origin + elapsed`.
    origin: Instant,
    /// Wall-clock time at `origin`.
    wall_origin: SystemTime,
    state: Mutex<State>,
    /// Parks of the runtime the clock drives, begun and ended (its `on_thread_park` and
    /// `on_thread_unpark` hooks count them).
    parks: AtomicU64,
    unparks: AtomicU64,
    /// Holds alive ([`VirtualClock::hold`]).
    holds: AtomicUsize,
    /// The runtime thread as the kernel shows it (`/proc/<pid>/task/<tid>`), once it has parked.
    thread: OnceLock<PathBuf>,
    /// Wakes the driver when a deadline is registered or a hold released.
    changed: Notify,
}

#[derive(Debug, Default)]
struct State {
    elapsed: Duration,
    /// Waiting sleeps by (deadline, id).
    sleepers: BTreeMap<(Duration, u64), Waker>,
    next_id: u64,
}

impl VirtualClock {
    /// A current-thread tokio runtime driven by a new virtual clock, and the clock. The server
    /// and every client that sleeps on the clock must run on this runtime.
    pub fn runtime() -> std::io::Result<(tokio::runtime::Runtime, VirtualClock)> {
        let clock = VirtualClock {
            shared: Arc::new(Shared {
                origin: Instant::now(),
                wall_origin: whole_second(SystemTime::now()),
                state: Mutex::default(),
                parks: AtomicU64::new(0),
                unparks: AtomicU64::new(0),
                holds: AtomicUsize::new(0),
                thread: OnceLock::new(),
                changed: Notify::new(),
            }),
        };
        let (parked, unparked) = (clock.shared.clone(), clock.shared.clone());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .on_thread_park(move || {
                parked.thread.get_or_init(|| {
                    Path::new("/proc").join(std::fs::read_link("/proc/thread-self").unwrap_or_default())
                });
                parked.parks.fetch_add(1, Ordering::SeqCst);
            })
            .on_thread_unpark(move || {
                unparked.unparks.fetch_add(1, Ordering::SeqCst);
            })
            .build()?;
        runtime.spawn(drive(clock.shared.clone()));
        Ok((runtime, clock))
    }

    /// Now: the clock's start plus the virtual time elapsed.
    pub fn now(&self) -> Instant {
        self.shared.origin + self.elapsed()
    }

    /// Wall-clock time now, virtual: the real wall time at the clock's start plus the virtual
    /// time elapsed.
    pub fn wall_now(&self) -> SystemTime {
        self.shared.wall_origin + self.elapsed()
    }

    /// Virtual time elapsed since the clock started.
    pub fn elapsed(&self) -> Duration {
        self.shared.lock().elapsed
    }

    /// A sleep until `deadline`, an instant of this clock.
    pub fn sleep_until(&self, deadline: Instant) -> VirtualSleep {
        let deadline = deadline.saturating_duration_since(self.shared.origin);
        VirtualSleep { shared: self.shared.clone(), deadline, id: None }
    }

    /// A sleep of `duration` from now.
    pub fn sleep(&self, duration: Duration) -> VirtualSleep {
        self.sleep_until(super::precise::deadline_after(self.now(), duration))
    }

    /// Keep time from passing until the hold is dropped: for work off the runtime (a blocking
    /// thread) that tasks on it wait for.
    pub fn hold(&self) -> Hold {
        self.shared.holds.fetch_add(1, Ordering::SeqCst);
        Hold { shared: self.shared.clone() }
    }
}

/// `time` without its fraction of a second: HTTP dates have whole seconds, so virtual wall time
/// that starts on one renders the same dates in every run.
fn whole_second(time: SystemTime) -> SystemTime {
    let since_epoch = time.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    SystemTime::UNIX_EPOCH + Duration::from_secs(since_epoch.as_secs())
}

impl Shared {
    /// Whether the runtime thread sleeps in `epoll_wait`, as the kernel sees it (a thread woken
    /// by an event shows as running at once). Where `/proc` cannot tell, the park counts alone
    /// decide.
    fn blocked_in_epoll(&self) -> bool {
        let Some(thread) = self.thread.get() else { return false };
        let (Ok(stat), Ok(wchan)) =
            (std::fs::read_to_string(thread.join("stat")), std::fs::read_to_string(thread.join("wchan")))
        else {
            return true;
        };
        let state = stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next());
        state == Some("S") && wchan.contains("epoll_wait")
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Move time to the earliest deadline and wake every sleep due by then.
    fn advance(&self) {
        let due: Vec<Waker> = {
            let mut state = self.lock();
            let Some(&(deadline, _)) = state.sleepers.keys().next() else { return };
            state.elapsed = state.elapsed.max(deadline);
            let later = state.sleepers.split_off(&(deadline, u64::MAX));
            std::mem::replace(&mut state.sleepers, later).into_values().collect()
        };
        due.into_iter().for_each(Waker::wake);
    }
}

/// Advance time whenever the runtime is quiescent and something sleeps.
async fn drive(shared: Arc<Shared>) {
    loop {
        let changed = shared.changed.notified();
        if shared.lock().sleepers.is_empty() || shared.holds.load(Ordering::SeqCst) > 0 {
            changed.await;
            continue;
        }
        // Looked at from another thread: is the runtime still in the one park it entered after
        // the driver yielded? (A timer of its own could take two parks to fire.)
        let (parks, unparks) = (shared.parks.load(Ordering::SeqCst), shared.unparks.load(Ordering::SeqCst));
        let watcher = shared.clone();
        let quiet = tokio::task::spawn_blocking(move || {
            std::thread::sleep(SETTLE);
            let in_that_park = || {
                watcher.parks.load(Ordering::SeqCst) == parks + 1 && watcher.unparks.load(Ordering::SeqCst) == unparks
            };
            in_that_park() && watcher.blocked_in_epoll() && in_that_park()
        });
        match quiet.await {
            Ok(true) if shared.holds.load(Ordering::SeqCst) == 0 => shared.advance(),
            Ok(_) => {}
            Err(_) => return,
        }
    }
}

/// A sleep on a [`VirtualClock`].
#[derive(Debug)]
pub struct VirtualSleep {
    shared: Arc<Shared>,
    /// Virtual time it ends at.
    deadline: Duration,
    /// Its place among the sleepers, once registered.
    id: Option<u64>,
}

impl Future for VirtualSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let mut state = this.shared.lock();
        if state.elapsed >= this.deadline {
            if let Some(id) = this.id.take() {
                state.sleepers.remove(&(this.deadline, id));
            }
            return Poll::Ready(());
        }
        let id = match this.id {
            Some(id) => id,
            None => {
                let id = state.next_id;
                state.next_id += 1;
                this.id = Some(id);
                id
            }
        };
        let registered = state.sleepers.insert((this.deadline, id), cx.waker().clone()).is_none();
        drop(state);
        if registered {
            this.shared.changed.notify_one();
        }
        Poll::Pending
    }
}

impl Drop for VirtualSleep {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.shared.lock().sleepers.remove(&(self.deadline, id));
        }
    }
}

/// Keeps a [`VirtualClock`] still while alive.
#[derive(Debug)]
pub struct Hold {
    shared: Arc<Shared>,
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.shared.holds.fetch_sub(1, Ordering::SeqCst);
        self.shared.changed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeps_take_no_real_time_and_end_in_deadline_order() {
        let (runtime, clock) = VirtualClock::runtime().expect("a runtime");
        let started = std::time::Instant::now();
        let order = runtime.block_on(async {
            let seen = Arc::new(Mutex::new(Vec::new()));
            let sleeps = [3600, 5, 120].map(|s| {
                let (clock, seen) = (clock.clone(), seen.clone());
                tokio::spawn(async move {
                    clock.sleep_until(clock.now() + Duration::from_secs(s)).await;
                    seen.lock().expect("lock").push((s, clock.elapsed()));
                })
            });
            for sleep in sleeps {
                sleep.await.expect("a sleep");
            }
            Arc::try_unwrap(seen).expect("one owner").into_inner().expect("lock")
        });
        let expected: Vec<(u64, Duration)> = [5, 120, 3600].map(|s| (s, Duration::from_secs(s))).to_vec();
        assert_eq!(order, expected);
        assert!(started.elapsed() < Duration::from_secs(2), "an hour of virtual time took {:?}", started.elapsed());
    }

    #[test]
    fn time_stands_still_while_a_socket_has_something_to_read() {
        let (runtime, clock) = VirtualClock::runtime().expect("a runtime");
        runtime.block_on(async {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let addr = listener.local_addr().expect("addr");
            let server = tokio::spawn(async move {
                let (mut socket, _) = listener.accept().await.expect("accept");
                let mut byte = [0u8; 1];
                for _ in 0..100 {
                    socket.read_exact(&mut byte).await.expect("read");
                    socket.write_all(&byte).await.expect("write");
                }
            });
            let mut client = tokio::net::TcpStream::connect(addr).await.expect("connect");
            let timeout = Clock::Virtual(clock.clone());
            for n in 0..100u8 {
                client.write_all(&[n]).await.expect("write");
                let mut byte = [0u8; 1];
                let read = timeout.timeout(Duration::from_secs(1), client.read_exact(&mut byte)).await;
                assert!(read.is_some(), "the echo of {n} timed out at {:?}", clock.elapsed());
            }
            server.await.expect("the server");
            assert_eq!(clock.elapsed(), Duration::ZERO, "no deadline was reached");
        });
    }

    #[test]
    fn a_hold_keeps_time_still_until_it_is_dropped() {
        let (runtime, clock) = VirtualClock::runtime().expect("a runtime");
        runtime.block_on(async {
            let hold = clock.hold();
            let sleeper = tokio::spawn({
                let clock = clock.clone();
                async move { clock.sleep_until(clock.now() + Duration::from_secs(10)).await }
            });
            tokio::time::sleep(Duration::from_millis(20)).await;
            assert_eq!(clock.elapsed(), Duration::ZERO);
            drop(hold);
            sleeper.await.expect("the sleep");
            assert_eq!(clock.elapsed(), Duration::from_secs(10));
        });
    }

    use super::super::Clock;
}
