//! A journal entry as the journal keeps it: what happened, and the request's recorded parts as
//! the bytes they were. Read, it becomes a [`JournalEntry`]; written, it is the same JSON, but
//! its recorded parts are written from the bytes kept — a JSON request body verbatim, not
//! parsed into a tree first — so that writing out a journal of large bodies costs about what
//! the journal stores, not thirty times it.

use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::entry::JournalEntry;
use super::recorded::{body_as_json, body_note, journaled, Journaled, Recorded, RecordedHeaders};

/// One entry as kept.
#[derive(Debug, Clone)]
pub struct KeptEntry {
    pub(super) entry: JournalEntry,
    pub(super) recorded: Recorded,
}

impl KeptEntry {
    /// The entry, its recorded parts turned into maps and JSON.
    pub fn read(self) -> JournalEntry {
        JournalEntry {
            headers: self.recorded.headers.to_map(),
            body: body_as_json(&self.recorded.body),
            body_note: body_note(&self.recorded.body).map(str::to_owned),
            response_headers: self.recorded.response_headers.to_map(),
            ..self.entry
        }
    }

    /// Whether the reply is still in progress.
    pub fn in_flight(&self) -> bool {
        self.entry.end.is_none()
    }
}

impl Serialize for KeptEntry {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Every field, so that a field added to the entry cannot be forgotten here: it fails
        // to compile until it is written below.
        let JournalEntry {
            index,
            client,
            track,
            attempt,
            method,
            path,
            protocol,
            api,
            headers: _,
            body: _,
            body_note: _,
            stream,
            received_at_ms,
            finished_at_ms,
            status,
            fault,
            end,
            events_sent,
            bytes_sent,
            terminal_sent,
            end_frame,
            response_headers: _,
            condition,
            socket,
            upstream,
        } = &self.entry;
        let mut out = serializer.serialize_struct("JournalEntry", 24)?;
        out.serialize_field("index", index)?;
        out.serialize_field("client", client)?;
        out.serialize_field("track", track)?;
        out.serialize_field("attempt", attempt)?;
        out.serialize_field("method", method)?;
        out.serialize_field("path", path)?;
        out.serialize_field("protocol", protocol)?;
        out.serialize_field("api", api)?;
        out.serialize_field("headers", &HeaderMap(&self.recorded.headers))?;
        // The body is read once: JSON is written as it arrived, anything else as text, noted.
        let body = &self.recorded.body;
        let note = match journaled(body) {
            Journaled::Empty => out.serialize_field("body", &()).map(|()| None)?,
            Journaled::Json(json) => out.serialize_field("body", json).map(|()| None)?,
            Journaled::Text(note) => {
                out.serialize_field("body", &String::from_utf8_lossy(body)).map(|()| Some(note))?
            }
        };
        match note {
            Some(note) => out.serialize_field("body_note", note)?,
            None => out.skip_field("body_note")?,
        }
        out.serialize_field("stream", stream)?;
        out.serialize_field("received_at_ms", received_at_ms)?;
        out.serialize_field("finished_at_ms", finished_at_ms)?;
        out.serialize_field("status", status)?;
        out.serialize_field("fault", fault)?;
        out.serialize_field("end", end)?;
        out.serialize_field("events_sent", events_sent)?;
        out.serialize_field("bytes_sent", bytes_sent)?;
        out.serialize_field("terminal_sent", terminal_sent)?;
        if end_frame.is_some() {
            out.serialize_field("end_frame", end_frame)?;
        } else {
            out.skip_field("end_frame")?;
        }
        out.serialize_field("response_headers", &HeaderMap(&self.recorded.response_headers))?;
        out.serialize_field("condition", condition)?;
        if socket.is_some() {
            out.serialize_field("socket", socket)?;
        } else {
            out.skip_field("socket")?;
        }
        if upstream.is_some() {
            out.serialize_field("upstream", upstream)?;
        } else {
            out.skip_field("upstream")?;
        }
        out.end()
    }
}

/// Recorded headers as a JSON object (of a repeated header, the last value).
struct HeaderMap<'a>(&'a RecordedHeaders);

impl Serialize for HeaderMap<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.to_map().serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{Arrival, EndKind, Journal};
    use crate::scenario_model::FaultKind;

    fn journal_with(bodies: &[&[u8]]) -> Journal {
        let journal = Journal::new();
        for body in bodies {
            let mut headers = http::HeaderMap::new();
            headers.insert("content-type", "application/json".parse().expect("a header value"));
            let arrival = Arrival {
                client: None,
                method: "POST".into(),
                path: "/responses".into(),
                protocol: crate::journal::Protocol::Http2,
                headers: RecordedHeaders::from_http(&headers),
            };
            let index = journal.begin(arrival, tokio::time::Instant::now());
            journal.record_body(index, bytes::Bytes::copy_from_slice(body));
            journal.update(index, |e| {
                e.track = Some("main".into());
                e.attempt = Some(1);
                e.status = Some(503);
                e.fault = Some(FaultKind::Reset);
                e.bytes_sent = 42;
                e.end_frame = Some("RST_STREAM INTERNAL_ERROR".into());
            });
            journal.record_response_headers(index, RecordedHeaders::from_http(&headers));
            journal.finish(index, EndKind::Reset, tokio::time::Instant::now());
        }
        journal
    }

    #[test]
    fn a_written_entry_is_the_entry_read_whatever_its_body() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let journal = journal_with(&[
            br#"{"input": [1, 2.5, "x"], "b": {"c": null}}"#,
            b"not json",
            b"",
            b"\xff\xfe",
            deep.as_bytes(),
        ]);
        let read = journal.snapshot();
        let written = journal.kept();
        assert_eq!(read.len(), written.len());
        // Both through JSON text, so that numbers parse back alike.
        let as_json = |bytes: Vec<u8>| -> serde_json::Value { serde_json::from_slice(&bytes).expect("JSON") };
        for (read, written) in read.iter().zip(&written) {
            let as_written = as_json(serde_json::to_vec(written).expect("writes"));
            assert_eq!(as_written, as_json(serde_json::to_vec(read).expect("an entry is JSON")));
        }
    }

    /// A body nested deeper than JSON parsers accept is journaled as text, marked so, and the
    /// journal stays readable by a reader with the usual depth limit; one just within it stays
    /// JSON.
    #[test]
    fn a_body_nested_too_deep_is_journaled_as_text_and_the_journal_reads() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let within = format!("{{\"a\": \"[[[[\", \"b\": {}{}}}", "[".repeat(120), "]".repeat(120));
        let journal = journal_with(&[deep.as_bytes(), within.as_bytes()]);
        let text = serde_json::to_string(&journal.kept()).expect("writes");
        let entries: serde_json::Value =
            serde_json::from_str(&text).expect("a reader with serde_json's depth limit reads it");
        assert!(entries[0]["body"].is_string(), "kept as text");
        assert!(
            entries[0]["body_note"].as_str().is_some_and(|n| n.contains("128 levels")),
            "{}",
            entries[0]["body_note"]
        );
        assert!(entries[1]["body"].is_object() && entries[1].get("body_note").is_none(), "{}", entries[1]);
    }
}
