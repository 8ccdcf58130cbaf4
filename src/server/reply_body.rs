//! The response body that plays a [`ReplyPlan`] and keeps the request's journal entry.
//!
//! The body is the one place that knows how far a reply got, so it completes the journal
//! entry: when the plan ends, when a kill fault fired (hyper drops the body right after), or
//! when the client hung up (hyper drops the body early). [`EntryHandle`] guarantees the entry
//! is completed exactly once, even if the handler future is dropped before a body exists.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use tokio::time::Instant;

use super::conn_io::{Kill, KillSwitch};
use crate::clock::{deadline_after, Clock, Sleep};
use crate::journal::{EndKind, Journal, JournalEntry, RecordedHeaders};
use crate::scenario::FaultKind;
use crate::wire::plan::{ReplyPlan, Step};

/// A request's journal entry, completed exactly once: explicitly, or as `client_closed` when
/// dropped unfinished (the client went away while the server was still working on it).
#[derive(Debug)]
pub(super) struct EntryHandle {
    journal: Arc<Journal>,
    index: usize,
    done: bool,
}

impl EntryHandle {
    pub(super) fn new(journal: Arc<Journal>, index: usize) -> Self {
        EntryHandle { journal, index, done: false }
    }

    /// The entry's position in the journal.
    pub(super) fn index(&self) -> usize {
        self.index
    }

    pub(super) fn update(&self, change: impl FnOnce(&mut JournalEntry)) {
        self.journal.update(self.index, change);
    }

    pub(super) fn record_response_headers(&self, headers: RecordedHeaders) {
        self.journal.record_response_headers(self.index, headers);
    }

    pub(super) fn finish(&mut self, end: EndKind, at: Instant) {
        if !self.done {
            self.done = true;
            self.journal.finish(self.index, end, at);
        }
    }

    /// Complete the entry now, on the journal's clock.
    pub(super) fn finish_now(&mut self, end: EndKind) {
        let now = self.journal.now();
        self.finish(end, now);
    }

    /// The clock the entry's journal reads.
    pub(super) fn clock(&self) -> &Clock {
        self.journal.clock()
    }
}

impl Drop for EntryHandle {
    fn drop(&mut self) {
        self.finish_now(EndKind::ClientClosed);
    }
}

/// Where a body's steps come from once its plan's are played: an upstream's stream, read as
/// it arrives (`super::proxied_body`). `Ready(None)`: no more.
pub(super) trait MoreSteps: Send + Sync + std::fmt::Debug {
    fn poll_more(&mut self, cx: &mut Context<'_>) -> Poll<Option<VecDeque<Step>>>;
}

/// Plays a reply plan as an HTTP body.
#[derive(Debug)]
pub(super) struct ScriptedBody {
    steps: VecDeque<Step>,
    /// Steps that come after the plan's, as they become known.
    more: Option<Box<dyn MoreSteps>>,
    exact_len: Option<u64>,
    timer: Option<Sleep>,
    in_stall: bool,
    stalled_forever: bool,
    armed: Option<Kill>,
    /// Waits are scheduled against this running deadline, so rounding errors of one wait do
    /// not add up over many (nine 5 ms event delays take 45 ms, not 54).
    deadline: Option<Instant>,
    switch: Arc<KillSwitch>,
    entry: EntryHandle,
}

impl ScriptedBody {
    pub(super) fn new(plan: ReplyPlan, switch: Arc<KillSwitch>, entry: EntryHandle) -> Self {
        ScriptedBody {
            steps: plan.steps,
            more: None,
            exact_len: plan.exact_len,
            timer: None,
            in_stall: false,
            stalled_forever: false,
            armed: None,
            deadline: None,
            switch,
            entry,
        }
    }

    /// A body whose steps come from `more` as they become known.
    pub(super) fn streaming(more: Box<dyn MoreSteps>, switch: Arc<KillSwitch>, entry: EntryHandle) -> Self {
        let plan = ReplyPlan {
            steps: VecDeque::new(),
            close_connection: false,
            exact_len: None,
            header_delay: std::time::Duration::ZERO,
        };
        let mut body = ScriptedBody::new(plan, switch, entry);
        body.more = Some(more);
        body
    }

    fn start_timer(&mut self, duration: std::time::Duration) {
        let from = self.deadline.unwrap_or_else(|| self.entry.clock().now());
        let deadline = deadline_after(from, duration);
        self.deadline = Some(deadline);
        self.timer = Some(self.entry.clock().sleep_until(deadline));
    }
}

impl http_body::Body for ScriptedBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = &mut *self;
        loop {
            if let Some(timer) = this.timer.as_mut() {
                std::task::ready!(Pin::new(timer).poll(cx));
                this.timer = None;
                this.in_stall = false;
            }
            if this.armed.is_some() || this.stalled_forever {
                // A kill fires at hyper's next flush; a stall lasts until the client leaves.
                return Poll::Pending;
            }
            if this.steps.is_empty() {
                if let Some(more) = this.more.as_mut() {
                    match more.poll_more(cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Some(steps)) => {
                            this.steps = steps;
                            continue;
                        }
                        Poll::Ready(None) => this.more = None,
                    }
                }
            }
            let Some(step) = this.steps.pop_front() else {
                // The ending was recorded with the last data frame (or by an `End` step).
                this.entry.finish_now(EndKind::Completed);
                return Poll::Ready(None);
            };
            match step {
                Step::Data { bytes, events, terminal } => {
                    let len = bytes.len() as u64;
                    this.entry.update(|e| {
                        e.bytes_sent += len;
                        e.events_sent += events;
                        e.terminal_sent |= terminal;
                    });
                    // With a known length hyper ends the message after the last byte and
                    // drops the body without asking for more, so the ending is recorded here.
                    if let Some(Step::End(end)) = this.steps.front() {
                        let end = *end;
                        this.steps.pop_front();
                        this.entry.finish_now(end);
                    }
                    return Poll::Ready(Some(Ok(Frame::data(bytes))));
                }
                Step::Wait(duration) => this.start_timer(duration),
                Step::Stall(duration) => {
                    this.in_stall = true;
                    this.entry.update(|e| e.fault = Some(FaultKind::Stall));
                    match duration {
                        Some(duration) => this.start_timer(duration),
                        None => this.stalled_forever = true,
                    }
                }
                Step::Kill(kill) => {
                    this.armed = Some(kill);
                    this.switch.arm(kill);
                }
                Step::FaultFired(kind) => this.entry.update(|e| e.fault = Some(kind)),
                Step::End(end) => {
                    this.entry.finish_now(end);
                    return Poll::Ready(None);
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.steps.is_empty() && self.more.is_none() && self.entry.done
    }

    fn size_hint(&self) -> SizeHint {
        self.exact_len.map(SizeHint::with_exact).unwrap_or_default()
    }
}

impl Drop for ScriptedBody {
    fn drop(&mut self) {
        if let (Some(kill), Some(fired_at)) = (self.armed, self.switch.fired_at()) {
            let (fault, end) = match kill {
                Kill::Eof => (FaultKind::Eof, EndKind::Eof),
                Kill::Reset => (FaultKind::Reset, EndKind::Reset),
            };
            self.entry.update(|e| e.fault = Some(fault));
            self.entry.finish(end, fired_at);
        } else if self.in_stall || self.stalled_forever {
            self.entry.finish_now(EndKind::Stalled);
        }
        // Otherwise the entry handle completes the entry (as `client_closed` if unfinished).
    }
}
