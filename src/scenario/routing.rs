//! Which track answers a request, and which scripted attempt it gets.

use std::borrow::Cow;

use serde_json::Value;

use crate::scenario_model::{AfterScript, Attempt, Outage, Scenario, TrackMatch};

/// The name of the implicit track made of a scenario's top-level `attempts`.
pub(crate) const DEFAULT_TRACK: &str = "default";

/// What a request needs to expose for track matching.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RequestView<'a> {
    pub raw_body: &'a str,
    /// The body's `tools`, if it has any.
    pub tools: Option<&'a Value>,
    pub headers: &'a http::HeaderMap,
}

/// A track's script, borrowed from the scenario.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TrackScript<'a> {
    pub name: &'a str,
    /// The track's position in the scenario; the default track comes after the named ones.
    pub index: usize,
    pub attempts: &'a [Attempt],
    pub after: AfterScript,
    /// The run-wide outages, which may answer instead of the track.
    pub outages: &'a [Outage],
}

/// Which reply a request gets: a scripted attempt, what `after` says, or an outage's reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ReplySlot {
    Scripted(usize),
    PlainOk,
    PlainFail,
    /// `outage[i]` took the request.
    Outage(usize),
    /// A run-wide condition made a reply for this request alone: chaos, or the quota's 429.
    Made,
}

impl<'a> TrackScript<'a> {
    /// Which reply the `attempt`-th request (0-based) on this track gets.
    pub(crate) fn slot_for(&self, attempt: u32) -> ReplySlot {
        let last = self.attempts.len().checked_sub(1);
        match (attempt as usize, self.after, last) {
            (n, _, Some(last)) if n <= last => ReplySlot::Scripted(n),
            (_, AfterScript::RepeatLast, Some(last)) => ReplySlot::Scripted(last),
            (_, AfterScript::Fail, _) => ReplySlot::PlainFail,
            _ => ReplySlot::PlainOk,
        }
    }

    /// The reply in `slot`.
    pub(crate) fn attempt(&self, slot: ReplySlot) -> std::borrow::Cow<'a, Attempt> {
        match slot {
            ReplySlot::Scripted(n) => {
                self.attempts.get(n).map_or_else(|| Cow::Owned(Attempt::plain_ok()), Cow::Borrowed)
            }
            ReplySlot::PlainOk => Cow::Owned(Attempt::plain_ok()),
            ReplySlot::PlainFail => Cow::Owned(Attempt::plain_fail()),
            ReplySlot::Outage(i) => {
                self.outages.get(i).map_or_else(|| Cow::Owned(Attempt::plain_fail()), |o| Cow::Borrowed(&o.reply))
            }
            // Never asked of a track: the server made the reply.
            ReplySlot::Made => Cow::Owned(Attempt::plain_fail()),
        }
    }
}

/// The first track whose match selects the request; the default track catches the rest.
pub(crate) fn select<'a>(scenario: &'a Scenario, request: &RequestView<'_>) -> TrackScript<'a> {
    for (index, track) in scenario.tracks.iter().enumerate() {
        let claims = track.matcher.as_ref().is_none_or(|m| matches(m, request));
        if claims {
            return TrackScript {
                name: &track.name,
                index,
                attempts: &track.attempts,
                after: track.after.unwrap_or(scenario.after),
                outages: &scenario.outage,
            };
        }
    }
    TrackScript {
        name: DEFAULT_TRACK,
        index: scenario.tracks.len(),
        attempts: &scenario.attempts,
        after: scenario.after,
        outages: &scenario.outage,
    }
}

fn matches(matcher: &TrackMatch, request: &RequestView<'_>) -> bool {
    if let Some(tool) = &matcher.tool {
        return request.tools.is_some_and(|tools| offers_tool(tools, tool));
    }
    if let Some(needle) = &matcher.body_contains {
        return request.raw_body.contains(needle.as_str());
    }
    if let Some(headers) = &matcher.header {
        return headers.iter().all(|(name, value)| {
            request.headers.get_all(name.as_str()).iter().any(|sent| sent.as_bytes() == value.as_bytes())
        });
    }
    false
}

/// Whether `tools` offers one by this name, in Responses and Messages (`tools[].name`), Chat
/// Completions (`tools[].function.name`), Gemini (`tools[].functionDeclarations[].name`) or
/// Bedrock (`toolConfig.tools[].toolSpec.name`, given as its `tools`) form.
fn offers_tool(tools: &Value, tool: &str) -> bool {
    let named = |t: &Value| t.get("name").and_then(Value::as_str) == Some(tool);
    tools.as_array().is_some_and(|tools| {
        tools.iter().any(|t| {
            named(t)
                || t.pointer("/function/name").and_then(Value::as_str) == Some(tool)
                || t.pointer("/toolSpec/name").and_then(Value::as_str) == Some(tool)
                || t.get("functionDeclarations").and_then(Value::as_array).is_some_and(|d| d.iter().any(named))
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

    fn view<'a>(raw: &'a str, body: &'a Value, headers: &'a http::HeaderMap) -> RequestView<'a> {
        RequestView { raw_body: raw, tools: body.get("tools").or_else(|| body.pointer("/toolConfig/tools")), headers }
    }

    #[test]
    fn tool_match_claims_requests_that_offer_the_tool() {
        let scenario = from_toml_str("t", MAIN_AND_SUB).expect("valid");
        let no_headers = http::HeaderMap::new();
        let main = json!({"tools": [{"type": "function", "name": "Task"}]});
        let chat_main = json!({"tools": [{"type": "function", "function": {"name": "Task"}}]});
        let sub = json!({"tools": [{"type": "function", "name": "web_search"}]});
        assert_eq!(select(&scenario, &view("", &main, &no_headers)).name, "main");
        assert_eq!(select(&scenario, &view("", &chat_main, &no_headers)).name, "main");
        let gemini_main = json!({"tools": [{"functionDeclarations": [{"name": "Read"}, {"name": "Task"}]}]});
        assert_eq!(select(&scenario, &view("", &gemini_main, &no_headers)).name, "main");
        let bedrock_main = json!({"tools": [{"toolSpec": {"name": "Task", "inputSchema": {"json": {}}}}]});
        assert_eq!(select(&scenario, &view("", &bedrock_main, &no_headers)).name, "main");
        assert_eq!(select(&scenario, &view("", &sub, &no_headers)).name, "sub");
    }

    #[test]
    fn header_match_ignores_the_name_case_and_accepts_any_repeat() {
        let scenario = from_toml_str(
            "t",
            "name = \"h\"\n[[tracks]]\nname = \"tagged\"\nmatch = { header = { X-Agent = \"sub\" } }\n[[tracks.attempts]]\nstatus = 500\n",
        )
        .expect("valid");
        let mut headers = http::HeaderMap::new();
        headers.append("x-agent", "main".parse().expect("a header value"));
        assert_eq!(select(&scenario, &view("", &json!({}), &headers)).name, DEFAULT_TRACK);
        headers.append("x-agent", "sub".parse().expect("a header value"));
        assert_eq!(select(&scenario, &view("", &json!({}), &headers)).name, "tagged");
    }

    #[test]
    fn after_script_applies_past_the_end() {
        let scenario = from_toml_str("t", MAIN_AND_SUB).expect("valid");
        let sub = &scenario.tracks[1];
        let script =
            TrackScript { name: "sub", index: 1, attempts: &sub.attempts, after: AfterScript::Fail, outages: &[] };
        assert!(!script.attempt(script.slot_for(0)).is_status_reply());
        assert_eq!(script.attempt(script.slot_for(1)).status, Some(500));
        let repeat = TrackScript { after: AfterScript::RepeatLast, ..script };
        assert!(!repeat.attempt(repeat.slot_for(7)).is_status_reply());
    }
}
