//! The HTTP body that plays a reply: the [`Playback`]'s cues as body frames, a kill fired at
//! hyper's next flush, and the journal entry completed however the body ends — when the plan
//! ends, when a kill fault fired (hyper drops the body right after), or when the client hung up
//! (hyper drops the body early).
//!
//! Over HTTP/2 a kill ends the reply's own stream, which the connection's other streams outlive:
//! `eof` ends the body early (hyper sends END_STREAM), `reset` fails it with an `h2::Error`
//! carrying the scenario's code, which hyper sends as RST_STREAM (it looks for an `h2::Error`
//! among a body error's sources).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};

use super::entry_handle::EntryHandle;
use super::playback::{Cue, MoreSteps, Playback};
use crate::journal::EndKind;
use crate::server::connection::conn_io::{Kill, KillSwitch};
use crate::server::connection::stream_reset::{reason_name, StreamReset};
use crate::wire::plan::ReplyPlan;

/// Plays a reply plan as an HTTP body.
#[derive(Debug)]
pub(in crate::server) struct ScriptedBody {
    playback: Playback,
    exact_len: Option<u64>,
    armed: Option<Kill>,
    /// Over HTTP/2: a `reset` or `goaway` waiting for the frames before it to leave, and the
    /// connection's flush count when it came.
    settling: Option<(Kill, u64)>,
    switch: Arc<KillSwitch>,
}

impl ScriptedBody {
    pub(in crate::server) fn new(plan: ReplyPlan, switch: Arc<KillSwitch>, entry: EntryHandle) -> Self {
        ScriptedBody {
            playback: Playback::new(plan.steps, entry),
            exact_len: plan.exact_len,
            armed: None,
            settling: None,
            switch,
        }
    }

    /// A body whose steps come from `more` as they become known.
    pub(in crate::server) fn streaming(more: Box<dyn MoreSteps>, switch: Arc<KillSwitch>, entry: EntryHandle) -> Self {
        ScriptedBody {
            playback: Playback::streaming(more, entry),
            exact_len: None,
            armed: None,
            settling: None,
            switch,
        }
    }
}

/// How an HTTP/2 stream ends when its body ends: the frame the journal names.
const END_STREAM: &str = "END_STREAM";

impl ScriptedBody {
    /// Complete the journal entry now, naming the frame that ends the stream over HTTP/2.
    fn finish(&mut self, end: EndKind, frame: &str) {
        let entry = self.playback.entry();
        if self.switch.carries_streams() && !entry.is_finished() {
            entry.update(|e| e.end_frame = Some(frame.to_owned()));
        }
        entry.finish_now(end);
    }

    /// Fire `kill` (an `eof` or a `reset`) on this HTTP/2 stream alone: the body's last poll.
    fn end_stream(&mut self, kill: Kill) -> Option<Result<Frame<Bytes>, io::Error>> {
        let (fault, end) = self.playback.kill_ending(kill);
        if fault.is_some() {
            self.playback.entry().update(|e| e.fault = fault);
        }
        match kill {
            Kill::Eof => {
                self.finish(end, END_STREAM);
                None
            }
            Kill::Reset(code) => {
                self.finish(end, &format!("RST_STREAM {}", reason_name(code)));
                Some(Err(io::Error::other(StreamReset::with(code))))
            }
            // A `goaway` with a code, and a `close`, are the connection's: the switch fires them
            // (`conn_io`).
            Kill::GoAway(_) | Kill::Close => None,
        }
    }
}

impl http_body::Body for ScriptedBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = &mut *self;
        loop {
            if this.armed.is_some() {
                // A kill fires at hyper's next flush, which drops the body.
                return Poll::Pending;
            }
            if let Some((kill, seen)) = this.settling {
                std::task::ready!(this.switch.poll_settled_since(cx, seen));
                this.settling = None;
                if kill.ends_the_connection() {
                    // The connection's: fired at its next flush, which the arming asks for.
                    this.armed = Some(kill);
                    this.switch.arm(kill);
                    continue;
                }
                return Poll::Ready(this.end_stream(kill));
            }
            match std::task::ready!(this.playback.poll_cue(cx)) {
                Some(Cue::Data { bytes, events, terminal, ending }) => {
                    let len = bytes.len() as u64;
                    this.playback.entry().update(|e| {
                        e.bytes_sent += len;
                        e.events_sent += events;
                        e.terminal_sent |= terminal;
                    });
                    // With a known length hyper ends the message after the last byte and
                    // drops the body without asking for more, so the ending is recorded here.
                    if let Some(end) = ending {
                        this.finish(end, END_STREAM);
                    }
                    return Poll::Ready(Some(Ok(Frame::data(bytes))));
                }
                Some(Cue::Stalling | Cue::StallOver) => {}
                Some(Cue::Kill(kill @ (Kill::Reset(_) | Kill::GoAway(_) | Kill::Close)))
                    if this.switch.carries_streams() =>
                {
                    this.settling = Some((kill, this.switch.flushes()));
                }
                Some(Cue::Kill(Kill::Eof)) if this.switch.carries_streams() => {
                    return Poll::Ready(this.end_stream(Kill::Eof));
                }
                Some(Cue::CloseConnection) => this.switch.close_gracefully(),
                Some(Cue::Kill(kill)) => {
                    this.armed = Some(kill);
                    this.switch.arm(kill);
                }
                Some(Cue::End(end)) => {
                    this.finish(end, END_STREAM);
                    return Poll::Ready(None);
                }
                None => {
                    // The ending was recorded with the last data frame (or by an `End` cue).
                    this.finish(EndKind::Completed, END_STREAM);
                    return Poll::Ready(None);
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.playback.is_done() && self.playback.entry_finished()
    }

    fn size_hint(&self) -> SizeHint {
        self.exact_len.map(SizeHint::with_exact).unwrap_or_default()
    }
}

impl Drop for ScriptedBody {
    fn drop(&mut self) {
        if let (Some(kill), Some(fired_at)) = (self.armed, self.switch.fired_at()) {
            let (fault, end) = self.playback.kill_ending(kill);
            let entry = self.playback.entry();
            if fault.is_some() {
                entry.update(|e| e.fault = fault);
            }
            match (kill, self.switch.carries_streams()) {
                (Kill::GoAway(code), true) => {
                    entry.update(|e| e.end_frame = Some(format!("GOAWAY {}", reason_name(code))));
                }
                // No frame ended it: the connection's FIN did.
                (Kill::Close, true) => entry.update(|e| e.end_frame = Some("FIN".to_owned())),
                _ => {}
            }
            entry.finish(end, fired_at);
        } else if self.playback.in_stall() {
            self.playback.entry().finish_now(EndKind::Stalled);
        }
        // Otherwise the entry handle completes the entry (as `client_closed` if unfinished).
    }
}
