//! The HTTP body that plays a reply: the [`Playback`]'s cues as body frames, a kill fired at
//! hyper's next flush, and the journal entry completed however the body ends — when the plan
//! ends, when a kill fault fired (hyper drops the body right after), or when the client hung up
//! (hyper drops the body early).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};

use super::conn_io::{Kill, KillSwitch};
use super::entry_handle::EntryHandle;
use super::playback::{Cue, MoreSteps, Playback};
use crate::journal::EndKind;
use crate::wire::plan::ReplyPlan;

/// Plays a reply plan as an HTTP body.
#[derive(Debug)]
pub(super) struct ScriptedBody {
    playback: Playback,
    exact_len: Option<u64>,
    armed: Option<Kill>,
    switch: Arc<KillSwitch>,
}

impl ScriptedBody {
    pub(super) fn new(plan: ReplyPlan, switch: Arc<KillSwitch>, entry: EntryHandle) -> Self {
        ScriptedBody { playback: Playback::new(plan.steps, entry), exact_len: plan.exact_len, armed: None, switch }
    }

    /// A body whose steps come from `more` as they become known.
    pub(super) fn streaming(more: Box<dyn MoreSteps>, switch: Arc<KillSwitch>, entry: EntryHandle) -> Self {
        ScriptedBody { playback: Playback::streaming(more, entry), exact_len: None, armed: None, switch }
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
                        this.playback.entry().finish_now(end);
                    }
                    return Poll::Ready(Some(Ok(Frame::data(bytes))));
                }
                Some(Cue::Stalling | Cue::StallOver) => {}
                Some(Cue::Kill(kill)) => {
                    this.armed = Some(kill);
                    this.switch.arm(kill);
                }
                Some(Cue::End(end)) => {
                    this.playback.entry().finish_now(end);
                    return Poll::Ready(None);
                }
                None => {
                    // The ending was recorded with the last data frame (or by an `End` cue).
                    this.playback.entry().finish_now(EndKind::Completed);
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
            entry.finish(end, fired_at);
        } else if self.playback.in_stall() {
            self.playback.entry().finish_now(EndKind::Stalled);
        }
        // Otherwise the entry handle completes the entry (as `client_closed` if unfinished).
    }
}
