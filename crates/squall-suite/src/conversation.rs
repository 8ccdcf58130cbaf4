//! What a journaled model request says about its conversation: the instructions, and the tool
//! outputs the client sent back with the name of the tool that produced each. Reads both the
//! Responses shape (`instructions`, `input[]` items `function_call` / `function_call_output`),
//! the Chat Completions shape (`messages[]` with `tool_calls` and `role: "tool"`), the
//! Messages shape (`system`, `messages[]` whose content blocks are `tool_use` / `tool_result`)
//! the Gemini shape (`systemInstruction`, `contents[]` whose parts are `functionCall` /
//! `functionResponse`) and Bedrock's Converse shape (`system`, `messages[]` whose content blocks
//! are `toolUse` / `toolResult`).

use serde_json::Value;

use squall::journal::JournalEntry;

/// A tool output as the client sent it to the model.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ToolOutput {
    /// The tool's name, from the call the output answers (empty when the call is not found).
    pub tool: String,
    pub output: String,
}

/// The system instructions of a request, as text (empty when there are none).
pub(super) fn instructions(entry: &JournalEntry) -> String {
    let body = &entry.body;
    let mut parts: Vec<String> = Vec::new();
    if let Some(text) = body["instructions"].as_str() {
        parts.push(text.to_owned());
    }
    if !body["system"].is_null() {
        parts.push(text_of(&body["system"]));
    }
    for message in items(body).filter(|m| m["role"] == "system" || m["role"] == "developer") {
        parts.push(text_of(&message["content"]));
    }
    for gemini in [&body["systemInstruction"], &body["system_instruction"]] {
        if !gemini.is_null() {
            parts.push(text_of(&gemini["parts"]));
        }
    }
    parts.join("\n")
}

/// Every tool output in a request, in order.
pub(super) fn tool_outputs(entry: &JournalEntry) -> Vec<ToolOutput> {
    let body = &entry.body;
    let calls: Vec<(String, String)> = items(body).flat_map(tool_calls).collect();
    let name_of =
        |id: &str| calls.iter().find(|(call, _)| call == id).map(|(_, name)| name.clone()).unwrap_or_default();
    items(body)
        .filter_map(|item| {
            if item["type"] == "function_call_output" {
                let id = item["call_id"].as_str().unwrap_or("");
                Some(ToolOutput { tool: name_of(id), output: text_of(&item["output"]) })
            } else if item["role"] == "tool" {
                let id = item["tool_call_id"].as_str().unwrap_or("");
                Some(ToolOutput { tool: name_of(id), output: text_of(&item["content"]) })
            } else if item["type"] == "tool_result" {
                let id = item["tool_use_id"].as_str().unwrap_or("");
                Some(ToolOutput { tool: name_of(id), output: text_of(&item["content"]) })
            } else if let Some(result) = item.get("toolResult") {
                let id = result["toolUseId"].as_str().unwrap_or("");
                Some(ToolOutput { tool: name_of(id), output: text_of(&result["content"]) })
            } else if let Some(response) = item.get("functionResponse") {
                // Gemini names the function in its response; the output is an object, by
                // convention `{"output": …}`.
                let named = response["name"].as_str().filter(|n| !n.is_empty()).map(str::to_owned);
                let tool = named.unwrap_or_else(|| name_of(response["id"].as_str().unwrap_or("")));
                let output = &response["response"];
                let output = output.get("output").map_or_else(|| text_of(output), text_of);
                Some(ToolOutput { tool, output })
            } else {
                None
            }
        })
        .collect()
}

/// The outputs of tool `name` across requests, in order, without repeats (a conversation
/// resends earlier outputs with every later request).
pub(super) fn outputs_of<'a>(entries: impl IntoIterator<Item = &'a JournalEntry>, name: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for output in entries.into_iter().flat_map(tool_outputs).filter(|o| o.tool == name) {
        if !seen.contains(&output.output) {
            seen.push(output.output);
        }
    }
    seen
}

/// Every tool output of any tool, without repeats.
pub(super) fn all_outputs<'a>(entries: impl IntoIterator<Item = &'a JournalEntry>) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for output in entries.into_iter().flat_map(tool_outputs) {
        if !seen.contains(&output.output) {
            seen.push(output.output);
        }
    }
    seen
}

/// The conversation items: Responses `input` (when a list), Chat or Messages `messages`, the
/// content blocks of messages whose content is a list (Messages `tool_use`/`tool_result`), and
/// the parts of Gemini's `contents`.
fn items(body: &Value) -> impl Iterator<Item = &Value> {
    let messages = body["messages"].as_array().into_iter().flatten();
    let blocks = messages.clone().flat_map(|m| m["content"].as_array().into_iter().flatten());
    let parts =
        body["contents"].as_array().into_iter().flatten().flat_map(|c| c["parts"].as_array().into_iter().flatten());
    body["input"].as_array().into_iter().flatten().chain(messages).chain(blocks).chain(parts)
}

/// `(call id, tool name)` of the calls in one item.
fn tool_calls(item: &Value) -> Vec<(String, String)> {
    let mut calls = Vec::new();
    if item["type"] == "function_call" {
        calls.push((str_field(&item["call_id"]), str_field(&item["name"])));
    }
    if item["type"] == "tool_use" {
        calls.push((str_field(&item["id"]), str_field(&item["name"])));
    }
    if let Some(call) = item.get("functionCall") {
        calls.push((str_field(&call["id"]), str_field(&call["name"])));
    }
    if let Some(call) = item.get("toolUse") {
        calls.push((str_field(&call["toolUseId"]), str_field(&call["name"])));
    }
    for call in item["tool_calls"].as_array().into_iter().flatten() {
        calls.push((str_field(&call["id"]), str_field(&call["function"]["name"])));
    }
    calls
}

fn str_field(value: &Value) -> String {
    value.as_str().unwrap_or("").to_owned()
}

/// A content value as text: a string, or the text parts of a list of parts.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => {
            parts.iter().filter_map(|p| p["text"].as_str().or(p.as_str())).collect::<Vec<_>>().join("")
        }
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(body: Value) -> JournalEntry {
        let mut value = json!({
            "index": 0, "track": "main", "attempt": 0, "method": "POST", "path": "/responses", "headers": {}, "body": null,
            "stream": true, "received_at_ms": 0.0, "finished_at_ms": 1.0, "status": 200, "fault": null, "end": "completed",
            "events_sent": 1, "bytes_sent": 1, "terminal_sent": true
        });
        value["body"] = body;
        serde_json::from_value(value).expect("entry")
    }

    #[test]
    fn responses_tool_outputs_carry_the_name_of_their_call() {
        let request = entry(json!({"instructions": "be brief", "input": [
            {"role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "c1", "name": "Task", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "{\"ok\": false}"}
        ]}));
        assert_eq!(tool_outputs(&request), vec![ToolOutput { tool: "Task".into(), output: "{\"ok\": false}".into() }]);
        assert_eq!(instructions(&request), "be brief");
    }

    #[test]
    fn chat_tool_messages_carry_the_name_of_their_call() {
        let request = entry(json!({"messages": [
            {"role": "system", "content": "rules"},
            {"role": "assistant", "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "web_search", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "t1", "content": [{"type": "text", "text": "found"}]}
        ]}));
        assert_eq!(tool_outputs(&request), vec![ToolOutput { tool: "web_search".into(), output: "found".into() }]);
        assert_eq!(instructions(&request), "rules");
        assert_eq!(outputs_of([&request, &request], "web_search"), vec!["found".to_owned()]);
    }

    #[test]
    fn messages_tool_results_carry_the_name_of_their_tool_use() {
        let request = entry(json!({"system": "rules", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "{\"ok\": false}"}]}
        ]}));
        assert_eq!(tool_outputs(&request), vec![ToolOutput { tool: "Task".into(), output: "{\"ok\": false}".into() }]);
        assert_eq!(instructions(&request), "rules");
    }

    #[test]
    fn gemini_function_responses_carry_the_name_of_their_function() {
        let request = entry(json!({"systemInstruction": {"parts": [{"text": "rules"}]}, "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "Task", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "Task", "response": {"output": "{\"ok\": false}"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"id": "c1", "response": {"result": 1}}}]}
        ]}));
        let outputs = tool_outputs(&request);
        assert_eq!(outputs[0], ToolOutput { tool: "Task".into(), output: "{\"ok\": false}".into() });
        assert_eq!(outputs[1], ToolOutput { tool: "Task".into(), output: "{\"result\":1}".into() });
        assert_eq!(instructions(&request), "rules");
    }

    #[test]
    fn bedrock_tool_results_are_read_from_their_content_blocks() {
        let request = entry(json!({"system": [{"text": "rules"}], "messages": [
            {"role": "user", "content": [{"text": "hi"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "Task", "input": {}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "{\"ok\": false}"}]}}]}
        ]}));
        assert_eq!(tool_outputs(&request), [ToolOutput { tool: "Task".into(), output: "{\"ok\": false}".into() }]);
        assert_eq!(instructions(&request), "rules");
    }
}
