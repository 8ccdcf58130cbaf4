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

/// The most replies a run keeps; later ones are not recorded.
const MAX_RECORDED_REPLIES: usize = 10_000;

/// Upstream replies by journal index.
#[derive(Debug, Default)]
pub(crate) struct RecordedReplies {
    replies: Mutex<BTreeMap<usize, UpstreamReply>>,
}

impl RecordedReplies {
    pub(crate) fn keep(&self, index: usize, reply: UpstreamReply) {
        let mut replies = self.replies.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if replies.len() < MAX_RECORDED_REPLIES {
            replies.insert(index, reply);
        }
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
