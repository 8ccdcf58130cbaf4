//! Turning a reply body and its scripted fault into timed steps.
//!
//! A plan is a flat list: write these bytes, wait, stall, kill the connection, end. The fault
//! is spliced in at its exact event or byte offset (a byte offset may cut an event in half),
//! and every delay is already multiplied by the run's time scale.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;

use super::{event_stream, Framing, SseEvent};
use crate::clock::TimeScale;
use crate::journal::EndKind;
use crate::scenario_model::{Fault, FaultKind, FaultPoint, H2Code};

/// What a `garbage` fault writes in a stream of server-sent events or JSON lines: not SSE, and a
/// data line that is not JSON either.
const GARBAGE: &[u8] =
    b"\x1b[squall-garbage]\r\n<<<not server-sent events>>>\ndata: {\"type\": squall garbage, not json\n\n";

/// What a `garbage` fault sends over a WebSocket: a text frame that is not JSON (the payload of
/// [`GARBAGE`]'s `data:` line).
#[cfg_attr(not(feature = "websocket"), allow(dead_code))]
pub(crate) const GARBAGE_FRAME: &str = "{\"type\": squall garbage, not json";

/// How a reply kills its connection (HTTP/1.1) or its stream (HTTP/2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kill {
    /// FIN mid-body; over HTTP/2, END_STREAM before the body is complete.
    Eof,
    /// RST mid-body; over HTTP/2, RST_STREAM with this code.
    Reset(H2Code),
    /// The whole connection cut: over HTTP/2 a GOAWAY with this code (and the last stream the
    /// client opened) and then a FIN; over HTTP/1.1 a FIN mid-body.
    GoAway(H2Code),
    /// The whole connection closed with no GOAWAY: a FIN under every stream in flight (over
    /// HTTP/1.1, as `Eof`).
    Close,
}

impl Kill {
    /// Whether it ends the connection, not one stream of it, over HTTP/2.
    pub fn ends_the_connection(self) -> bool {
        matches!(self, Kill::GoAway(_) | Kill::Close)
    }
}

/// One thing the reply does.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Write body bytes that complete `events` events; `terminal`: they end the terminal event.
    Data {
        /// The bytes to write.
        bytes: Bytes,
        /// Complete events they finish (for the journal's count).
        events: u32,
        /// Whether they finish the terminal success event.
        terminal: bool,
    },
    /// Wait between events.
    Wait(Duration),
    /// A scripted stall; `None` lasts until the client gives up.
    Stall(Option<Duration>),
    /// Kill the connection (FIN or RST) after everything before has been written.
    Kill(Kill),
    /// Close the connection gracefully once its replies in progress end (HTTP/2: a GOAWAY
    /// naming the last stream the client opened); the reply goes on.
    CloseConnection,
    /// End the body cleanly.
    End(EndKind),
    /// Note in the journal that a fault fired (for faults that do not kill the connection).
    FaultFired(FaultKind),
    /// A proxied reply's upstream failed mid-body, for this reason: the kill that follows is
    /// the upstream's failure passed on, not a fault.
    UpstreamFailed(String),
}

/// A reply's steps and what the response headers must say about them.
#[derive(Debug, Clone)]
pub struct ReplyPlan {
    /// What to do, in order.
    pub steps: VecDeque<Step>,
    /// The connection must close after this reply (`garbage`).
    pub close_connection: bool,
    /// The body length when it is known in advance (no fault): sent as Content-Length.
    pub exact_len: Option<u64>,
    /// How long after the request arrived the status and headers go out (scaled `delay_ms`).
    pub header_delay: Duration,
}

/// A piece of a reply's body: one SSE event, or a whole JSON body. The pieces of a reply lie
/// one after the other in one buffer, so a run of them is one slice of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    /// Its length in bytes.
    pub len: usize,
    /// It is one SSE event (counted in the journal's `events_sent`).
    pub is_event: bool,
    /// It is the terminal success event.
    pub terminal: bool,
    /// It carries output: an output delta event, or a whole body.
    pub output: bool,
    /// Where its payload starts: after an event's `event:` line and `data: ` (0 for a whole
    /// body). A WebSocket frame is an event's payload alone ([`Span::payload`]).
    pub data_from: usize,
    /// The bytes after an event's payload: its blank line (2), a JSON line's newline (1).
    pub data_trailer: usize,
}

impl Span {
    /// Where its payload lies within it: an event's `data:` text without the blank line that
    /// ends it, or the whole body.
    #[cfg_attr(not(feature = "websocket"), allow(dead_code))]
    pub(crate) fn payload(&self) -> std::ops::Range<usize> {
        if self.is_event {
            self.data_from..self.len.saturating_sub(self.data_trailer).max(self.data_from)
        } else {
            0..self.len
        }
    }
}

/// A reply's whole body and its pieces, in order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Body {
    /// Every piece, one after the other.
    pub bytes: Bytes,
    /// The pieces; their lengths add up to `bytes.len()`.
    pub spans: Vec<Span>,
    /// How its events are framed: what a `garbage` fault breaks them with.
    pub framing: Framing,
}

impl Body {
    /// The events of a stream, written into one buffer.
    pub(crate) fn of_events(events: &[SseEvent]) -> Body {
        let mut buffer = Vec::with_capacity(events.iter().map(|e| e.data.len() + 40).sum());
        let mut spans = Vec::with_capacity(events.len());
        for event in events {
            let before = buffer.len();
            let (data_from, data_trailer) = event.write_to(&mut buffer);
            spans.push(Span {
                len: buffer.len() - before,
                is_event: true,
                terminal: event.terminal,
                output: event.output,
                data_from,
                data_trailer,
            });
        }
        let framing = events.first().map_or(Framing::Sse, |event| event.framing);
        Body { bytes: Bytes::from(buffer), spans, framing }
    }

    /// One whole body (a JSON object or error).
    pub(crate) fn whole(bytes: Bytes) -> Body {
        let spans = vec![Span {
            len: bytes.len(),
            is_event: false,
            terminal: false,
            output: true,
            data_from: 0,
            data_trailer: 0,
        }];
        Body { bytes, spans, framing: Framing::Sse }
    }
}

impl ReplyPlan {
    /// The plan with the attempt's `delay_ms` before the headers, at `time_scale`.
    pub fn with_header_delay(self, script: &crate::scenario_model::Attempt, time_scale: TimeScale) -> ReplyPlan {
        ReplyPlan { header_delay: scaled_ms(script.delay_ms.unwrap_or(0), time_scale), ..self }
    }
}

/// Plan a streamed reply: events, with `event_delay` between them (tests plan event lists; the
/// server writes its events into one body first and calls [`plan_stream`]).
#[cfg(test)]
fn plan_events(events: &[SseEvent], fault: Option<&Fault>, event_delay: Duration, time_scale: TimeScale) -> ReplyPlan {
    plan_stream(&Body::of_events(events), fault, event_delay, time_scale)
}

/// Plan a streamed reply whose events are already written into one body.
pub(crate) fn plan_stream(
    body: &Body,
    fault: Option<&Fault>,
    event_delay: Duration,
    time_scale: TimeScale,
) -> ReplyPlan {
    let mut plan = build(body, EndKind::Completed, fault, event_delay, time_scale);
    // Event streams are sent chunked, as OpenAI does, even when their length is known.
    plan.exact_len = None;
    plan
}

/// Plan a whole-body reply (a JSON object or error). An offset of 0 events or 0 deltas fires
/// before the body, a larger one after it.
pub(crate) fn plan_body(body: Bytes, end: EndKind, fault: Option<&Fault>, time_scale: TimeScale) -> ReplyPlan {
    build(&Body::whole(body), end, fault, Duration::ZERO, time_scale)
}

/// Scale a scripted number of milliseconds by the run's time scale. Both are range-checked
/// when a run is created; whatever they are, this never panics (a NaN or negative product is
/// no wait, an enormous one the longest `Duration`).
/// What a `garbage` fault writes in a body of this framing: bytes its parser rejects.
fn garbage(framing: Framing) -> Bytes {
    match framing {
        Framing::Sse | Framing::JsonLine => Bytes::from_static(GARBAGE),
        Framing::AwsEventStream(_) => Bytes::from(event_stream::garbage()),
    }
}

/// A scripted wait of `ms` policy milliseconds, in real time.
pub(crate) fn scaled_ms(ms: u64, time_scale: TimeScale) -> Duration {
    time_scale.real(Duration::from_millis(ms))
}

/// The data written since the last step that was not data: one slice of the body. Pieces
/// that nothing separates — no wait, stall or fault — go out in one write; the client cannot
/// tell the difference, and one write instead of one per event is what makes squall as cheap
/// as a server of fixed bodies. A fault or a wait always ends the run, so every fault still
/// fires at its exact offset.
#[derive(Debug, Default)]
struct Run {
    start: usize,
    end: usize,
    events: u32,
    terminal: bool,
}

impl Run {
    fn add(&mut self, len: usize, events: u32, terminal: bool) {
        self.end += len;
        self.events += events;
        self.terminal |= terminal;
    }

    /// Write the run as one data step; the next run starts where it ended.
    fn flush(&mut self, body: &Bytes, steps: &mut VecDeque<Step>) {
        if self.end > self.start {
            steps.push_back(Step::Data {
                bytes: body.slice(self.start..self.end),
                events: self.events,
                terminal: self.terminal,
            });
        }
        *self = Run { start: self.end, end: self.end, events: 0, terminal: false };
    }
}

fn build(body: &Body, end: EndKind, fault: Option<&Fault>, event_delay: Duration, time_scale: TimeScale) -> ReplyPlan {
    let mut plan = ReplyPlan {
        steps: VecDeque::new(),
        close_connection: fault.is_some_and(|f| f.kind == FaultKind::Garbage),
        exact_len: fault.is_none().then_some(body.bytes.len() as u64),
        header_delay: Duration::ZERO,
    };
    let mut run = Run::default();
    let mut pending = fault;
    let mut events_before = 0u32;
    let mut outputs_before = 0u32;
    for (i, span) in body.spans.iter().enumerate() {
        if i > 0 && !event_delay.is_zero() {
            run.flush(&body.bytes, &mut plan.steps);
            plan.steps.push_back(Step::Wait(event_delay));
        }
        let due = |f: &&Fault| match f.point() {
            FaultPoint::Events(n) => n <= events_before,
            // After the n-th output piece; for 0, right before the first one.
            FaultPoint::Deltas(n) => n <= outputs_before && (n > 0 || span.output),
            FaultPoint::Bytes(_) => false,
        };
        if let Some(f) = pending.filter(due) {
            pending = None;
            run.flush(&body.bytes, &mut plan.steps);
            if splice_fault(&mut plan.steps, f, body.framing, time_scale) {
                return plan;
            }
        }
        let bytes_before = run.end as u64;
        let len = span.len as u64;
        // n ≥ bytes_before here: had the offset fallen in an earlier piece, that piece was cut.
        let cut = pending.and_then(|f| match f.point() {
            FaultPoint::Bytes(n) if n < bytes_before + len => Some((f, (n - bytes_before) as usize)),
            _ => None,
        });
        if let Some((f, head)) = cut {
            pending = None;
            run.add(head, 0, false);
            run.flush(&body.bytes, &mut plan.steps);
            if splice_fault(&mut plan.steps, f, body.framing, time_scale) {
                return plan;
            }
            run.add(span.len - head, u32::from(span.is_event), span.terminal);
        } else {
            run.add(span.len, u32::from(span.is_event), span.terminal);
        }
        events_before += u32::from(span.is_event);
        outputs_before += u32::from(span.output);
    }
    run.flush(&body.bytes, &mut plan.steps);
    // An offset at (or, for chat replies, past) the end fires after the last byte.
    if let Some(f) = pending {
        if splice_fault(&mut plan.steps, f, body.framing, time_scale) {
            return plan;
        }
    }
    plan.steps.push_back(Step::End(end));
    plan
}

/// Add a fault's steps; returns whether the fault ends the reply.
pub(crate) fn splice_fault(steps: &mut VecDeque<Step>, fault: &Fault, framing: Framing, time_scale: TimeScale) -> bool {
    match fault.kind {
        FaultKind::Eof => steps.push_back(Step::Kill(Kill::Eof)),
        FaultKind::Reset => steps.push_back(Step::Kill(Kill::Reset(fault.h2_code.unwrap_or_default()))),
        // HTTP replies are refused before they have a plan; a WebSocket's reply has no stream
        // of its own to refuse, so its connection is reset before the reply's first event.
        FaultKind::Refuse => steps.push_back(Step::Kill(Kill::Reset(fault.h2_code.unwrap_or(H2Code::RefusedStream)))),
        FaultKind::Truncate => {
            steps.push_back(Step::FaultFired(FaultKind::Truncate));
            steps.push_back(Step::End(EndKind::Truncated));
        }
        FaultKind::Garbage => {
            steps.push_back(Step::FaultFired(FaultKind::Garbage));
            steps.push_back(Step::Data { bytes: garbage(framing), events: 0, terminal: false });
            steps.push_back(Step::End(EndKind::Garbage));
        }
        FaultKind::Stall => {
            let duration = fault.ms.map(|ms| scaled_ms(ms, time_scale));
            steps.push_back(Step::Stall(duration));
            return duration.is_none();
        }
        FaultKind::Goaway => match fault.h2_code.unwrap_or(H2Code::NoError) {
            H2Code::NoError => {
                steps.push_back(Step::FaultFired(FaultKind::Goaway));
                steps.push_back(Step::CloseConnection);
                return false;
            }
            code => steps.push_back(Step::Kill(Kill::GoAway(code))),
        },
        FaultKind::Close => steps.push_back(Step::Kill(Kill::Close)),
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn events(n: usize) -> Vec<SseEvent> {
        (0..n).map(|i| SseEvent::named("e", &json!({"i": i}))).collect()
    }

    fn fault(kind: FaultKind, after_events: Option<u32>, after_bytes: Option<u64>) -> Fault {
        Fault { kind, after_events, after_deltas: None, after_bytes, ms: None, close_code: None, h2_code: None }
    }

    /// Two framing events, `outputs` output deltas, one closing event.
    fn stream_with_outputs(outputs: usize) -> Vec<SseEvent> {
        let framing = |i: usize| SseEvent::named("frame", &json!({"i": i}));
        let deltas = (0..outputs).map(|i| SseEvent::named("delta", &json!({"piece": i})).output());
        [framing(0), framing(1)].into_iter().chain(deltas).chain([framing(2)]).collect()
    }

    fn written_text(plan: &ReplyPlan) -> String {
        let bytes: Vec<u8> = plan
            .steps
            .iter()
            .flat_map(|s| if let Step::Data { bytes, .. } = s { bytes.to_vec() } else { Vec::new() })
            .collect();
        // Bedrock's messages are binary around their JSON, and InvokeModel's carry base64: read
        // each whole message's event (a partial one, cut by a fault, is left out).
        let mut rest = &bytes[..];
        let mut decoded = String::new();
        while let Some(len) = crate::wire::event_stream::first_message_len(rest) {
            let Ok(message) = crate::wire::event_stream::read_message(&rest[..len]) else { break };
            match crate::wire::bedrock_invoke::chunk_event(&message.payload) {
                Some(event) => decoded.push_str(&event.to_string()),
                None => decoded.push_str(&String::from_utf8_lossy(&message.payload)),
            }
            rest = &rest[len..];
        }
        if decoded.is_empty() {
            String::from_utf8_lossy(&bytes).into_owned()
        } else {
            decoded
        }
    }

    fn data_len(plan: &ReplyPlan) -> usize {
        plan.steps.iter().map(|s| if let Step::Data { bytes, .. } = s { bytes.len() } else { 0 }).sum()
    }

    fn events_written(plan: &ReplyPlan) -> u32 {
        plan.steps.iter().map(|s| if let Step::Data { events, .. } = s { *events } else { 0 }).sum()
    }

    #[test]
    fn reset_after_three_events_writes_exactly_three() {
        let plan =
            plan_events(&events(6), Some(&fault(FaultKind::Reset, Some(3), None)), Duration::ZERO, TimeScale::REAL);
        assert_eq!(events_written(&plan), 3);
        assert_eq!(data_len(&plan), events(3).iter().map(|e| e.to_bytes().len()).sum::<usize>());
        assert_eq!(plan.steps.back(), Some(&Step::Kill(Kill::Reset(H2Code::InternalError))));
    }

    #[test]
    fn zero_deltas_fires_after_the_framing_right_before_the_first_output() {
        let reset = Fault::at(FaultKind::Reset, FaultPoint::Deltas(0));
        let plan = plan_events(&stream_with_outputs(3), Some(&reset), Duration::ZERO, TimeScale::REAL);
        assert_eq!(events_written(&plan), 2);
        assert!(!written_text(&plan).contains("piece"), "{}", written_text(&plan));
        assert_eq!(plan.steps.back(), Some(&Step::Kill(Kill::Reset(H2Code::InternalError))));
    }

    #[test]
    fn n_deltas_fires_right_after_the_nth_output() {
        let eof = Fault::at(FaultKind::Eof, FaultPoint::Deltas(2));
        let plan = plan_events(&stream_with_outputs(3), Some(&eof), Duration::ZERO, TimeScale::REAL);
        assert_eq!(events_written(&plan), 4, "2 framing + 2 outputs");
        let text = written_text(&plan);
        assert!(text.contains(r#""piece":1"#) && !text.contains(r#""piece":2"#), "{text}");
    }

    #[test]
    fn zero_deltas_on_a_whole_body_fires_before_the_body() {
        let eof = Fault::at(FaultKind::Eof, FaultPoint::Deltas(0));
        let plan = plan_body(Bytes::from_static(b"{}"), EndKind::Completed, Some(&eof), TimeScale::REAL);
        assert_eq!(data_len(&plan), 0);
        assert_eq!(plan.steps.back(), Some(&Step::Kill(Kill::Eof)));
    }

    #[test]
    fn a_delta_offset_means_the_same_output_in_every_api() {
        use crate::api::Api;
        use crate::scenario_model::StreamSpec;
        use crate::wire::ReplyContext;
        let spec = StreamSpec { text: Some("alpha beta gamma omega".into()), ..StreamSpec::default() };
        let ctx = ReplyContext::placeholder();
        for api in Api::ALL {
            let events = api.stream_events(&spec, &ctx);
            let before = plan_events(
                &events,
                Some(&Fault::at(FaultKind::Eof, FaultPoint::Deltas(0))),
                Duration::ZERO,
                TimeScale::REAL,
            );
            assert!(!written_text(&before).contains("alpha"), "{}: {}", api.title(), written_text(&before));
            let two = plan_events(
                &events,
                Some(&Fault::at(FaultKind::Eof, FaultPoint::Deltas(2))),
                Duration::ZERO,
                TimeScale::REAL,
            );
            let text = written_text(&two);
            assert!(text.contains("beta") && !text.contains("gamma"), "{}: {text}", api.title());
        }
    }

    #[test]
    fn events_without_anything_between_them_become_one_write() {
        let plan = plan_events(&events(6), None, Duration::ZERO, TimeScale::REAL);
        assert_eq!(plan.steps.len(), 2, "one write and the end: {:?}", plan.steps);
        assert_eq!(events_written(&plan), 6);
    }

    #[test]
    fn byte_offset_cuts_an_event_in_half() {
        let all = events(2);
        let first = all[0].to_bytes().len() as u64;
        let plan =
            plan_events(&all, Some(&fault(FaultKind::Eof, None, Some(first + 5))), Duration::ZERO, TimeScale::REAL);
        assert_eq!(data_len(&plan) as u64, first + 5);
        assert_eq!(plan.steps.back(), Some(&Step::Kill(Kill::Eof)));
    }

    #[test]
    fn timed_stall_continues_with_the_rest() {
        let mut stall = fault(FaultKind::Stall, Some(1), None);
        stall.ms = Some(1000);
        let plan = plan_events(&events(3), Some(&stall), Duration::ZERO, TimeScale::of(0.01));
        assert!(plan.steps.contains(&Step::Stall(Some(Duration::from_millis(10)))));
        assert_eq!(plan.steps.back(), Some(&Step::End(EndKind::Completed)));
        assert_eq!(data_len(&plan), events(3).iter().map(|e| e.to_bytes().len()).sum::<usize>());
    }

    #[test]
    fn no_fault_gives_an_exact_length() {
        let plan = plan_body(Bytes::from_static(b"{}"), EndKind::ErrorStatus, None, TimeScale::REAL);
        assert_eq!(plan.exact_len, Some(2));
        assert_eq!(plan.steps.back(), Some(&Step::End(EndKind::ErrorStatus)));
    }

    #[test]
    fn event_delays_sit_between_events() {
        let plan = plan_events(&events(3), None, Duration::from_millis(5), TimeScale::REAL);
        let waits = plan.steps.iter().filter(|s| matches!(s, Step::Wait(_))).count();
        assert_eq!(waits, 2);
    }
}
