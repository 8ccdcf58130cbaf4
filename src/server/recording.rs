//! A proxied run's upstream replies, kept so the run can be turned into a scenario that replays
//! them (`GET /__squall/runs/{id}/recording`, `squall record`): one attempt per forwarded model
//! request, in the order they arrived, read by `wire::recorded_reply`. Credentials are never
//! part of it: a reply's headers are kept only where they say when to retry.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::scenario_model::{AfterScript, Scenario};
use crate::wire::recorded_reply::UpstreamReply;

/// The most of one reply's body kept (a reply longer than this replays cut short).
pub(crate) const MAX_RECORDED_BYTES: usize = 4 * 1024 * 1024;

/// The most replies a run keeps, and the most bytes of them: a proxy run that goes on for
/// longer (a staging soak) records its first replies and forwards the rest unrecorded.
const MAX_RECORDED_REPLIES: usize = 1_000;
const MAX_RECORDED_TOTAL: usize = 64 * 1024 * 1024;

/// Upstream replies by journal index.
#[derive(Debug, Default)]
pub(crate) struct RecordedReplies {
    replies: Mutex<BTreeMap<usize, UpstreamReply>>,
    /// Bytes of the replies kept (and of those being recorded, as they were started).
    total: std::sync::atomic::AtomicUsize,
    /// Replies kept or being recorded.
    count: std::sync::atomic::AtomicUsize,
}

impl RecordedReplies {
    /// Whether one more reply may be recorded; counts it when it may.
    pub(crate) fn admit(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let room = self.total.load(Relaxed) < MAX_RECORDED_TOTAL;
        room && self.count.fetch_update(Relaxed, Relaxed, |n| (n < MAX_RECORDED_REPLIES).then_some(n + 1)).is_ok()
    }

    pub(crate) fn keep(&self, index: usize, reply: UpstreamReply) {
        self.total.fetch_add(reply.body.len(), std::sync::atomic::Ordering::Relaxed);
        self.replies.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(index, reply);
    }

    /// The scenario that replays every reply kept, in arrival order; `None` when none was.
    pub(crate) fn scenario(&self, name: &str, description: String) -> Option<Scenario> {
        let replies = self.replies.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if replies.is_empty() {
            return None;
        }
        let attempts = replies.values().map(UpstreamReply::attempt).collect();
        Some(Scenario {
            name: name.to_owned(),
            description,
            requirements: Vec::new(),
            after: AfterScript::RepeatLast,
            attempts,
            tracks: Vec::new(),
            outage: Vec::new(),
            chaos: None,
            quota: None,
        })
    }
}
