//! Amazon Bedrock's Converse API: request bodies (`messages` of content blocks, `system`,
//! `toolConfig`), the accumulator of ConverseStream's events, and AWS's errors.
//!
//! The stream is AWS event-stream messages ([`super::event_stream`]): `contentBlockStart` opens a
//! tool use, `contentBlockDelta`s carry text, reasoning or tool input by block index, and
//! `metadata`, after `messageStop`, is the terminal event. An exception message
//! (`throttlingException`, `internalServerException`, …) is an in-stream failure, classified as
//! the same failure in the other APIs. An error status names its exception in
//! `x-amzn-errortype`; its body is `{"message": …}`.

use serde_json::{json, Value};

use super::responses::{Observed, Progress};
use super::sse::SseMessage;
use super::{Delta, FunctionCall, InputItem, ModelOutput, ModelRequest};
use crate::decide::classify::{classify_status, classify_stream_error, ErrorKind, ProviderError};

/// The path under the run's root (the base URL without `/v1`) that streams `model`'s reply.
pub fn stream_path(model: &str) -> String {
    format!("/model/{}/converse-stream", percent_encode(model))
}

/// A model id as a path segment: `:` and `/` (in versions and ARNs) percent-encoded.
fn percent_encode(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The Converse request body for `request`.
pub fn request_body(request: &ModelRequest) -> Value {
    let messages: Vec<Value> = request
        .input
        .iter()
        .map(|item| match item {
            InputItem::User(text) => json!({"role": "user", "content": [{"text": text}]}),
            InputItem::Assistant(text) => json!({"role": "assistant", "content": [{"text": text}]}),
            InputItem::FunctionCall(call) => {
                let input = serde_json::from_str::<Value>(&call.arguments).unwrap_or_else(|_| json!({}));
                json!({"role": "assistant", "content": [{"toolUse": {"toolUseId": call.call_id, "name": call.name, "input": input}}]})
            }
            InputItem::FunctionOutput { call_id, output } => {
                json!({"role": "user", "content": [{"toolResult": {"toolUseId": call_id, "content": [{"text": output}]}}]})
            }
        })
        .collect();
    let mut body = json!({"messages": messages});
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"toolSpec": {"name": t.name, "description": t.description, "inputSchema": {"json": t.parameters}}}))
            .collect();
        body["toolConfig"] = json!({"tools": tools});
    }
    if let Some(instructions) = &request.instructions {
        body["system"] = json!([{"text": instructions}]);
    }
    body
}

/// Builds the output from ConverseStream's events; `metadata` is the terminal event.
#[derive(Debug, Default)]
pub struct BedrockAccumulator {
    output: ModelOutput,
    /// Tool uses by content-block index, in the order they were opened.
    calls: Vec<(u64, FunctionCall)>,
}

impl BedrockAccumulator {
    /// Take one message: what it shows goes to `observe`; an exception is classified.
    pub fn on_message(
        &mut self,
        message: &SseMessage,
        observe: &mut dyn FnMut(Observed<'_>),
    ) -> Result<Progress, ProviderError> {
        let name = message.event.as_deref().unwrap_or("");
        let event = message.json()?;
        if name.ends_with("Exception") {
            return Err(classify_exception(name, event["message"].as_str().unwrap_or("")));
        }
        let index = event["contentBlockIndex"].as_u64().unwrap_or(0);
        match name {
            "contentBlockStart" => {
                if let Some(tool) = event["start"].get("toolUse") {
                    let call = FunctionCall {
                        call_id: tool["toolUseId"].as_str().unwrap_or("").to_owned(),
                        name: tool["name"].as_str().unwrap_or("").to_owned(),
                        arguments: String::new(),
                    };
                    self.calls.push((index, call));
                    observe(Observed::ToolCallStarted);
                }
            }
            "contentBlockDelta" => {
                let delta = &event["delta"];
                if let Some(text) = delta["text"].as_str() {
                    self.output.text.push_str(text);
                    observe(Observed::Delta(Delta::Text(text)));
                } else if let Some(reasoning) = delta["reasoningContent"]["text"].as_str() {
                    self.output.reasoning.push_str(reasoning);
                    observe(Observed::Delta(Delta::Reasoning(reasoning)));
                } else if let Some(input) = delta["toolUse"]["input"].as_str() {
                    if let Some((_, call)) = self.calls.iter_mut().find(|(at, _)| *at == index) {
                        call.arguments.push_str(input);
                    }
                }
            }
            "metadata" => return Ok(Progress::Done),
            _ => {}
        }
        Ok(Progress::Continue)
    }

    /// What the stream produced, its tool uses assembled.
    pub fn into_output(mut self) -> ModelOutput {
        self.output.function_calls = super::assembled_calls(self.calls);
        self.output
    }
}

/// Whether a `ValidationException`'s message says the input overflows the model's context.
fn too_long(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    message.contains("too long") || message.contains("too many input tokens")
}

/// An in-stream exception, classified as the same failure in the other APIs.
fn classify_exception(name: &str, message: &str) -> ProviderError {
    let code = match name.to_ascii_lowercase().as_str() {
        "throttlingexception" => "rate_limit_exceeded",
        "servicequotaexceededexception" => "insufficient_quota",
        "validationexception" if too_long(message) => "context_length_exceeded",
        "validationexception" | "accessdeniedexception" | "resourcenotfoundexception" => "invalid_request",
        // internalServer, serviceUnavailable, modelStreamError, modelNotReady, modelTimeout.
        _ => "server_error",
    };
    classify_stream_error(code, message)
}

/// An error status: its status, headers (`retry-after`) and the exception `x-amzn-errortype`
/// names (`ThrottlingException:http://…`), whose kind overrides the status's where AWS's
/// exception says more (a quota, a context overflow).
pub fn classify_bedrock_status(
    status: u16,
    header: &dyn Fn(&str) -> Option<String>,
    body: &str,
    now: std::time::SystemTime,
) -> ProviderError {
    let mut error = classify_status(status, header, "", now);
    let exception = header("x-amzn-errortype").map(|t| t.split(':').next().unwrap_or("").to_owned());
    let message = serde_json::from_str::<Value>(body).ok().and_then(|b| b["message"].as_str().map(str::to_owned));
    if let Some(message) = message {
        error.message = message;
    }
    match exception.as_deref() {
        Some("ServiceQuotaExceededException") => error.kind = ErrorKind::Quota,
        Some("ValidationException") if too_long(&error.message) => error.kind = ErrorKind::ContextOverflow,
        _ => {}
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::classify::is_retryable;

    fn message(name: &str, data: Value) -> SseMessage {
        SseMessage { event: Some(name.to_owned()), data: data.to_string() }
    }

    #[test]
    fn blocks_are_rebuilt_and_metadata_ends_the_stream() {
        let mut accumulator = BedrockAccumulator::default();
        let events = [
            message("messageStart", json!({"role": "assistant"})),
            message(
                "contentBlockDelta",
                json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "plan"}}}),
            ),
            message("contentBlockDelta", json!({"contentBlockIndex": 1, "delta": {"text": "Hi"}})),
            message(
                "contentBlockStart",
                json!({"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "t1", "name": "Task"}}}),
            ),
            message("contentBlockDelta", json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "{\"a\":"}}})),
            message("contentBlockDelta", json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "1}"}}})),
            message("messageStop", json!({"stopReason": "tool_use"})),
        ];
        for event in &events {
            assert_eq!(accumulator.on_message(event, &mut |_| {}).expect("no error"), Progress::Continue);
        }
        let done = accumulator.on_message(&message("metadata", json!({"usage": {}})), &mut |_| {});
        assert_eq!(done.expect("no error"), Progress::Done);
        let output = accumulator.into_output();
        assert_eq!((output.text.as_str(), output.reasoning.as_str()), ("Hi", "plan"));
        let call = FunctionCall { call_id: "t1".into(), name: "Task".into(), arguments: "{\"a\":1}".into() };
        assert_eq!(output.function_calls, [call]);
    }

    #[test]
    fn exceptions_are_classified_as_their_counterparts() {
        let throttled = message("throttlingException", json!({"message": "Please try again in 3s."}));
        let failure = BedrockAccumulator::default().on_message(&throttled, &mut |_| {}).expect_err("fails");
        assert_eq!((failure.kind, failure.retry_after.map(|r| r.delay.as_secs())), (ErrorKind::RateLimit, Some(3)));
        let internal = message("modelStreamErrorException", json!({"message": "Retry your request."}));
        let failure = BedrockAccumulator::default().on_message(&internal, &mut |_| {}).expect_err("fails");
        assert!(is_retryable(&failure), "{failure:?}");
        let long = message("validationException", json!({"message": "Input is too long for requested model."}));
        let failure = BedrockAccumulator::default().on_message(&long, &mut |_| {}).expect_err("fails");
        assert_eq!(failure.kind, ErrorKind::ContextOverflow);
    }

    #[test]
    fn a_status_is_read_with_its_exception() {
        let header = |kind: &'static str| {
            move |name: &str| (name == "x-amzn-errortype").then(|| format!("{kind}:http://internal.amazon.com/coral/"))
        };
        let now = std::time::SystemTime::now();
        let quota = classify_bedrock_status(429, &header("ServiceQuotaExceededException"), r#"{"message":"q"}"#, now);
        assert_eq!((quota.kind, quota.message.as_str()), (ErrorKind::Quota, "q"));
        assert!(is_retryable(&classify_bedrock_status(429, &header("ModelNotReadyException"), "{}", now)));
        assert!(!is_retryable(&classify_bedrock_status(400, &header("ValidationException"), "{}", now)));
        assert_eq!(stream_path("anthropic.claude-v1:0"), "/model/anthropic.claude-v1%3A0/converse-stream");
    }
}
