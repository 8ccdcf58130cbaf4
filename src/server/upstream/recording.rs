//! A proxied run's upstream replies, kept so the run can be turned into a scenario that replays
//! them (`GET /__squall/runs/{id}/recording`, `squall record`): one attempt per forwarded model
//! request, in the order they arrived, read by `wire::recorded_reply`. Credentials are never
//! part of it: a reply's headers are kept only where they say when to retry.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::scenario::limits::MAX_DELTAS;
use crate::scenario::validate::output_deltas;
use crate::scenario_model::{AfterScript, Attempt, Scenario};
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
        let attempts = replies.values().map(|reply| within_limits(reply.attempt())).collect();
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

/// `attempt` cut into no more pieces than a scenario may stream: a compact upstream can send
/// more deltas in what a recording keeps (text and reasoning are cut alike, a call adds three).
/// The pieces merge; every character replays.
fn within_limits(mut attempt: Attempt) -> Attempt {
    let most = (MAX_DELTAS - 3) / 2;
    if let Some(stream) = attempt.stream.as_mut() {
        if output_deltas(stream) > MAX_DELTAS {
            stream.chunks = Some(most as u32);
        }
    }
    attempt
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Api;
    use crate::scenario::validate::validate;

    /// A compact upstream (Chat chunks of one character, no ids) can send more deltas in the
    /// 4 MiB a recording keeps than a scenario may stream: the recording merges them so that
    /// it replays, its text whole.
    #[test]
    fn a_recording_of_more_deltas_than_a_scenario_may_stream_replays_merged() {
        let chunk = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n";
        let deltas = MAX_DELTAS + 10_000;
        let body = format!("{}data: [DONE]\n\n", chunk.repeat(deltas)).into_bytes();
        assert!(body.len() <= MAX_RECORDED_BYTES, "a recording keeps it whole");
        let reply =
            UpstreamReply { api: Api::Chat, status: 200, headers: Vec::new(), streamed: true, body, broken: false };
        let attempt = within_limits(reply.attempt());
        let content = attempt.content();
        assert_eq!(content.text.as_deref().map(str::len), Some(deltas), "the text whole");
        assert!(output_deltas(&content) <= MAX_DELTAS, "{} deltas", output_deltas(&content));
        let mut scenario = Scenario::named("recorded");
        scenario.attempts.push(attempt);
        validate(&scenario).expect("the recording replays");
    }
}
