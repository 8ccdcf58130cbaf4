//! The Gemini API (`POST /v1beta/models/{model}:generateContent` and
//! `:streamGenerateContent?alt=sse`): the streamed `GenerateContentResponse` chunks and the whole
//! response.
//!
//! A stream is `data:` lines only, one chunk each, and no end marker of its own: a chunk per
//! reasoning delta (a part with `"thought": true`), per text delta, one chunk with the whole
//! `functionCall` (Gemini sends a call's arguments at once, not in pieces), then the chunk
//! that carries `finishReason` and `usageMetadata`: the terminal event. A scripted stream failure
//! is a `data: {"error": …}` line in Google's shape, and the stream ends there, as the google-genai
//! SDKs expect.

use serde_json::{json, Value};

use super::gemini_errors::failure_error;
use super::text::{arguments_object, deltas};
use super::{estimate_tokens, ReplyContext, SseEvent};
use crate::scenario_model::{FunctionCallSpec, StreamSpec};

/// What a Gemini request asks for, read from its path: `/v1beta/models/{model}:{method}`, or
/// `/models/{model}:{method}` under the `/v1` base URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GeminiCall<'a> {
    /// The model named in the path (`gemini-2.5-flash`, or `models/...` without the prefix).
    pub model: &'a str,
    /// `streamGenerateContent` rather than `generateContent`.
    pub stream: bool,
}

impl<'a> GeminiCall<'a> {
    /// The call a path under a run's base URL makes, if it is one.
    pub(crate) fn at_path(path: &'a str) -> Option<Self> {
        let rest = path.strip_prefix("/v1beta").unwrap_or(path);
        let (model, method) = rest.strip_prefix("/models/")?.rsplit_once(':')?;
        let stream = match method {
            "generateContent" => false,
            "streamGenerateContent" => true,
            _ => return None,
        };
        (!model.is_empty() && !model.contains('/')).then_some(GeminiCall { model, stream })
    }
}

/// One streamed chunk: a candidate holding `parts`, and the fields every chunk repeats.
fn chunk(ctx: &ReplyContext, parts: Value) -> Value {
    json!({
        "candidates": [{"content": {"parts": parts, "role": "model"}, "index": 0}],
        "modelVersion": ctx.model,
        "responseId": ctx.id("gemini"),
    })
}

/// The streamed chunks of a scripted reply.
pub(crate) fn stream_events(spec: &StreamSpec, ctx: &ReplyContext) -> Vec<SseEvent> {
    let mut events = Vec::new();
    if let Some(reasoning) = &spec.reasoning {
        for piece in deltas(reasoning, spec.chunks) {
            events.push(SseEvent::data(&chunk(ctx, json!([{"text": piece, "thought": true}]))).output());
        }
    }
    if let Some(text) = spec.effective_text() {
        for piece in deltas(text, spec.chunks) {
            events.push(SseEvent::data(&chunk(ctx, json!([{"text": piece}]))).output());
        }
    }
    if let Some(call) = &spec.function_call {
        events.push(SseEvent::data(&chunk(ctx, json!([function_call_part(ctx, call)]))).output());
    }
    if let Some(failure) = &spec.fail {
        let (_, error) = failure_error(&failure.code, failure.message.as_deref());
        events.push(SseEvent::data(&error));
        return events;
    }
    let mut last = chunk(ctx, json!([{"text": ""}]));
    last["candidates"][0]["finishReason"] = json!("STOP");
    last["usageMetadata"] = usage(ctx, spec);
    events.push(SseEvent::data(&last).terminal());
    events
}

/// The whole `GenerateContentResponse` of a successful scripted reply (not streamed).
pub(crate) fn response_object(spec: &StreamSpec, ctx: &ReplyContext) -> Value {
    let mut parts = Vec::new();
    if let Some(reasoning) = &spec.reasoning {
        parts.push(json!({"text": reasoning, "thought": true}));
    }
    if let Some(text) = spec.effective_text() {
        parts.push(json!({"text": text}));
    }
    if let Some(call) = &spec.function_call {
        parts.push(function_call_part(ctx, call));
    }
    let mut response = chunk(ctx, Value::Array(parts));
    response["candidates"][0]["finishReason"] = json!("STOP");
    response["usageMetadata"] = usage(ctx, spec);
    response
}

fn function_call_part(ctx: &ReplyContext, call: &FunctionCallSpec) -> Value {
    let id = call.call_id.clone().unwrap_or_else(|| ctx.id("call"));
    json!({"functionCall": {"id": id, "name": call.name, "args": arguments_object(&call.arguments)}})
}

fn usage(ctx: &ReplyContext, spec: &StreamSpec) -> Value {
    let candidates = spec.effective_text().map_or(0, estimate_tokens)
        + spec.function_call.as_ref().map_or(0, |c| estimate_tokens(&c.arguments));
    let thoughts = spec.reasoning.as_deref().map_or(0, estimate_tokens);
    let mut usage = json!({
        "promptTokenCount": ctx.input_tokens,
        "candidatesTokenCount": candidates,
        "totalTokenCount": ctx.input_tokens + candidates + thoughts,
    });
    if thoughts > 0 {
        usage["thoughtsTokenCount"] = json!(thoughts);
    }
    usage
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario_model::StreamFailure;

    fn parsed(event: &SseEvent) -> Value {
        serde_json::from_str(&event.data).expect("every chunk is JSON")
    }

    #[test]
    fn paths_name_the_model_and_whether_to_stream() {
        let call = |path| GeminiCall::at_path(path).map(|c| (c.model, c.stream));
        assert_eq!(call("/v1beta/models/gemini-2.5-flash:generateContent"), Some(("gemini-2.5-flash", false)));
        assert_eq!(call("/models/gemini-pro:streamGenerateContent"), Some(("gemini-pro", true)));
        for refused in ["/v1beta/models/:generateContent", "/v1beta/models/x:countTokens", "/models", "/responses"] {
            assert_eq!(call(refused), None, "{refused}");
        }
    }

    #[test]
    fn a_stream_is_thoughts_text_and_a_whole_call_then_the_finishing_chunk() {
        let spec = crate::wire::text::rich_spec();
        let events = stream_events(&spec, &ReplyContext::placeholder());
        // two thought deltas, two text deltas, the call, the finishing chunk
        assert_eq!(events.iter().filter(|e| e.output).count(), 5);
        assert_eq!(parsed(&events[0])["candidates"][0]["content"]["parts"][0]["thought"], true);
        assert_eq!(parsed(&events[4])["candidates"][0]["content"]["parts"][0]["functionCall"]["args"], json!({"n": 1}));
        let last = events.last().expect("a last chunk");
        assert!(last.terminal && !last.output && last.event.is_none());
        assert_eq!(parsed(last)["candidates"][0]["finishReason"], "STOP");
        assert_eq!(parsed(last)["usageMetadata"]["thoughtsTokenCount"], 2);
    }

    #[test]
    fn a_failure_is_an_error_line_in_googles_shape_and_nothing_after() {
        let spec = StreamSpec {
            text: Some("partial".into()),
            fail: Some(StreamFailure { code: "rate_limit_exceeded".into(), ..StreamFailure::default() }),
            ..StreamSpec::default()
        };
        let events = stream_events(&spec, &ReplyContext::placeholder());
        let last = parsed(events.last().expect("an error line"));
        assert_eq!(
            (last["error"]["code"].as_u64(), last["error"]["status"].as_str()),
            (Some(429), Some("RESOURCE_EXHAUSTED"))
        );
        assert!(!events.iter().any(|e| e.terminal));
    }

    #[test]
    fn the_whole_response_holds_every_part() {
        let spec = StreamSpec { reasoning: Some("why".into()), text: Some("answer".into()), ..StreamSpec::default() };
        let response = response_object(&spec, &ReplyContext::placeholder());
        let parts = &response["candidates"][0]["content"]["parts"];
        assert_eq!(parts, &json!([{"text": "why", "thought": true}, {"text": "answer"}]));
    }
}
