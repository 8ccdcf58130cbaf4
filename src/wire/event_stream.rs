//! AWS's event-stream framing (`application/vnd.amazon.eventstream`), in which Amazon Bedrock
//! streams a ConverseStream reply.
//!
//! A message is a 12-byte prelude (its total length, its headers' length, both big-endian
//! `u32`, and the CRC32 of those 8 bytes), the headers (a name length byte, the name, a type
//! byte — 7, a string — a big-endian `u16` value length, the value), the payload, and the CRC32
//! of everything before it. Bedrock's headers are `:message-type` (`event` or `exception`),
//! `:event-type` or `:exception-type`, and `:content-type` (`application/json`).

/// The content type of an event stream.
pub(crate) const CONTENT_TYPE: &str = "application/vnd.amazon.eventstream";

/// The prelude's length: total length, headers' length, prelude CRC.
const PRELUDE: usize = 12;
/// The message CRC after the payload.
const TRAILER: usize = 4;
/// The header value type of a string.
const STRING: u8 = 7;

/// What a message carries: an event of the stream, or an exception that ends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageType {
    /// `:message-type: event`, named by `:event-type`.
    Event,
    /// `:message-type: exception`, named by `:exception-type`.
    Exception,
}

/// Where a message's payload lies within its bytes: after the prelude and headers, before the
/// message CRC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PayloadAt {
    /// The payload's first byte.
    pub(crate) from: usize,
    /// The bytes after it (the message CRC).
    pub(crate) trailer: usize,
}

/// The headers of a Bedrock message named `name`.
fn headers(kind: MessageType, name: &str) -> Vec<u8> {
    let (type_header, message_type) = match kind {
        MessageType::Event => (":event-type", "event"),
        MessageType::Exception => (":exception-type", "exception"),
    };
    let mut out = Vec::with_capacity(80 + name.len());
    for (header, value) in [(type_header, name), (":content-type", "application/json"), (":message-type", message_type)]
    {
        out.push(header.len() as u8);
        out.extend_from_slice(header.as_bytes());
        out.push(STRING);
        out.extend_from_slice(&(value.len() as u16).to_be_bytes());
        out.extend_from_slice(value.as_bytes());
    }
    out
}

/// Append one message to `out`; returns where its payload lies within it.
pub(crate) fn write_message(out: &mut Vec<u8>, kind: MessageType, name: &str, payload: &[u8]) -> PayloadAt {
    let headers = headers(kind, name);
    let start = out.len();
    let total = PRELUDE + headers.len() + payload.len() + TRAILER;
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    let prelude_crc = crc32fast::hash(&out[start..start + 8]);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&headers);
    out.extend_from_slice(payload);
    let message_crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&message_crc.to_be_bytes());
    PayloadAt { from: PRELUDE + headers.len(), trailer: TRAILER }
}

/// What a `garbage` fault sends in an event stream: a `contentBlockDelta` message whose prelude
/// is sound and whose message CRC is wrong, as a client's checksum sees a corrupted stream.
pub(crate) fn garbage() -> Vec<u8> {
    let mut out = Vec::new();
    write_message(&mut out, MessageType::Event, "contentBlockDelta", br#"{"squall": "garbage, CRC broken"}"#);
    let last = out.len() - 1;
    out[last] ^= 0xff;
    out
}

/// One message read back from a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Message {
    /// An event or an exception.
    pub(crate) kind: MessageType,
    /// Its `:event-type` or `:exception-type`.
    pub(crate) name: String,
    /// Its payload.
    pub(crate) payload: Vec<u8>,
}

/// Why bytes are not an event-stream message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FrameError {
    /// A length that cannot be (shorter than a prelude and CRC, or headers past the end).
    #[error("an event-stream message declares impossible lengths")]
    Lengths,
    /// A CRC that does not match.
    #[error("an event-stream message's {0} CRC does not match")]
    Checksum(&'static str),
    /// Headers that do not parse.
    #[error("an event-stream message's headers do not parse")]
    Headers,
}

/// The length of the first whole message in `bytes`, once all of it has arrived.
pub(crate) fn first_message_len(bytes: &[u8]) -> Option<usize> {
    let total = u32::from_be_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
    (bytes.len() >= total).then_some(total)
}

/// Read one whole message (exactly [`first_message_len`] bytes), checking both CRCs.
pub(crate) fn read_message(bytes: &[u8]) -> Result<Message, FrameError> {
    let word = |at: usize| bytes.get(at..at + 4).map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
    let (Some(total), Some(headers_len), Some(prelude_crc)) = (word(0), word(4), word(8)) else {
        return Err(FrameError::Lengths);
    };
    let (total, headers_len) = (total as usize, headers_len as usize);
    if total != bytes.len() || total < PRELUDE + TRAILER + headers_len {
        return Err(FrameError::Lengths);
    }
    if crc32fast::hash(&bytes[..8]) != prelude_crc {
        return Err(FrameError::Checksum("prelude"));
    }
    if Some(crc32fast::hash(&bytes[..total - TRAILER])) != word(total - TRAILER) {
        return Err(FrameError::Checksum("message"));
    }
    let mut headers = &bytes[PRELUDE..PRELUDE + headers_len];
    let (mut kind, mut name) = (MessageType::Event, String::new());
    while !headers.is_empty() {
        let name_len = usize::from(headers[0]);
        let header = headers.get(1..1 + name_len).ok_or(FrameError::Headers)?;
        let rest = &headers[1 + name_len..];
        if rest.first() != Some(&STRING) || rest.len() < 3 {
            return Err(FrameError::Headers);
        }
        let value_len = usize::from(u16::from_be_bytes([rest[1], rest[2]]));
        let value = rest.get(3..3 + value_len).ok_or(FrameError::Headers)?;
        let value = String::from_utf8_lossy(value).into_owned();
        match header {
            b":event-type" | b":exception-type" => name = value,
            b":message-type" if value == "exception" => kind = MessageType::Exception,
            _ => {}
        }
        headers = &rest[3 + value_len..];
    }
    Ok(Message { kind, name, payload: bytes[PRELUDE + headers_len..total - TRAILER].to_vec() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_reads_back_with_both_crcs_checked() {
        let mut out = b"ahead".to_vec();
        let at = write_message(&mut out, MessageType::Event, "contentBlockDelta", br#"{"a":1}"#);
        let message = &out[5..];
        assert_eq!(first_message_len(message), Some(message.len()));
        assert_eq!(first_message_len(&message[..message.len() - 1]), None, "not all of it yet");
        assert_eq!(&message[at.from..message.len() - at.trailer], br#"{"a":1}"#);
        let read = read_message(message).expect("a sound message");
        assert_eq!(
            (read.kind, read.name.as_str(), &read.payload[..]),
            (MessageType::Event, "contentBlockDelta", &br#"{"a":1}"#[..])
        );
        let mut exception = Vec::new();
        write_message(&mut exception, MessageType::Exception, "throttlingException", b"{}");
        assert_eq!(read_message(&exception).map(|m| m.kind), Ok(MessageType::Exception));
    }

    #[test]
    fn a_known_message_matches_awss_own_test_vector() {
        // The AWS SDKs' event-stream test vector `empty_message`: 16 bytes, the prelude CRC
        // 0x05c248eb, the message CRC 0x7d98c8ff.
        let mut out = Vec::new();
        let total = (PRELUDE + TRAILER) as u32;
        out.extend_from_slice(&total.to_be_bytes());
        out.extend_from_slice(&0u32.to_be_bytes());
        assert_eq!(crc32fast::hash(&out), 0x05c2_48eb);
        out.extend_from_slice(&0x05c2_48ebu32.to_be_bytes());
        assert_eq!(crc32fast::hash(&out), 0x7d98_c8ff);
    }

    #[test]
    fn garbage_breaks_the_message_crc_and_nothing_else() {
        let garbage = garbage();
        assert_eq!(first_message_len(&garbage), Some(garbage.len()));
        assert_eq!(read_message(&garbage), Err(FrameError::Checksum("message")));
    }
}
