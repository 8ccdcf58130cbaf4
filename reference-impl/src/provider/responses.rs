//! The Responses API: request bodies and the streamed-event accumulator.

use serde_json::{json, Value};

use super::sse::SseMessage;
use super::{Delta, FunctionCall, InputItem, ModelOutput, ModelRequest};
use crate::decide::classify::{classify_stream_error, classify_transport, ProviderError, TransportFailure};

/// What an accumulator tells the provider as events arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observed<'a> {
    /// A piece of output.
    Delta(Delta<'a>),
    /// The model began a tool call.
    ToolCallStarted,
}

/// Whether the stream reached its terminal event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// More is to come.
    Continue,
    /// The terminal event arrived.
    Done,
}

/// The Responses API request body for `request`, streamed.
pub fn request_body(request: &ModelRequest) -> Value {
    let input: Vec<Value> = request
        .input
        .iter()
        .map(|item| match item {
            InputItem::User(text) => json!({"role": "user", "content": text}),
            InputItem::Assistant(text) => json!({"role": "assistant", "content": text}),
            InputItem::FunctionCall(call) => {
                json!({"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments})
            }
            InputItem::FunctionOutput { call_id, output } => json!({"type": "function_call_output", "call_id": call_id, "output": output}),
        })
        .collect();
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| json!({"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters}))
        .collect();
    let mut body = json!({"model": request.model, "input": input, "stream": true});
    if !tools.is_empty() {
        body["tools"] = json!(tools);
    }
    if let Some(instructions) = &request.instructions {
        body["instructions"] = json!(instructions);
    }
    body
}

/// Builds the output from Responses API events.
#[derive(Debug, Default)]
pub struct ResponsesAccumulator {
    output: ModelOutput,
    /// Function calls by item id, in the order they were added.
    calls: Vec<(String, FunctionCall)>,
}

impl ResponsesAccumulator {
    /// Take one streamed event: what it shows goes to `observe`; a failure event is classified.
    pub fn on_message(
        &mut self,
        message: &SseMessage,
        observe: &mut dyn FnMut(Observed<'_>),
    ) -> Result<Progress, ProviderError> {
        let event = message.json()?;
        let kind = message.kind(&event);
        match kind {
            "response.output_text.delta" => {
                let delta = event["delta"].as_str().unwrap_or("");
                self.output.text.push_str(delta);
                observe(Observed::Delta(Delta::Text(delta)));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let delta = event["delta"].as_str().unwrap_or("");
                self.output.reasoning.push_str(delta);
                observe(Observed::Delta(Delta::Reasoning(delta)));
            }
            "response.output_item.added" if event["item"]["type"] == "function_call" => {
                let item = &event["item"];
                let call = FunctionCall {
                    call_id: item["call_id"].as_str().unwrap_or("").to_owned(),
                    name: item["name"].as_str().unwrap_or("").to_owned(),
                    arguments: item["arguments"].as_str().unwrap_or("").to_owned(),
                };
                self.calls.push((item["id"].as_str().unwrap_or("").to_owned(), call));
                observe(Observed::ToolCallStarted);
            }
            "response.function_call_arguments.delta" => {
                if let Some(call) = self.call(&event["item_id"]) {
                    call.arguments.push_str(event["delta"].as_str().unwrap_or(""));
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(call) = self.call(&event["item_id"]) {
                    call.arguments = event["arguments"].as_str().unwrap_or("").to_owned();
                }
            }
            "response.completed" => return Ok(Progress::Done),
            "response.failed" => {
                let error = &event["response"]["error"];
                return Err(classify_stream_error(
                    error["code"].as_str().unwrap_or(""),
                    error["message"].as_str().unwrap_or(""),
                ));
            }
            "error" => {
                return Err(classify_stream_error(
                    event["code"].as_str().unwrap_or(""),
                    event["message"].as_str().unwrap_or(""),
                ))
            }
            "response.incomplete" => {
                return Err(classify_transport(TransportFailure::Truncated, "the response ended incomplete"));
            }
            _ => {}
        }
        Ok(Progress::Continue)
    }

    fn call(&mut self, item_id: &Value) -> Option<&mut FunctionCall> {
        let id = item_id.as_str()?;
        self.calls.iter_mut().find(|(item, _)| item == id).map(|(_, call)| call)
    }

    /// What the stream produced, its tool calls assembled.
    pub fn into_output(mut self) -> ModelOutput {
        self.output.function_calls = self.calls.into_iter().map(|(_, call)| call).collect();
        self.output
    }
}
