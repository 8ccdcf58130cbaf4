//! Which track answers a request, and which scripted attempt it gets.

use std::collections::BTreeMap;

use serde_json::Value;

use super::model::{AfterScript, Attempt, Scenario, TrackMatch};

/// The name of the implicit track made of a scenario's top-level `attempts`.
pub(crate) const DEFAULT_TRACK: &str = "default";

/// What a request needs to expose for track matching.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RequestView<'a> {
    pub raw_body: &'a str,
    pub body: &'a Value,
    /// Request headers with lower-case names.
    pub headers: &'a BTreeMap<String, String>,
}

/// A track's script, borrowed from the scenario.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TrackScript<'a> {
    pub name: &'a str,
    pub attempts: &'a [Attempt],
    pub after: AfterScript,
}

impl TrackScript<'_> {
    /// The reply for the `attempt`-th request (0-based) on this track.
    pub(crate) fn reply_for(&self, attempt: u32) -> Attempt {
        if let Some(scripted) = self.attempts.get(attempt as usize) {
            return scripted.clone();
        }
        match self.after {
            AfterScript::RepeatLast => self.attempts.last().cloned().unwrap_or_else(Attempt::plain_ok),
            AfterScript::Ok => Attempt::plain_ok(),
            AfterScript::Fail => Attempt::plain_fail(),
        }
    }
}

/// The first track whose match selects the request; the default track catches the rest.
pub(crate) fn select<'a>(scenario: &'a Scenario, request: &RequestView<'_>) -> TrackScript<'a> {
    for track in &scenario.tracks {
        let claims = track.matcher.as_ref().is_none_or(|m| matches(m, request));
        if claims {
            return TrackScript {
                name: &track.name,
                attempts: &track.attempts,
                after: track.after.unwrap_or(scenario.after),
            };
        }
    }
    TrackScript { name: DEFAULT_TRACK, attempts: &scenario.attempts, after: scenario.after }
}

fn matches(matcher: &TrackMatch, request: &RequestView<'_>) -> bool {
    if let Some(tool) = &matcher.tool {
        return offers_tool(request.body, tool);
    }
    if let Some(needle) = &matcher.body_contains {
        return request.raw_body.contains(needle.as_str());
    }
    if let Some(headers) = &matcher.header {
        return headers.iter().all(|(name, value)| request.headers.get(&name.to_ascii_lowercase()) == Some(value));
    }
    false
}

/// Whether the request offers a tool by this name, in Responses (`tools[].name`) or Chat
/// Completions (`tools[].function.name`) form.
fn offers_tool(body: &Value, tool: &str) -> bool {
    body.get("tools").and_then(Value::as_array).is_some_and(|tools| {
        tools.iter().any(|t| {
            t.get("name").and_then(Value::as_str) == Some(tool)
                || t.pointer("/function/name").and_then(Value::as_str) == Some(tool)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load::from_toml_str;
    use serde_json::json;

    const MAIN_AND_SUB: &str = r#"
name = "main-and-sub"
[[tracks]]
name = "main"
match = { tool = "Task" }
[[tracks.attempts]]
status = 500
[[tracks]]
name = "sub"
after = "fail"
[[tracks.attempts]]
stream = { text = "report" }
"#;

    fn view<'a>(raw: &'a str, body: &'a Value, headers: &'a BTreeMap<String, String>) -> RequestView<'a> {
        RequestView { raw_body: raw, body, headers }
    }

    #[test]
    fn tool_match_claims_requests_that_offer_the_tool() {
        let scenario = from_toml_str("t", MAIN_AND_SUB).expect("valid");
        let no_headers = BTreeMap::new();
        let main = json!({"tools": [{"type": "function", "name": "Task"}]});
        let chat_main = json!({"tools": [{"type": "function", "function": {"name": "Task"}}]});
        let sub = json!({"tools": [{"type": "function", "name": "web_search"}]});
        assert_eq!(select(&scenario, &view("", &main, &no_headers)).name, "main");
        assert_eq!(select(&scenario, &view("", &chat_main, &no_headers)).name, "main");
        assert_eq!(select(&scenario, &view("", &sub, &no_headers)).name, "sub");
    }

    #[test]
    fn after_script_applies_past_the_end() {
        let scenario = from_toml_str("t", MAIN_AND_SUB).expect("valid");
        let sub = &scenario.tracks[1];
        let script = TrackScript { name: "sub", attempts: &sub.attempts, after: AfterScript::Fail };
        assert!(!script.reply_for(0).is_status_reply());
        assert_eq!(script.reply_for(1).status, Some(500));
        let repeat = TrackScript { after: AfterScript::RepeatLast, ..script };
        assert!(!repeat.reply_for(7).is_status_reply());
    }
}
