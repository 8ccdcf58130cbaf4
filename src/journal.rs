//! The journal: every request a run saw, from the moment it arrived to however it ended.
//!
//! An entry is created when a request arrives and completed exactly once, whatever ends the
//! reply: the script finishing, an injected fault, or the client hanging up. Entries are
//! public (`GET /__squall/runs/{id}/journal`, `docs/server.md`); add fields, never rename.
//!
//! A journal keeps at most its capacity of entries (`--journal-max`): past it, the oldest are
//! dropped and counted, so a soak of millions of requests cannot exhaust memory. An entry keeps
//! its index for life; `dropped` says how many came before the first one kept.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::time::Instant;

use crate::scenario::FaultKind;

/// How a reply ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndKind {
    /// The whole scripted reply was sent (success body or in-stream failure event).
    Completed,
    /// A scripted error status with its body was sent.
    ErrorStatus,
    /// FIN mid-body (fault `eof`).
    Eof,
    /// TCP RST mid-body (fault `reset`).
    Reset,
    /// A clean end of body without the terminal event (fault `truncate`).
    Truncated,
    /// The client gave up during a stall (fault `stall`).
    Stalled,
    /// Non-SSE bytes were sent, then the body ended (fault `garbage`).
    Garbage,
    /// The client closed the connection before the reply ended.
    ClientClosed,
}

/// One request as the server saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// 0-based position in the run.
    pub index: usize,
    /// The track that answered; null for requests that are not model calls.
    pub track: Option<String>,
    /// 0-based attempt within the track; null for requests that are not model calls.
    pub attempt: Option<u32>,
    /// `GET`, `POST`, ...
    pub method: String,
    /// Relative to the base URL, e.g. `/responses`.
    pub path: String,
    /// The request headers, names lower-cased.
    pub headers: BTreeMap<String, String>,
    /// The request body: parsed JSON, or the raw text when it is not JSON.
    pub body: Value,
    /// Whether the client asked for a streamed reply.
    pub stream: bool,
    /// Milliseconds since the run was created (monotonic clock).
    pub received_at_ms: f64,
    /// When the reply ended; null while it is in progress.
    pub finished_at_ms: Option<f64>,
    /// The status sent; null until the reply starts.
    pub status: Option<u16>,
    /// The fault that fired, if any.
    pub fault: Option<FaultKind>,
    /// How the reply ended; null while it is in progress.
    pub end: Option<EndKind>,
    /// Complete events written.
    pub events_sent: u32,
    /// Body bytes written.
    pub bytes_sent: u64,
    /// Whether the terminal success event (`response.completed`, `[DONE]`) was written.
    pub terminal_sent: bool,
    /// The response headers squall sent (templates such as `@now+3s` as rendered).
    #[serde(default)]
    pub response_headers: BTreeMap<String, String>,
}

/// Facts about a request known when it arrives.
#[derive(Debug, Clone)]
pub struct Arrival {
    /// `GET`, `POST`, ...
    pub method: String,
    /// Relative to the base URL, e.g. `/responses`.
    pub path: String,
    /// The request headers, names lower-cased.
    pub headers: BTreeMap<String, String>,
}

/// The entries a journal keeps unless told otherwise.
pub const DEFAULT_JOURNAL_MAX: usize = 10_000;

/// A run's journal, shared by the connections serving it.
#[derive(Debug)]
pub struct Journal {
    created: Instant,
    capacity: usize,
    entries: Mutex<Kept>,
}

/// The entries kept, and how many older ones were dropped.
#[derive(Debug, Default)]
struct Kept {
    entries: std::collections::VecDeque<JournalEntry>,
    dropped: usize,
}

impl Journal {
    /// An empty journal keeping at most [`DEFAULT_JOURNAL_MAX`] entries.
    pub fn new() -> Self {
        Self::with_capacity(DEFAULT_JOURNAL_MAX)
    }

    /// A journal keeping at most `capacity` entries (at least one).
    pub fn with_capacity(capacity: usize) -> Self {
        Journal { created: Instant::now(), capacity: capacity.max(1), entries: Mutex::new(Kept::default()) }
    }

    /// Milliseconds since the run was created.
    pub fn ms_since_start(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.created).as_secs_f64() * 1000.0
    }

    /// Record an arriving request; returns its index. At capacity the oldest entry is dropped.
    pub fn begin(&self, arrival: Arrival, at: Instant) -> usize {
        let mut kept = self.lock();
        if kept.entries.len() >= self.capacity {
            kept.entries.pop_front();
            kept.dropped += 1;
        }
        let index = kept.dropped + kept.entries.len();
        kept.entries.push_back(JournalEntry {
            index,
            track: None,
            attempt: None,
            method: arrival.method,
            path: arrival.path,
            headers: arrival.headers,
            body: Value::Null,
            stream: false,
            received_at_ms: self.ms_since_start(at),
            finished_at_ms: None,
            status: None,
            fault: None,
            end: None,
            events_sent: 0,
            bytes_sent: 0,
            terminal_sent: false,
            response_headers: BTreeMap::new(),
        });
        index
    }

    /// Change an entry in place (nothing happens to an entry already dropped).
    pub fn update(&self, index: usize, change: impl FnOnce(&mut JournalEntry)) {
        let mut kept = self.lock();
        let position = index.checked_sub(kept.dropped);
        if let Some(entry) = position.and_then(|p| kept.entries.get_mut(p)) {
            change(entry);
        }
    }

    /// Complete an entry once; later calls leave the first ending in place.
    pub fn finish(&self, index: usize, end: EndKind, at: Instant) {
        let ms = self.ms_since_start(at);
        self.update(index, |entry| {
            if entry.end.is_none() {
                entry.end = Some(end);
                entry.finished_at_ms = Some(ms);
            }
        });
    }

    /// The entries kept, oldest first.
    pub fn snapshot(&self) -> Vec<JournalEntry> {
        self.lock().entries.iter().cloned().collect()
    }

    /// Entries kept.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Entries dropped to stay within the capacity (the oldest ones).
    pub fn dropped(&self) -> usize {
        self.lock().dropped
    }

    /// Requests recorded since the run began, kept or dropped.
    pub fn total(&self) -> usize {
        let kept = self.lock();
        kept.dropped + kept.entries.len()
    }

    /// Whether no entry is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        // A panic while holding the lock cannot leave an entry half-written in a way that
        // matters more than losing the journal, so recover the data instead of propagating.
        self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Default for Journal {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrival() -> Arrival {
        Arrival { method: "POST".into(), path: "/responses".into(), headers: BTreeMap::new() }
    }

    #[test]
    fn past_its_capacity_a_journal_drops_the_oldest_and_counts_them() {
        let journal = Journal::with_capacity(3);
        let indexes: Vec<usize> = (0..5).map(|_| journal.begin(arrival(), Instant::now())).collect();
        assert_eq!(indexes, [0, 1, 2, 3, 4]);
        assert_eq!((journal.len(), journal.dropped(), journal.total()), (3, 2, 5));
        journal.finish(1, EndKind::Completed, Instant::now());
        journal.finish(4, EndKind::Reset, Instant::now());
        let kept: Vec<(usize, Option<EndKind>)> = journal.snapshot().iter().map(|e| (e.index, e.end)).collect();
        assert_eq!(kept, [(2, None), (3, None), (4, Some(EndKind::Reset))]);
    }
}
