//! Amazon Bedrock's InvokeModel API for the Claude models (`POST /model/{modelId}/invoke` and
//! `/invoke-with-response-stream`), which the Anthropic SDKs' Bedrock clients call: the bodies
//! are Anthropic's Messages API's own, and a stream is AWS event-stream `chunk` messages each
//! carrying one Messages event as base64 (`{"bytes": "…"}`). Errors are Bedrock's
//! (`super::bedrock`): an exception message in the stream, `x-amzn-errortype` on a status.

use base64::Engine as _;
use serde_json::{json, Value};

use super::event_stream::MessageType;
use super::{bedrock, messages, ReplyContext, SseEvent};
use crate::scenario_model::StreamSpec;

/// The streamed messages of a scripted reply: the Messages API's events, each in a `chunk`.
pub(crate) fn stream_events(spec: &StreamSpec, ctx: &ReplyContext) -> Vec<SseEvent> {
    let mut inner = messages::stream_events(spec, ctx);
    if spec.fail.is_some() {
        // The Messages API's `error` event: Bedrock sends an exception message instead.
        inner.pop();
    }
    let mut events: Vec<SseEvent> = inner.iter().map(chunk).collect();
    if let Some(failure) = &spec.fail {
        let (name, message) = bedrock::stream_exception(failure);
        events.push(SseEvent::aws_message(MessageType::Exception, name, &json!({"message": message})));
    }
    events
}

/// One Messages event as InvokeModel streams it, its output and terminal marks kept.
fn chunk(event: &SseEvent) -> SseEvent {
    let bytes = base64::engine::general_purpose::STANDARD.encode(event.data.as_bytes());
    SseEvent {
        output: event.output,
        terminal: event.terminal,
        ..SseEvent::aws_message(MessageType::Event, "chunk", &json!({"bytes": bytes}))
    }
}

/// The whole reply (`invoke`): the Messages API's message object.
pub(crate) fn response_object(spec: &StreamSpec, ctx: &ReplyContext) -> Value {
    messages::message(spec, ctx)
}

/// A `chunk` payload's Messages event, decoded.
pub(crate) fn chunk_event(payload: &[u8]) -> Option<Value> {
    let payload: Value = serde_json::from_slice(payload).ok()?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(payload["bytes"].as_str()?).ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario_model::StreamFailure;
    use crate::wire::event_stream::{first_message_len, read_message};

    #[test]
    fn each_messages_event_rides_in_a_chunk_and_a_failure_is_an_exception() {
        let spec = StreamSpec { text: Some("a b".into()), ..StreamSpec::default() };
        let events = stream_events(&spec, &ReplyContext::placeholder());
        assert!(events.iter().all(|e| e.event.as_deref() == Some("chunk")));
        assert_eq!(events.iter().filter(|e| e.output).count(), 2);
        assert!(events.last().is_some_and(|e| e.terminal));
        let bytes = events[0].to_bytes();
        let message = read_message(&bytes[..first_message_len(&bytes).expect("whole")]).expect("sound");
        assert_eq!(chunk_event(&message.payload).map(|e| e["type"].clone()), Some(json!("message_start")));
        let failing = StreamSpec {
            fail: Some(StreamFailure { code: "overloaded_error".into(), ..StreamFailure::default() }),
            ..spec
        };
        let events = stream_events(&failing, &ReplyContext::placeholder());
        let last = events.last().expect("an exception");
        assert_eq!(last.event.as_deref(), Some("serviceUnavailableException"));
        assert!(!events.iter().any(|e| e.terminal));
    }
}
