//! The journal: every request a run saw, from the moment it arrived to however it ended.
//!
//! An entry is created when a request arrives and completed exactly once, whatever ends the
//! reply: the script finishing, an injected fault, or the client hanging up. Entries are
//! public (`GET /__squall/runs/{id}/journal`, `docs/server.md`); add fields, never rename.
//!
//! A journal keeps at most its capacity of entries (`--journal-max`): past it, the oldest are
//! dropped and counted, so a soak of millions of requests cannot exhaust memory. An entry keeps
//! its index for life; `dropped` says how many came before the first one kept.

mod entry;
mod kept;
mod recorded;

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde_json::Value;
use tokio::time::Instant;

use crate::clock::{ClientFrame, Clock};
use crate::metrics::{Ended, Event, Metrics};

pub use self::entry::{Arrival, EndKind, JournalEntry, Protocol, UpstreamCall};
pub use self::kept::KeptEntry;
use self::recorded::Recorded;
pub use self::recorded::{RecordedHeaders, CREDENTIAL_HEADERS};
/// Which API a request spoke (defined at the bottom of the library, [`crate::api`]).
pub use crate::api::Api;

/// The entries a journal keeps unless told otherwise.
pub const DEFAULT_JOURNAL_MAX: usize = 10_000;

/// A run's journal, shared by the connections serving it.
#[derive(Debug)]
pub struct Journal {
    clock: Clock,
    /// The wall time its client reads, when that is not the clock's (a sped-up client).
    client_frame: Mutex<Option<ClientFrame>>,
    created: Instant,
    capacity: usize,
    entries: Mutex<Kept>,
    /// The server's counters (`GET /metrics`), when the journal is a server run's.
    metrics: Option<Arc<Metrics>>,
}

/// The entries kept, and how many older ones were dropped.
#[derive(Debug, Default)]
struct Kept {
    entries: VecDeque<KeptEntry>,
    dropped: usize,
}

impl Journal {
    /// An empty journal keeping at most [`DEFAULT_JOURNAL_MAX`] entries.
    pub fn new() -> Self {
        Self::with_capacity(DEFAULT_JOURNAL_MAX)
    }

    /// A journal keeping at most `capacity` entries (at least one).
    pub fn with_capacity(capacity: usize) -> Self {
        Self::on_clock(capacity, Clock::Real)
    }

    /// A journal keeping at most `capacity` entries, timed by `clock`.
    pub fn on_clock(capacity: usize, clock: Clock) -> Self {
        Journal {
            created: clock.now(),
            clock,
            client_frame: Mutex::new(None),
            capacity: capacity.max(1),
            entries: Mutex::new(Kept::default()),
            metrics: None,
        }
    }

    /// The same journal, counting what it records in the server's `metrics`.
    pub(crate) fn counted_in(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    fn count(&self, event: Event<'_>) {
        if let Some(metrics) = &self.metrics {
            metrics.record(event);
        }
    }

    /// The clock its times are read from.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The wall time the run's client reads now: the clock's, or its own sped-up frame's.
    pub fn client_wall_now(&self) -> std::time::SystemTime {
        let real = self.clock.wall_now();
        match &*self.client_frame.lock().unwrap_or_else(std::sync::PoisonError::into_inner) {
            Some(frame) => frame.seen(real),
            None => real,
        }
    }

    /// Dates sent to the run's client from now on are in `frame` (see [`ClientFrame`]).
    pub fn set_client_frame(&self, frame: ClientFrame) {
        *self.client_frame.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(frame);
    }

    /// Now, on the journal's clock.
    pub fn now(&self) -> Instant {
        self.clock.now()
    }

    /// Milliseconds since the run was created.
    pub fn ms_since_start(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.created).as_secs_f64() * 1000.0
    }

    /// Record an arriving request; returns its index. At capacity the oldest entry is dropped.
    pub fn begin(&self, arrival: Arrival, at: Instant) -> usize {
        let mut kept = self.lock();
        if kept.entries.len() >= self.capacity {
            if let Some(oldest) = kept.entries.pop_front() {
                self.count(Event::EntryDropped { in_flight: oldest.in_flight() });
            }
            kept.dropped += 1;
        }
        self.count(Event::ReplyBegan);
        let index = kept.dropped + kept.entries.len();
        let entry = JournalEntry {
            index,
            client: arrival.client,
            track: None,
            attempt: None,
            method: arrival.method,
            path: arrival.path,
            protocol: arrival.protocol,
            api: None,
            headers: BTreeMap::new(),
            body: Value::Null,
            body_note: None,
            stream: false,
            received_at_ms: self.ms_since_start(at),
            finished_at_ms: None,
            status: None,
            fault: None,
            end: None,
            events_sent: 0,
            bytes_sent: 0,
            terminal_sent: false,
            end_frame: None,
            response_headers: BTreeMap::new(),
            condition: None,
            socket: None,
            upstream: None,
        };
        let recorded = Recorded { headers: arrival.headers, ..Recorded::default() };
        kept.entries.push_back(KeptEntry { entry, recorded });
        index
    }

    /// Change what happened to an entry (nothing happens to an entry already dropped). Its
    /// `headers`, `body` and `response_headers` come from what was recorded, not from here.
    pub fn update(&self, index: usize, change: impl FnOnce(&mut JournalEntry)) {
        self.with_kept(index, |kept| change(&mut kept.entry));
    }

    /// Record the request body of an entry, as it arrived.
    pub fn record_body(&self, index: usize, body: Bytes) {
        self.with_kept(index, |kept| kept.recorded.body = body);
    }

    /// Record the response headers sent for an entry.
    pub fn record_response_headers(&self, index: usize, headers: RecordedHeaders) {
        self.with_kept(index, |kept| kept.recorded.response_headers = headers);
    }

    fn with_kept(&self, index: usize, change: impl FnOnce(&mut KeptEntry)) {
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
                self.count(Event::ReplyEnded(Ended {
                    api: entry.api,
                    protocol: match entry.protocol {
                        Protocol::Http1 => "http/1.1",
                        Protocol::Http2 => "h2",
                    },
                    status: entry.status,
                    end: end.as_str(),
                    fault: entry.fault,
                    bytes: entry.bytes_sent,
                }));
            }
        });
    }

    /// The entries kept, oldest first. Bodies are parsed after the lock is released, so a
    /// large journal being read does not hold up the requests being recorded.
    pub fn snapshot(&self) -> Vec<JournalEntry> {
        self.kept().into_iter().map(KeptEntry::read).collect()
    }

    /// The entries kept, oldest first, as kept: cheap to copy (bodies are shared, not copied)
    /// and written out as JSON without parsing their bodies.
    pub fn kept(&self) -> Vec<KeptEntry> {
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
        Arrival {
            client: None,
            method: "POST".into(),
            path: "/responses".into(),
            protocol: Protocol::Http1,
            headers: RecordedHeaders::default(),
        }
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
