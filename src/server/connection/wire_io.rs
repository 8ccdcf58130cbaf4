//! The bytes of a connection as hyper reads and writes them: plain TCP, or TLS over it. Both
//! read the one socket the connection's hang-up watch also holds (`hang_up.rs`), so a fault can
//! still send a real FIN or RST on it under TLS (`conn_io.rs`).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A TCP stream shared with the connection's hang-up watch, read and written as tokio's own
/// `TcpStream` is.
#[derive(Debug, Clone)]
pub(in crate::server) struct SharedTcp(pub(in crate::server) Arc<TcpStream>);

/// Retry `io` until the socket is ready for it, as tokio's own `TcpStream` does: a
/// `WouldBlock` clears the readiness `ready` waits for.
fn when_ready<T>(
    cx: &mut Context<'_>,
    ready: impl Fn(&mut Context<'_>) -> Poll<io::Result<()>>,
    mut io: impl FnMut() -> io::Result<T>,
) -> Poll<io::Result<T>> {
    loop {
        std::task::ready!(ready(cx))?;
        match io() {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            done => return Poll::Ready(done),
        }
    }
}

impl AsyncRead for SharedTcp {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let stream = &*self.0;
        // Into the unfilled part as it is: `ReadBuf` is a `BufMut`, nothing is zeroed first.
        when_ready(cx, |cx| stream.poll_read_ready(cx), || stream.try_read_buf(buf)).map_ok(|_| ())
    }
}

impl AsyncWrite for SharedTcp {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let stream = &*self.0;
        when_ready(cx, |cx| stream.poll_write_ready(cx), || stream.try_write(buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let stream = &*self.0;
        when_ready(cx, |cx| stream.poll_write_ready(cx), || stream.try_write_vectored(bufs))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // A socket has nothing of its own to flush.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // As tokio's `TcpStream` does: half-close the write side.
        Poll::Ready(socket2::SockRef::from(&*self.0).shutdown(std::net::Shutdown::Write))
    }
}

/// A connection's bytes: plain, or TLS over the same socket.
#[derive(Debug)]
pub(in crate::server) enum Wire {
    Plain(SharedTcp),
    #[cfg(feature = "tls")]
    Tls(Box<tokio_rustls::server::TlsStream<SharedTcp>>),
}

impl AsyncRead for Wire {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Wire::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            #[cfg(feature = "tls")]
            Wire::Tls(tls) => Pin::new(tls.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Wire {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Wire::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            #[cfg(feature = "tls")]
            Wire::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Wire::Plain(tcp) => Pin::new(tcp).poll_write_vectored(cx, bufs),
            #[cfg(feature = "tls")]
            Wire::Tls(tls) => Pin::new(tls.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Wire::Plain(tcp) => tcp.is_write_vectored(),
            #[cfg(feature = "tls")]
            Wire::Tls(tls) => tls.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Wire::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            #[cfg(feature = "tls")]
            Wire::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Wire::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            #[cfg(feature = "tls")]
            Wire::Tls(tls) => Pin::new(tls.as_mut()).poll_shutdown(cx),
        }
    }
}
