//! The Anthropic Messages API (`POST /v1/messages`): the streamed event sequence and the
//! whole `message` object.
//!
//! Event order, as Anthropic streams it and its SDKs parse it: `message_start` (the message
//! with empty content), `ping`, then per content block `content_block_start`, its deltas
//! (`thinking_delta` then `signature_delta` for reasoning, `text_delta` for text,
//! `input_json_delta` for a `tool_use` block's input) and `content_block_stop`; finally
//! `message_delta` (stop reason `end_turn` or `tool_use`, output usage) and `message_stop`.
//! A scripted stream failure is an `event: error` with Anthropic's error body, and the stream
//! ends there, without `message_stop`.

use serde_json::{json, Value};

use super::anthropic_errors::{code_message, code_type_and_status, error_body};
use super::text::{arguments_object, deltas};
use super::{estimate_tokens, ReplyContext, SseEvent};
use crate::scenario_model::StreamSpec;

/// A content block of the reply, in stream order.
enum Block<'a> {
    Thinking(&'a str),
    Text(&'a str),
    ToolUse { id: String, name: &'a str, arguments: &'a str },
}

fn blocks<'a>(spec: &'a StreamSpec, ctx: &ReplyContext) -> Vec<Block<'a>> {
    let mut blocks = Vec::new();
    if let Some(reasoning) = &spec.reasoning {
        blocks.push(Block::Thinking(reasoning));
    }
    if let Some(text) = spec.effective_text() {
        blocks.push(Block::Text(text));
    }
    if let Some(call) = &spec.function_call {
        let id = call.call_id.clone().unwrap_or_else(|| ctx.id("toolu"));
        blocks.push(Block::ToolUse { id, name: &call.name, arguments: &call.arguments });
    }
    blocks
}

impl Block<'_> {
    /// The block as `content_block_start` opens it (empty), or as the whole message holds it.
    fn json(&self, ctx: &ReplyContext, complete: bool) -> Value {
        match self {
            Block::Thinking(text) => json!({
                "type": "thinking",
                "thinking": if complete { *text } else { "" },
                "signature": if complete { signature(ctx) } else { String::new() },
            }),
            Block::Text(text) => json!({"type": "text", "text": if complete { *text } else { "" }}),
            Block::ToolUse { id, name, arguments } => {
                let input = if complete { arguments_object(arguments) } else { json!({}) };
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }
        }
    }

    /// The block's deltas, in order, each with whether it carries output (the signature that
    /// closes a thinking block does not).
    fn deltas(&self, spec: &StreamSpec, ctx: &ReplyContext) -> Vec<(Value, bool)> {
        match self {
            Block::Thinking(text) => deltas(text, spec.chunks)
                .into_iter()
                .map(|piece| (json!({"type": "thinking_delta", "thinking": piece}), true))
                .chain([(json!({"type": "signature_delta", "signature": signature(ctx)}), false)])
                .collect(),
            Block::Text(text) => deltas(text, spec.chunks)
                .into_iter()
                .map(|piece| (json!({"type": "text_delta", "text": piece}), true))
                .collect(),
            Block::ToolUse { arguments, .. } => deltas(arguments, Some(3))
                .into_iter()
                .map(|piece| (json!({"type": "input_json_delta", "partial_json": piece}), true))
                .collect(),
        }
    }
}

/// The opaque signature Anthropic attaches to a thinking block; unique per reply.
fn signature(ctx: &ReplyContext) -> String {
    ctx.id("sig")
}

fn event(kind: &str, mut payload: Value) -> SseEvent {
    payload["type"] = json!(kind);
    SseEvent::named(kind, &payload)
}

/// The streamed events of a scripted reply.
pub(crate) fn stream_events(spec: &StreamSpec, ctx: &ReplyContext) -> Vec<SseEvent> {
    let mut starting = message_object(spec, ctx, Vec::new(), Value::Null);
    starting["usage"]["output_tokens"] = json!(1);
    let mut events = vec![event("message_start", json!({"message": starting})), event("ping", json!({}))];
    for (index, block) in blocks(spec, ctx).iter().enumerate() {
        events.push(event("content_block_start", json!({"index": index, "content_block": block.json(ctx, false)})));
        for (delta, output) in block.deltas(spec, ctx) {
            let delta = event("content_block_delta", json!({"index": index, "delta": delta}));
            events.push(if output { delta.output() } else { delta });
        }
        events.push(event("content_block_stop", json!({"index": index})));
    }
    if let Some(failure) = &spec.fail {
        let (kind, _) = code_type_and_status(&failure.code);
        let message = failure.message.clone().unwrap_or_else(|| code_message(&failure.code));
        events.push(SseEvent::named("error", &error_body(kind, &message)));
        return events;
    }
    let stop = json!({"delta": {"stop_reason": stop_reason(spec), "stop_sequence": null}, "usage": {"output_tokens": output_tokens(spec)}});
    events.push(event("message_delta", stop));
    events.push(event("message_stop", json!({})).terminal());
    events
}

/// The whole `message` object of a successful scripted reply.
pub(crate) fn message(spec: &StreamSpec, ctx: &ReplyContext) -> Value {
    let content = blocks(spec, ctx).iter().map(|block| block.json(ctx, true)).collect();
    message_object(spec, ctx, content, json!(stop_reason(spec)))
}

fn message_object(spec: &StreamSpec, ctx: &ReplyContext, content: Vec<Value>, stop_reason: Value) -> Value {
    json!({
        "id": ctx.id("msg"),
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {
            "input_tokens": ctx.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens(spec),
        },
    })
}

fn stop_reason(spec: &StreamSpec) -> &'static str {
    if spec.function_call.is_some() {
        "tool_use"
    } else {
        "end_turn"
    }
}

fn output_tokens(spec: &StreamSpec) -> u64 {
    spec.reasoning.as_deref().map_or(0, estimate_tokens)
        + spec.effective_text().map_or(0, estimate_tokens)
        + spec.function_call.as_ref().map_or(0, |c| estimate_tokens(&c.arguments))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario_model::{FunctionCallSpec, StreamFailure};

    fn types(events: &[SseEvent]) -> Vec<String> {
        events.iter().map(|e| e.event.clone().unwrap_or_default()).collect()
    }

    fn data(event: &SseEvent) -> Value {
        serde_json::from_str(&event.data).expect("json")
    }

    #[test]
    fn text_reply_has_the_real_event_sequence() {
        let spec = StreamSpec { text: Some("Hello there".into()), ..StreamSpec::default() };
        let events = stream_events(&spec, &ReplyContext::placeholder());
        let expected = [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ];
        assert_eq!(types(&events), expected);
        for e in &events {
            assert_eq!(data(e)["type"], e.event.as_deref().unwrap_or_default(), "data.type names the event");
        }
        assert_eq!(data(&events[6])["delta"]["stop_reason"], "end_turn");
        assert!(events.last().is_some_and(|e| e.terminal));
    }

    #[test]
    fn tool_use_input_arrives_as_json_pieces_that_rejoin() {
        let arguments = r#"{"agent":"deep-research","prompt":"x"}"#;
        let call = FunctionCallSpec { name: "Task".into(), arguments: arguments.into(), call_id: None };
        let spec = StreamSpec { function_call: Some(call), ..StreamSpec::default() };
        let events = stream_events(&spec, &ReplyContext::placeholder());
        let joined: String = events
            .iter()
            .map(data)
            .filter(|d| d["delta"]["type"] == "input_json_delta")
            .map(|d| d["delta"]["partial_json"].as_str().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(joined, arguments);
        let whole = message(&spec, &ReplyContext::placeholder());
        assert_eq!(whole["stop_reason"], "tool_use");
        assert_eq!(whole["content"][0]["input"]["agent"], "deep-research");
    }

    #[test]
    fn reasoning_is_a_thinking_block_with_a_signature() {
        let spec = StreamSpec { reasoning: Some("Think".into()), text: Some("Hi".into()), ..StreamSpec::default() };
        let deltas: Vec<String> = stream_events(&spec, &ReplyContext::placeholder())
            .iter()
            .map(data)
            .filter_map(|d| d["delta"]["type"].as_str().map(str::to_owned))
            .collect();
        assert_eq!(deltas, ["thinking_delta", "signature_delta", "text_delta"]);
    }

    #[test]
    fn failure_is_an_error_event_and_no_message_stop() {
        let failure = StreamFailure { code: "overloaded_error".into(), ..StreamFailure::default() };
        let spec = StreamSpec { text: Some("part".into()), fail: Some(failure), ..StreamSpec::default() };
        let events = stream_events(&spec, &ReplyContext::placeholder());
        let last = events.last().expect("events");
        assert_eq!(last.event.as_deref(), Some("error"));
        assert_eq!(data(last)["error"]["type"], "overloaded_error");
        assert!(!events.iter().any(|e| e.terminal));
    }
}
