//! The embedded API (`squall::embedded`): scripting runs in code and asserting on the journal.

use squall::api::Api;
use squall::embedded::MockProvider;
use squall::journal::EndKind;
use squall::scenario::{Attempt, Scenario};

async fn stream(client: &reqwest::Client, base_url: &str) -> (u16, bool) {
    let response = client
        .post(format!("{base_url}/responses"))
        .json(&serde_json::json!({"model": "m", "input": "x", "stream": true}))
        .send()
        .await
        .expect("sent");
    let status = response.status().as_u16();
    (status, response.text().await.is_ok())
}

#[tokio::test]
async fn a_scripted_run_reads_like_the_wire() {
    let provider = MockProvider::start().await;
    let run = provider.run(
        Scenario::named("flaky")
            .attempt(Attempt::status(429).header("retry-after", "1"))
            .attempt(Attempt::text("The quick brown fox").reset_after_events(3))
            .attempt(Attempt::text("The quick brown fox")),
    );
    let client = reqwest::Client::new();
    assert_eq!(stream(&client, run.base_url()).await, (429, true));
    assert_eq!(stream(&client, run.base_url()).await, (200, false), "the reset breaks the body");
    tokio::time::sleep(std::time::Duration::from_millis(30)).await;
    assert_eq!(stream(&client, run.base_url()).await, (200, true));
    run.assert_attempts(3);
    assert_eq!(run.endings(), [Some(EndKind::ErrorStatus), Some(EndKind::Reset), Some(EndKind::Completed)]);
    run.assert_waited_at_least(1, 25.0);
}

#[tokio::test]
#[should_panic(expected = "expected 2 model calls, the server saw 1")]
async fn assert_attempts_fails_with_what_the_server_saw() {
    let provider = MockProvider::start().await;
    let run = provider.run(Scenario::named("once").attempt(Attempt::status(400)));
    let _ = stream(&reqwest::Client::new(), run.base_url()).await;
    run.assert_attempts(2);
}

#[test]
fn the_example_runs() {
    // Every target, as the test command's `cargo test --all-targets --no-run` resolved them
    // (the whole workspace's features and dev-dependencies): built with only the example, the
    // dependencies resolve otherwise and ring, rustls, reqwest and squall compile again.
    let built = squall_testkit::cargo()
        .args(["build", "--quiet", "--workspace", "--all-features", "--all-targets", "--message-format=json"])
        .current_dir(squall_testkit::root())
        .output()
        .expect("cargo builds the example");
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let executable = String::from_utf8_lossy(&built.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["target"]["name"] == "embedded" && message["target"]["kind"][0] == "example")
        .find_map(|message| message["executable"].as_str().map(str::to_owned))
        .expect("cargo names the example's executable");
    let output = std::process::Command::new(executable).output().expect("the example runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("attempt 2: HTTP 200 OK, body broken") && stdout.contains("Some(Reset)"), "{stdout}");
}

type PanicHook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Send + Sync>;

/// Where the next panic on this thread is reported from, while `during` runs; panics on other
/// threads go to the hook that was there before.
fn panic_location(during: impl FnOnce()) -> Option<String> {
    use std::sync::{Arc, Mutex};
    let previous: Arc<PanicHook> = Arc::new(std::panic::take_hook());
    let seen: Arc<Mutex<Option<String>>> = Arc::default();
    let (me, forward, record) = (std::thread::current().id(), previous.clone(), seen.clone());
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() == me {
            *record.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
                info.location().map(|l| l.file().to_owned());
        } else {
            forward(info);
        }
    }));
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(during));
    std::panic::set_hook(Box::new(move |info| previous(info)));
    let location = seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
    location
}

#[tokio::test]
async fn a_failed_assertion_points_at_the_test_that_made_it() {
    let provider = MockProvider::start().await;
    let run = provider.run(Scenario::named("quiet").attempt(Attempt::text("x")));
    let here = file!();
    assert_eq!(panic_location(|| run.assert_attempts(5)).as_deref(), Some(here));
    assert_eq!(panic_location(|| run.assert_waited_at_least(0, 1.0)).as_deref(), Some(here));
    assert_eq!(panic_location(|| drop(provider.run(Scenario::named("a/b")))).as_deref(), Some(here));
}

#[test]
fn the_delta_builders_break_before_output_or_after_n_pieces() {
    use squall::scenario::{FaultKind, FaultPoint};
    let before = Attempt::text("a b c").breaks_before_output(FaultKind::Eof).fault.expect("a fault");
    assert_eq!((before.kind, before.point()), (FaultKind::Eof, FaultPoint::Deltas(0)));
    let after = Attempt::text("a b c").breaks_after_deltas(FaultKind::Reset, 2).fault.expect("a fault");
    assert_eq!((after.kind, after.point()), (FaultKind::Reset, FaultPoint::Deltas(2)));
}

/// The path a client of `api` appends to `run.url(api)`, and a body of its own form.
fn path_and_body(api: Api) -> (&'static str, serde_json::Value) {
    let messages = serde_json::json!([{"role": "user", "content": "hi"}]);
    match api {
        Api::Responses => ("/responses", serde_json::json!({"model": "m", "input": "hi"})),
        Api::Chat => ("/chat/completions", serde_json::json!({"model": "m", "messages": messages})),
        Api::Messages => ("/v1/messages", serde_json::json!({"model": "m", "max_tokens": 9, "messages": messages})),
        Api::Gemini => (
            "/v1beta/models/g:generateContent",
            serde_json::json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}),
        ),
        Api::OllamaChat => ("/api/chat", serde_json::json!({"model": "m", "messages": messages, "stream": false})),
        Api::OllamaGenerate => ("/api/generate", serde_json::json!({"model": "m", "prompt": "hi", "stream": false})),
        Api::Bedrock => {
            ("/model/m/converse", serde_json::json!({"messages": [{"role": "user", "content": [{"text": "hi"}]}]}))
        }
        Api::BedrockInvoke => (
            "/model/m/invoke",
            serde_json::json!({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 9, "messages": messages}),
        ),
    }
}

/// `run.url(api)` is where a client of each API points: its own path appended, the request is
/// answered and journaled as that API; the vendor getters are the same URLs.
#[tokio::test]
async fn a_runs_url_for_each_api_is_where_that_apis_clients_point() {
    let provider = MockProvider::start().await;
    let run = provider.run(Scenario::named("ok").attempt(Attempt::text("hello")));
    let client = reqwest::Client::new();
    for api in Api::ALL {
        let (path, body) = path_and_body(api);
        let reply = client.post(format!("{}{path}", run.url(api))).json(&body).send().await.expect("sent");
        assert_eq!(reply.status(), 200, "{api:?} at {}{path}", run.url(api));
        let _ = reply.bytes().await;
        let last = run.journal().into_iter().last().expect("journaled");
        assert_eq!(last.api, Some(api), "{api:?} at {}{path}", run.url(api));
    }
    assert_eq!(run.base_url(), run.url(Api::Responses));
    assert!(run.base_url().ends_with("/v1"));
    for (getter, api) in [
        (run.anthropic_base_url(), Api::Messages),
        (run.gemini_base_url(), Api::Gemini),
        (run.ollama_host(), Api::OllamaChat),
        (run.bedrock_base_url(), Api::Bedrock),
    ] {
        assert_eq!(getter, run.url(api));
    }
}
