//! Noticing that a client hung up, however its connection's input looks.
//!
//! hyper learns of a hang-up only when it reads, and while it answers a request it stops
//! reading once the client has sent more bytes after it (a pipelined request, a stray CRLF). A
//! client that then leaves during a scripted delay or an endless stall would keep its socket
//! open on the server, and its journal entry unfinished, for ever. So each connection's socket
//! is registered a second time, through a duplicate descriptor, to watch for the peer's FIN or
//! RST (epoll's `EPOLLRDHUP`, `EPOLLHUP`) without reading anything: hyper still reads every byte.

use std::os::fd::{AsFd, OwnedFd};

use tokio::io::unix::AsyncFd;
use tokio::io::{Interest, Ready};
use tokio::net::TcpStream;

/// Watches one connection for its client hanging up.
#[derive(Debug)]
pub(super) struct HangUp(AsyncFd<OwnedFd>);

impl HangUp {
    /// A watch on `stream`, or none when the descriptor cannot be duplicated (then only hyper
    /// notices hang-ups, as it reads).
    pub(super) fn watch(stream: &TcpStream) -> Option<HangUp> {
        let duplicate = stream.as_fd().try_clone_to_owned().ok()?;
        // Deprecated because an arbitrary `AsRawFd` may close or change its descriptor while
        // registered; an `OwnedFd` owned by the `AsyncFd` does neither, which is the condition
        // its `unsafe` successor states (and this crate forbids `unsafe`).
        #[allow(deprecated)]
        let watch = AsyncFd::with_interest(duplicate, Interest::READABLE);
        watch.ok().map(HangUp)
    }

    /// Resolves once the client has closed its side of the connection or reset it.
    pub(super) async fn happened(&self) {
        loop {
            let Ok(mut guard) = self.0.ready(Interest::READABLE).await else {
                // The watch itself failed: leave the connection to hyper.
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
