//! What squall reads of a client's HTTP/2 frames as they pass on to hyper: the last stream the
//! client opened, which a GOAWAY must name (RFC 9113 §6.8). hyper sends only graceful GOAWAYs;
//! a `goaway` fault with an error code is a frame squall writes itself, between hyper's frames,
//! just before it closes the connection.

/// The connection preface an HTTP/2 client opens with (RFC 9113 §3.4).
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const HEADERS: u8 = 0x1;
const GOAWAY: u8 = 0x7;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// This many bytes of the preface matched so far.
    Preface(usize),
    /// This many bytes of a frame's 9-byte head read so far.
    Head(usize),
    /// This many bytes of a frame's payload still to pass.
    Payload(usize),
    /// The connection did not open with the preface: it is HTTP/1.1.
    NotHttp2,
}

/// Follows the frames a client sends, one read at a time.
#[derive(Debug)]
pub(in crate::server) struct ClientFrames {
    reading: Reading,
    head: [u8; 9],
    last_stream: u32,
}

impl Default for ClientFrames {
    fn default() -> Self {
        ClientFrames { reading: Reading::Preface(0), head: [0; 9], last_stream: 0 }
    }
}

impl ClientFrames {
    /// Follow the next bytes the client sent.
    pub(in crate::server) fn read(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            match self.reading {
                Reading::NotHttp2 => return,
                Reading::Preface(matched) => {
                    let take = bytes.len().min(PREFACE.len() - matched);
                    self.reading = if bytes[..take] != PREFACE[matched..matched + take] {
                        Reading::NotHttp2
                    } else if matched + take == PREFACE.len() {
                        Reading::Head(0)
                    } else {
                        Reading::Preface(matched + take)
                    };
                    bytes = &bytes[take..];
                }
                Reading::Head(filled) => {
                    let take = bytes.len().min(9 - filled);
                    self.head[filled..filled + take].copy_from_slice(&bytes[..take]);
                    bytes = &bytes[take..];
                    self.reading = if filled + take == 9 { self.head_read() } else { Reading::Head(filled + take) };
                }
                Reading::Payload(left) => {
                    let take = bytes.len().min(left);
                    bytes = &bytes[take..];
                    self.reading = if take == left { Reading::Head(0) } else { Reading::Payload(left - take) };
                }
            }
        }
    }

    /// The highest stream a client's HEADERS opened; 0 before any.
    pub(in crate::server) fn last_stream(&self) -> u32 {
        self.last_stream
    }

    fn head_read(&mut self) -> Reading {
        let [a, b, c, kind, _flags, s0, s1, s2, s3] = self.head;
        let stream = u32::from_be_bytes([s0, s1, s2, s3]) & 0x7fff_ffff;
        if kind == HEADERS {
            self.last_stream = self.last_stream.max(stream);
        }
        let len = usize::from(a) << 16 | usize::from(b) << 8 | usize::from(c);
        if len == 0 {
            Reading::Head(0)
        } else {
            Reading::Payload(len)
        }
    }
}

/// A GOAWAY frame naming `last_stream` with error code `code`, without debug data.
pub(in crate::server) fn goaway(last_stream: u32, code: u32) -> [u8; 17] {
    let mut frame = [0u8; 17];
    frame[..9].copy_from_slice(&[0, 0, 8, GOAWAY, 0, 0, 0, 0, 0]);
    frame[9..13].copy_from_slice(&(last_stream & 0x7fff_ffff).to_be_bytes());
    frame[13..].copy_from_slice(&code.to_be_bytes());
    frame
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = u32::try_from(payload.len()).expect("short").to_be_bytes();
        let mut out = vec![len[1], len[2], len[3], kind, 0];
        out.extend_from_slice(&stream.to_be_bytes());
        out.extend_from_slice(payload);
        out
    }

    /// The streams of HEADERS frames are followed through every other frame, however the bytes
    /// are cut into reads.
    #[test]
    fn the_last_stream_opened_is_followed_across_any_reads() {
        let mut bytes = PREFACE.to_vec();
        bytes.extend(frame(0x4, 0, &[0; 6]));
        bytes.extend(frame(HEADERS, 1, &[0x82, 0x86]));
        bytes.extend(frame(0x0, 1, b"a request body"));
        bytes.extend(frame(HEADERS, 5, &[0x82]));
        bytes.extend(frame(0x8, 0, &[0, 0, 1, 0]));
        bytes.extend(frame(HEADERS, 3, &[]));
        for size in [1, 2, 7, 9, 10, 64, bytes.len()] {
            let mut frames = ClientFrames::default();
            bytes.chunks(size).for_each(|piece| frames.read(piece));
            assert_eq!(frames.last_stream(), 5, "reads of {size} bytes");
        }
    }

    #[test]
    fn an_http1_connection_is_not_read_as_frames() {
        let mut frames = ClientFrames::default();
        frames.read(b"POST /v1/responses HTTP/1.1\r\n\x00\x00\x00\x01\x00\x00\x00\x00\x07");
        assert_eq!((frames.reading, frames.last_stream()), (Reading::NotHttp2, 0));
    }

    #[test]
    fn a_goaway_names_its_last_stream_and_code() {
        assert_eq!(goaway(7, 2), [0, 0, 8, GOAWAY, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 2]);
    }
}
