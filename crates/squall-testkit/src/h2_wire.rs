//! HTTP/2 written and read frame by frame over a plain socket, for what no well-behaved client
//! sends or shows: floods and bombs, and the exact GOAWAY frames squall sends (RFC 9113 §6,
//! HPACK per RFC 7541 with literals only).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const CONTINUATION: u8 = 0x9;
pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;
/// The error code HTTP/2 gives a peer that generates too much load (RFC 9113 §7).
pub const ENHANCE_YOUR_CALM: u32 = 0xb;
/// The error code of a stream refused before any processing, safe to retry (RFC 9113 §8.7).
pub const REFUSED_STREAM: u32 = 0x7;

/// One frame as read: its type, flags, stream and payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
    pub payload: Vec<u8>,
}

impl Frame {
    /// A GOAWAY's last stream and error code.
    pub fn goaway(&self) -> Option<(u32, u32)> {
        (self.kind == GOAWAY).then(|| {
            let word = |at: usize| u32::from_be_bytes(self.payload[at..at + 4].try_into().expect("four bytes"));
            (word(0) & 0x7fff_ffff, word(4))
        })
    }
}

/// One frame's bytes: its 9-byte head and payload.
pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = u32::try_from(payload.len()).expect("a frame's length").to_be_bytes();
    let mut out = vec![len[1], len[2], len[3], kind, flags];
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// An HPACK literal header without indexing, its name given literally (RFC 7541 §6.2.2), for
/// names and values under 127 bytes.
pub fn literal(name: &str, value: &str) -> Vec<u8> {
    let mut out = vec![0x00, u8::try_from(name.len()).expect("short")];
    out.extend_from_slice(name.as_bytes());
    out.push(u8::try_from(value.len()).expect("short"));
    out.extend_from_slice(value.as_bytes());
    out
}

/// `GET /` over http on `localhost`: static-table entries and one literal (RFC 7541 Appendix A).
pub fn get_root() -> Vec<u8> {
    let mut block = vec![0x82, 0x86, 0x84, 0x01, 9];
    block.extend_from_slice(b"localhost");
    block
}

/// The HEADERS frame that opens a JSON `POST` to `path` on stream `stream`, its body still to
/// come: the stream stays open until the body's DATA ends it.
pub fn post_head(stream: u32, path: &str) -> Vec<u8> {
    // :method POST and :scheme http from the static table; :path and :authority literal with
    // their static names (indexes 4 and 1).
    let mut block = vec![0x83, 0x86, 0x04, u8::try_from(path.len()).expect("a short path")];
    block.extend_from_slice(path.as_bytes());
    block.extend([0x01, 9]);
    block.extend_from_slice(b"localhost");
    block.extend(literal("content-type", "application/json"));
    frame(HEADERS, END_HEADERS, stream, &block)
}

/// The frames of a JSON `POST` to `path` on stream `stream`: HEADERS, then the body's DATA.
pub fn post_json(stream: u32, path: &str, body: &str) -> Vec<u8> {
    let mut out = post_head(stream, path);
    out.extend(frame(DATA, END_STREAM, stream, body.as_bytes()));
    out
}

/// One SETTINGS parameter: its identifier and value (RFC 9113 §6.5.1).
pub fn setting(id: u16, value: u32) -> Vec<u8> {
    let mut out = id.to_be_bytes().to_vec();
    out.extend_from_slice(&value.to_be_bytes());
    out
}

/// A connection that has sent the preface and an empty SETTINGS.
pub fn opened(addr: SocketAddr) -> TcpStream {
    let mut socket = TcpStream::connect(addr).expect("connects");
    socket.write_all(PREFACE).expect("preface");
    socket.write_all(&frame(SETTINGS, 0, 0, &[])).expect("settings");
    socket
}

/// Write `bytes` in pieces, stopping quietly where the server closed the connection.
pub fn write_until_closed(socket: &mut TcpStream, bytes: &[u8]) {
    for piece in bytes.chunks(16 * 1024) {
        if socket.write_all(piece).is_err() {
            return;
        }
    }
}

/// The frames the server sends until it closes the connection or is silent for `quiet`,
/// answering each PING as a client must (a graceful GOAWAY waits for that answer).
pub fn frames_until_closed(socket: &mut TcpStream, quiet: Duration) -> Vec<Frame> {
    socket.set_read_timeout(Some(quiet)).expect("a read timeout");
    let mut frames = Vec::new();
    let mut head = [0u8; 9];
    while socket.read_exact(&mut head).is_ok() {
        let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
        let mut payload = vec![0u8; len];
        if socket.read_exact(&mut payload).is_err() {
            break;
        }
        let stream = u32::from_be_bytes(head[5..9].try_into().expect("four bytes")) & 0x7fff_ffff;
        let frame = Frame { kind: head[3], flags: head[4], stream, payload };
        if frame.kind == PING && frame.flags & ACK == 0 {
            let _ = socket.write_all(&self::frame(PING, ACK, 0, &frame.payload));
        }
        frames.push(frame);
    }
    frames
}

/// The error code of the first GOAWAY the server sent, reading until then; `None` when the
/// connection ended, or stayed silent for 10 s, without one.
pub fn goaway_code(socket: &mut TcpStream) -> Option<u32> {
    frames_until_closed(socket, Duration::from_secs(10)).iter().find_map(Frame::goaway).map(|(_, code)| code)
}
