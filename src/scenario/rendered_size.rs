//! What a scenario's replies render to: the bytes the server may hold rendered for one run.

use std::collections::VecDeque;
use std::sync::Mutex;

use super::error::{FieldPath, ScenarioError};
use super::limits::{MAX_DELTAS, MAX_REPLY_BYTES, MAX_SCENARIO_REPLY_BYTES};
use crate::api::Api;
use crate::scenario_model::{Attempt, StreamSpec};
use crate::wire::ReplyContext;

/// The bytes a scenario's replies render to, kept within [`MAX_REPLY_BYTES`] per attempt and
/// [`MAX_SCENARIO_REPLY_BYTES`] in all: what the server may hold rendered for one run.
#[derive(Default)]
pub(super) struct RenderedSize {
    total: usize,
}

impl RenderedSize {
    pub(super) fn add(&mut self, attempt: &Attempt, path: &FieldPath) -> Result<(), ScenarioError> {
        if attempt.is_status_reply() {
            return Ok(());
        }
        let content = attempt.content();
        // Cheap bounds first, so that no scenario makes the check itself render gigabytes.
        let deltas = output_deltas(&content);
        if deltas > MAX_DELTAS {
            let message = format!("the reply would stream {deltas} output deltas (one per word unless `chunks` is set), more than the {MAX_DELTAS} allowed: set `chunks`");
            return Err(ScenarioError::new(path.key("stream"), message));
        }
        let largest = largest_rendering(content);
        if largest > MAX_REPLY_BYTES {
            let message = format!(
                "the reply renders to {largest} bytes, more than the {MAX_REPLY_BYTES} allowed for one attempt"
            );
            return Err(ScenarioError::new(path.key("stream"), message));
        }
        self.total += largest;
        if self.total > MAX_SCENARIO_REPLY_BYTES {
            let message = format!(
                "the scenario's replies render to more than the {MAX_SCENARIO_REPLY_BYTES} bytes allowed in all (this attempt reaches {})",
                self.total
            );
            return Err(ScenarioError::new(path.key("stream"), message));
        }
        Ok(())
    }
}

/// How many output deltas a reply streams: its text and reasoning cut into `chunks` pieces or
/// one per word, and a tool call's arguments in three.
pub fn output_deltas(content: &StreamSpec) -> usize {
    let pieces = |text: &Option<String>| {
        text.as_deref().map_or(0, |t| match content.chunks {
            Some(n) => (n as usize).min(t.chars().count()),
            None => t.split_whitespace().count(),
        })
    };
    pieces(&content.text) + pieces(&content.reasoning) + content.function_call.as_ref().map_or(0, |_| 3)
}

/// Contents whose sizes are kept, the latest first: a suite creates the same replies case after
/// case, and rendering one in every API took a tenth of a suite's CPU in the server.
const KEPT_SIZES: usize = 64;

/// Only contents this small are kept, so the kept ones stay within a few MiB.
const KEPT_CONTENT_BYTES: usize = 64 << 10;

/// The most bytes `content` renders to in any API (with placeholder ids, as validation renders
/// it): rendered once, then looked up while it is among the last [`KEPT_SIZES`] contents.
fn largest_rendering(content: StreamSpec) -> usize {
    static KEPT: Mutex<VecDeque<(StreamSpec, usize)>> = Mutex::new(VecDeque::new());
    // The delay between events renders nothing.
    let content = StreamSpec { event_delay_ms: None, ..content };
    let kept = |kept: &VecDeque<(StreamSpec, usize)>| kept.iter().find(|(c, _)| *c == content).map(|(_, size)| *size);
    if let Some(size) = kept(&KEPT.lock().unwrap_or_else(std::sync::PoisonError::into_inner)) {
        return size;
    }
    let largest = rendered_largest(&content);
    let bytes = |text: &Option<String>| text.as_ref().map_or(0, String::len);
    let arguments = content.function_call.as_ref().map_or(0, |call| call.name.len() + call.arguments.len());
    if bytes(&content.text) + bytes(&content.reasoning) + arguments <= KEPT_CONTENT_BYTES {
        let mut kept = KEPT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.truncate(KEPT_SIZES - 1);
        kept.push_front((content, largest));
    }
    largest
}

/// The most bytes `content` renders to in any API, rendered now.
fn rendered_largest(content: &StreamSpec) -> usize {
    let ctx = ReplyContext::placeholder();
    Api::ALL
        .iter()
        .map(|api| api.stream_events(content, &ctx).iter().map(|e| e.to_bytes().len()).sum::<usize>())
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario_model::FunctionCallSpec;

    /// Contents that differ in any field that renders get their own size, however often each
    /// comes back; the delay between events renders nothing and shares one.
    #[test]
    fn a_kept_size_is_the_size_of_that_content_only() {
        let text = StreamSpec { text: Some("one two three four five six".into()), ..StreamSpec::default() };
        let contents = [
            text.clone(),
            StreamSpec { chunks: Some(2), ..text.clone() },
            StreamSpec { reasoning: Some("because".into()), ..text.clone() },
            StreamSpec {
                function_call: Some(FunctionCallSpec { name: "Task".into(), arguments: "{}".into(), call_id: None }),
                ..text.clone()
            },
        ];
        for _ in 0..2 {
            for content in &contents {
                assert_eq!(largest_rendering(content.clone()), rendered_largest(content), "{content:?}");
            }
        }
        let sizes: std::collections::BTreeSet<usize> = contents.iter().map(rendered_largest).collect();
        assert_eq!(sizes.len(), contents.len(), "each content renders to a size of its own");
        let delayed = StreamSpec { event_delay_ms: Some(5), ..text.clone() };
        assert_eq!(largest_rendering(delayed), rendered_largest(&text));
    }
}
