//! Noticing that a client hung up, however its connection's input looks, with one descriptor
//! per connection.
//!
//! hyper learns of a hang-up only when it reads, and while it answers a request it stops
//! reading once the client has sent more bytes after it (a pipelined request, a stray CRLF). A
//! client that then leaves during a scripted delay or an endless stall would keep its socket
//! open on the server, and its journal entry unfinished, for ever. So each connection's socket
//! is watched for the peer's FIN or RST (epoll's `EPOLLRDHUP`, `EPOLLHUP`) through the socket's
//! own registration, without reading anything: hyper still reads every byte.
//!
//! That registration also reports bytes that have arrived. While they wait for hyper, which
//! reads them at once unless it is answering a request, the watch cannot see a hang-up behind
//! them; if hyper has not read them within [`GRACE`], the watch registers a duplicate descriptor
//! of its own until hyper reads again. Only such a connection holds a second descriptor, and
//! only meanwhile: 10,000 open streams take 10,000 descriptors, not 20,000.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::io::{Interest, Ready};
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// How long bytes may wait for hyper before the watch takes them for bytes it will not read
/// while it answers (hyper reads arrived bytes within microseconds when it reads at all).
pub(in crate::server) const GRACE: Duration = Duration::from_millis(100);

/// Watches one connection for its client hanging up.
#[derive(Debug)]
pub(in crate::server) struct HangUp {
    stream: Arc<TcpStream>,
    /// Notified by the connection's reader each time hyper reads.
    reads: Arc<Notify>,
}

impl HangUp {
    /// A watch on `stream`, whose reader notifies `reads` as hyper reads.
    pub(in crate::server) fn new(stream: Arc<TcpStream>, reads: Arc<Notify>) -> Self {
        HangUp { stream, reads }
    }

    /// Resolves once the client has closed its side of the connection or reset it.
    pub(in crate::server) async fn happened(&self) {
        loop {
            let Ok(ready) = self.stream.ready(Interest::READABLE).await else {
                // The watch itself failed: leave the connection to hyper.
                return std::future::pending().await;
            };
            if ready.is_read_closed() {
                return;
            }
            // Bytes arrived. hyper reads them now, unless it is answering a request.
            // (Biased: when hyper has read them already, no timer is started.)
            tokio::select! {
                biased;
                () = self.reads.notified() => continue,
                () = tokio::time::sleep(GRACE) => {}
            }
            // hyper is not reading: watch through a descriptor of our own until it does.
            match Duplicate::of(&self.stream) {
                Some(duplicate) => tokio::select! {
                    () = duplicate.hung_up() => return,
                    () = self.reads.notified() => {}
                },
                None => self.reads.notified().await,
            }
        }
    }
}

/// The socket registered a second time, through a duplicate descriptor: its readiness is its
/// own, so bytes hyper leaves unread can be passed over to see a FIN or RST behind them.
struct Duplicate(AsyncFd<OwnedFd>);

impl Duplicate {
    /// None when the descriptor cannot be duplicated (then only hyper notices, as it reads).
    fn of(stream: &TcpStream) -> Option<Duplicate> {
        let duplicate = stream.as_fd().try_clone_to_owned().ok()?;
        // Deprecated because an arbitrary `AsRawFd` may close or change its descriptor while
        // registered; an `OwnedFd` owned by the `AsyncFd` does neither, which is the condition
        // its `unsafe` successor states (and this crate forbids `unsafe`).
        #[allow(deprecated)]
        let watch = AsyncFd::with_interest(duplicate, Interest::READABLE);
        watch.ok().map(Duplicate)
    }

    async fn hung_up(&self) {
        loop {
            let Ok(mut guard) = self.0.ready(Interest::READABLE).await else {
                return std::future::pending().await;
            };
            if guard.ready().is_read_closed() {
                return;
            }
            // Bytes arrived (hyper reads them through its own descriptor): wait for the next change.
            guard.clear_ready_matching(Ready::READABLE);
        }
    }
}
