//! An incremental decoder of AWS's event-stream framing (Amazon Bedrock's streams): bytes in,
//! whole messages out, each checked against both of its CRC32s.
//!
//! A message is a prelude (total length and headers' length, big-endian `u32`s, and the CRC32
//! of those 8 bytes), headers (name length, name, value type, value), the payload, and the
//! CRC32 of all that precedes it. A message whose CRC does not match is garbage: the stream is
//! broken, never a slow event.

use super::sse::SseMessage;

/// Prelude: total length, headers' length, prelude CRC.
const PRELUDE: usize = 12;
/// The message CRC after the payload.
const MESSAGE_CRC: usize = 4;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
/// Bytes that are not a sound event-stream message.
pub enum FrameError {
    /// A declared length no message can have.
    #[error("an event-stream message declares impossible lengths")]
    Lengths,
    /// A CRC that does not match its bytes.
    #[error("an event-stream message's {0} CRC does not match")]
    Checksum(&'static str),
    /// Headers that cannot be read.
    #[error("an event-stream message's headers cannot be read")]
    Headers,
}

#[derive(Debug, Default)]
/// Event-stream messages from bytes as they arrive, however the network cut them.
pub struct EventStreamDecoder {
    pending: Vec<u8>,
}

impl EventStreamDecoder {
    /// Feed bytes; returns the messages they complete, each as its `:event-type` (or, for an
    /// exception, its `:exception-type`, whose name ends in `Exception`) and its payload.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseMessage>, FrameError> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        while self.pending.len() >= PRELUDE {
            let total = be_u32(&self.pending[0..4]) as usize;
            let headers_len = be_u32(&self.pending[4..8]) as usize;
            if crc32fast::hash(&self.pending[0..8]) != be_u32(&self.pending[8..12]) {
                return Err(FrameError::Checksum("prelude"));
            }
            if total < PRELUDE + headers_len + MESSAGE_CRC {
                return Err(FrameError::Lengths);
            }
            if self.pending.len() < total {
                break;
            }
            let message: Vec<u8> = self.pending.drain(..total).collect();
            if crc32fast::hash(&message[..total - MESSAGE_CRC]) != be_u32(&message[total - MESSAGE_CRC..]) {
                return Err(FrameError::Checksum("message"));
            }
            let name = type_header(&message[PRELUDE..PRELUDE + headers_len])?;
            let data = String::from_utf8_lossy(&message[PRELUDE + headers_len..total - MESSAGE_CRC]).into_owned();
            out.push(SseMessage { event: Some(name), data });
        }
        Ok(out)
    }
}

fn be_u32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// The `:event-type` or `:exception-type` among a message's headers.
fn type_header(mut headers: &[u8]) -> Result<String, FrameError> {
    let mut found = None;
    while let Some((&name_len, rest)) = headers.split_first() {
        let name_len = usize::from(name_len);
        let name = rest.get(..name_len).ok_or(FrameError::Headers)?;
        let rest = &rest[name_len..];
        let (&value_type, rest) = rest.split_first().ok_or(FrameError::Headers)?;
        // Only strings (7) are read; the value of any other type is skipped by its fixed size.
        let (value, rest) = match value_type {
            0 | 1 => (&rest[..0], rest),
            2 => rest.split_at_checked(1).ok_or(FrameError::Headers)?,
            3 => rest.split_at_checked(2).ok_or(FrameError::Headers)?,
            4 => rest.split_at_checked(4).ok_or(FrameError::Headers)?,
            5 | 8 => rest.split_at_checked(8).ok_or(FrameError::Headers)?,
            9 => rest.split_at_checked(16).ok_or(FrameError::Headers)?,
            6 | 7 => {
                let len = usize::from(u16::from_be_bytes([
                    *rest.first().ok_or(FrameError::Headers)?,
                    *rest.get(1).ok_or(FrameError::Headers)?,
                ]));
                rest[2..].split_at_checked(len).ok_or(FrameError::Headers)?
            }
            _ => return Err(FrameError::Headers),
        };
        if value_type == 7 && (name == b":event-type" || name == b":exception-type") {
            found = Some(String::from_utf8_lossy(value).into_owned());
        }
        headers = rest;
    }
    found.ok_or(FrameError::Headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message as AWS frames it, written here by hand.
    fn message(name: &str, payload: &str) -> Vec<u8> {
        let mut headers = Vec::new();
        for (key, value) in [(":event-type", name), (":message-type", "event")] {
            headers.push(key.len() as u8);
            headers.extend_from_slice(key.as_bytes());
            headers.push(7);
            headers.extend_from_slice(&(value.len() as u16).to_be_bytes());
            headers.extend_from_slice(value.as_bytes());
        }
        let total = PRELUDE + headers.len() + payload.len() + MESSAGE_CRC;
        let mut out = (total as u32).to_be_bytes().to_vec();
        out.extend_from_slice(&(headers.len() as u32).to_be_bytes());
        out.extend_from_slice(&crc32fast::hash(&out).to_be_bytes());
        out.extend_from_slice(&headers);
        out.extend_from_slice(payload.as_bytes());
        out.extend_from_slice(&crc32fast::hash(&out).to_be_bytes());
        out
    }

    #[test]
    fn messages_split_anywhere_come_out_whole() {
        let mut bytes = message("messageStart", r#"{"role":"assistant"}"#);
        bytes.extend(message("metadata", "{}"));
        let mut decoder = EventStreamDecoder::default();
        assert!(decoder.push(&bytes[..5]).expect("sound").is_empty());
        let messages = decoder.push(&bytes[5..]).expect("sound");
        let names: Vec<_> = messages.iter().map(|m| m.event.as_deref().unwrap_or("")).collect();
        assert_eq!(names, ["messageStart", "metadata"]);
        assert_eq!(messages[0].data, r#"{"role":"assistant"}"#);
    }

    #[test]
    fn a_broken_crc_is_an_error() {
        let mut bytes = message("contentBlockDelta", "{}");
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert_eq!(EventStreamDecoder::default().push(&bytes), Err(FrameError::Checksum("message")));
        let mut prelude = message("contentBlockDelta", "{}");
        prelude[3] ^= 1;
        assert_eq!(EventStreamDecoder::default().push(&prelude), Err(FrameError::Checksum("prelude")));
    }
}
