//! An `http://` upstream spoken to directly: the request goes out as one write on a kept-alive
//! connection of the serving thread's own, the reply's head is parsed with `httparse`, and its
//! body is read in the task that serves the client — no second HTTP stack, no connection task,
//! no channel between the upstream's socket and the client's: a proxy about as cheap as nginx
//! (BENCHMARKS.md, proxy). Body framing is RFC 9112's: chunked, `Content-Length`, or until the
//! upstream closes.
//!
//! A connection goes back to its thread's pool only once its reply was read to the end and
//! neither side said `Connection: close`. A pooled connection the upstream closed while it sat
//! idle is found before use (its socket reads as closed) or, in a race, by failing before any
//! byte of a reply came: the request is then sent once more on a new connection, as nginx does
//! with its cached upstream connections.

use std::cell::RefCell;
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;

/// Connections a serving thread keeps idle, and for how long (hyper's client: 90 s).
const MAX_IDLE: usize = 32;
const IDLE_FOR: Duration = Duration::from_secs(90);

/// The largest response head read: a provider's is about 1 KiB (nginx refuses one over its
/// 4–8 KiB `proxy_buffer_size`).
const MAX_HEAD: usize = 64 * 1024;

/// How much room a read is given: a 50-event stream arrives in one read.
const READ_ROOM: usize = 32 * 1024;

/// Headers a response head may carry.
const MAX_HEADERS: usize = 128;

thread_local! {
    /// This thread's idle connections, by the authority they reach.
    static IDLE: RefCell<Vec<Idle>> = const { RefCell::new(Vec::new()) };
}

/// A kept-alive connection waiting for its next request.
struct Idle {
    authority: String,
    stream: TcpStream,
    since: Instant,
}

/// An idle connection to `authority` the upstream has not closed, if this thread has one.
fn checkout(authority: &str) -> Option<TcpStream> {
    IDLE.with(|idle| {
        let mut idle = idle.borrow_mut();
        idle.retain(|c| c.since.elapsed() < IDLE_FOR);
        while let Some(at) = idle.iter().rposition(|c| c.authority == authority) {
            let Idle { stream, .. } = idle.swap_remove(at);
            // Nothing may be readable on an idle connection: bytes or an end mean it is done.
            if matches!(stream.try_read(&mut [0; 1]), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock) {
                return Some(stream);
            }
        }
        None
    })
}

/// Keep `stream` for the next request to `authority`.
fn check_in(authority: &str, stream: TcpStream) {
    IDLE.with(|idle| {
        let mut idle = idle.borrow_mut();
        if idle.len() < MAX_IDLE {
            idle.push(Idle { authority: authority.to_owned(), stream, since: Instant::now() });
        }
    });
}

/// A new connection to `authority` (`host:port`, or `host` for port 80) within `timeout`.
async fn connect(authority: &str, timeout: Duration) -> Result<TcpStream, String> {
    let with_port = if authority.ends_with(']') || !authority.contains(':') {
        format!("{authority}:80")
    } else {
        authority.to_owned()
    };
    let stream = match tokio::time::timeout(timeout, TcpStream::connect(&with_port)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(error)) => return Err(format!("cannot connect to {with_port}: {error}")),
        Err(_) => return Err(format!("cannot connect to {with_port}: no answer within {} s", timeout.as_secs())),
    };
    stream.set_nodelay(true).map_err(|e| format!("cannot set TCP_NODELAY: {e}"))?;
    Ok(stream)
}

/// An upstream's reply as it starts: its status and headers, and its body still to be read.
pub(in crate::server) struct PlainReply {
    pub(in crate::server) status: StatusCode,
    pub(in crate::server) headers: HeaderMap,
    pub(in crate::server) body: PlainBody,
}

/// Send `request` (a whole HTTP/1.1 request: head and body) to `authority` and read the reply's
/// head; its body is read as it is polled.
pub(in crate::server) async fn send(
    authority: &str,
    request: &[u8],
    connect_timeout: Duration,
) -> Result<PlainReply, String> {
    if let Some(pooled) = checkout(authority) {
        match exchange(authority, pooled, request).await {
            Ok(reply) => return Ok(reply),
            // Closed while idle, in a race with the check: no byte of a reply came, so the
            // upstream did not act on the request. Once more, on a new connection.
            Err(Failure::BeforeReply(_)) => {}
            Err(Failure::InReply(why)) => return Err(why),
        }
    }
    let stream = connect(authority, connect_timeout).await?;
    exchange(authority, stream, request).await.map_err(Failure::into_reason)
}

/// Why an exchange failed: before any byte of a reply came, or after.
enum Failure {
    BeforeReply(String),
    InReply(String),
}

impl Failure {
    fn into_reason(self) -> String {
        match self {
            Failure::BeforeReply(why) | Failure::InReply(why) => why,
        }
    }
}

/// Write `request` on `stream` and read the reply's head.
async fn exchange(authority: &str, mut stream: TcpStream, request: &[u8]) -> Result<PlainReply, Failure> {
    stream.write_all(request).await.map_err(|e| Failure::BeforeReply(format!("cannot send the request: {e}")))?;
    let mut buf = BytesMut::with_capacity(READ_ROOM);
    loop {
        let read = read_more(&mut stream, &mut buf).await;
        match read {
            Ok(0) if buf.is_empty() => {
                return Err(Failure::BeforeReply("the connection closed before a response head".to_owned()))
            }
            Ok(0) => return Err(Failure::InReply("the connection closed inside the response head".to_owned())),
            Ok(_) => {}
            Err(e) if buf.is_empty() => return Err(Failure::BeforeReply(format!("reading the response head: {e}"))),
            Err(e) => return Err(Failure::InReply(format!("reading the response head: {e}"))),
        }
        while let Some(head) = parse_head(&mut buf).map_err(Failure::InReply)? {
            // An interim reply (100 Continue, 103 Early Hints) is passed over.
            if head.status.is_informational() {
                continue;
            }
            let framing = Framing::of(&head).map_err(Failure::InReply)?;
            let reusable = head.keep_alive && framing != Framing::UntilClose;
            let body = PlainBody {
                connection: Some(Connection { authority: authority.to_owned(), stream, reusable }),
                buf,
                framing,
                received: 0,
            };
            return Ok(PlainReply { status: head.status, headers: head.headers, body });
        }
        if buf.len() > MAX_HEAD {
            return Err(Failure::InReply(format!("a response head of over {} KiB", MAX_HEAD / 1024)));
        }
    }
}

/// Read what `stream` has into `buf`'s spare room.
async fn read_more(stream: &mut TcpStream, buf: &mut BytesMut) -> std::io::Result<usize> {
    use tokio::io::AsyncReadExt as _;
    make_room(buf);
    stream.read_buf(buf).await
}

/// Room for a read of [`READ_ROOM`] in `buf`, made when under a quarter of it is left.
fn make_room(buf: &mut BytesMut) {
    if buf.capacity() - buf.len() < READ_ROOM / 4 {
        buf.reserve(READ_ROOM);
    }
}

/// A response head read from the front of a buffer.
struct Head {
    status: StatusCode,
    headers: HeaderMap,
    /// HTTP/1.1 without `Connection: close` (or 1.0 with `keep-alive`).
    keep_alive: bool,
}

/// The response head at the front of `buf`, taken off it; `None` until it is complete.
fn parse_head(buf: &mut BytesMut) -> Result<Option<Head>, String> {
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut slots);
    let len = match response.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(error) => return Err(format!("a response head that is not HTTP/1.1: {error}")),
    };
    let code = response.code.unwrap_or_default();
    let status = StatusCode::from_u16(code).map_err(|_| format!("a response status of {code}"))?;
    let mut headers = HeaderMap::with_capacity(response.headers.len());
    let mut keep_alive = response.version == Some(1);
    for header in response.headers.iter() {
        let name = HeaderName::from_bytes(header.name.as_bytes())
            .map_err(|_| format!("a response header named {:?}", header.name))?;
        let value =
            HeaderValue::from_bytes(header.value).map_err(|_| format!("a bad value for response header `{name}`"))?;
        if name == http::header::CONNECTION {
            let says = |token: &str| {
                value.as_bytes().split(|b| *b == b',').any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
            };
            keep_alive = if keep_alive { !says("close") } else { says("keep-alive") };
        }
        headers.append(name, value);
    }
    let _ = buf.split_to(len);
    Ok(Some(Head { status, headers, keep_alive }))
}

/// How a reply's body ends (RFC 9112 §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// After this many more bytes.
    Length(u64),
    /// At a zero-size chunk and its trailers.
    Chunked(Chunk),
    /// When the upstream closes the connection.
    UntilClose,
    /// Ended.
    Done,
}

/// Where a chunked body's reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// At a chunk-size line.
    Size,
    /// Inside a chunk's data, this many bytes left.
    Data(u64),
    /// At the CRLF after a chunk's data.
    DataEnd,
    /// Past the last chunk, at a trailer line or the empty line that ends the body.
    Trailers,
}

impl Framing {
    fn of(head: &Head) -> Result<Framing, String> {
        if matches!(head.status, StatusCode::NO_CONTENT | StatusCode::NOT_MODIFIED) {
            return Ok(Framing::Done);
        }
        if let Some(coding) = head.headers.get_all(http::header::TRANSFER_ENCODING).iter().next_back() {
            let chunked = coding.as_bytes().rsplit(|b| *b == b',').next().map(<[u8]>::trim_ascii);
            return Ok(if chunked.is_some_and(|c| c.eq_ignore_ascii_case(b"chunked")) {
                Framing::Chunked(Chunk::Size)
            } else {
                Framing::UntilClose
            });
        }
        match head.headers.get(http::header::CONTENT_LENGTH) {
            Some(length) => {
                let length = length.to_str().ok().and_then(|l| l.trim().parse::<u64>().ok());
                let length = length.ok_or_else(|| "a Content-Length that is not a number".to_owned())?;
                Ok(if length == 0 { Framing::Done } else { Framing::Length(length) })
            }
            None => Ok(Framing::UntilClose),
        }
    }
}

/// The connection a body is read from, and whether it may serve another request.
struct Connection {
    authority: String,
    stream: TcpStream,
    reusable: bool,
}

/// A reply's body, read from the upstream's connection as it is polled.
pub(in crate::server) struct PlainBody {
    /// `None` once the body has ended (the connection pooled or closed).
    connection: Option<Connection>,
    /// Bytes read and not yet passed on.
    buf: BytesMut,
    framing: Framing,
    /// Body bytes passed on so far.
    received: u64,
}

impl std::fmt::Debug for PlainBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlainBody").field("framing", &self.framing).field("received", &self.received).finish()
    }
}

impl PlainBody {
    /// The next bytes of the body, `None` at its end, or why it broke.
    pub(in crate::server) fn poll_data(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, String>>> {
        loop {
            match self.decode() {
                Err(why) => {
                    self.connection = None;
                    return Poll::Ready(Some(Err(why)));
                }
                Ok(Some(data)) => {
                    self.received += data.len() as u64;
                    return Poll::Ready(Some(Ok(data)));
                }
                Ok(None) if self.framing == Framing::Done => {
                    if let Some(Connection { authority, stream, reusable: true }) = self.connection.take() {
                        if self.buf.is_empty() {
                            check_in(&authority, stream);
                        }
                    }
                    return Poll::Ready(None);
                }
                Ok(None) => {}
            }
            let Some(connection) = self.connection.as_mut() else { return Poll::Ready(None) };
            make_room(&mut self.buf);
            if let Err(e) = ready!(connection.stream.poll_read_ready(cx)) {
                self.connection = None;
                return Poll::Ready(Some(Err(e.to_string())));
            }
            match connection.stream.try_read_buf(&mut self.buf) {
                Ok(0) if self.framing == Framing::UntilClose => self.framing = Framing::Done,
                Ok(0) => {
                    self.connection = None;
                    return Poll::Ready(Some(Err("the connection closed before the body ended".to_owned())));
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => {
                    self.connection = None;
                    return Poll::Ready(Some(Err(e.to_string())));
                }
            }
        }
    }

    /// The body bytes at the front of `buf`, taken off it; `None` when more must be read first
    /// (or the body has ended).
    fn decode(&mut self) -> Result<Option<Bytes>, String> {
        loop {
            match self.framing {
                Framing::Done => return Ok(None),
                Framing::UntilClose => {
                    return Ok((!self.buf.is_empty()).then(|| self.buf.split().freeze()));
                }
                Framing::Length(left) => {
                    if self.buf.is_empty() {
                        return Ok(None);
                    }
                    let take = left.min(self.buf.len() as u64);
                    self.framing = if take == left { Framing::Done } else { Framing::Length(left - take) };
                    return Ok(Some(self.buf.split_to(take as usize).freeze()));
                }
                Framing::Chunked(Chunk::Size) => match httparse::parse_chunk_size(&self.buf) {
                    Ok(httparse::Status::Complete((len, size))) => {
                        let _ = self.buf.split_to(len);
                        self.framing = Framing::Chunked(if size == 0 { Chunk::Trailers } else { Chunk::Data(size) });
                    }
                    Ok(httparse::Status::Partial) => return Ok(None),
                    Err(_) => return Err("a chunk size that is not hexadecimal".to_owned()),
                },
                Framing::Chunked(Chunk::Data(left)) => {
                    if self.buf.is_empty() {
                        return Ok(None);
                    }
                    let take = left.min(self.buf.len() as u64);
                    self.framing =
                        Framing::Chunked(if take == left { Chunk::DataEnd } else { Chunk::Data(left - take) });
                    return Ok(Some(self.buf.split_to(take as usize).freeze()));
                }
                Framing::Chunked(Chunk::DataEnd) => {
                    if self.buf.len() < 2 {
                        return Ok(None);
                    }
                    if &self.buf[..2] != b"\r\n" {
                        return Err("a chunk's data not followed by CRLF".to_owned());
                    }
                    let _ = self.buf.split_to(2);
                    self.framing = Framing::Chunked(Chunk::Size);
                }
                Framing::Chunked(Chunk::Trailers) => {
                    let Some(end) = memchr::memchr(b'\n', &self.buf) else { return Ok(None) };
                    let line = self.buf.split_to(end + 1);
                    if line.trim_ascii().is_empty() {
                        self.framing = Framing::Done;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use tokio::io::AsyncReadExt as _;
    use tokio::net::TcpListener;

    use super::*;

    /// The bytes `body` decodes from `wire` fed to it one byte at a time, and whether it ended.
    fn decoded_bytewise(framing: Framing, wire: &[u8]) -> Result<(Vec<u8>, bool), String> {
        let mut body = PlainBody { connection: None, buf: BytesMut::new(), framing, received: 0 };
        let mut out = Vec::new();
        for byte in wire {
            body.buf.extend_from_slice(&[*byte]);
            while let Some(data) = body.decode()? {
                out.extend_from_slice(&data);
            }
        }
        Ok((out, body.framing == Framing::Done))
    }

    #[test]
    fn a_chunked_body_split_at_any_byte_decodes_to_its_data_and_ends_after_its_trailers() {
        let wire = b"5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nx-trailer: t\r\n\r\n";
        assert_eq!(decoded_bytewise(Framing::Chunked(Chunk::Size), wire), Ok((b"hello, world".to_vec(), true)));
        let unfinished = &wire[..wire.len() - 2];
        assert_eq!(decoded_bytewise(Framing::Chunked(Chunk::Size), unfinished), Ok((b"hello, world".to_vec(), false)));
        for broken in [&b"zz\r\nhello\r\n"[..], b"5\r\nhelloXX"] {
            assert!(decoded_bytewise(Framing::Chunked(Chunk::Size), broken).is_err(), "{broken:?}");
        }
        assert_eq!(decoded_bytewise(Framing::Length(5), b"hello"), Ok((b"hello".to_vec(), true)));
    }

    /// What a test upstream does with the `n`th request on a connection.
    #[derive(Clone, Copy)]
    enum Answer {
        /// Replies `ok` with a length, keeping the connection.
        KeepAlive,
        /// Replies `ok` chunked and says `Connection: close`.
        Close,
        /// Reads the request, then closes without a byte of reply.
        Hang,
    }

    /// An upstream answering per `script(request on its connection)`; counts its connections.
    async fn upstream(script: fn(usize) -> Answer) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let authority = listener.local_addr().expect("addr").to_string();
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = connections.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    for n in 0.. {
                        // Each test request is a head with `content-length: 2` and a body `{}`.
                        while !buf.windows(6).any(|w| w == b"\r\n\r\n{}") {
                            let mut chunk = [0; 1024];
                            match socket.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(read) => buf.extend_from_slice(&chunk[..read]),
                            }
                        }
                        buf.clear();
                        let reply: &[u8] = match script(n) {
                            Answer::KeepAlive => b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok",
                            Answer::Close => {
                                b"HTTP/1.1 200 OK\r\nconnection: close\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"
                            }
                            Answer::Hang => return,
                        };
                        if socket.write_all(reply).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (authority, connections)
    }

    /// One request's reply body, read to its end.
    async fn body_of(authority: &str) -> Result<Vec<u8>, String> {
        let request = format!("POST /v1/responses HTTP/1.1\r\nhost: {authority}\r\ncontent-length: 2\r\n\r\n{{}}");
        let mut reply = send(authority, request.as_bytes(), Duration::from_secs(5)).await?;
        let mut out = Vec::new();
        while let Some(data) = std::future::poll_fn(|cx| reply.body.poll_data(cx)).await {
            out.extend_from_slice(&data?);
        }
        Ok(out)
    }

    #[tokio::test]
    async fn a_connection_is_reused_once_its_reply_ended_unless_the_upstream_said_close() {
        let (authority, connections) = upstream(|_| Answer::KeepAlive).await;
        for _ in 0..3 {
            assert_eq!(body_of(&authority).await.as_deref(), Ok(&b"ok"[..]));
        }
        assert_eq!(connections.load(Ordering::SeqCst), 1, "one kept-alive connection served all three");
        let (authority, connections) = upstream(|_| Answer::Close).await;
        for _ in 0..2 {
            assert_eq!(body_of(&authority).await.as_deref(), Ok(&b"ok"[..]));
        }
        assert_eq!(connections.load(Ordering::SeqCst), 2, "`Connection: close` is honoured");
    }

    #[tokio::test]
    async fn a_kept_connection_the_upstream_drops_unanswered_is_retried_once_on_a_new_one() {
        // Every connection answers its first request and drops its second unanswered.
        let (authority, connections) = upstream(|n| if n == 0 { Answer::KeepAlive } else { Answer::Hang }).await;
        for _ in 0..2 {
            assert_eq!(body_of(&authority).await.as_deref(), Ok(&b"ok"[..]));
        }
        assert_eq!(connections.load(Ordering::SeqCst), 2);
        // A new connection that fails the same way is the upstream's failure, not retried.
        let (authority, connections) = upstream(|_| Answer::Hang).await;
        let failed = body_of(&authority).await.expect_err("no reply");
        assert!(failed.contains("closed before a response head"), "{failed}");
        assert_eq!(connections.load(Ordering::SeqCst), 1);
    }
}
