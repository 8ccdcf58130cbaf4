//! The Gemini API under every run: `POST {run}/v1beta/models/{model}:streamGenerateContent` and
//! `:generateContent` (and the same under `/v1`), with Google's chunks, error bodies and status
//! mapping, faults at the same output delta as in the other APIs, and the run-wide quota, over
//! real HTTP.

use serde_json::{json, Value};
use squall::journal::{Api, EndKind};

use squall_testkit::harness::{read_body, Harness};

const STREAM: &str = "/v1beta/models/gemini-x:streamGenerateContent?alt=sse";
const WHOLE: &str = "/v1beta/models/gemini-x:generateContent";

/// A Gemini request to `path` under the run's Gemini base URL.
async fn gemini(h: &Harness, path: &str) -> reqwest::Response {
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    let url = format!("{}{path}", h.run.gemini_base_url());
    h.client.post(url).header("x-goog-api-key", "k").json(&body).send().await.expect("request sent")
}

fn chunks(text: &str) -> Vec<Value> {
    squall_testkit::harness::parse_sse(text)
        .into_iter()
        .map(|(_, data)| serde_json::from_str(&data).expect("every data line is JSON"))
        .collect()
}

#[tokio::test]
async fn a_streamed_reply_is_googles_chunks_and_is_journaled_as_gemini() {
    let h = Harness::new("name = \"t\"\n[[attempts]]\nstream = { text = \"Hello brave world\" }\n").await;
    let response = gemini(&h, STREAM).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"].to_str().expect("text").starts_with("text/event-stream"));
    let body = read_body(response).await;
    assert!(body.events().iter().all(|(name, _)| name.is_none()), "Gemini sends data lines only");
    let chunks = chunks(&body.text());
    assert_eq!(chunks.len(), 4, "three text chunks and the finishing one");
    let text: String =
        chunks.iter().filter_map(|c| c["candidates"][0]["content"]["parts"][0]["text"].as_str()).collect();
    assert_eq!(text, "Hello brave world");
    assert_eq!(chunks[3]["candidates"][0]["finishReason"], "STOP");
    assert_eq!(chunks[0]["modelVersion"], "gemini-x", "the model comes from the path");

    let entry = &h.settled_journal().await[0];
    assert_eq!((entry.api, entry.stream), (Some(Api::Gemini), true), "streamed because the path says so");
    assert_eq!(entry.path, "/v1beta/models/gemini-x:streamGenerateContent");
    assert!(entry.terminal_sent, "the finishing chunk is the terminal event");
}

#[tokio::test]
async fn a_whole_reply_answers_on_both_api_versions_and_herd_clients() {
    let toml = "name = \"t\"\n[[attempts]]\nstream = { reasoning = \"plan\", text = \"Delegating.\", function_call = { name = \"Task\", arguments = '{\"agent\": \"deep-research\"}' } }\n";
    let h = Harness::new(toml).await;
    let beta: Value = gemini(&h, WHOLE).await.json().await.expect("a JSON response");
    let parts = &beta["candidates"][0]["content"]["parts"];
    assert_eq!(parts[0], json!({"text": "plan", "thought": true}));
    assert_eq!(parts[1], json!({"text": "Delegating."}));
    assert_eq!(parts[2]["functionCall"]["args"], json!({"agent": "deep-research"}));
    let v1 = format!("{}/v1/models/gemini-x:generateContent", h.run.gemini_base_url());
    let response = h.client.post(v1).json(&json!({"contents": []})).send().await.expect("sent");
    assert_eq!(response.status(), 200, "google-genai 3 defaults to /v1");
    let client = format!("{}/v1beta/models/gemini-x:generateContent", h.run.client_base_url(4).trim_end_matches("/v1"));
    let response = h.client.post(client).json(&json!({"contents": []})).send().await.expect("sent");
    assert_eq!(response.status(), 200);
    let journal = h.settled_journal().await;
    let seen: Vec<(Option<u32>, Option<u32>, bool)> = journal.iter().map(|e| (e.client, e.attempt, e.stream)).collect();
    assert_eq!(seen, [(None, Some(0), false), (None, Some(1), false), (Some(4), Some(0), false)]);
}

#[tokio::test]
async fn statuses_and_failures_carry_googles_error_shape() {
    for (status, name) in
        [(429, "RESOURCE_EXHAUSTED"), (503, "UNAVAILABLE"), (529, "UNAVAILABLE"), (400, "INVALID_ARGUMENT")]
    {
        let h = Harness::new(&format!(
            "name = \"t\"\n[[attempts]]\nstatus = {status}\nheaders = {{ \"retry-after-ms\" = \"1500\" }}\n"
        ))
        .await;
        let response = gemini(&h, STREAM).await;
        assert_eq!(response.status().as_u16(), status);
        assert_eq!(response.headers()["retry-after-ms"], "1500", "scripted headers pass through");
        let body: Value = response.json().await.expect("a JSON error");
        assert_eq!(body["error"]["code"], status);
        assert_eq!(body["error"]["status"], name);
        assert_eq!(body["error"]["details"][0]["retryDelay"], "1.5s", "the header's wait as RetryInfo");
    }
    let failing =
        "name = \"t\"\n[[attempts]]\nstream = { text = \"part\", fail = { code = \"context_length_exceeded\" } }\n";
    let h = Harness::new(failing).await;
    let streamed = chunks(&read_body(gemini(&h, STREAM).await).await.text());
    let error = &streamed.last().expect("an error line")["error"];
    assert_eq!((error["code"].as_u64(), error["status"].as_str()), (Some(400), Some("INVALID_ARGUMENT")));
    let whole = gemini(&h, WHOLE).await;
    assert_eq!(whole.status(), 400, "not streamed, the same failure is its status");
    let refused =
        h.client.post(format!("{}{WHOLE}", h.run.gemini_base_url())).body("not json").send().await.expect("sent");
    let body: Value = refused.json().await.expect("a JSON error");
    assert_eq!(body["error"]["status"], "INVALID_ARGUMENT", "squall's own refusals speak Google's shape too");
}

#[tokio::test]
async fn a_fault_after_two_output_deltas_cuts_the_same_text_as_in_the_responses_api() {
    let toml = "name = \"t\"\n[[attempts]]\nstream = { text = \"one two three four\" }\nfault = { kind = \"reset\", after_deltas = 2 }\n";
    let h = Harness::new(toml).await;
    let body = read_body(gemini(&h, STREAM).await).await;
    let text: String = chunks(&body.text())
        .iter()
        .filter_map(|c| c["candidates"][0]["content"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(text, "one two");
    assert_eq!(body.io_error_kind(), Some(std::io::ErrorKind::ConnectionReset), "{}", body.error_chain());
    let entry = &h.settled_journal().await[0];
    assert_eq!((entry.end, entry.terminal_sent), (Some(EndKind::Reset), false));
}

#[tokio::test]
async fn a_quota_refusal_asks_for_its_wait_as_retry_info() {
    let h =
        Harness::new("name = \"t\"\nquota = { requests_per_minute = 1 }\n[[attempts]]\nstream = { text = \"ok\" }\n")
            .await;
    assert_eq!(gemini(&h, WHOLE).await.status(), 200);
    let refused = gemini(&h, WHOLE).await;
    assert_eq!(refused.status(), 429);
    assert!(
        refused.headers().keys().all(|k| !k.as_str().starts_with("x-ratelimit")),
        "Google sends no rate-limit headers"
    );
    let wait: u64 = refused.headers()["retry-after"].to_str().expect("text").parse().expect("seconds");
    let body: Value = refused.json().await.expect("a JSON error");
    assert_eq!(body["error"]["status"], "RESOURCE_EXHAUSTED");
    let info = body["error"]["details"]
        .as_array()
        .expect("details")
        .iter()
        .find(|d| d["@type"] == "type.googleapis.com/google.rpc.RetryInfo")
        .cloned();
    assert_eq!(info.map(|d| d["retryDelay"].clone()), Some(json!(format!("{wait}s"))));
}

/// A path no API serves is answered in the shape of the API its prefix names: Google's for
/// Gemini's paths (an unknown method, one squall does not serve, an empty model, any other path
/// under `/v1beta/`), Anthropic's under `/messages`, OpenAI's elsewhere; and it is journaled.
#[tokio::test]
async fn unknown_paths_are_refused_in_the_shape_of_the_api_their_prefix_names() {
    let h = Harness::new("name = \"t\"\n[[attempts]]\n").await;
    for path in [
        "/v1beta/models/gemini-x:fooContent",
        "/v1beta/models/gemini-x:countTokens",
        "/v1beta/models/:generateContent",
        "/v1beta/tunedModels/x:generateContent",
    ] {
        let response = gemini(&h, path).await;
        assert_eq!(response.status(), 404, "{path}");
        let body: Value = response.json().await.expect("json");
        assert_eq!(
            (&body["error"]["code"], &body["error"]["status"]),
            (&json!(404), &json!("NOT_FOUND")),
            "{path}: {body}"
        );
    }
    let url = format!("{}/v1/messages/count_tokens", h.run.anthropic_base_url());
    let response = h.client.post(url).json(&json!({"model": "m", "messages": []})).send().await.expect("sent");
    assert_eq!(response.status(), 404);
    let body: Value = response.json().await.expect("json");
    assert_eq!((&body["type"], &body["error"]["type"]), (&json!("error"), &json!("not_found_error")), "{body}");
    let url = format!("{}/embeddings", h.run.base_url());
    let body: Value = h.client.post(url).json(&json!({})).send().await.expect("sent").json().await.expect("json");
    assert_eq!(body["error"]["code"], "not_found", "OpenAI's shape elsewhere: {body}");
    assert!(h.run.journal().len() >= 6, "every refusal is journaled: {}", h.run.journal().len());
}
