//! A real provider's reply read back into a scenario attempt (`squall record`, a run's
//! `/recording`): what it said — text, reasoning, a function call, an in-stream failure — or the
//! error status it answered with and the headers that tell a client when to retry. Ids,
//! timestamps and usage are not kept: squall makes its own when it replays the attempt, so a
//! recording replays the same content whoever recorded it.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::event_stream::{read_message, MessageType};
use super::real_stream::{classify, first_event_len};
use crate::api::Api;
use crate::scenario_model::{
    Attempt, ErrorSpec, FailureEvent, Fault, FaultKind, FaultPoint, FunctionCallSpec, StreamFailure, StreamSpec,
};

/// The reply headers a recording keeps: those that tell a client whether and when to retry (an
/// AWS SDK decides by the exception `x-amzn-errortype` names).
pub(crate) const KEPT_HEADERS: [&str; 4] = ["retry-after", "retry-after-ms", "x-should-retry", "x-amzn-errortype"];

/// What an upstream answered one request with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UpstreamReply {
    pub(crate) api: Api,
    pub(crate) status: u16,
    /// Of the reply's headers, those in [`KEPT_HEADERS`].
    pub(crate) headers: Vec<(String, String)>,
    /// `text/event-stream`.
    pub(crate) streamed: bool,
    pub(crate) body: Vec<u8>,
    /// The upstream's body broke off (a reset, an EOF) before its end.
    pub(crate) broken: bool,
}

impl UpstreamReply {
    /// The attempt that replays this reply.
    pub(crate) fn attempt(&self) -> Attempt {
        let headers: BTreeMap<String, String> = self.headers.iter().cloned().collect();
        if !(200..300).contains(&self.status) {
            return Attempt { status: Some(self.status), headers, error: Some(self.error()), ..Attempt::default() };
        }
        let mut content = Content::default();
        let (mut terminal, mut outputs) = (false, 0);
        if self.api.streams_json_lines() {
            // Ollama's reply is JSON lines, streamed or not (a whole reply is one line).
            for line in self.body.split(|b| *b == b'\n').filter(|l| !l.trim_ascii().is_empty()) {
                let kind = classify(self.api, line);
                (terminal, outputs) = (terminal || kind.terminal, outputs + u32::from(kind.output));
                if let Ok(event) = serde_json::from_slice::<Value>(line) {
                    content.read_event(self.api, &event);
                }
            }
        } else if self.streamed {
            let mut rest = &self.body[..];
            while let Some(len) = first_event_len(self.api, rest) {
                let kind = classify(self.api, &rest[..len]);
                (terminal, outputs) = (terminal || kind.terminal, outputs + u32::from(kind.output));
                if let Some(event) = event_data(self.api, &rest[..len]) {
                    content.read_event(self.api, &event);
                }
                rest = &rest[len..];
            }
        } else if let Ok(whole) = serde_json::from_slice::<Value>(&self.body) {
            content.read_whole(self.api, &whole);
        }
        // A stream that broke off, or ended without its terminal event (and without a failure
        // event of its own), replays as the fault it was, after the output it had given.
        let streamed = self.streamed || self.api.streams_json_lines();
        let kind = match (streamed, self.broken, terminal || content.fail.is_some()) {
            (_, true, _) => Some(FaultKind::Reset),
            (true, false, false) => Some(FaultKind::Truncate),
            _ => None,
        };
        let fault = kind.map(|kind| Fault::at(kind, FaultPoint::Deltas(outputs)));
        Attempt { stream: Some(content.into_spec()), headers, fault, ..Attempt::default() }
    }

    /// The error object of a status reply, in any API's shape.
    fn error(&self) -> ErrorSpec {
        let body: Value = serde_json::from_slice(&self.body).unwrap_or(Value::Null);
        let error = &body["error"];
        let text = |v: &Value| v.as_str().map(str::to_owned);
        ErrorSpec {
            // OpenAI's and Anthropic's `type`, or Google's `status`.
            kind: text(&error["type"]).or_else(|| text(&error["status"])),
            code: text(&error["code"]),
            // Bedrock's is the body's own `message`.
            message: text(&error["message"]).or_else(|| text(&body["message"])),
            param: text(&error["param"]),
        }
    }
}

/// One event's data as JSON: an SSE event's data (`[DONE]` and non-JSON data: none), or a
/// Bedrock message as AWS's JSON writes a stream's event, `{"<event or exception type>": payload}`.
fn event_data(api: Api, event: &[u8]) -> Option<Value> {
    if api == Api::BedrockInvoke {
        // A `chunk` is a Messages event; an exception reads as the Messages API's `error` event.
        let message = read_message(event).ok()?;
        if message.kind == MessageType::Exception {
            let payload: Value = serde_json::from_slice(&message.payload).ok()?;
            return Some(json!({"type": "error", "error": {"type": message.name, "message": payload["message"]}}));
        }
        return super::bedrock_invoke::chunk_event(&message.payload);
    }
    if api == Api::Bedrock {
        let message = read_message(event).ok()?;
        let payload: Value = serde_json::from_slice(&message.payload).ok()?;
        return Some(Value::Object([(message.name, payload)].into_iter().collect()));
    }
    let text = String::from_utf8_lossy(event);
    let data: Vec<&str> =
        text.lines().filter_map(|l| l.strip_prefix("data:")).map(|d| d.strip_prefix(' ').unwrap_or(d)).collect();
    serde_json::from_str(data.join("\n").trim_end_matches('\r')).ok()
}

/// What a reply said, gathered event by event.
#[derive(Debug, Default)]
struct Content {
    text: String,
    text_deltas: u32,
    reasoning: String,
    call: Option<FunctionCallSpec>,
    fail: Option<StreamFailure>,
}

impl Content {
    fn call(&mut self) -> &mut FunctionCallSpec {
        self.call.get_or_insert_with(|| FunctionCallSpec {
            name: String::new(),
            arguments: String::new(),
            call_id: None,
        })
    }

    fn add_text(&mut self, piece: &str) {
        if !piece.is_empty() {
            self.text.push_str(piece);
            self.text_deltas += 1;
        }
    }

    fn failed(&mut self, code: Option<&str>, message: Option<&str>, event: FailureEvent) {
        let code = code.unwrap_or("server_error").to_owned();
        self.fail = Some(StreamFailure { code, message: message.map(str::to_owned), event });
    }

    fn read_event(&mut self, api: Api, event: &Value) {
        let s = |v: &Value| v.as_str().unwrap_or("").to_owned();
        match api {
            Api::Responses => match event["type"].as_str().unwrap_or("") {
                "response.output_text.delta" => self.add_text(&s(&event["delta"])),
                "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                    self.reasoning.push_str(&s(&event["delta"]));
                }
                "response.output_item.added" if event["item"]["type"] == "function_call" => {
                    self.call().name = s(&event["item"]["name"]);
                }
                "response.function_call_arguments.delta" => self.call().arguments.push_str(&s(&event["delta"])),
                "response.function_call_arguments.done" => self.call().arguments = s(&event["arguments"]),
                "response.failed" => {
                    let error = &event["response"]["error"];
                    self.failed(error["code"].as_str(), error["message"].as_str(), FailureEvent::ResponseFailed);
                }
                "error" => self.failed(event["code"].as_str(), event["message"].as_str(), FailureEvent::Error),
                _ => {}
            },
            Api::Chat => {
                if let Some(error) = event.get("error") {
                    return self.failed(
                        error["code"].as_str(),
                        error["message"].as_str(),
                        FailureEvent::ResponseFailed,
                    );
                }
                let delta = &event["choices"][0]["delta"];
                self.add_text(&s(&delta["content"]));
                for call in delta["tool_calls"].as_array().into_iter().flatten() {
                    let function = &call["function"];
                    if let Some(name) = function["name"].as_str() {
                        self.call().name = name.to_owned();
                    }
                    self.call().arguments.push_str(&s(&function["arguments"]));
                }
            }
            Api::Messages | Api::BedrockInvoke => match event["type"].as_str().unwrap_or("") {
                "content_block_start" if event["content_block"]["type"] == "tool_use" => {
                    self.call().name = s(&event["content_block"]["name"]);
                }
                "content_block_delta" => {
                    let delta = &event["delta"];
                    match delta["type"].as_str().unwrap_or("") {
                        "text_delta" => self.add_text(&s(&delta["text"])),
                        "thinking_delta" => self.reasoning.push_str(&s(&delta["thinking"])),
                        "input_json_delta" => self.call().arguments.push_str(&s(&delta["partial_json"])),
                        _ => {}
                    }
                }
                "error" => {
                    let error = &event["error"];
                    self.failed(error["type"].as_str(), error["message"].as_str(), FailureEvent::ResponseFailed);
                }
                _ => {}
            },
            Api::Gemini => {
                if let Some(error) = event.get("error") {
                    let code = google_code(error["status"].as_str().unwrap_or(""));
                    return self.failed(Some(code), error["message"].as_str(), FailureEvent::ResponseFailed);
                }
                self.read_gemini_parts(&event["candidates"][0]["content"]["parts"]);
            }
            Api::OllamaChat | Api::OllamaGenerate => self.read_ollama(event),
            Api::Bedrock => self.read_bedrock(event),
        }
    }

    /// One Bedrock stream event, `{"<type>": payload}`: a tool use's start, a delta of
    /// reasoning, text or tool input, or an exception.
    fn read_bedrock(&mut self, event: &Value) {
        let Some((name, payload)) = event.as_object().and_then(|o| o.iter().next()) else { return };
        let s = |v: &Value| v.as_str().unwrap_or("").to_owned();
        match name.as_str() {
            "contentBlockStart" => {
                if let Some(tool) = payload["start"].get("toolUse") {
                    self.call().name = s(&tool["name"]);
                }
            }
            "contentBlockDelta" => {
                let delta = &payload["delta"];
                self.add_text(&s(&delta["text"]));
                self.reasoning.push_str(&s(&delta["reasoningContent"]["text"]));
                if let Some(input) = delta["toolUse"]["input"].as_str() {
                    self.call().arguments.push_str(input);
                }
            }
            name if name.ends_with("Exception") => {
                self.failed(Some(name), payload["message"].as_str(), FailureEvent::ResponseFailed);
            }
            _ => {}
        }
    }

    /// One of Ollama's lines (or its whole reply): thinking, text, tool calls, or an error.
    fn read_ollama(&mut self, line: &Value) {
        if let Some(message) = line["error"].as_str() {
            return self.failed(None, Some(message), FailureEvent::ResponseFailed);
        }
        let source = if line.get("message").is_some() { &line["message"] } else { line };
        if let Some(thinking) = source["thinking"].as_str() {
            self.reasoning.push_str(thinking);
        }
        self.add_text(source["content"].as_str().or(source["response"].as_str()).unwrap_or(""));
        for call in source["tool_calls"].as_array().into_iter().flatten() {
            let spec = self.call();
            spec.name = call["function"]["name"].as_str().unwrap_or("").to_owned();
            spec.arguments = call["function"]["arguments"].to_string();
        }
    }

    fn read_gemini_parts(&mut self, parts: &Value) {
        for part in parts.as_array().into_iter().flatten() {
            if let Some(call) = part.get("functionCall") {
                let spec = self.call();
                spec.name = call["name"].as_str().unwrap_or("").to_owned();
                spec.arguments = call["args"].to_string();
            } else if let Some(text) = part["text"].as_str() {
                if part["thought"] == true {
                    self.reasoning.push_str(text);
                } else {
                    self.add_text(text);
                }
            }
        }
    }

    fn read_whole(&mut self, api: Api, body: &Value) {
        let s = |v: &Value| v.as_str().unwrap_or("").to_owned();
        match api {
            Api::Responses => {
                for item in body["output"].as_array().into_iter().flatten() {
                    match item["type"].as_str().unwrap_or("") {
                        "message" => {
                            item["content"].as_array().into_iter().flatten().for_each(|c| self.add_text(&s(&c["text"])))
                        }
                        "reasoning" => {
                            item["summary"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .for_each(|c| self.reasoning.push_str(&s(&c["text"])));
                        }
                        "function_call" => {
                            *self.call() = FunctionCallSpec {
                                name: s(&item["name"]),
                                arguments: s(&item["arguments"]),
                                call_id: None,
                            };
                        }
                        _ => {}
                    }
                }
            }
            Api::Chat => {
                let message = &body["choices"][0]["message"];
                self.add_text(&s(&message["content"]));
                if let Some(call) = message["tool_calls"].get(0) {
                    *self.call() = FunctionCallSpec {
                        name: s(&call["function"]["name"]),
                        arguments: s(&call["function"]["arguments"]),
                        call_id: None,
                    };
                }
            }
            Api::Messages | Api::BedrockInvoke => {
                for block in body["content"].as_array().into_iter().flatten() {
                    match block["type"].as_str().unwrap_or("") {
                        "text" => self.add_text(&s(&block["text"])),
                        "thinking" => self.reasoning.push_str(&s(&block["thinking"])),
                        "tool_use" => {
                            *self.call() = FunctionCallSpec {
                                name: s(&block["name"]),
                                arguments: block["input"].to_string(),
                                call_id: None,
                            };
                        }
                        _ => {}
                    }
                }
            }
            Api::Gemini => self.read_gemini_parts(&body["candidates"][0]["content"]["parts"]),
            Api::OllamaChat | Api::OllamaGenerate => self.read_ollama(body),
            Api::Bedrock => {
                for block in body["output"]["message"]["content"].as_array().into_iter().flatten() {
                    self.add_text(&s(&block["text"]));
                    self.reasoning.push_str(&s(&block["reasoningContent"]["reasoningText"]["text"]));
                    if let Some(tool) = block.get("toolUse") {
                        *self.call() = FunctionCallSpec {
                            name: s(&tool["name"]),
                            arguments: tool["input"].to_string(),
                            call_id: None,
                        };
                    }
                }
            }
        }
    }

    fn into_spec(self) -> StreamSpec {
        let words = self.text.split_whitespace().count() as u32;
        let chunks = (self.text_deltas > 0 && self.text_deltas != words).then_some(self.text_deltas);
        StreamSpec {
            text: (!self.text.is_empty()).then_some(self.text),
            chunks,
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            function_call: self.call,
            fail: self.fail,
            event_delay_ms: None,
        }
    }
}

/// The failure code scenarios share for a Google error status.
fn google_code(status: &str) -> &'static str {
    match status {
        "RESOURCE_EXHAUSTED" => "rate_limit_exceeded",
        "UNAVAILABLE" => "overloaded_error",
        _ => "server_error",
    }
}
