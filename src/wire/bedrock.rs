//! Amazon Bedrock Runtime's Converse API (`POST /model/{modelId}/converse` and
//! `/converse-stream`): the streamed events, the whole reply, and AWS's errors.
//!
//! A stream is AWS event-stream messages ([`super::event_stream`]): `messageStart`, then per
//! content block (reasoning, text, a tool use) a `contentBlockStart` where the block has one
//! (a tool use's id and name), its `contentBlockDelta`s (the output deltas `after_deltas`
//! counts) and `contentBlockStop`; then `messageStop` with the stop reason and `metadata` with
//! the usage, the terminal event. A failure mid-stream is an exception message
//! (`throttlingException`, `internalServerException`, `serviceUnavailableException`,
//! `modelStreamErrorException`, …), which ends it. An error status carries its exception's name
//! in `x-amzn-errortype` and `{"message": …}` as its body.

use serde_json::{json, Value};

use super::event_stream::MessageType;
use super::text::{arguments_object, deltas};
use super::{estimate_tokens, ReplyContext, SseEvent};
use crate::scenario_model::{ErrorSpec, StreamFailure, StreamSpec};

/// The header that names an error's exception.
pub(crate) const ERROR_TYPE_HEADER: &str = "x-amzn-errortype";

/// What a Bedrock Runtime request asks for, read from its path: `/model/{modelId}/converse` or
/// `/converse-stream` (the Converse API), `/invoke` or `/invoke-with-response-stream` (InvokeModel,
/// whose bodies are the model's own: Anthropic's Messages for the Claude models).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BedrockCall<'a> {
    /// The model id as the path has it (an ARN or an id with `:` percent-encoded: `%3A`).
    pub model: &'a str,
    /// `converse-stream` or `invoke-with-response-stream`.
    pub stream: bool,
    /// InvokeModel rather than Converse.
    pub invoke: bool,
}

impl<'a> BedrockCall<'a> {
    /// The call a path under a run's base URL makes, if it is one.
    pub(crate) fn at_path(path: &'a str) -> Option<Self> {
        let (model, operation) = path.strip_prefix("/model/")?.rsplit_once('/')?;
        let (stream, invoke) = match operation {
            "converse" => (false, false),
            "converse-stream" => (true, false),
            "invoke" => (false, true),
            "invoke-with-response-stream" => (true, true),
            _ => return None,
        };
        (!model.is_empty()).then_some(BedrockCall { model, stream, invoke })
    }

    /// The API the call speaks.
    pub(crate) fn api(self) -> crate::api::Api {
        if self.invoke {
            crate::api::Api::BedrockInvoke
        } else {
            crate::api::Api::Bedrock
        }
    }
}

fn event(name: &str, data: Value) -> SseEvent {
    SseEvent::aws_message(MessageType::Event, name, &data)
}

/// The events of one content block at `index`: its start (when it has one), its deltas, its stop.
fn block(events: &mut Vec<SseEvent>, index: usize, start: Option<Value>, pieces: Vec<Value>) {
    if let Some(start) = start {
        events.push(event("contentBlockStart", json!({"contentBlockIndex": index, "start": start})));
    }
    for delta in pieces {
        events.push(event("contentBlockDelta", json!({"contentBlockIndex": index, "delta": delta})).output());
    }
    events.push(event("contentBlockStop", json!({"contentBlockIndex": index})));
}

/// The streamed messages of a scripted reply.
pub(crate) fn stream_events(spec: &StreamSpec, ctx: &ReplyContext) -> Vec<SseEvent> {
    let mut events = vec![event("messageStart", json!({"role": "assistant"}))];
    let mut index = 0;
    if let Some(reasoning) = &spec.reasoning {
        let pieces = deltas(reasoning, spec.chunks).into_iter().map(|p| json!({"reasoningContent": {"text": p}}));
        block(&mut events, index, None, pieces.collect());
        index += 1;
    }
    if let Some(text) = spec.effective_text() {
        let pieces = deltas(text, spec.chunks).into_iter().map(|p| json!({"text": p}));
        block(&mut events, index, None, pieces.collect());
        index += 1;
    }
    if let Some(call) = &spec.function_call {
        let start = json!({"toolUse": {"toolUseId": tool_use_id(call.call_id.as_deref(), ctx), "name": call.name}});
        // In three pieces, as every API that streams arguments sends them.
        let pieces = deltas(&call.arguments, Some(3)).into_iter().map(|p| json!({"toolUse": {"input": p}}));
        block(&mut events, index, Some(start), pieces.collect());
    }
    if let Some(failure) = &spec.fail {
        let (name, message) = stream_exception(failure);
        events.push(SseEvent::aws_message(MessageType::Exception, name, &json!({"message": message})));
        return events;
    }
    events.push(event("messageStop", json!({"stopReason": stop_reason(spec)})));
    events.push(event("metadata", metadata(spec, ctx)).terminal());
    events
}

/// The whole reply of a successful scripted reply (`converse`).
pub(crate) fn response_object(spec: &StreamSpec, ctx: &ReplyContext) -> Value {
    let mut content = Vec::new();
    if let Some(reasoning) = &spec.reasoning {
        content.push(json!({"reasoningContent": {"reasoningText": {"text": reasoning}}}));
    }
    if let Some(text) = spec.effective_text() {
        content.push(json!({"text": text}));
    }
    if let Some(call) = &spec.function_call {
        let id = tool_use_id(call.call_id.as_deref(), ctx);
        content
            .push(json!({"toolUse": {"toolUseId": id, "name": call.name, "input": arguments_object(&call.arguments)}}));
    }
    let mut reply = json!({
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop_reason(spec),
    });
    let Value::Object(fields) = metadata(spec, ctx) else { unreachable!("metadata is an object") };
    reply.as_object_mut().expect("an object").extend(fields);
    reply
}

fn tool_use_id(scripted: Option<&str>, ctx: &ReplyContext) -> String {
    scripted.map_or_else(|| ctx.id("tooluse"), str::to_owned)
}

fn stop_reason(spec: &StreamSpec) -> &'static str {
    if spec.function_call.is_some() {
        "tool_use"
    } else {
        "end_turn"
    }
}

/// The usage and metrics a reply ends with.
fn metadata(spec: &StreamSpec, ctx: &ReplyContext) -> Value {
    let output = spec.effective_text().map_or(0, estimate_tokens)
        + spec.reasoning.as_deref().map_or(0, estimate_tokens)
        + spec.function_call.as_ref().map_or(0, |c| estimate_tokens(&c.arguments));
    json!({
        "usage": {"inputTokens": ctx.input_tokens, "outputTokens": output, "totalTokens": ctx.input_tokens + output},
        "metrics": {"latencyMs": 1},
    })
}

/// The exception a scripted in-stream failure is sent as, and its message: a Bedrock
/// exception's own name (`throttlingException`, `ThrottlingException`) is taken as it is;
/// OpenAI's codes, which scenarios written for every API use, map to their counterparts.
pub(crate) fn stream_exception(failure: &StreamFailure) -> (&str, String) {
    let name = match failure.code.as_str() {
        "rate_limit_exceeded" => "throttlingException",
        "insufficient_quota" => "serviceQuotaExceededException",
        "server_error" => "internalServerException",
        "overloaded" | "overloaded_error" | "service_unavailable" => "serviceUnavailableException",
        "context_length_exceeded" | "invalid_request" => "validationException",
        code if code.ends_with("Exception") => code,
        _ => "modelStreamErrorException",
    };
    let message = failure.message.clone().unwrap_or_else(|| match failure.code.as_str() {
        "context_length_exceeded" => TOO_LONG.to_owned(),
        _ => exception_message(name).to_owned(),
    });
    (name, message)
}

/// What Bedrock says when the input overflows the model's context (a `ValidationException`).
const TOO_LONG: &str = "Input is too long for requested model.";

/// What Bedrock says with an exception of this name (in a stream or as a status).
fn exception_message(name: &str) -> &'static str {
    match name.to_ascii_lowercase().as_str() {
        "throttlingexception" => "Too many requests, please wait before trying again.",
        "servicequotaexceededexception" => "Your request exceeds the service quota for your account.",
        "serviceunavailableexception" => "Bedrock is unable to process your request.",
        "internalserverexception" => {
            "The system encountered an unexpected error during processing. Try your request again."
        }
        "modelnotreadyexception" => "The model is not ready to serve inference requests. Try your request again.",
        "modeltimeoutexception" => "The request took too long to process.",
        "validationexception" => "The input fails to satisfy the constraints specified by Amazon Bedrock.",
        "accessdeniedexception" => "You don't have access to the model with the specified model ID.",
        "resourcenotfoundexception" => "The specified resource ARN was not found.",
        _ => "An error occurred while streaming the response. Retry your request.",
    }
}

/// The exception an error status is sent as, by default.
pub(crate) fn status_exception(status: u16) -> &'static str {
    match status {
        403 => "AccessDeniedException",
        404 => "ResourceNotFoundException",
        408 => "ModelTimeoutException",
        424 => "ModelErrorException",
        429 => "ThrottlingException",
        503 => "ServiceUnavailableException",
        s if s >= 500 => "InternalServerException",
        _ => "ValidationException",
    }
}

/// The `x-amzn-errortype` value of an exception, as Bedrock sends it.
pub(crate) fn error_type_header(exception: &str) -> String {
    format!("{exception}:http://internal.amazon.com/coral/com.amazon.bedrock/")
}

/// A status reply's exception name and body: the scripted `type` names the exception
/// (`ModelNotReadyException` with a 429); else OpenAI's codes, which scenarios written for every
/// API use, map to their counterparts (`insufficient_quota`: `ServiceQuotaExceededException`;
/// `context_length_exceeded`: a `ValidationException` saying the input is too long); else the
/// status's.
pub(crate) fn scripted_error(status: u16, spec: Option<&ErrorSpec>) -> (String, Value) {
    let code = spec.and_then(|s| s.code.as_deref());
    let name = match (spec.and_then(|s| s.kind.clone()), code) {
        (Some(kind), _) => kind,
        (None, Some("insufficient_quota")) => "ServiceQuotaExceededException".to_owned(),
        (None, Some("context_length_exceeded")) => "ValidationException".to_owned(),
        (None, _) => status_exception(status).to_owned(),
    };
    let message = spec.and_then(|s| s.message.clone()).unwrap_or_else(|| match code {
        Some("context_length_exceeded") => TOO_LONG.to_owned(),
        _ => exception_message(&name).to_owned(),
    });
    (name, json!({"message": message}))
}

/// A scripted stream failure answered without streaming (`converse`): its exception as a
/// status, the status it has in Bedrock's API.
pub(crate) fn failure_as_status(failure: &StreamFailure) -> (u16, String, Value) {
    let (name, message) = stream_exception(failure);
    let mut exception = name.to_owned();
    exception[..1].make_ascii_uppercase();
    let status = match exception.as_str() {
        "ThrottlingException" | "ModelNotReadyException" | "ServiceQuotaExceededException" => 429,
        "ServiceUnavailableException" => 503,
        "ValidationException" => 400,
        "ModelTimeoutException" => 408,
        "ModelStreamErrorException" | "ModelErrorException" => 424,
        _ => 500,
    };
    (status, exception, json!({"message": message}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::event_stream::{first_message_len, read_message};
    use crate::wire::Framing;

    fn names(events: &[SseEvent]) -> Vec<&str> {
        events.iter().map(|e| e.event.as_deref().unwrap_or("")).collect()
    }

    #[test]
    fn a_stream_is_blocks_of_deltas_between_message_start_and_metadata() {
        let spec = crate::wire::text::rich_spec();
        let events = stream_events(&spec, &ReplyContext::placeholder());
        let first = ["messageStart", "contentBlockDelta", "contentBlockDelta", "contentBlockStop", "contentBlockDelta"];
        assert_eq!(names(&events)[..5], first, "two reasoning deltas, then the text's block");
        assert_eq!(names(&events)[events.len() - 2..], ["messageStop", "metadata"]);
        assert_eq!(
            events.iter().filter(|e| e.output).count(),
            7,
            "two reasoning and two text deltas, the arguments in 3"
        );
        let start = events.iter().find(|e| e.event.as_deref() == Some("contentBlockStart")).expect("a tool use starts");
        assert!(start.data.contains(r#""name":"Task""#) && start.data.contains(r#""contentBlockIndex":2"#));
        assert!(events.last().is_some_and(|e| e.terminal) && events.iter().filter(|e| e.terminal).count() == 1);
        assert!(events.iter().all(|e| e.framing == Framing::AwsEventStream(MessageType::Event)));
        let bytes = events[1].to_bytes();
        let message = read_message(&bytes[..first_message_len(&bytes).expect("whole")]).expect("sound");
        assert_eq!(
            String::from_utf8_lossy(&message.payload),
            r#"{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"plan"}}}"#
        );
    }

    #[test]
    fn a_failure_is_an_exception_message_that_ends_the_stream() {
        let fail = |code: &str| StreamSpec {
            text: Some("partial".into()),
            fail: Some(StreamFailure { code: code.into(), ..StreamFailure::default() }),
            ..StreamSpec::default()
        };
        let events = stream_events(&fail("rate_limit_exceeded"), &ReplyContext::placeholder());
        let last = events.last().expect("an exception");
        assert_eq!(
            (last.event.as_deref(), last.framing),
            (Some("throttlingException"), Framing::AwsEventStream(MessageType::Exception))
        );
        assert!(!events.iter().any(|e| e.terminal));
        let events = stream_events(&fail("modelStreamErrorException"), &ReplyContext::placeholder());
        assert_eq!(events.last().and_then(|e| e.event.as_deref()), Some("modelStreamErrorException"));
        assert_eq!(failure_as_status(&fail("server_error").fail.expect("a failure")).0, 500);
    }

    #[test]
    fn a_whole_reply_holds_every_block_and_the_usage() {
        let spec = StreamSpec { reasoning: Some("why".into()), text: Some("answer".into()), ..StreamSpec::default() };
        let reply = response_object(&spec, &ReplyContext::placeholder());
        assert_eq!(reply["output"]["message"]["content"][1]["text"], "answer");
        assert_eq!(reply["output"]["message"]["content"][0]["reasoningContent"]["reasoningText"]["text"], "why");
        assert_eq!(reply["stopReason"], "end_turn");
        assert!(reply["usage"]["totalTokens"].as_u64() > reply["usage"]["inputTokens"].as_u64());
    }

    #[test]
    fn an_error_status_is_named_by_its_scripted_type_or_its_status() {
        assert_eq!(scripted_error(429, None).0, "ThrottlingException");
        assert_eq!(scripted_error(503, None).0, "ServiceUnavailableException");
        let not_ready = ErrorSpec { kind: Some("ModelNotReadyException".into()), ..ErrorSpec::default() };
        assert_eq!(scripted_error(429, Some(&not_ready)).0, "ModelNotReadyException");
        let quota = ErrorSpec { code: Some("insufficient_quota".into()), ..ErrorSpec::default() };
        assert_eq!(scripted_error(429, Some(&quota)).0, "ServiceQuotaExceededException");
        assert!(error_type_header("ThrottlingException").starts_with("ThrottlingException:"));
        assert_eq!(
            BedrockCall::at_path("/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream"),
            Some(BedrockCall { model: "anthropic.claude-3-haiku-20240307-v1%3A0", stream: true, invoke: false })
        );
        assert_eq!(BedrockCall::at_path("/model//converse"), None);
        assert_eq!(BedrockCall::at_path("/model/m/invoke").map(BedrockCall::api), Some(crate::api::Api::BedrockInvoke));
        assert_eq!(BedrockCall::at_path("/model/m/invoke-with-response-stream").map(|c| c.stream), Some(true));
        assert_eq!(BedrockCall::at_path("/model/m/count-tokens"), None);
    }
}
