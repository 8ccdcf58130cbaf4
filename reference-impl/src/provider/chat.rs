//! Chat Completions: request bodies and the streamed-chunk accumulator.

use serde_json::{json, Value};

use super::responses::{Observed, Progress};
use super::sse::SseMessage;
use super::{Delta, FunctionCall, InputItem, ModelOutput, ModelRequest};
use crate::decide::classify::{classify_stream_error, classify_transport, ProviderError, TransportFailure};

/// The Chat Completions request body for `request`, streamed.
pub fn request_body(request: &ModelRequest) -> Value {
    let mut messages = Vec::new();
    if let Some(instructions) = &request.instructions {
        messages.push(json!({"role": "system", "content": instructions}));
    }
    for item in &request.input {
        messages.push(match item {
            InputItem::User(text) => json!({"role": "user", "content": text}),
            InputItem::Assistant(text) => json!({"role": "assistant", "content": text}),
            InputItem::FunctionCall(call) => json!({
                "role": "assistant",
                "content": null,
                "tool_calls": [{"id": call.call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}],
            }),
            InputItem::FunctionOutput { call_id, output } => json!({"role": "tool", "tool_call_id": call_id, "content": output}),
        });
    }
    let mut body = json!({"model": request.model, "messages": messages, "stream": true});
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
        body["tools"] = json!(tools);
    }
    body
}

/// Builds the output from chat chunks; `[DONE]` is the terminal event.
#[derive(Debug, Default)]
pub struct ChatAccumulator {
    output: ModelOutput,
}

impl ChatAccumulator {
    /// Take one streamed chunk: what it shows goes to `observe`; a stream error is classified.
    pub fn on_message(
        &mut self,
        message: &SseMessage,
        observe: &mut dyn FnMut(Observed<'_>),
    ) -> Result<Progress, ProviderError> {
        if message.data.trim() == "[DONE]" {
            return Ok(Progress::Done);
        }
        let chunk: Value = serde_json::from_str(&message.data)
            .map_err(|e| classify_transport(TransportFailure::Garbage, &format!("chunk is not JSON ({e})")))?;
        if let Some(error) = chunk.get("error") {
            return Err(classify_stream_error(
                error["code"].as_str().unwrap_or(""),
                error["message"].as_str().unwrap_or(""),
            ));
        }
        let delta = &chunk["choices"][0]["delta"];
        if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
            self.output.text.push_str(text);
            observe(Observed::Delta(Delta::Text(text)));
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().unwrap_or(0) as usize;
            if index >= self.output.function_calls.len() {
                self.output.function_calls.resize(
                    index + 1,
                    FunctionCall { call_id: String::new(), name: String::new(), arguments: String::new() },
                );
                observe(Observed::ToolCallStarted);
            }
            let target = &mut self.output.function_calls[index];
            if let Some(id) = call["id"].as_str() {
                target.call_id = id.to_owned();
            }
            if let Some(name) = call["function"]["name"].as_str() {
                target.name.push_str(name);
            }
            if let Some(arguments) = call["function"]["arguments"].as_str() {
                target.arguments.push_str(arguments);
            }
        }
        Ok(Progress::Continue)
    }

    /// What the stream produced.
    pub fn into_output(self) -> ModelOutput {
        self.output
    }
}
