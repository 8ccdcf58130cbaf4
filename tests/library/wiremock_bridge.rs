//! squall scenarios played by wiremock-rs (feature `wiremock`).

use squall::scenario::{Attempt, Outage, Scenario};
use squall::wiremock::ScenarioResponder;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

#[tokio::test]
async fn status_replies_and_whole_streams_play_in_order() {
    let scenario = Scenario::named("wm")
        .attempt(Attempt::status(429).header("retry-after", "2"))
        .attempt(Attempt::text("cut short").truncate_after_events(4))
        .attempt(Attempt::text("all of it"));
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(ScenarioResponder::new(&scenario).expect("playable")).mount(&server).await;
    let client = reqwest::Client::new();
    let call = || {
        client
            .post(format!("{}/v1/responses", server.uri()))
            .json(&serde_json::json!({"model": "m", "input": "x", "stream": true}))
            .send()
    };
    let limited = call().await.expect("sent");
    assert_eq!(limited.status().as_u16(), 429);
    assert_eq!(limited.headers()["retry-after"], "2");
    let body: serde_json::Value = limited.json().await.expect("json");
    assert_eq!(body["error"]["code"], "rate_limit_exceeded");
    let truncated = call().await.expect("sent").text().await.expect("clean end");
    assert_eq!(truncated.matches("event: ").count(), 4);
    assert!(!truncated.contains("response.completed"));
    let full = call().await.expect("sent").text().await.expect("body");
    assert!(full.contains("response.completed") && full.contains("all of it"));
}

#[tokio::test]
async fn every_api_is_answered_in_its_own_shape_by_its_path() {
    let scenario = Scenario::named("wm").attempt(Attempt::status(503)).after(squall::scenario::AfterScript::RepeatLast);
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(ScenarioResponder::new(&scenario).expect("playable")).mount(&server).await;
    let client = reqwest::Client::new();
    let error = |path: &'static str| {
        let request = client.post(format!("{}{path}", server.uri())).json(&serde_json::json!({"model": "m"}));
        async move { request.send().await.expect("sent").json::<serde_json::Value>().await.expect("json") }
    };
    assert_eq!(error("/v1/chat/completions").await["error"]["code"], "service_unavailable");
    assert_eq!(error("/v1/messages").await["type"], "error", "Anthropic's shape");
    assert_eq!(error("/v1beta/models/g:streamGenerateContent").await["error"]["status"], "UNAVAILABLE", "Google's");
    assert!(error("/api/chat").await["error"].is_string(), "Ollama's shape");
    let throttled = client.post(format!("{}/model/m/converse-stream", server.uri())).json(&serde_json::json!({}));
    let throttled = throttled.send().await.expect("sent");
    let exception = throttled.headers().get("x-amzn-errortype").and_then(|v| v.to_str().ok()).map(str::to_owned);
    assert!(exception.is_some_and(|e| e.starts_with("ServiceUnavailableException:")), "AWS's header");
    assert!(throttled.json::<serde_json::Value>().await.expect("json")["message"].is_string(), "AWS's body");
    let gemini = Scenario::named("wm-gemini").attempt(Attempt::text("hello there"));
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(ScenarioResponder::new(&gemini).expect("playable")).mount(&server).await;
    let url = format!("{}/v1beta/models/gemini-x:streamGenerateContent?alt=sse", server.uri());
    let streamed = client.post(url).json(&serde_json::json!({"contents": []})).send().await.expect("sent");
    let text = streamed.text().await.expect("body");
    assert!(text.contains("\"finishReason\":\"STOP\"") && text.contains("gemini-x"), "streamed by its path: {text}");
    let url = format!("{}/model/anthropic.claude%3A0/converse-stream", server.uri());
    let streamed = client.post(url).json(&serde_json::json!({"messages": []})).send().await.expect("sent");
    assert_eq!(streamed.headers()["content-type"], "application/vnd.amazon.eventstream", "streamed by its path");
    let bytes = streamed.bytes().await.expect("body");
    assert!(bytes.windows(7).any(|w| w == b"\"hello\"") && bytes.windows(8).any(|w| w == b"metadata"), "{bytes:?}");
    let lines = client.post(format!("{}/api/generate", server.uri())).json(&serde_json::json!({"prompt": "hi"}));
    let lines = lines.send().await.expect("sent").text().await.expect("body");
    assert!(
        lines.lines().count() == 3 && lines.contains("\"done\":true"),
        "Ollama streams unless told not to: {lines}"
    );
}

#[test]
fn faults_inside_a_body_are_refused_with_a_pointer_to_squall() {
    let scenario =
        Scenario::named("wm").attempt(Attempt::status(503)).attempt(Attempt::text("x").reset_after_events(2));
    let error = ScenarioResponder::new(&scenario).expect_err("wiremock cannot reset mid-body");
    let message = error.to_string();
    assert_eq!(error.attempt, 2);
    assert!(message.contains("fault `reset`") && message.contains("MockProvider"), "{message}");
}

#[test]
fn run_wide_conditions_are_refused_not_ignored() {
    let outage =
        Scenario::named("down").attempt(Attempt::text("x")).outage(Outage::between(0, 1_000, Attempt::status(503)));
    let error = ScenarioResponder::new(&outage).expect_err("wiremock keeps no run time");
    assert_eq!(error.attempt, 0);
    assert!(error.to_string().starts_with("the whole run of scenario `down` uses `outage` windows"), "{error}");
    let chaos = Scenario::named("noisy").attempt(Attempt::text("x")).chaos(Some(1), 0.5, &[]);
    let error = ScenarioResponder::new(&chaos).expect_err("wiremock keeps no tracks");
    assert!(error.to_string().contains("uses `chaos`"), "{error}");
    let quota = Scenario::named("limited").attempt(Attempt::text("x")).quota(Some(3), None);
    let error = ScenarioResponder::new(&quota).expect_err("wiremock keeps no buckets");
    assert!(error.to_string().contains("uses a `quota`"), "{error}");
}
