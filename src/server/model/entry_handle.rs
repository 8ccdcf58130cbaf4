//! A request's journal entry as the server holds it while it answers: completed exactly once,
//! explicitly when the reply ends, or as `client_closed` when the handle is dropped unfinished
//! (the client went away while the server was still working on it, and the handler future was
//! dropped before a body existed).

use std::sync::Arc;

use tokio::time::Instant;

use crate::clock::Clock;
use crate::journal::{EndKind, Journal, JournalEntry, RecordedHeaders};

/// A request's journal entry, completed exactly once: explicitly, or as `client_closed` when
/// dropped unfinished (the client went away while the server was still working on it).
#[derive(Debug)]
pub(in crate::server) struct EntryHandle {
    journal: Arc<Journal>,
    index: usize,
    done: bool,
}

impl EntryHandle {
    pub(in crate::server) fn new(journal: Arc<Journal>, index: usize) -> Self {
        EntryHandle { journal, index, done: false }
    }

    /// The entry's position in the journal.
    pub(in crate::server) fn index(&self) -> usize {
        self.index
    }

    pub(in crate::server) fn update(&self, change: impl FnOnce(&mut JournalEntry)) {
        self.journal.update(self.index, change);
    }

    pub(in crate::server) fn record_response_headers(&self, headers: RecordedHeaders) {
        self.journal.record_response_headers(self.index, headers);
    }

    pub(in crate::server) fn finish(&mut self, end: EndKind, at: Instant) {
        if !self.done {
            self.done = true;
            self.journal.finish(self.index, end, at);
        }
    }

    /// Complete the entry now, on the journal's clock.
    pub(in crate::server) fn finish_now(&mut self, end: EndKind) {
        let now = self.journal.now();
        self.finish(end, now);
    }

    /// Whether the entry is completed.
    pub(in crate::server) fn is_finished(&self) -> bool {
        self.done
    }

    /// The clock the entry's journal reads.
    pub(in crate::server) fn clock(&self) -> &Clock {
        self.journal.clock()
    }

    /// The wall time the run's client reads now (dates sent to it are in its frame).
    pub(in crate::server) fn client_wall_now(&self) -> std::time::SystemTime {
        self.journal.client_wall_now()
    }
}

impl Drop for EntryHandle {
    fn drop(&mut self) {
        self.finish_now(EndKind::ClientClosed);
    }
}
