//! The Responses API (`POST /responses`): the streamed event sequence and the Response object.
//!
//! Event order for a reply with reasoning, text and a function call:
//! `response.created`, `response.in_progress`, then per output item `output_item.added`,
//! its part/summary events and deltas, `…done` events, `output_item.done`; finally
//! `response.completed` with usage, or `response.failed` / `error` for a scripted failure.
//! Every event carries `sequence_number`, counting from 0.

use serde_json::{json, Value};

use super::errors::code_message;
use super::text::deltas;
use super::{estimate_tokens, ReplyContext, SseEvent};
use crate::scenario_model::{FailureEvent, StreamSpec};

/// Builds the event list while numbering events.
struct EventLog {
    events: Vec<SseEvent>,
}

impl EventLog {
    fn push(&mut self, kind: &str, mut payload: Value) {
        payload["type"] = json!(kind);
        payload["sequence_number"] = json!(self.events.len());
        self.events.push(SseEvent::named(kind, &payload));
    }

    /// An output delta event, formatted directly: deltas are most of a stream's events, and building
    /// a JSON map for each one was most of the time squall spent per request. `at` is the
    /// item's location fields, rendered once per item (`"item_id":…,"output_index":…`).
    fn push_delta(&mut self, kind: &str, at: &str, delta: &str, extra: &str) {
        let data = format!(
            "{{\"type\":\"{kind}\",\"sequence_number\":{},{at},\"delta\":{}{extra}}}",
            self.events.len(),
            Value::from(delta)
        );
        self.events.push(SseEvent {
            event: Some(kind.to_owned()),
            data,
            terminal: false,
            output: true,
            framing: super::Framing::Sse,
        });
    }
}

/// The fields of a location object as a JSON fragment without braces.
fn fields(location: &Value) -> String {
    let text = location.to_string();
    // Callers pass the location objects this module builds: the text is `{…}`, never shorter.
    text.get(1..text.len().saturating_sub(1)).unwrap_or_default().to_owned()
}

/// The streamed events of a scripted reply.
pub(crate) fn stream_events(spec: &StreamSpec, ctx: &ReplyContext) -> Vec<SseEvent> {
    let mut log = EventLog { events: Vec::new() };
    log.push("response.created", json!({"response": response_object_with(ctx, "in_progress", Vec::new(), None)}));
    log.push("response.in_progress", json!({"response": response_object_with(ctx, "in_progress", Vec::new(), None)}));
    let failing = spec.fail.is_some();
    let mut done_items = Vec::new();
    for (output_index, item) in output_items(spec, ctx).into_iter().enumerate() {
        item.stream(&mut log, output_index, !failing);
        if !failing {
            done_items.push(item.completed_json());
        }
    }
    match &spec.fail {
        None => {
            let usage = usage(ctx, spec);
            let response = response_object_with(ctx, "completed", done_items, Some(usage));
            log.push("response.completed", json!({"response": response}));
            if let Some(last) = log.events.pop() {
                log.events.push(last.terminal());
            }
        }
        Some(failure) => {
            let message = failure.message.clone().unwrap_or_else(|| code_message(&failure.code));
            match failure.event {
                FailureEvent::ResponseFailed => {
                    let mut response = response_object_with(ctx, "failed", Vec::new(), None);
                    response["error"] = json!({"code": failure.code, "message": message});
                    log.push("response.failed", json!({"response": response}));
                }
                FailureEvent::Error => {
                    log.push("error", json!({"code": failure.code, "message": message, "param": null}));
                }
            }
        }
    }
    log.events
}

/// The non-streamed Response object of a successful scripted reply.
pub(crate) fn response_object(spec: &StreamSpec, ctx: &ReplyContext) -> Value {
    let items = output_items(spec, ctx).iter().map(OutputItem::completed_json).collect();
    response_object_with(ctx, "completed", items, Some(usage(ctx, spec)))
}

fn response_object_with(ctx: &ReplyContext, status: &str, output: Vec<Value>, usage: Option<Value>) -> Value {
    json!({
        "id": ctx.id("resp"),
        "object": "response",
        "created_at": ctx.created_at,
        "status": status,
        "background": false,
        "error": null,
        "incomplete_details": null,
        "instructions": null,
        "max_output_tokens": null,
        "model": ctx.model,
        "output": output,
        "parallel_tool_calls": true,
        "previous_response_id": null,
        "reasoning": {"effort": null, "summary": null},
        "store": false,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": null,
        "metadata": {},
    })
}

fn usage(ctx: &ReplyContext, spec: &StreamSpec) -> Value {
    let reasoning = spec.reasoning.as_deref().map_or(0, estimate_tokens);
    let text = spec.effective_text().map_or(0, estimate_tokens);
    let call = spec.function_call.as_ref().map_or(0, |c| estimate_tokens(&c.arguments));
    let output = reasoning + text + call;
    json!({
        "input_tokens": ctx.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": ctx.input_tokens + output,
    })
}

/// One output item of a reply, in the order the Responses API emits them.
enum OutputItem {
    Reasoning { id: String, summary: String },
    Message { id: String, text: String, pieces: Vec<String> },
    FunctionCall { id: String, call_id: String, name: String, arguments: String },
}

fn output_items(spec: &StreamSpec, ctx: &ReplyContext) -> Vec<OutputItem> {
    let mut items = Vec::new();
    if let Some(summary) = &spec.reasoning {
        items.push(OutputItem::Reasoning { id: ctx.id("rs"), summary: summary.clone() });
    }
    if let Some(text) = spec.effective_text() {
        let pieces = deltas(text, spec.chunks);
        items.push(OutputItem::Message { id: ctx.id("msg"), text: text.to_owned(), pieces });
    }
    if let Some(call) = &spec.function_call {
        items.push(OutputItem::FunctionCall {
            id: ctx.id("fc"),
            call_id: call.call_id.clone().unwrap_or_else(|| ctx.id("call")),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        });
    }
    items
}

impl OutputItem {
    fn item_json(&self, completed: bool) -> Value {
        let status = if completed { "completed" } else { "in_progress" };
        match self {
            OutputItem::Reasoning { id, summary } => {
                let summary = if completed { json!([{"type": "summary_text", "text": summary}]) } else { json!([]) };
                json!({"id": id, "type": "reasoning", "summary": summary})
            }
            OutputItem::Message { id, text, .. } => {
                let content = if completed { json!([output_text(text)]) } else { json!([]) };
                json!({"id": id, "type": "message", "status": status, "role": "assistant", "content": content})
            }
            OutputItem::FunctionCall { id, call_id, name, arguments } => {
                let arguments = if completed { arguments.as_str() } else { "" };
                json!({"id": id, "type": "function_call", "status": status, "call_id": call_id, "name": name, "arguments": arguments})
            }
        }
    }

    fn completed_json(&self) -> Value {
        self.item_json(true)
    }

    /// Emit this item's events; `finish` adds the `…done` events (left out when the stream fails).
    fn stream(&self, log: &mut EventLog, output_index: usize, finish: bool) {
        log.push("response.output_item.added", json!({"output_index": output_index, "item": self.item_json(false)}));
        match self {
            OutputItem::Reasoning { id, summary } => {
                let at = json!({"item_id": id, "output_index": output_index, "summary_index": 0});
                log.push(
                    "response.reasoning_summary_part.added",
                    with(&at, json!({"part": {"type": "summary_text", "text": ""}})),
                );
                let at_fields = fields(&at);
                for piece in deltas(summary, None) {
                    log.push_delta("response.reasoning_summary_text.delta", &at_fields, &piece, "");
                }
                if finish {
                    log.push("response.reasoning_summary_text.done", with(&at, json!({"text": summary})));
                    log.push(
                        "response.reasoning_summary_part.done",
                        with(&at, json!({"part": {"type": "summary_text", "text": summary}})),
                    );
                }
            }
            OutputItem::Message { id, text, pieces } => {
                let at = json!({"item_id": id, "output_index": output_index, "content_index": 0});
                log.push("response.content_part.added", with(&at, json!({"part": output_text("")})));
                let at_fields = fields(&at);
                for piece in pieces {
                    log.push_delta("response.output_text.delta", &at_fields, piece, ",\"logprobs\":[]");
                }
                if finish {
                    log.push("response.output_text.done", with(&at, json!({"text": text, "logprobs": []})));
                    log.push("response.content_part.done", with(&at, json!({"part": output_text(text)})));
                }
            }
            OutputItem::FunctionCall { id, name, arguments, .. } => {
                let at = json!({"item_id": id, "output_index": output_index});
                let at_fields = fields(&at);
                for piece in deltas(arguments, Some(3)) {
                    log.push_delta("response.function_call_arguments.delta", &at_fields, &piece, "");
                }
                if finish {
                    log.push(
                        "response.function_call_arguments.done",
                        with(&at, json!({"name": name, "arguments": arguments})),
                    );
                }
            }
        }
        if finish {
            log.push("response.output_item.done", json!({"output_index": output_index, "item": self.item_json(true)}));
        }
    }
}

fn output_text(text: &str) -> Value {
    json!({"type": "output_text", "text": text, "annotations": [], "logprobs": []})
}

/// `base` with the fields of `extra` added.
fn with(base: &Value, extra: Value) -> Value {
    let mut merged = base.clone();
    if let (Some(target), Value::Object(fields)) = (merged.as_object_mut(), extra) {
        target.extend(fields);
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario_model::{FunctionCallSpec, StreamFailure};

    fn types(events: &[SseEvent]) -> Vec<String> {
        events.iter().map(|e| e.event.clone().unwrap_or_default()).collect()
    }

    #[test]
    fn text_reply_has_the_real_event_sequence() {
        let spec = StreamSpec { text: Some("Hi there".into()), ..StreamSpec::default() };
        let events = stream_events(&spec, &ReplyContext::placeholder());
        assert_eq!(
            types(&events),
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.completed",
            ]
        );
        assert!(events.last().is_some_and(|e| e.terminal));
        for (i, event) in events.iter().enumerate() {
            let value: Value = serde_json::from_str(&event.data).expect("json");
            assert_eq!(value["sequence_number"], json!(i));
        }
    }

    #[test]
    fn failure_ends_with_response_failed_and_no_terminal_event() {
        let spec = StreamSpec {
            text: Some("partial".into()),
            fail: Some(StreamFailure { code: "server_error".into(), ..StreamFailure::default() }),
            ..StreamSpec::default()
        };
        let events = stream_events(&spec, &ReplyContext::placeholder());
        let last = events.last().expect("events");
        assert_eq!(last.event.as_deref(), Some("response.failed"));
        assert!(!events.iter().any(|e| e.terminal));
    }

    #[test]
    fn function_call_arguments_rejoin() {
        let spec = StreamSpec {
            function_call: Some(FunctionCallSpec {
                name: "Task".into(),
                arguments: r#"{"agent":"deep-research"}"#.into(),
                call_id: None,
            }),
            ..StreamSpec::default()
        };
        let events = stream_events(&spec, &ReplyContext::placeholder());
        let joined: String = events
            .iter()
            .filter(|e| e.event.as_deref() == Some("response.function_call_arguments.delta"))
            .map(|e| serde_json::from_str::<Value>(&e.data).expect("json")["delta"].as_str().unwrap_or("").to_owned())
            .collect();
        assert_eq!(joined, r#"{"agent":"deep-research"}"#);
    }
}
