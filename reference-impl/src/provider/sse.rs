//! An incremental server-sent-events decoder: bytes in, complete events out.
//!
//! Lines end in `\n`, `\r\n` or `\r`; a blank line ends an event; `event:` and `data:` fields
//! (several `data:` lines join with `\n`); comments (`:`) and unknown fields are ignored.
//! Bytes that are not UTF-8 are an error: the stream is garbage, not a slow event.

/// One complete event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseMessage {
    /// The `event:` line, when there is one.
    pub event: Option<String>,
    /// The `data:` lines, joined by newlines.
    pub data: String,
}

impl SseMessage {
    /// The data as a JSON event; data that is not JSON is a garbled stream.
    pub fn json(&self) -> Result<serde_json::Value, crate::decide::classify::ProviderError> {
        serde_json::from_str(&self.data).map_err(|e| {
            let detail = format!("event data is not JSON ({e})");
            crate::decide::classify::classify_transport(crate::decide::classify::TransportFailure::Garbage, &detail)
        })
    }

    /// An event's type: its data's `type`, else the `event:` line.
    pub fn kind<'a>(&'a self, event: &'a serde_json::Value) -> &'a str {
        event["type"].as_str().or(self.event.as_deref()).unwrap_or("")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the event stream is not valid UTF-8 near byte {offset}")]
/// Bytes that are not UTF-8 in an event stream.
pub struct SseError {
    /// Where, in the bytes read so far.
    pub offset: usize,
}

#[derive(Debug, Default)]
/// Server-sent events from bytes as they arrive, however the network cut them.
pub struct SseDecoder {
    pending: Vec<u8>,
    consumed: usize,
    event: Option<String>,
    data: Vec<String>,
    saw_field: bool,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed bytes; returns the events they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseMessage>, SseError> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut start = 0;
        while let Some(offset) = self.pending[start..].iter().position(|b| *b == b'\n' || *b == b'\r') {
            let end = start + offset;
            let line = std::str::from_utf8(&self.pending[start..end])
                .map_err(|_| SseError { offset: self.consumed + start })?
                .to_owned();
            // `\r\n` is one line ending.
            let mut next = end + 1;
            if self.pending[end] == b'\r' && self.pending.get(next) == Some(&b'\n') {
                next += 1;
            }
            self.line(&line, &mut out);
            start = next;
        }
        self.consumed += start;
        self.pending.drain(..start);
        Ok(out)
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseMessage>) {
        if line.is_empty() {
            if self.saw_field {
                out.push(SseMessage { event: self.event.take(), data: self.data.join("\n") });
            }
            self.data.clear();
            self.event = None;
            self.saw_field = false;
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => {
                self.event = Some(value.to_owned());
                self.saw_field = true;
            }
            "data" => {
                self.data.push(value.to_owned());
                self.saw_field = true;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_come_out_whole() {
        let mut decoder = SseDecoder::new();
        assert!(decoder.push(b"event: a\nda").expect("ok").is_empty());
        let events = decoder.push(b"ta: {\"x\":1}\r\n\r\ndata: [DONE]\n\n").expect("ok");
        assert_eq!(
            events,
            [
                SseMessage { event: Some("a".into()), data: "{\"x\":1}".into() },
                SseMessage { event: None, data: "[DONE]".into() }
            ]
        );
    }

    #[test]
    fn comments_are_ignored_and_data_lines_join() {
        let mut decoder = SseDecoder::new();
        let events = decoder.push(b": keep-alive\ndata: a\ndata: b\n\n").expect("ok");
        assert_eq!(events, [SseMessage { event: None, data: "a\nb".into() }]);
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        assert!(SseDecoder::new().push(b"data: \xff\xfe\n\n").is_err());
    }
}
