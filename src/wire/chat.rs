//! Chat Completions (`POST /chat/completions`): `chat.completion.chunk` lines ending in
//! `data: [DONE]`, and the non-streamed `chat.completion` object.
//!
//! Chat has no reasoning channel in OpenAI's API, so a scripted `reasoning` is not sent here.
//! A scripted stream failure becomes a `data: {"error": …}` line and the stream ends without
//! `[DONE]`, as OpenAI does.

use serde_json::{json, Value};

use super::errors::{code_message, code_type_and_status, error_body};
use super::text::deltas;
use super::{estimate_tokens, ReplyContext, SseEvent};
use crate::scenario_model::StreamSpec;

/// The streamed chunks of a scripted reply.
pub(crate) fn stream_events(spec: &StreamSpec, ctx: &ReplyContext) -> Vec<SseEvent> {
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": ctx.id("chatcmpl"),
            "object": "chat.completion.chunk",
            "created": ctx.created_at,
            "model": ctx.model,
            "system_fingerprint": null,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        })
    };
    let mut events = vec![SseEvent::data(&chunk(json!({"role": "assistant", "content": ""}), Value::Null))];
    if let Some(text) = spec.effective_text() {
        for piece in deltas(text, spec.chunks) {
            events.push(SseEvent::data(&chunk(json!({"content": piece}), Value::Null)).output());
        }
    }
    if let Some(call) = &spec.function_call {
        let call_id = call.call_id.clone().unwrap_or_else(|| ctx.id("call"));
        let opening = json!({"tool_calls": [{"index": 0, "id": call_id, "type": "function", "function": {"name": call.name, "arguments": ""}}]});
        events.push(SseEvent::data(&chunk(opening, Value::Null)));
        for piece in deltas(&call.arguments, Some(3)) {
            let delta = json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]});
            events.push(SseEvent::data(&chunk(delta, Value::Null)).output());
        }
    }
    if let Some(failure) = &spec.fail {
        let message = failure.message.clone().unwrap_or_else(|| code_message(&failure.code));
        let (kind, _) = code_type_and_status(&failure.code);
        events.push(SseEvent::data(&error_body(&message, kind, None, Some(&failure.code))));
        return events;
    }
    events.push(SseEvent::data(&chunk(json!({}), json!(finish_reason(spec)))));
    if ctx.include_usage {
        let mut usage_chunk = chunk(json!({}), Value::Null);
        usage_chunk["choices"] = json!([]);
        usage_chunk["usage"] = usage(ctx, spec);
        events.push(SseEvent::data(&usage_chunk));
    }
    events.push(SseEvent {
        event: None,
        data: "[DONE]".to_owned(),
        terminal: true,
        output: false,
        framing: super::Framing::Sse,
    });
    events
}

/// The non-streamed `chat.completion` object of a successful scripted reply.
pub(crate) fn completion_object(spec: &StreamSpec, ctx: &ReplyContext) -> Value {
    let mut message = json!({"role": "assistant", "content": spec.effective_text(), "refusal": null});
    if let Some(call) = &spec.function_call {
        let call_id = call.call_id.clone().unwrap_or_else(|| ctx.id("call"));
        message["tool_calls"] =
            json!([{"id": call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}]);
    }
    json!({
        "id": ctx.id("chatcmpl"),
        "object": "chat.completion",
        "created": ctx.created_at,
        "model": ctx.model,
        "system_fingerprint": null,
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason(spec)}],
        "usage": usage(ctx, spec),
    })
}

fn finish_reason(spec: &StreamSpec) -> &'static str {
    if spec.function_call.is_some() {
        "tool_calls"
    } else {
        "stop"
    }
}

fn usage(ctx: &ReplyContext, spec: &StreamSpec) -> Value {
    let completion = spec.effective_text().map_or(0, estimate_tokens)
        + spec.function_call.as_ref().map_or(0, |c| estimate_tokens(&c.arguments));
    json!({
        "prompt_tokens": ctx.input_tokens,
        "completion_tokens": completion,
        "total_tokens": ctx.input_tokens + completion,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario_model::StreamFailure;

    #[test]
    fn stream_ends_with_done() {
        let spec = StreamSpec { text: Some("a b".into()), ..StreamSpec::default() };
        let events = stream_events(&spec, &ReplyContext::placeholder());
        // role chunk, two content chunks, finish chunk, [DONE]
        assert_eq!(events.len(), 5);
        assert_eq!(events.last().map(|e| e.data.as_str()), Some("[DONE]"));
    }

    #[test]
    fn failure_sends_an_error_line_and_no_done() {
        let spec = StreamSpec {
            fail: Some(StreamFailure { code: "rate_limit_exceeded".into(), ..StreamFailure::default() }),
            ..StreamSpec::default()
        };
        let events = stream_events(&spec, &ReplyContext::placeholder());
        let last: Value = serde_json::from_str(&events.last().expect("event").data).expect("json");
        assert_eq!(last["error"]["code"], "rate_limit_exceeded");
        assert!(!events.iter().any(|e| e.terminal));
    }
}
