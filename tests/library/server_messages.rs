//! The Anthropic Messages API under every run: `POST {run}/v1/messages`, streamed and whole,
//! with Anthropic's event sequence, error bodies and status mapping, over real HTTP.

use serde_json::{json, Value};
use squall::journal::EndKind;

use squall_testkit::harness::{json_reply, read_body, Harness};

async fn messages(h: &Harness, stream: bool) -> reqwest::Response {
    let body = json!({"model": "claude-x", "max_tokens": 64, "stream": stream, "messages": [{"role": "user", "content": "hi"}]});
    h.post("/messages", body).await
}

fn data(events: &[(Option<String>, String)]) -> Vec<Value> {
    events.iter().map(|(_, data)| serde_json::from_str(data).expect("every data line is JSON")).collect()
}

#[tokio::test]
async fn a_streamed_message_has_anthropics_event_sequence_and_is_journaled_as_messages() {
    let h = Harness::new("name = \"t\"\n[[attempts]]\nstream = { text = \"Hello brave world\" }\n").await;
    let response = messages(&h, true).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"].to_str().expect("text").starts_with("text/event-stream"));
    assert!(response.headers().contains_key("request-id"), "Anthropic's SDKs read `request-id`");
    let events = read_body(response).await.events();
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_deref().unwrap_or("")).collect();
    let deltas = ["content_block_delta"; 3];
    let expected: Vec<&str> = ["message_start", "ping", "content_block_start"]
        .into_iter()
        .chain(deltas)
        .chain(["content_block_stop", "message_delta", "message_stop"])
        .collect();
    assert_eq!(names, expected);
    let payloads = data(&events);
    assert_eq!(payloads[0]["message"]["model"], "claude-x");
    assert_eq!(payloads[0]["message"]["role"], "assistant");
    let text: String = payloads.iter().filter_map(|d| d["delta"]["text"].as_str()).collect();
    assert_eq!(text, "Hello brave world");
    assert_eq!(payloads[7]["delta"]["stop_reason"], "end_turn");

    let entry = &h.settled_journal().await[0];
    assert_eq!(entry.api, Some(squall::journal::Api::Messages));
    assert_eq!(entry.path, "/messages");
    assert!(entry.terminal_sent, "message_stop is the terminal event");
    assert_eq!(entry.end, Some(EndKind::Completed));
}

#[tokio::test]
async fn a_whole_message_holds_thinking_text_and_tool_use() {
    let toml = r#"
name = "t"
[[attempts]]
stream = { reasoning = "plan", text = "Delegating.", function_call = { name = "Task", arguments = '{"agent": "deep-research"}' } }
"#;
    let h = Harness::new(toml).await;
    let body: Value = messages(&h, false).await.json().await.expect("a JSON message");
    assert_eq!(body["type"], "message");
    assert_eq!(body["stop_reason"], "tool_use");
    let kinds: Vec<&str> =
        body["content"].as_array().expect("content").iter().filter_map(|b| b["type"].as_str()).collect();
    assert_eq!(kinds, ["thinking", "text", "tool_use"]);
    assert_eq!(body["content"][2]["input"], json!({"agent": "deep-research"}));
    assert!(body["content"][0]["signature"].as_str().is_some_and(|s| !s.is_empty()));
}

#[tokio::test]
async fn error_statuses_carry_anthropics_error_types_and_headers_pass_through() {
    let documented = [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (413, "request_too_large"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (529, "overloaded_error"),
    ];
    for (status, kind) in documented {
        let toml = format!(
            "name = \"t\"\n[[attempts]]\nstatus = {status}\nheaders = {{ \"retry-after\" = \"2\", \"anthropic-ratelimit-requests-remaining\" = \"0\" }}\n"
        );
        let h = Harness::new(&toml).await;
        let response = messages(&h, true).await;
        assert_eq!(response.status().as_u16(), status);
        assert_eq!(response.headers()["retry-after"], "2");
        assert_eq!(response.headers()["anthropic-ratelimit-requests-remaining"], "0");
        let body: Value = response.json().await.expect("json error body");
        assert_eq!(body["type"], "error", "status {status}: {body}");
        assert_eq!(body["error"]["type"], kind, "status {status}: {body}");
        assert!(body["error"]["message"].is_string());
    }
}

#[tokio::test]
async fn a_scripted_stream_failure_is_an_in_stream_error_event_or_its_status_when_not_streamed() {
    let toml = "name = \"t\"\n[[attempts]]\nstream = { text = \"part\", fail = { code = \"overloaded_error\" } }\n";
    let h = Harness::new(toml).await;
    let events = read_body(messages(&h, true).await).await.events();
    let (name, last) = events.last().expect("events");
    assert_eq!(name.as_deref(), Some("error"));
    let last: Value = serde_json::from_str(last).expect("json");
    assert_eq!(last["error"]["type"], "overloaded_error");
    assert!(!events.iter().any(|(name, _)| name.as_deref() == Some("message_stop")));

    let whole = messages(&h, false).await;
    assert_eq!(whole.status().as_u16(), 529);
    let body: Value = whole.json().await.expect("json");
    assert_eq!(body["error"]["type"], "overloaded_error");
}

#[tokio::test]
async fn refusals_on_the_messages_path_are_anthropic_shaped() {
    let h = Harness::new("name = \"t\"\n[[attempts]]\n").await;
    let url = format!("{}/messages", h.base_url);
    let response =
        h.client.post(&url).header("content-type", "application/json").body("[1]").send().await.expect("sent");
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "invalid_request_error");
}

#[tokio::test]
async fn the_admin_run_object_gives_the_anthropic_base_url() {
    let h = Harness::new("name = \"t\"\n[[attempts]]\n").await;
    let origin = h.base_url.split("/runs/").next().expect("origin");
    let created: Value = json_reply(
        h.client.post(format!("{origin}/__squall/runs")).json(&json!({"scenario": {"name": "a", "attempts": [{}]}})),
    )
    .await;
    let base = created["base_url"].as_str().expect("base_url");
    assert_eq!(created["anthropic_base_url"].as_str(), base.strip_suffix("/v1"));
    assert_eq!(h.run.anthropic_base_url(), h.base_url.strip_suffix("/v1").expect("ends in /v1"));
}

#[test]
fn an_offset_past_the_end_of_every_api_names_each_length_and_one_inside_any_api_loads() {
    // "a b" is 5 events in Chat, 8 in Messages, 10 in the Responses API.
    let with_offset = |n: u32| {
        format!("name = \"t\"\n[[attempts]]\nstream = {{ text = \"a b\" }}\nfault = {{ kind = \"reset\", after_events = {n} }}\n")
    };
    let error = squall::scenario::load::from_toml_str("t", &with_offset(11)).expect_err("past the end of every API");
    let text = error.to_string();
    for length in [
        "Responses API stream has 10 events",
        "Chat Completions API stream has 5 events",
        "Messages API stream has 8 events",
    ] {
        assert!(text.contains(length), "{text}");
    }
    // Written for the Responses API: still valid; the shorter streams break after their last byte.
    squall::scenario::load::from_toml_str("t", &with_offset(9)).expect("inside the Responses API stream");
}
