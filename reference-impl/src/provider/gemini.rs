//! The Gemini API: request bodies (`contents`, `systemInstruction`, `functionDeclarations`) and
//! the streamed-chunk accumulator for `:streamGenerateContent?alt=sse`.
//!
//! Each chunk is a `GenerateContentResponse`: parts with text, thoughts (`"thought": true`) or a
//! whole `functionCall`. The stream has no end marker of its own: the chunk whose candidate
//! carries a `finishReason` is the terminal event, so a stream that ends without one was cut
//! short. An `{"error": …}` chunk is an in-stream failure in Google's shape, classified as the same
//! error sent as a status reply.

use serde_json::{json, Value};

use super::responses::{Observed, Progress};
use super::sse::SseMessage;
use super::{Delta, FunctionCall, InputItem, ModelOutput, ModelRequest};
use crate::decide::classify::{classify_status, classify_transport, ErrorKind, ProviderError, TransportFailure};
use crate::decide::retry_after::retry_after_from_message;

/// The path under the run's root (the base URL without `/v1`) that streams `model`'s reply.
pub fn stream_path(model: &str) -> String {
    format!("/v1beta/models/{model}:streamGenerateContent?alt=sse")
}

/// The Gemini `generateContent` request body for `request`.
pub fn request_body(request: &ModelRequest) -> Value {
    let call_name = |call_id: &str| {
        request.input.iter().find_map(|item| match item {
            InputItem::FunctionCall(call) if call.call_id == call_id => Some(call.name.clone()),
            _ => None,
        })
    };
    let contents: Vec<Value> = request
        .input
        .iter()
        .map(|item| match item {
            InputItem::User(text) => json!({"role": "user", "parts": [{"text": text}]}),
            InputItem::Assistant(text) => json!({"role": "model", "parts": [{"text": text}]}),
            InputItem::FunctionCall(call) => {
                let args = serde_json::from_str::<Value>(&call.arguments).unwrap_or_else(|_| json!({}));
                json!({"role": "model", "parts": [{"functionCall": {"id": call.call_id, "name": call.name, "args": args}}]})
            }
            InputItem::FunctionOutput { call_id, output } => {
                // Gemini pairs a function's response with its call by name (and id, when sent).
                let name = call_name(call_id).unwrap_or_default();
                json!({"role": "user", "parts": [{"functionResponse": {"id": call_id, "name": name, "response": {"output": output}}}]})
            }
        })
        .collect();
    let mut body = json!({"contents": contents});
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "parameters": t.parameters}))
            .collect();
        body["tools"] = json!([{"functionDeclarations": declarations}]);
    }
    if let Some(instructions) = &request.instructions {
        body["systemInstruction"] = json!({"parts": [{"text": instructions}]});
    }
    body
}

/// Builds the output from Gemini chunks; the chunk with a `finishReason` is the terminal event.
#[derive(Debug, Default)]
pub struct GeminiAccumulator {
    output: ModelOutput,
}

impl GeminiAccumulator {
    /// Take one streamed chunk: what it shows goes to `observe`; an error in the stream is classified.
    pub fn on_message(
        &mut self,
        message: &SseMessage,
        observe: &mut dyn FnMut(Observed<'_>),
    ) -> Result<Progress, ProviderError> {
        let chunk: Value = serde_json::from_str(&message.data)
            .map_err(|e| classify_transport(TransportFailure::Garbage, &format!("chunk is not JSON ({e})")))?;
        if let Some(error) = chunk.get("error") {
            let status = error["code"].as_u64().and_then(|c| u16::try_from(c).ok()).unwrap_or(500);
            // An error chunk has no headers, so no HTTP date to read against the time.
            let mut failure = classify_status(status, &|_| None, &message.data, std::time::SystemTime::now());
            if failure.kind == ErrorKind::RateLimit && failure.retry_after.is_none() {
                // As for an in-stream rate limit in the other APIs: "try again in 3s".
                failure.retry_after = retry_after_from_message(&failure.message);
            }
            return Err(failure);
        }
        let candidate = &chunk["candidates"][0];
        for part in candidate["content"]["parts"].as_array().into_iter().flatten() {
            if let Some(call) = part.get("functionCall") {
                observe(Observed::ToolCallStarted);
                let count = self.output.function_calls.len();
                self.output.function_calls.push(FunctionCall {
                    call_id: call["id"].as_str().map_or_else(|| format!("gemini-call-{count}"), str::to_owned),
                    name: call["name"].as_str().unwrap_or("").to_owned(),
                    arguments: call.get("args").map_or_else(|| "{}".to_owned(), Value::to_string),
                });
            } else if let Some(text) = part["text"].as_str().filter(|t| !t.is_empty()) {
                if part["thought"].as_bool() == Some(true) {
                    self.output.reasoning.push_str(text);
                    observe(Observed::Delta(Delta::Reasoning(text)));
                } else {
                    self.output.text.push_str(text);
                    observe(Observed::Delta(Delta::Text(text)));
                }
            }
        }
        Ok(if candidate["finishReason"].is_string() { Progress::Done } else { Progress::Continue })
    }

    /// What the stream produced.
    pub fn into_output(self) -> ModelOutput {
        self.output
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::classify::is_retryable;

    fn feed(accumulator: &mut GeminiAccumulator, chunks: &[Value]) -> Result<Progress, ProviderError> {
        let mut last = Progress::Continue;
        for chunk in chunks {
            last = accumulator.on_message(&SseMessage { event: None, data: chunk.to_string() }, &mut |_| {})?;
        }
        Ok(last)
    }

    fn parts(parts: Value) -> Value {
        json!({"candidates": [{"content": {"parts": parts, "role": "model"}, "index": 0}]})
    }

    #[test]
    fn thoughts_text_and_calls_are_rebuilt_and_the_finish_reason_ends_the_stream() {
        let mut accumulator = GeminiAccumulator::default();
        let mut last = parts(json!([{"text": ""}]));
        last["candidates"][0]["finishReason"] = json!("STOP");
        let chunks = [
            parts(json!([{"text": "plan", "thought": true}])),
            parts(json!([{"text": "Hi"}])),
            parts(json!([{"functionCall": {"id": "c1", "name": "Task", "args": {"a": 1}}}])),
        ];
        assert_eq!(feed(&mut accumulator, &chunks).expect("no error"), Progress::Continue, "no finish reason yet");
        assert_eq!(feed(&mut accumulator, &[last]).expect("no error"), Progress::Done);
        let output = accumulator.into_output();
        assert_eq!((output.text.as_str(), output.reasoning.as_str()), ("Hi", "plan"));
        let call = FunctionCall { call_id: "c1".into(), name: "Task".into(), arguments: r#"{"a":1}"#.into() };
        assert_eq!(output.function_calls, [call]);
    }

    #[test]
    fn an_error_chunk_is_classified_as_the_same_status_reply() {
        let overloaded =
            json!({"error": {"code": 503, "status": "UNAVAILABLE", "message": "The model is overloaded."}});
        let failure = feed(&mut GeminiAccumulator::default(), &[overloaded]).expect_err("an error chunk fails");
        assert!(is_retryable(&failure), "{failure:?}");
        let limited =
            json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "Please try again in 3s."}});
        let failure = feed(&mut GeminiAccumulator::default(), &[limited]).expect_err("an error chunk fails");
        assert_eq!(failure.kind, ErrorKind::RateLimit);
        assert_eq!(failure.retry_after.map(|r| r.delay.as_secs()), Some(3));
    }

    #[test]
    fn a_function_response_names_its_call() {
        let call = FunctionCall { call_id: "c1".into(), name: "Task".into(), arguments: "{}".into() };
        let mut request = ModelRequest::prompt("gemini-squall", "go");
        request.input.push(InputItem::FunctionCall(call));
        request.input.push(InputItem::FunctionOutput { call_id: "c1".into(), output: "done".into() });
        let body = request_body(&request);
        assert_eq!(body["contents"][2]["parts"][0]["functionResponse"]["name"], "Task");
    }
}
