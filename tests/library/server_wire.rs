//! The OpenAI wire format: statuses, headers and bodies exactly as scripted.

use serde_json::{json, Value};
use squall::journal::EndKind;

use squall_testkit::harness::{read_body, Harness};

#[tokio::test]
async fn every_scripted_status_and_header_arrives_exactly() {
    for status in [400u16, 401, 403, 404, 408, 409, 422, 425, 429, 500, 502, 503, 504] {
        let toml = format!(
            "name = \"t\"\n[[attempts]]\nstatus = {status}\nheaders = {{ \"retry-after-ms\" = \"1500\", \"x-should-retry\" = \"false\" }}\n"
        );
        let h = Harness::new(&toml).await;
        let response = h.stream_responses().await;
        assert_eq!(response.status().as_u16(), status);
        assert_eq!(response.headers()["retry-after-ms"], "1500");
        assert_eq!(response.headers()["x-should-retry"], "false");
        let body: Value = response.json().await.expect("json error body");
        let error = &body["error"];
        for field in ["message", "type", "param", "code"] {
            assert!(error.get(field).is_some(), "status {status}: `{field}` missing from {body}");
        }
        assert_eq!(h.settled_journal().await[0].end, Some(EndKind::ErrorStatus));
    }
}

#[tokio::test]
async fn scripted_error_fields_override_the_defaults() {
    let toml = r#"
name = "t"
[[attempts]]
status = 429
error = { type = "insufficient_quota", code = "insufficient_quota", message = "You exceeded your current quota" }
"#;
    let h = Harness::new(toml).await;
    let body: Value = h.stream_responses().await.json().await.expect("json");
    assert_eq!(
        body,
        json!({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}})
    );
}

#[tokio::test]
async fn http_date_retry_after_is_rendered_relative_to_the_reply() {
    let h =
        Harness::new("name = \"t\"\n[[attempts]]\nstatus = 429\nheaders = { \"retry-after\" = \"@now+3s\" }\n").await;
    let response = h.stream_responses().await;
    let value = response.headers()["retry-after"].to_str().expect("text").to_owned();
    let date = httpdate::parse_http_date(&value).expect("an HTTP-date");
    let ahead = date.duration_since(std::time::SystemTime::now()).expect("in the future");
    assert!(ahead.as_secs_f64() > 2.0 && ahead.as_secs_f64() <= 4.0, "{value} is {ahead:?} ahead");
}

#[tokio::test]
async fn responses_stream_numbers_events_and_completes_with_usage() {
    let h = Harness::new(
        "name = \"t\"\n[[attempts]]\nstream = { text = \"Hello brave new world\", reasoning = \"think\" }\n",
    )
    .await;
    let response = h.stream_responses().await;
    assert!(response.headers()["content-type"].to_str().unwrap_or("").starts_with("text/event-stream"));
    let read = read_body(response).await;
    let events = read.events();
    for (i, (name, data)) in events.iter().enumerate() {
        let value: Value = serde_json::from_str(data).expect("json event");
        assert_eq!(value["sequence_number"], json!(i));
        assert_eq!(value["type"].as_str(), name.as_deref(), "event: line and type agree");
    }
    let text: String = events
        .iter()
        .filter(|(n, _)| n.as_deref() == Some("response.output_text.delta"))
        .map(|(_, d)| serde_json::from_str::<Value>(d).expect("json")["delta"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(text, "Hello brave new world");
    let completed: Value = serde_json::from_str(&events.last().expect("events").1).expect("json");
    assert_eq!(completed["type"], "response.completed");
    assert!(completed["response"]["usage"]["total_tokens"].as_u64().unwrap_or(0) > 0);
    assert_eq!(completed["response"]["output"][0]["type"], "reasoning");
}

#[tokio::test]
async fn non_streamed_requests_get_whole_objects() {
    let h = Harness::new("name = \"t\"\n[[attempts]]\nstream = { text = \"whole\" }\n").await;
    let response: Value = h.post("/responses", json!({"model": "m", "input": "x"})).await.json().await.expect("json");
    assert_eq!(response["object"], "response");
    assert_eq!(response["output"][0]["content"][0]["text"], "whole");
    let completion: Value =
        h.post("/chat/completions", json!({"model": "m", "messages": []})).await.json().await.expect("json");
    assert_eq!(completion["object"], "chat.completion");
    assert_eq!(completion["choices"][0]["message"]["content"], "whole");
}

#[tokio::test]
async fn chat_stream_carries_tool_call_deltas_and_done() {
    let toml = "name = \"t\"\n[[attempts]]\nstream = { function_call = { name = \"Task\", arguments = '{\"agent\":\"deep-research\"}' } }\n";
    let h = Harness::new(toml).await;
    let read =
        read_body(h.post("/chat/completions", json!({"model": "m", "messages": [], "stream": true})).await).await;
    let events = read.events();
    assert_eq!(events.last().map(|(_, d)| d.as_str()), Some("[DONE]"));
    let chunks: Vec<Value> =
        events[..events.len() - 1].iter().map(|(_, d)| serde_json::from_str(d).expect("json")).collect();
    let arguments: String = chunks
        .iter()
        .filter_map(|c| c.pointer("/choices/0/delta/tool_calls/0/function/arguments").and_then(Value::as_str))
        .collect();
    assert_eq!(arguments, r#"{"agent":"deep-research"}"#);
    assert_eq!(chunks.last().and_then(|c| c.pointer("/choices/0/finish_reason")), Some(&json!("tool_calls")));
}

#[tokio::test]
async fn stream_failure_is_response_failed_with_the_code() {
    let toml = "name = \"t\"\n[[attempts]]\nstream = { text = \"partial\", fail = { code = \"rate_limit_exceeded\", message = \"Please try again in 1.5s\" } }\n";
    let h = Harness::new(toml).await;
    let read = read_body(h.stream_responses().await).await;
    let (name, data) = read.events().pop().expect("events");
    assert_eq!(name.as_deref(), Some("response.failed"));
    let value: Value = serde_json::from_str(&data).expect("json");
    assert_eq!(
        value["response"]["error"],
        json!({"code": "rate_limit_exceeded", "message": "Please try again in 1.5s"})
    );
    assert_eq!(value["response"]["status"], "failed");
}

#[tokio::test]
async fn models_unknown_paths_and_bad_bodies_get_openai_errors() {
    let h = Harness::new("name = \"t\"\n").await;
    let models: Value =
        h.client.get(format!("{}/models", h.base_url)).send().await.expect("sent").json().await.expect("json");
    assert_eq!(models["object"], "list");
    let unknown = h.client.post(format!("{}/embeddings", h.base_url)).body("{}").send().await.expect("sent");
    assert_eq!(unknown.status().as_u16(), 404);
    let bad = h.client.post(format!("{}/responses", h.base_url)).body("{not json").send().await.expect("sent");
    assert_eq!(bad.status().as_u16(), 400);
    let body: Value = bad.json().await.expect("json");
    assert_eq!(body["error"]["type"], "invalid_request_error");
    let wrong_method = h.client.get(format!("{}/responses", h.base_url)).send().await.expect("sent");
    assert_eq!(wrong_method.status().as_u16(), 405);
    // Bad requests are journaled but do not use up a scripted attempt.
    let journal = h.settled_journal().await;
    assert_eq!(journal.len(), 4);
    assert!(journal.iter().all(|e| e.attempt.is_none()));
}
