//! Reading a real provider's stream as squall counts its own: where each event ends, which
//! events carry output (the `after_deltas` of a scripted stream: a piece of text, reasoning or
//! tool-call arguments), and which one ends the stream successfully. The proxy
//! (`server::proxied_body`) fires a scenario's faults at these points of an upstream's stream.

use serde_json::Value;

use super::event_stream::{first_message_len, read_message, Message, MessageType};
use super::Framing;
use crate::api::Api;

/// What one complete SSE event of `api`'s stream is, read from its `data:` lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct EventKind {
    /// A piece of output: counted by `after_deltas`.
    pub(crate) output: bool,
    /// The terminal success event (`response.completed`, `[DONE]`, `message_stop`, Gemini's
    /// chunk with a `finishReason`).
    pub(crate) terminal: bool,
}

/// Classify one complete event (its raw bytes: `event:` and `data:` lines and the blank line; a
/// JSON line; an AWS event-stream message).
pub(crate) fn classify(api: Api, event: &[u8]) -> EventKind {
    if api == Api::Responses {
        // The `event:` line is the event's `type` (OpenAI's streams and squall's): no JSON to read.
        if let Some(name) = event_name(event) {
            return responses_named(name);
        }
    }
    match api.stream_framing() {
        // A line of JSON, no `data:` framing.
        Framing::JsonLine => {
            return serde_json::from_slice::<Value>(event.trim_ascii())
                .map_or(EventKind::default(), |line| ollama(&line))
        }
        Framing::AwsEventStream(_) => return read_message(event).map_or(EventKind::default(), |m| bedrock(api, &m)),
        Framing::Sse => {}
    }
    let text = String::from_utf8_lossy(event);
    let data: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|d| d.strip_prefix(' ').unwrap_or(d).trim_end_matches('\r'))
        .collect();
    let data = data.join("\n");
    if data == "[DONE]" {
        return EventKind { output: false, terminal: true };
    }
    let Ok(json) = serde_json::from_str::<Value>(&data) else { return EventKind::default() };
    match api {
        Api::Responses => responses(&json),
        Api::Chat => chat(&json),
        Api::Messages => messages(&json),
        Api::Gemini => gemini(&json),
        Api::OllamaChat | Api::OllamaGenerate => ollama(&json),
        Api::Bedrock | Api::BedrockInvoke => EventKind::default(),
    }
}

/// An SSE event's `event:` line, trimmed.
fn event_name(event: &[u8]) -> Option<&[u8]> {
    lines(event).find_map(|line| line.strip_prefix(b"event:")).map(<[u8]>::trim_ascii)
}

/// A Responses event by its type: output deltas, and `response.completed` as the terminal one.
fn responses_named(kind: &[u8]) -> EventKind {
    let output = matches!(
        kind,
        b"response.output_text.delta"
            | b"response.reasoning_summary_text.delta"
            | b"response.reasoning_text.delta"
            | b"response.function_call_arguments.delta"
            | b"response.refusal.delta"
    );
    EventKind { output, terminal: kind == b"response.completed" }
}

/// Whether one complete event ends the stream successfully, read as cheaply as it can be: by
/// its `event:` line where the API sends one (the Responses and Messages APIs), by `[DONE]`
/// (Chat), and only where that cannot tell, by its data (Gemini's `finishReason`).
fn is_terminal(api: Api, event: &[u8]) -> bool {
    match (api, event_name(event)) {
        (Api::Responses | Api::Messages, Some(name)) => ends_by_name(name),
        (Api::Chat, _) => lines(event).any(is_done_line),
        (Api::Gemini, _) if !contains(event, b"finishReason") => false,
        // Only Ollama's last line says `"done": true`.
        (Api::OllamaChat | Api::OllamaGenerate, _) if !contains(event, b"true") => false,
        _ => classify(api, event).terminal,
    }
}

/// Whether an `event:` line's name is a Responses or Messages stream's successful end.
fn ends_by_name(name: &[u8]) -> bool {
    name == b"response.completed" || name == b"message_stop"
}

/// Whether a line is Chat's `data: [DONE]`.
fn is_done_line(line: &[u8]) -> bool {
    line.strip_prefix(b"data:").is_some_and(|d| d.trim_ascii() == b"[DONE]")
}

/// The `\n`-ended lines of `bytes`, without their `\n`.
fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    lines_ending(bytes).map(|(line, _)| line)
}

/// The `\n`-ended lines of `bytes`, each with the offset of its `\n`.
fn lines_ending(bytes: &[u8]) -> impl Iterator<Item = (&[u8], usize)> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', bytes).map(move |end| {
        let line = &bytes[start..end];
        start = end + 1;
        (line, end)
    })
}

/// Whether a line is the blank one that ends an SSE event (in either line ending).
fn is_blank(line: &[u8]) -> bool {
    line.is_empty() || line == b"\r"
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

fn responses(event: &Value) -> EventKind {
    responses_named(event["type"].as_str().unwrap_or("").as_bytes())
}

fn chat(chunk: &Value) -> EventKind {
    let delta = &chunk["choices"][0]["delta"];
    let text = delta["content"].as_str().is_some_and(|t| !t.is_empty());
    let arguments = delta["tool_calls"]
        .as_array()
        .is_some_and(|calls| calls.iter().any(|c| c["function"]["arguments"].as_str().is_some_and(|a| !a.is_empty())));
    EventKind { output: text || arguments, terminal: false }
}

fn messages(event: &Value) -> EventKind {
    let kind = event["type"].as_str().unwrap_or("");
    let delta = event["delta"]["type"].as_str().unwrap_or("");
    let output = kind == "content_block_delta" && matches!(delta, "text_delta" | "thinking_delta" | "input_json_delta");
    EventKind { output, terminal: kind == "message_stop" }
}

fn ollama(line: &Value) -> EventKind {
    let source = if line.get("message").is_some() { &line["message"] } else { line };
    let said = |field: &str| source[field].as_str().is_some_and(|t| !t.is_empty());
    let output = said("content") || said("response") || said("thinking") || source.get("tool_calls").is_some();
    EventKind { output, terminal: line["done"] == true }
}

/// A Bedrock message: over Converse a `contentBlockDelta` is output and `metadata` ends the
/// stream; over InvokeModel each `chunk` carries a Messages event, read as the Messages API's.
fn bedrock(api: Api, message: &Message) -> EventKind {
    if message.kind != MessageType::Event {
        return EventKind::default();
    }
    if api == Api::BedrockInvoke {
        return super::bedrock_invoke::chunk_event(&message.payload).map_or(EventKind::default(), |e| messages(&e));
    }
    EventKind { output: message.name == "contentBlockDelta", terminal: message.name == "metadata" }
}

fn gemini(chunk: &Value) -> EventKind {
    let candidate = &chunk["candidates"][0];
    let parts = candidate["content"]["parts"].as_array();
    let output = parts.is_some_and(|parts| {
        parts.iter().any(|p| p["text"].as_str().is_some_and(|t| !t.is_empty()) || p.get("functionCall").is_some())
    });
    EventKind { output, terminal: candidate.get("finishReason").is_some() }
}

/// The length of the first complete event of `api`'s stream in `bytes`, if there is one: an
/// SSE event through its blank line, a JSON line through its newline, an AWS message by the
/// length its prelude states.
pub(crate) fn first_event_len(api: Api, bytes: &[u8]) -> Option<usize> {
    match api.stream_framing() {
        Framing::Sse => first_sse_event_len(bytes),
        Framing::JsonLine => bytes.iter().position(|b| *b == b'\n').map(|at| at + 1),
        Framing::AwsEventStream(_) => first_message_len(bytes),
    }
}

/// The length of the first complete SSE event in `bytes` (through its blank line).
fn first_sse_event_len(bytes: &[u8]) -> Option<usize> {
    lines_ending(bytes).find(|(line, _)| is_blank(line)).map(|(_, end)| end + 1)
}

/// The first complete event of `api`'s stream in `bytes`: its length, and whether it ends the
/// stream successfully — for SSE in the one scan that finds its end (the `event:` line and
/// `[DONE]` are read on the way to the blank line). What counting the events a proxy passes
/// straight through needs, and no more.
pub(crate) fn first_event(api: Api, bytes: &[u8]) -> Option<(usize, bool)> {
    if api.stream_framing() != Framing::Sse {
        let len = first_event_len(api, bytes)?;
        return Some((len, is_terminal(api, &bytes[..len])));
    }
    let (mut name, mut done) = (None, false);
    for (line, i) in lines_ending(bytes) {
        if is_blank(line) {
            let terminal = match (api, name) {
                (Api::Responses | Api::Messages, Some(name)) => ends_by_name(name),
                (Api::Chat, _) => done,
                _ => is_terminal(api, &bytes[..=i]),
            };
            return Some((i + 1, terminal));
        }
        if name.is_none() {
            name = line.strip_prefix(b"event:").map(<[u8]>::trim_ascii);
        }
        done |= is_done_line(line);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::TimeScale;
    use crate::wire::{reply::build_reply, ReplyContext};

    fn ctx() -> ReplyContext {
        ReplyContext {
            id_seed: "t".to_owned(),
            model: "m".to_owned(),
            created_at: 0,
            input_tokens: 3,
            include_usage: true,
        }
    }

    /// squall's own streams, read as a real stream, have their outputs and terminal event where
    /// squall put them: the proxy counts an upstream's deltas as squall counts its own.
    #[test]
    fn squalls_own_streams_read_the_same_in_every_api() {
        let toml = "name = \"t\"\n[[attempts]]\nstream = { reasoning = \"think hard\", text = \"one two three\", function_call = { name = \"f\", arguments = '{\"a\": 1}' } }\n";
        let scenario = crate::scenario::load::from_toml_str("t", toml).expect("valid");
        for api in Api::ALL {
            let reply = build_reply(&scenario.attempts[0], api, true, &ctx(), TimeScale::REAL);
            let mut body: Vec<u8> = reply
                .plan
                .steps
                .iter()
                .flat_map(|s| match s {
                    crate::wire::plan::Step::Data { bytes, .. } => bytes.to_vec(),
                    _ => Vec::new(),
                })
                .collect();
            let (mut outputs, mut terminals) = (0, 0);
            while let Some(len) = first_event_len(api, &body) {
                let kind = classify(api, &body[..len]);
                assert_eq!(is_terminal(api, &body[..len]), kind.terminal, "{api:?}: the cheap reading agrees");
                assert_eq!(first_event(api, &body), Some((len, kind.terminal)), "{api:?}: and the one-scan one");
                outputs += u32::from(kind.output);
                terminals += u32::from(kind.terminal);
                body.drain(..len);
            }
            let expected =
                crate::scenario::validate::output_deltas(scenario.attempts[0].stream.as_ref().expect("a stream"));
            // Chat has no reasoning channel ("think hard": 2 pieces); Gemini and Ollama's chat
            // send the function call whole (1 piece, not 3); Ollama's generate has no calls.
            let expected = match api {
                Api::Chat | Api::Gemini | Api::OllamaChat => expected - 2,
                Api::OllamaGenerate => expected - 3,
                _ => expected,
            };
            assert_eq!((outputs as usize, terminals), (expected, 1), "{api:?}");
            assert!(body.is_empty(), "{api:?}: every event read");
        }
    }

    #[test]
    fn a_responses_event_is_read_by_its_name_or_without_one_by_its_type() {
        let named = b"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\"}\n\n";
        let unnamed = b"data: {\"type\":\"response.output_text.delta\",\"delta\":\"x\"}\n\n";
        let done = b"event: response.completed\ndata: {}\n\n";
        assert_eq!(classify(Api::Responses, named), EventKind { output: true, terminal: false });
        assert_eq!(classify(Api::Responses, unnamed), EventKind { output: true, terminal: false });
        assert_eq!(classify(Api::Responses, done), EventKind { output: false, terminal: true });
        assert!(
            !is_terminal(Api::OllamaChat, b"{\"done\":false}\n") && is_terminal(Api::OllamaChat, b"{\"done\":true}\n")
        );
    }

    #[test]
    fn an_event_ends_at_its_blank_line_in_either_line_ending() {
        assert_eq!(first_event_len(Api::Chat, b"data: a\n\ndata: b"), Some(9));
        assert_eq!(first_event_len(Api::Chat, b"data: a\r\n\r\nx"), Some(11));
        assert_eq!(first_event_len(Api::Chat, b"data: a\n"), None);
        assert_eq!(first_event(Api::Chat, b"data: [DONE]\r\n\r\n"), Some((16, true)));
        assert_eq!(first_event(Api::Messages, b"event: message_stop\r\ndata: {}\r\n"), None);
        assert_eq!(first_event_len(Api::OllamaChat, b"{}\n{"), Some(3), "a JSON line ends at its newline");
    }
}
