//! The connection's socket (plain or under TLS), wrapped so a reply can kill it with a real FIN
//! or TCP RST.
//!
//! hyper owns the socket while it serves a connection. A reply body that reaches a scripted
//! `eof` or `reset` *arms* the connection's [`KillSwitch`] and stops producing frames. hyper
//! then writes out every byte it has buffered and calls `poll_flush`; the flush sees the armed
//! switch and fires the fault there, so the fault lands exactly after the bytes before it:
//!
//! - `eof`: `shutdown(SHUT_WR)` sends a FIN while the chunked body is incomplete;
//! - `reset`: `SO_LINGER 0` and close, which makes the kernel send a RST.
//!
//! Either way the flush then fails, hyper drops the connection and the body, and the body
//! records how the reply ended.
//!
//! Over HTTP/2 one connection carries many streams, perhaps of other runs, so a reply's `eof`
//! and `reset` end its own stream instead (`reply_body`). Only a `goaway` with an error code
//! arms the switch there: the flush then writes a GOAWAY naming the last stream the client
//! opened (`h2_frames`, followed as hyper reads) and sends a FIN. A graceful `goaway` asks the
//! connection's server loop to close once its replies end (`close_gracefully`).

use std::io;
use std::net::Shutdown;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::h2_frames::{goaway, ClientFrames};
use super::wire_io::Wire;
use crate::clock::Clock;

pub(in crate::server) use crate::wire::plan::Kill;

#[derive(Debug, Default)]
struct SwitchState {
    armed: Option<Kill>,
    fired_at: Option<Instant>,
    /// Flushes of the connection so far, and the HTTP/2 replies waiting for the next one.
    flushes: u64,
    awaiting_flush: Vec<std::task::Waker>,
    /// Over HTTP/2, the connection's own task as it last read: woken when a reply arms the
    /// switch, since nothing else may make it flush again.
    reader: Option<std::task::Waker>,
}

/// Shared between a connection's socket wrapper and the reply bodies served on it.
#[derive(Debug, Default)]
pub(in crate::server) struct KillSwitch {
    state: Mutex<SwitchState>,
    /// The connection speaks HTTP/2: faults end streams, not the connection.
    streams: AtomicBool,
    /// A reply asked for the connection to close once its replies end.
    close: Notify,
    /// What `fired_at` is read from: the server's clock.
    clock: Clock,
}

impl KillSwitch {
    /// A switch whose firing is timed by `clock`.
    pub(in crate::server) fn new(clock: Clock) -> Self {
        KillSwitch { state: Mutex::default(), streams: AtomicBool::new(false), close: Notify::new(), clock }
    }

    /// Mark the connection as one that carries HTTP/2 streams.
    pub(in crate::server) fn carry_streams(&self) {
        self.streams.store(true, Ordering::Relaxed);
    }

    /// Whether the connection carries HTTP/2 streams, whose faults end one stream each.
    pub(in crate::server) fn carries_streams(&self) -> bool {
        self.streams.load(Ordering::Relaxed)
    }

    /// Ask for the connection to be killed at the next flush.
    pub(in crate::server) fn arm(&self, kill: Kill) {
        let reader = {
            let mut state = self.lock();
            state.armed = Some(kill);
            state.reader.take()
        };
        if let Some(reader) = reader {
            reader.wake();
        }
    }

    /// Ask for the connection to close once its replies in progress end.
    pub(in crate::server) fn close_gracefully(&self) {
        self.close.notify_one();
    }

    /// Ready when a reply has asked for the connection to close gracefully.
    pub(in crate::server) async fn closing(&self) {
        self.close.notified().await;
    }

    /// When the armed fault fired, if it has.
    pub(in crate::server) fn fired_at(&self) -> Option<Instant> {
        self.lock().fired_at
    }

    /// How many times the connection has flushed so far.
    pub(in crate::server) fn flushes(&self) -> u64 {
        self.lock().flushes
    }

    /// Ready once the connection has flushed twice since a reply counted `seen`: over HTTP/2,
    /// every frame the reply queued before then is in the kernel. The first flush may have been
    /// under way on another thread when the frame was queued; the connection, woken here, pops
    /// queued frames before it flushes again. An HTTP/2 `reset` or `goaway` waits for this,
    /// because `h2` drops a stream's frames still queued when the stream is reset, and a GOAWAY
    /// squall writes goes out at a flush.
    pub(in crate::server) fn poll_settled_since(&self, cx: &mut Context<'_>, seen: u64) -> Poll<()> {
        let reader = {
            let mut state = self.lock();
            if state.flushes > seen + 1 {
                return Poll::Ready(());
            }
            state.awaiting_flush.push(cx.waker().clone());
            state.reader.take()
        };
        if let Some(reader) = reader {
            reader.wake();
        }
        Poll::Pending
    }

    /// Count a flush, wake the replies waiting for it, and take the armed fault if any.
    fn flushed(&self) -> Option<Kill> {
        let mut state = self.lock();
        state.flushes += 1;
        state.awaiting_flush.drain(..).for_each(std::task::Waker::wake);
        state.armed.take()
    }

    fn mark_fired(&self) {
        self.lock().fired_at = Some(self.clock.now());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SwitchState> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A connection (plain or TLS) that can be killed mid-reply by its [`KillSwitch`]: the kill
/// acts on the TCP socket under it, so under TLS too an `eof` is a FIN (no close_notify: the
/// peer sees the stream cut) and a `reset` a RST. The socket is shared with the connection's
/// hang-up watch (`hang_up.rs`), which it tells each time hyper reads.
#[derive(Debug)]
pub(in crate::server) struct KillableStream {
    /// The bytes hyper reads and writes; gone once a reset fired.
    wire: Option<Wire>,
    socket: Arc<TcpStream>,
    switch: Arc<KillSwitch>,
    reads: Arc<Notify>,
    /// The client's HTTP/2 frames, for the last stream a GOAWAY names.
    frames: ClientFrames,
}

impl KillableStream {
    pub(in crate::server) fn new(
        wire: Wire,
        socket: Arc<TcpStream>,
        switch: Arc<KillSwitch>,
        reads: Arc<Notify>,
    ) -> Self {
        KillableStream { wire: Some(wire), socket, switch, reads, frames: ClientFrames::default() }
    }

    fn wire(&mut self) -> io::Result<Pin<&mut Wire>> {
        self.wire
            .as_mut()
            .map(Pin::new)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "connection killed by a scripted fault"))
    }

    /// Fire the armed fault: a FIN (over HTTP/2 after a GOAWAY, for `goaway`), or a RST by
    /// closing with a zero linger.
    fn fire(&mut self, kill: Kill) -> io::Error {
        let socket = self.socket.clone();
        let socket = socket2::SockRef::from(&*socket);
        match kill {
            Kill::GoAway(code) if self.switch.carries_streams() => {
                // Between hyper's frames: everything it buffered was written before this
                // flush. 17 bytes (in a TLS record, under TLS) into a socket buffer just drained.
                let frame = goaway(self.frames.last_stream(), code.value());
                if let Ok(mut wire) = self.wire() {
                    let mut cx = Context::from_waker(std::task::Waker::noop());
                    let _ = wire.as_mut().poll_write(&mut cx, &frame);
                    let _ = wire.poll_flush(&mut cx);
                }
                let _ = socket.shutdown(Shutdown::Write);
            }
            // The FIN goes out now; the socket closes when hyper drops the connection.
            Kill::Eof | Kill::GoAway(_) | Kill::Close => drop(socket.shutdown(Shutdown::Write)),
            Kill::Reset(_) => {
                let _ = socket.set_linger(Some(Duration::ZERO));
                // The socket closes, with a RST, once its last holder lets go.
                self.wire = None;
            }
        }
        self.switch.mark_fired();
        let kind = match kill {
            Kill::Eof | Kill::GoAway(_) | Kill::Close => io::ErrorKind::BrokenPipe,
            Kill::Reset(_) => io::ErrorKind::ConnectionReset,
        };
        io::Error::new(kind, "scripted fault fired")
    }
}

impl AsyncRead for KillableStream {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        let read = match this.wire()?.poll_read(cx, buf) {
            Poll::Ready(read) => read,
            Poll::Pending => {
                if this.switch.carries_streams() {
                    this.switch.lock().reader = Some(cx.waker().clone());
                }
                return Poll::Pending;
            }
        };
        this.frames.read(&buf.filled()[before..]);
        this.reads.notify_one();
        Poll::Ready(read)
    }
}

impl AsyncWrite for KillableStream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.wire()?.poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.wire()?.poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.wire.as_ref().is_some_and(Wire::is_write_vectored)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Under TLS, the records still buffered go out first.
        std::task::ready!(self.wire()?.poll_flush(cx))?;
        // Everything hyper buffered before the body armed the switch is now in the kernel.
        match self.switch.flushed() {
            Some(kill) => Poll::Ready(Err(self.fire(kill))),
            None => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.wire.as_mut() {
            Some(wire) => Pin::new(wire).poll_shutdown(cx),
            None => Poll::Ready(Ok(())),
        }
    }
}
