//! The Anthropic Messages API: request bodies and the streamed-event accumulator.
//!
//! Content blocks arrive by index: `content_block_start` opens a text, thinking or `tool_use`
//! block, `content_block_delta` extends it (`text_delta`, `thinking_delta`,
//! `input_json_delta`), and `message_stop` is the terminal event. An `error` event is an
//! in-stream failure, classified like the same failure in the other APIs.

use serde_json::{json, Value};

use super::responses::{Observed, Progress};
use super::sse::SseMessage;
use super::{Delta, FunctionCall, InputItem, ModelOutput, ModelRequest};
use crate::decide::classify::{classify_stream_error, ProviderError};

/// The `max_tokens` every Messages request must carry.
const MAX_TOKENS: u32 = 8192;

/// The Messages API request body for `request`, streamed.
pub fn request_body(request: &ModelRequest) -> Value {
    let messages: Vec<Value> = request
        .input
        .iter()
        .map(|item| match item {
            InputItem::User(text) => json!({"role": "user", "content": text}),
            InputItem::Assistant(text) => json!({"role": "assistant", "content": text}),
            InputItem::FunctionCall(call) => {
                let input = serde_json::from_str::<Value>(&call.arguments).unwrap_or_else(|_| json!({}));
                json!({"role": "assistant", "content": [{"type": "tool_use", "id": call.call_id, "name": call.name, "input": input}]})
            }
            InputItem::FunctionOutput { call_id, output } => {
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": output}]})
            }
        })
        .collect();
    let mut body = json!({"model": request.model, "max_tokens": MAX_TOKENS, "messages": messages, "stream": true});
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        body["tools"] = json!(tools);
    }
    if let Some(instructions) = &request.instructions {
        body["system"] = json!(instructions);
    }
    body
}

/// Builds the output from Messages API events.
#[derive(Debug, Default)]
pub struct MessagesAccumulator {
    output: ModelOutput,
    /// Tool calls by content-block index, in the order they were opened.
    calls: Vec<(u64, FunctionCall)>,
}

impl MessagesAccumulator {
    /// Take one streamed event: what it shows goes to `observe`; an `error` event is classified.
    pub fn on_message(
        &mut self,
        message: &SseMessage,
        observe: &mut dyn FnMut(Observed<'_>),
    ) -> Result<Progress, ProviderError> {
        let event = message.json()?;
        let kind = message.kind(&event);
        let index = event["index"].as_u64().unwrap_or(0);
        match kind {
            "content_block_start" if event["content_block"]["type"] == "tool_use" => {
                let block = &event["content_block"];
                let call = FunctionCall {
                    call_id: block["id"].as_str().unwrap_or("").to_owned(),
                    name: block["name"].as_str().unwrap_or("").to_owned(),
                    arguments: String::new(),
                };
                self.calls.push((index, call));
                observe(Observed::ToolCallStarted);
            }
            "content_block_delta" => {
                let delta = &event["delta"];
                match delta["type"].as_str().unwrap_or("") {
                    "text_delta" => {
                        let text = delta["text"].as_str().unwrap_or("");
                        self.output.text.push_str(text);
                        observe(Observed::Delta(Delta::Text(text)));
                    }
                    "thinking_delta" => {
                        let thinking = delta["thinking"].as_str().unwrap_or("");
                        self.output.reasoning.push_str(thinking);
                        observe(Observed::Delta(Delta::Reasoning(thinking)));
                    }
                    "input_json_delta" => {
                        if let Some((_, call)) = self.calls.iter_mut().find(|(at, _)| *at == index) {
                            call.arguments.push_str(delta["partial_json"].as_str().unwrap_or(""));
                        }
                    }
                    _ => {}
                }
            }
            "message_stop" => return Ok(Progress::Done),
            "error" => {
                let error = &event["error"];
                return Err(classify_stream_error(
                    error["type"].as_str().unwrap_or(""),
                    error["message"].as_str().unwrap_or(""),
                ));
            }
            _ => {}
        }
        Ok(Progress::Continue)
    }

    /// What the stream produced, its tool calls assembled.
    pub fn into_output(mut self) -> ModelOutput {
        self.output.function_calls = super::assembled_calls(self.calls);
        self.output
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(accumulator: &mut MessagesAccumulator, events: &[Value]) -> Result<Progress, ProviderError> {
        let mut last = Progress::Continue;
        for event in events {
            let message = SseMessage { event: event["type"].as_str().map(str::to_owned), data: event.to_string() };
            last = accumulator.on_message(&message, &mut |_| {})?;
        }
        Ok(last)
    }

    #[test]
    fn text_thinking_and_tool_input_are_rebuilt_and_message_stop_ends_the_stream() {
        let mut accumulator = MessagesAccumulator::default();
        let events = [
            json!({"type": "message_start", "message": {}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "plan"}}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Hi"}}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {}}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"a\":"}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "1}"}}),
            json!({"type": "message_stop"}),
        ];
        assert_eq!(feed(&mut accumulator, &events).expect("no error"), Progress::Done);
        let output = accumulator.into_output();
        assert_eq!((output.text.as_str(), output.reasoning.as_str()), ("Hi", "plan"));
        let call = FunctionCall { call_id: "toolu_1".into(), name: "Task".into(), arguments: "{\"a\":1}".into() };
        assert_eq!(output.function_calls, [call]);
    }

    #[test]
    fn an_overloaded_error_event_is_a_retryable_server_error() {
        let mut accumulator = MessagesAccumulator::default();
        let error = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        let failure = feed(&mut accumulator, &[error]).expect_err("an error event fails the attempt");
        assert!(crate::decide::classify::is_retryable(&failure), "{failure:?}");
    }
}
