//! A reply plan played in time: the one player of both transports, the HTTP body
//! (`reply_body`) and the WebSocket (`websocket`). It keeps the waits on one running deadline
//! and records in the journal entry the stalls and the faults that fire; what it leaves to a
//! transport is what only the transport can do — send bytes (as body frames or WebSocket
//! frames), fire a kill on its socket, and end — handed over as [`Cue`]s.

use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::time::Instant;

use super::entry_handle::EntryHandle;
use crate::clock::{deadline_after, Sleep};
use crate::journal::EndKind;
use crate::scenario::FaultKind;
use crate::wire::plan::{Kill, Step};

/// Where steps come from once a plan's are played: an upstream's stream, read as it arrives
/// (`crate::server::upstream::proxied_body`). `Ready(None)`: no more.
pub(in crate::server) trait MoreSteps: Send + Sync + std::fmt::Debug {
    fn poll_more(&mut self, cx: &mut Context<'_>) -> Poll<Option<VecDeque<Step>>>;
}

/// What the transport does next.
#[derive(Debug, PartialEq)]
pub(in crate::server) enum Cue {
    /// Send these bytes, which complete `events` events (`terminal`: the terminal success
    /// event). `ending`: nothing but this ending comes after them (its fault, if any, is
    /// recorded already), so the reply's end is taken as they go out.
    Data { bytes: Bytes, events: u32, terminal: bool, ending: Option<EndKind> },
    /// A stall began: silence, until [`Cue::StallOver`] or for good; the client may leave.
    Stalling,
    /// A timed stall ended.
    StallOver,
    /// Fire this kill on the socket after what was sent.
    Kill(Kill),
    /// Close the connection gracefully once its replies end; this one goes on.
    CloseConnection,
    /// The reply ends so.
    End(EndKind),
}

/// Whether the reply is silent because of a stall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stall {
    None,
    Timed,
    Forever,
}

/// A plan's steps, played in time against its journal entry.
#[derive(Debug)]
pub(in crate::server) struct Playback {
    steps: VecDeque<Step>,
    /// Steps that come after the plan's, as they become known.
    more: Option<Box<dyn MoreSteps>>,
    timer: Option<Sleep>,
    /// Waits are scheduled against this running deadline, so rounding errors of one wait do
    /// not add up over many (nine 5 ms event delays take 45 ms, not 54) — unless the reply fell
    /// behind it by more than the wait (a client that reads slowly), which starts it again.
    deadline: Option<Instant>,
    stall: Stall,
    /// A proxied reply's upstream failed: the kill that passes it on is not a fault.
    upstream_failed: bool,
    entry: EntryHandle,
}

impl Playback {
    pub(in crate::server) fn new(steps: VecDeque<Step>, entry: EntryHandle) -> Self {
        Playback { steps, more: None, timer: None, deadline: None, stall: Stall::None, upstream_failed: false, entry }
    }

    /// A playback whose steps come from `more` as they become known.
    pub(in crate::server) fn streaming(more: Box<dyn MoreSteps>, entry: EntryHandle) -> Self {
        Playback { more: Some(more), ..Playback::new(VecDeque::new(), entry) }
    }

    /// The journal entry it plays against.
    pub(in crate::server) fn entry(&mut self) -> &mut EntryHandle {
        &mut self.entry
    }

    /// Whether its journal entry is completed.
    pub(in crate::server) fn entry_finished(&self) -> bool {
        self.entry.is_finished()
    }

    /// Whether the reply is silent in a stall now.
    pub(in crate::server) fn in_stall(&self) -> bool {
        self.stall != Stall::None
    }

    /// Whether nothing is left to play.
    pub(in crate::server) fn is_done(&self) -> bool {
        self.steps.is_empty() && self.more.is_none()
    }

    /// The next cue, once its time comes; `None` when the plan is played out.
    #[cfg_attr(not(feature = "websocket"), allow(dead_code))]
    pub(in crate::server) async fn next(&mut self) -> Option<Cue> {
        poll_fn(|cx| self.poll_cue(cx)).await
    }

    /// The next cue, once its time comes; `Ready(None)` when the plan is played out.
    pub(in crate::server) fn poll_cue(&mut self, cx: &mut Context<'_>) -> Poll<Option<Cue>> {
        loop {
            if let Some(timer) = self.timer.as_mut() {
                std::task::ready!(Pin::new(timer).poll(cx));
                self.timer = None;
                if std::mem::replace(&mut self.stall, Stall::None) == Stall::Timed {
                    return Poll::Ready(Some(Cue::StallOver));
                }
            }
            if self.stall == Stall::Forever {
                return Poll::Pending;
            }
            if self.steps.is_empty() {
                if let Some(more) = self.more.as_mut() {
                    match std::task::ready!(more.poll_more(cx)) {
                        Some(steps) => {
                            self.steps = steps;
                            continue;
                        }
                        None => self.more = None,
                    }
                }
            }
            let Some(step) = self.steps.pop_front() else { return Poll::Ready(None) };
            match step {
                Step::Data { bytes, events, terminal } => {
                    let ending = self.ending_after_data();
                    return Poll::Ready(Some(Cue::Data { bytes, events, terminal, ending }));
                }
                Step::Wait(wait) => self.wait(wait),
                Step::Stall(duration) => {
                    self.entry.update(|e| e.fault = Some(FaultKind::Stall));
                    match duration {
                        Some(duration) => {
                            self.stall = Stall::Timed;
                            self.wait(duration);
                        }
                        None => self.stall = Stall::Forever,
                    }
                    return Poll::Ready(Some(Cue::Stalling));
                }
                Step::Kill(kill) => return Poll::Ready(Some(Cue::Kill(kill))),
                Step::CloseConnection => return Poll::Ready(Some(Cue::CloseConnection)),
                Step::FaultFired(kind) => self.entry.update(|e| e.fault = Some(kind)),
                Step::UpstreamFailed(why) => {
                    self.upstream_failed = true;
                    self.entry.update(|e| {
                        if let Some(upstream) = e.upstream.as_mut() {
                            upstream.error = Some(why);
                        }
                    });
                }
                Step::End(end) => return Poll::Ready(Some(Cue::End(end))),
            }
        }
    }

    /// When nothing but faults that fired and an ending follow a data step: take them now, so
    /// that the reply's end is the moment its last bytes go out. The wait the journal then shows
    /// before the next attempt can only be longer than the client's, never shorter.
    fn ending_after_data(&mut self) -> Option<EndKind> {
        let only_an_ending = self.more.is_none()
            && self.steps.iter().all(|s| matches!(s, Step::FaultFired(_) | Step::End(_)))
            && self.steps.iter().any(|s| matches!(s, Step::End(_)));
        if !only_an_ending {
            return None;
        }
        let mut ending = None;
        for step in self.steps.drain(..) {
            match step {
                Step::FaultFired(kind) => self.entry.update(|e| e.fault = Some(kind)),
                Step::End(end) => ending = ending.or(Some(end)),
                _ => {}
            }
        }
        ending
    }

    /// Sleep `wait` past the running deadline.
    fn wait(&mut self, wait: std::time::Duration) {
        let clock = self.entry.clock().clone();
        let now = clock.now();
        let from = match self.deadline {
            Some(deadline) => now.checked_sub(wait).map_or(deadline, |behind| deadline.max(behind)),
            None => now,
        };
        let deadline = deadline_after(from, wait);
        self.deadline = Some(deadline);
        self.timer = Some(clock.sleep_until(deadline));
    }
}

impl Playback {
    /// The fault a kill records, if it was one, and how the reply it kills ends: an upstream's
    /// failure passed on is no fault of squall's.
    pub(in crate::server) fn kill_ending(&self, kill: Kill) -> (Option<FaultKind>, EndKind) {
        if self.upstream_failed {
            return (None, EndKind::UpstreamFailed);
        }
        match kill {
            Kill::Eof => (Some(FaultKind::Eof), EndKind::Eof),
            Kill::Reset(_) => (Some(FaultKind::Reset), EndKind::Reset),
            Kill::GoAway(_) => (Some(FaultKind::Goaway), EndKind::GoAway),
            Kill::Close => (Some(FaultKind::Close), EndKind::Closed),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::journal::{Arrival, Journal, Protocol, RecordedHeaders};
    use crate::scenario_model::H2Code;

    fn entry() -> (Arc<Journal>, EntryHandle) {
        let journal = Arc::new(Journal::new());
        let arrival = Arrival {
            client: None,
            method: "POST".into(),
            path: "/responses".into(),
            protocol: Protocol::Http1,
            headers: RecordedHeaders::default(),
        };
        let index = journal.begin(arrival, journal.now());
        (journal.clone(), EntryHandle::new(journal, index))
    }

    fn data(text: &'static str) -> Step {
        Step::Data { bytes: Bytes::from_static(text.as_bytes()), events: 1, terminal: false }
    }

    #[tokio::test(start_paused = true)]
    async fn waits_keep_one_deadline_a_stall_is_announced_and_a_trailing_ending_comes_with_the_data() {
        let (journal, entry) = entry();
        let steps = VecDeque::from([
            data("a"),
            Step::Wait(Duration::from_millis(5)),
            data("b"),
            Step::Stall(Some(Duration::from_millis(100))),
            data("c"),
            Step::FaultFired(FaultKind::Truncate),
            Step::End(EndKind::Truncated),
        ]);
        let mut playback = Playback::new(steps, entry);
        let started = tokio::time::Instant::now();
        let mut cues = Vec::new();
        while let Some(cue) = playback.next().await {
            cues.push((cue, started.elapsed().as_millis()));
        }
        let sent = |text: &'static str, ending| Cue::Data {
            bytes: Bytes::from_static(text.as_bytes()),
            events: 1,
            terminal: false,
            ending,
        };
        assert_eq!(
            cues,
            [
                (sent("a", None), 0),
                (sent("b", None), 5),
                (Cue::Stalling, 5),
                (Cue::StallOver, 105),
                (sent("c", Some(EndKind::Truncated)), 105),
            ]
        );
        assert_eq!(journal.snapshot()[0].fault, Some(FaultKind::Truncate), "the last fault that fired");
    }

    #[tokio::test(start_paused = true)]
    async fn a_reply_that_fell_behind_spaces_what_is_left_instead_of_bursting() {
        let (_journal, entry) = entry();
        let wait = || Step::Wait(Duration::from_millis(5));
        let steps = VecDeque::from([data("a"), wait(), data("b"), wait(), data("c"), wait(), data("d")]);
        let mut playback = Playback::new(steps, entry);
        let started = tokio::time::Instant::now();
        let mut at = Vec::new();
        while let Some(cue) = playback.next().await {
            at.push(started.elapsed().as_millis());
            if at.len() == 2 {
                // A slow reader holds the reply back 50 ms before it asks for more.
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            assert!(matches!(cue, Cue::Data { .. }), "{cue:?}");
        }
        // On a pure running deadline d would follow c at once (55, 55): behind, it would burst.
        assert_eq!(at, [0, 5, 55, 60], "c at once (its wait passed while held back), d a whole wait after c");
        assert!(playback.is_done());
    }

    #[test]
    fn each_kill_records_its_fault_and_ending_and_an_upstreams_failure_is_no_fault() {
        let (journal, entry) = entry();
        journal.update(0, |e| {
            e.upstream = Some(crate::journal::UpstreamCall {
                url: "http://upstream".into(),
                status: Some(200),
                headers_after_ms: Some(1.0),
                error: None,
            })
        });
        let mut playback = Playback::new(VecDeque::new(), entry);
        assert_eq!(playback.kill_ending(Kill::Eof), (Some(FaultKind::Eof), EndKind::Eof));
        assert_eq!(playback.kill_ending(Kill::Reset(H2Code::InternalError)), (Some(FaultKind::Reset), EndKind::Reset));
        playback.steps =
            VecDeque::from([Step::UpstreamFailed("it reset".into()), Step::Kill(Kill::Reset(H2Code::InternalError))]);
        let waker = std::task::Waker::noop();
        let cue = playback.poll_cue(&mut Context::from_waker(waker));
        assert_eq!(cue, Poll::Ready(Some(Cue::Kill(Kill::Reset(H2Code::InternalError)))));
        assert_eq!(playback.kill_ending(Kill::Reset(H2Code::InternalError)), (None, EndKind::UpstreamFailed));
        let upstream = journal.snapshot()[0].upstream.clone().expect("the upstream call");
        assert_eq!(upstream.error.as_deref(), Some("it reset"));
    }
}
