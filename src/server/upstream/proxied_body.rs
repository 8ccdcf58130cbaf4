//! An upstream's reply played through a scenario: its bytes go to the client as they arrive,
//! and the attempt's fault fires at the same point of the real stream as of a scripted one —
//! after N events, after N output deltas (text, reasoning, tool-call arguments, read per API by
//! `wire::real_stream`), or after N bytes. Everything before the fault passes through byte for
//! byte; what the fault does (FIN, RST, a clean end, silence, garbage) is the scripted
//! stream's (`wire::plan::splice_fault`), played by the same [`ScriptedBody`].
//!
//! While an event or delta offset is pending, an event's bytes wait until the event is complete
//! (the fault may have to fire before it); otherwise bytes leave the moment they arrive. A
//! whole (not streamed) body with a pending fault is held until it is complete. An upstream that
//! breaks mid-body, or sends nothing for its read timeout, breaks the client's reply the same
//! way (a reset), journaled as the upstream's failure (`upstream_failed`), not as a fault.

use std::collections::VecDeque;
use std::future::Future as _;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};

use super::recording::{RecordedReplies, MAX_RECORDED_BYTES};
use super::UpstreamBody;
use crate::api::Api;
use crate::clock::TimeScale;
use crate::scenario_model::{Fault, FaultPoint, H2Code};
use crate::server::model::playback::MoreSteps;
use crate::wire::plan::{splice_fault, Kill, Step};
use crate::wire::real_stream::{classify, first_event, first_event_len};
use crate::wire::recorded_reply::UpstreamReply;

/// The steps of an upstream's reply, made as its body arrives.
#[derive(Debug)]
pub(in crate::server) struct UpstreamSteps {
    body: UpstreamBody,
    api: Api,
    /// `text/event-stream`: counted event by event; otherwise one whole body.
    streamed: bool,
    /// The attempt's fault, until it fires.
    fault: Option<Fault>,
    time_scale: TimeScale,
    /// Bytes of an event not yet complete (or, not streamed, of the whole body).
    held: BytesMut,
    events: u32,
    outputs: u32,
    bytes: u64,
    done: bool,
    /// The reply as the upstream sent it, kept in the run's recording when it ends.
    recording: Option<Recording>,
    /// How long the upstream may send nothing mid-body, and the wait since it last sent.
    read_timeout: Duration,
    silence: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Whether `silence` runs from the upstream's last bytes (it is set again, not made again,
    /// each time the upstream keeps the reply waiting).
    silence_armed: bool,
}

/// A reply being recorded: where it goes, and what came so far.
#[derive(Debug)]
pub(in crate::server) struct Recording {
    pub(in crate::server) store: std::sync::Arc<RecordedReplies>,
    pub(in crate::server) index: usize,
    pub(in crate::server) reply: UpstreamReply,
}

impl Drop for UpstreamSteps {
    fn drop(&mut self) {
        if let Some(Recording { store, index, reply }) = self.recording.take() {
            store.keep(index, reply);
        }
    }
}

impl UpstreamSteps {
    pub(in crate::server) fn new(
        body: UpstreamBody,
        (api, streamed): (Api, bool),
        fault: Option<Fault>,
        (time_scale, read_timeout): (TimeScale, Duration),
        recording: Option<Recording>,
    ) -> Self {
        UpstreamSteps {
            body,
            api,
            streamed,
            fault,
            time_scale,
            held: BytesMut::new(),
            events: 0,
            outputs: 0,
            bytes: 0,
            done: false,
            recording,
            read_timeout,
            silence: None,
            silence_armed: false,
        }
    }

    /// The upstream failed mid-body (`why`): what is held goes out, then the client's reply
    /// breaks as the upstream's did, journaled as the upstream's failure.
    fn failed(&mut self, why: String) -> VecDeque<Step> {
        if let Some(recording) = self.recording.as_mut() {
            recording.reply.broken = true;
        }
        let mut steps = VecDeque::new();
        let held = std::mem::take(&mut self.held).freeze();
        if self.waits_for_events() {
            self.send(&mut steps, held, 0, false);
        }
        steps.push_back(Step::UpstreamFailed(why));
        steps.push_back(Step::Kill(Kill::Reset(H2Code::InternalError)));
        self.done = true;
        steps
    }

    /// Whether the pending fault waits for an event boundary (it counts events or deltas).
    fn waits_for_events(&self) -> bool {
        self.fault.as_ref().is_some_and(|f| !matches!(f.point(), FaultPoint::Bytes(_)))
    }

    /// Fire the pending fault now, after `steps`; the body ends unless it was a timed stall.
    fn fire(&mut self, steps: &mut VecDeque<Step>) {
        if let Some(fault) = self.fault.take() {
            self.done = splice_fault(steps, &fault, self.api.stream_framing(), self.time_scale);
        }
    }

    /// Send `bytes` now (they complete `events` events).
    fn send(&mut self, steps: &mut VecDeque<Step>, bytes: Bytes, events: u32, terminal: bool) {
        self.bytes += bytes.len() as u64;
        if !bytes.is_empty() || events > 0 {
            steps.push_back(Step::Data { bytes, events, terminal });
        }
    }

    /// The steps for `data`, just arrived.
    fn take(&mut self, data: Bytes) -> VecDeque<Step> {
        let mut steps = VecDeque::new();
        if let Some(FaultPoint::Bytes(n)) = self.fault.as_ref().map(Fault::point) {
            let room = n.saturating_sub(self.bytes);
            if (data.len() as u64) >= room {
                let head = data.slice(..room as usize);
                self.count_events(&head);
                self.send(&mut steps, head, 0, false);
                self.fire(&mut steps);
                if self.done {
                    return steps;
                }
                let rest = data.slice(room as usize..);
                self.count_events(&rest);
                self.send(&mut steps, rest, 0, false);
                return steps;
            }
        }
        if !self.streamed {
            if self.waits_for_events() {
                self.held.extend_from_slice(&data);
            } else {
                self.send(&mut steps, data, 0, false);
            }
            return steps;
        }
        if !self.waits_for_events() {
            let (events, terminal) = self.count_events(&data);
            self.send(&mut steps, data, events, terminal);
            return steps;
        }
        self.held.extend_from_slice(&data);
        // The complete events at the front of `held` that go out together: one write until the
        // fault is due, not one per event.
        let (mut run, mut run_events, mut run_terminal) = (0, 0, false);
        while let Some(len) = first_event_len(self.api, &self.held[run..]) {
            let kind = classify(self.api, &self.held[run..run + len]);
            if self.due_before(kind.output) {
                let before = self.held.split_to(run).freeze();
                self.send(&mut steps, before, run_events, run_terminal);
                (run, run_events, run_terminal) = (0, 0, false);
                self.fire(&mut steps);
                if self.done {
                    return steps;
                }
                if !self.waits_for_events() {
                    // The fault fired (a timed stall): the rest passes through as it comes.
                    let rest = std::mem::take(&mut self.held).freeze();
                    let (events, terminal) = self.count_events(&rest);
                    self.send(&mut steps, rest, events, terminal);
                    return steps;
                }
            }
            run += len;
            run_events += 1;
            run_terminal |= kind.terminal;
            self.events += 1;
            self.outputs += u32::from(kind.output);
        }
        let complete = self.held.split_to(run).freeze();
        self.send(&mut steps, complete, run_events, run_terminal);
        steps
    }

    /// Whether the pending event or delta offset is due before an event (`output`: it carries output).
    fn due_before(&self, output: bool) -> bool {
        match self.fault.as_ref().map(Fault::point) {
            Some(FaultPoint::Events(n)) => n <= self.events,
            Some(FaultPoint::Deltas(n)) => n <= self.outputs && (n > 0 || output),
            _ => false,
        }
    }

    /// Count the events `bytes` complete (bytes passed through at once), for the journal: no
    /// offset waits on them, so only how many and whether the terminal one came.
    fn count_events(&mut self, bytes: &[u8]) -> (u32, bool) {
        if !self.streamed {
            return (0, false);
        }
        // Scanned where they lie; only an event the bytes leave incomplete is kept (and the
        // bytes that complete it are joined to it).
        let (mut events, mut terminal) = (0, false);
        let mut rest = bytes;
        if !self.held.is_empty() {
            self.held.extend_from_slice(bytes);
            rest = &[];
            let mut start = 0;
            while let Some((len, ends)) = first_event(self.api, &self.held[start..]) {
                terminal |= ends;
                start += len;
                events += 1;
            }
            let _ = self.held.split_to(start);
        }
        let mut start = 0;
        while let Some((len, ends)) = first_event(self.api, &rest[start..]) {
            terminal |= ends;
            start += len;
            events += 1;
        }
        self.held.extend_from_slice(&rest[start..]);
        self.events += events;
        (events, terminal)
    }

    /// The steps once the upstream's body has ended: what was held, then a fault still pending
    /// (an offset past the end fires after the last byte, as in a scripted stream).
    fn ended(&mut self) -> VecDeque<Step> {
        let mut steps = VecDeque::new();
        let held = std::mem::take(&mut self.held).freeze();
        if !self.streamed && self.waits_for_events() {
            // A whole body: an offset of 0 events or deltas fires before it, any other after.
            if matches!(self.fault.as_ref().map(Fault::point), Some(FaultPoint::Events(0) | FaultPoint::Deltas(0))) {
                self.fire(&mut steps);
                if self.done {
                    return steps;
                }
            }
            self.send(&mut steps, held, 0, false);
        } else if self.streamed && self.waits_for_events() {
            // An incomplete last event goes out as it came.
            self.send(&mut steps, held, 0, false);
        }
        self.fire(&mut steps);
        self.done = true;
        steps
    }
}

impl MoreSteps for UpstreamSteps {
    fn poll_more(&mut self, cx: &mut Context<'_>) -> Poll<Option<VecDeque<Step>>> {
        loop {
            if self.done {
                return Poll::Ready(None);
            }
            let data = match self.body.poll_data(cx) {
                Poll::Pending => {
                    let timeout = self.read_timeout;
                    let silence = self.silence.get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                    if !self.silence_armed {
                        silence.as_mut().reset(tokio::time::Instant::now() + timeout);
                        self.silence_armed = true;
                    }
                    if silence.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    let why = format!("it sent nothing for {} s mid-body (its read timeout)", timeout.as_secs_f64());
                    return Poll::Ready(Some(self.failed(why)));
                }
                Poll::Ready(data) => data,
            };
            self.silence_armed = false;
            let steps = match data {
                Some(Ok(data)) => {
                    if let Some(recording) = self.recording.as_mut() {
                        let room = MAX_RECORDED_BYTES.saturating_sub(recording.reply.body.len());
                        recording.reply.body.extend_from_slice(&data[..data.len().min(room)]);
                    }
                    self.take(data)
                }
                Some(Err(why)) => self.failed(format!("its body broke after {} bytes: {why}", self.bytes)),
                None => self.ended(),
            };
            if !steps.is_empty() {
                return Poll::Ready(Some(steps));
            }
        }
    }
}
