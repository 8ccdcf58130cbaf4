//! Ollama's native API (`POST /api/chat` and `/api/generate`): the streamed chunks and the whole
//! reply, and Ollama's error bodies.
//!
//! A stream is newline-delimited JSON (`application/x-ndjson`), one object a line: a chunk per
//! reasoning delta (`thinking`), per text delta (`message.content` for chat, `response` for
//! generate), one chunk with the whole `tool_calls` (arguments as an object, as Ollama sends them),
//! then the chunk with `"done": true`, `done_reason` and the counts: the terminal line. Ollama
//! streams unless the request says `"stream": false`. An error is `{"error": "<message>"}`, as a
//! body with its status, or as a line in a stream, which ends there.

use serde_json::{json, Value};

use super::errors::code_message;
use super::text::{arguments_object, deltas};
use super::{estimate_tokens, ReplyContext, SseEvent};
use crate::scenario_model::{FunctionCallSpec, StreamSpec};

/// Which of Ollama's two generation endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// `POST /api/chat`: messages in, a `message` out.
    Chat,
    /// `POST /api/generate`: a prompt in, a `response` string out.
    Generate,
}

/// A chunk carrying `delta` as the endpoint carries text (or, with `thinking`, reasoning).
fn chunk(endpoint: Endpoint, ctx: &ReplyContext, delta: &str, thinking: bool) -> Value {
    let mut chunk = head(ctx);
    match (endpoint, thinking) {
        (Endpoint::Chat, false) => chunk["message"] = json!({"role": "assistant", "content": delta}),
        (Endpoint::Chat, true) => chunk["message"] = json!({"role": "assistant", "content": "", "thinking": delta}),
        (Endpoint::Generate, false) => chunk["response"] = json!(delta),
        (Endpoint::Generate, true) => {
            chunk["response"] = json!("");
            chunk["thinking"] = json!(delta);
        }
    }
    chunk["done"] = json!(false);
    chunk
}

/// The fields every chunk starts with.
fn head(ctx: &ReplyContext) -> Value {
    json!({"model": ctx.model, "created_at": created_at(ctx.created_at)})
}

/// Unix seconds as Ollama writes a time (RFC 3339); as the number itself past the year 9999
/// (a template's sentinel, which then renders per request: wire::template checks).
pub(crate) fn created_at(unix_seconds: u64) -> String {
    const YEAR_10000: u64 = 253_402_300_800;
    if unix_seconds >= YEAR_10000 {
        return unix_seconds.to_string();
    }
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix_seconds);
    humantime::format_rfc3339_nanos(time).to_string()
}

/// The streamed lines of a scripted reply.
pub(crate) fn stream_events(endpoint: Endpoint, spec: &StreamSpec, ctx: &ReplyContext) -> Vec<SseEvent> {
    let mut events = Vec::new();
    if let Some(reasoning) = &spec.reasoning {
        for piece in deltas(reasoning, spec.chunks) {
            events.push(SseEvent::json_line(&chunk(endpoint, ctx, &piece, true)).output());
        }
    }
    if let Some(text) = spec.effective_text() {
        for piece in deltas(text, spec.chunks) {
            events.push(SseEvent::json_line(&chunk(endpoint, ctx, &piece, false)).output());
        }
    }
    if let (Some(call), Endpoint::Chat) = (&spec.function_call, endpoint) {
        let mut calling = chunk(endpoint, ctx, "", false);
        calling["message"]["tool_calls"] = json!([tool_call(call)]);
        events.push(SseEvent::json_line(&calling).output());
    }
    if let Some(failure) = &spec.fail {
        let message = failure.message.clone().unwrap_or_else(|| code_message(&failure.code));
        events.push(SseEvent::json_line(&error_body(&message)));
        return events;
    }
    let mut last = chunk(endpoint, ctx, "", false);
    finish(&mut last, spec, ctx);
    events.push(SseEvent::json_line(&last).terminal());
    events
}

/// The whole reply of a successful scripted reply (`"stream": false`).
pub(crate) fn response_object(endpoint: Endpoint, spec: &StreamSpec, ctx: &ReplyContext) -> Value {
    let text = spec.effective_text().unwrap_or_default();
    let mut reply = chunk(endpoint, ctx, text, false);
    if let Some(reasoning) = &spec.reasoning {
        match endpoint {
            Endpoint::Chat => reply["message"]["thinking"] = json!(reasoning),
            Endpoint::Generate => reply["thinking"] = json!(reasoning),
        }
    }
    if let (Some(call), Endpoint::Chat) = (&spec.function_call, endpoint) {
        reply["message"]["tool_calls"] = json!([tool_call(call)]);
    }
    finish(&mut reply, spec, ctx);
    reply
}

fn tool_call(call: &FunctionCallSpec) -> Value {
    json!({"function": {"name": call.name, "arguments": arguments_object(&call.arguments)}})
}

/// The last chunk's fields: done, why, and the counts (durations in nanoseconds).
fn finish(chunk: &mut Value, spec: &StreamSpec, ctx: &ReplyContext) {
    let output = spec.effective_text().map_or(0, estimate_tokens)
        + spec.reasoning.as_deref().map_or(0, estimate_tokens)
        + spec.function_call.as_ref().map_or(0, |c| estimate_tokens(&c.arguments));
    chunk["done"] = json!(true);
    chunk["done_reason"] = json!("stop");
    chunk["total_duration"] = json!(1_000_000);
    chunk["load_duration"] = json!(0);
    chunk["prompt_eval_count"] = json!(ctx.input_tokens);
    chunk["prompt_eval_duration"] = json!(0);
    chunk["eval_count"] = json!(output);
    chunk["eval_duration"] = json!(1_000_000);
}

/// Ollama's error body: `{"error": "<message>"}`.
pub(crate) fn error_body(message: &str) -> Value {
    json!({"error": message})
}

/// The error body of a scripted status reply: the scripted message, or what Ollama says for it.
pub(crate) fn scripted_error(status: u16, message: Option<&str>) -> Value {
    let said = match status {
        404 => "model 'squall' not found, try pulling it first",
        429 => "too many requests: server busy, please try again",
        500 => "an internal error occurred",
        502 => "bad gateway",
        503 => "server busy, please try again.  maximum pending requests exceeded",
        _ => "an error occurred",
    };
    error_body(message.unwrap_or(said))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario_model::StreamFailure;

    fn parsed(event: &SseEvent) -> Value {
        serde_json::from_str(&event.data).expect("every line is JSON")
    }

    #[test]
    fn a_chat_stream_is_thinking_text_and_a_whole_tool_call_then_the_done_line() {
        let spec = crate::wire::text::rich_spec();
        let events = stream_events(Endpoint::Chat, &spec, &ReplyContext::placeholder());
        assert_eq!(events.iter().filter(|e| e.output).count(), 5);
        assert_eq!(parsed(&events[0])["message"]["thinking"], "plan");
        assert_eq!(parsed(&events[2])["message"]["content"], "a");
        assert_eq!(parsed(&events[4])["message"]["tool_calls"][0]["function"]["arguments"], json!({"n": 1}));
        let last = events.last().expect("a done line");
        assert!(last.terminal && !last.output);
        assert_eq!((parsed(last)["done"].as_bool(), parsed(last)["done_reason"].as_str()), (Some(true), Some("stop")));
        let bytes = last.to_bytes();
        assert!(bytes.ends_with(b"}\n") && !bytes.starts_with(b"data:"), "one JSON object a line");
        assert_eq!(last.write_to(&mut Vec::new()), (0, 1), "the data starts the line; a newline follows");
    }

    #[test]
    fn generate_streams_its_text_as_response_and_a_failure_is_an_error_line() {
        let spec = StreamSpec {
            text: Some("partial".into()),
            fail: Some(StreamFailure { code: "server_error".into(), ..StreamFailure::default() }),
            ..StreamSpec::default()
        };
        let events = stream_events(Endpoint::Generate, &spec, &ReplyContext::placeholder());
        assert_eq!(parsed(&events[0])["response"], "partial");
        assert!(parsed(events.last().expect("an error line"))["error"].is_string());
        assert!(!events.iter().any(|e| e.terminal));
    }

    #[test]
    fn a_whole_reply_is_one_done_object() {
        let spec = StreamSpec { reasoning: Some("why".into()), text: Some("answer".into()), ..StreamSpec::default() };
        let chat = response_object(Endpoint::Chat, &spec, &ReplyContext::placeholder());
        assert_eq!(
            (chat["message"]["content"].as_str(), chat["message"]["thinking"].as_str()),
            (Some("answer"), Some("why"))
        );
        assert_eq!(chat["done"], true);
        let generate = response_object(Endpoint::Generate, &spec, &ReplyContext::placeholder());
        assert_eq!(generate["response"], "answer");
        assert_eq!(scripted_error(503, None)["error"].as_str().map(|m| m.starts_with("server busy")), Some(true));
    }
}
