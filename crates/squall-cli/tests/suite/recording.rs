//! Recording through the proxy: what an upstream (here squall itself, scripted) answers becomes a
//! scenario whose attempts replay it — in every API (Bedrock's event-stream messages among them),
//! streamed or not, statuses with their retry headers — and a recording of the replay is the
//! recording itself. `squall record` writes it as a scenario file without the client's key.

use std::io::{BufRead as _, BufReader};
use std::process::Stdio;

use crate::kit::command::squall;
use serde_json::{json, Value};
use squall::embedded::{MockProvider, ScriptedRun};
use squall::scenario::load::from_toml_str;
use squall::scenario::{Catalogue, Scenario};
use squall::server::{ServerConfig, Upstream};

const KEY: &str = "sk-recorded-client-91d2";

const SCRIPT: &str = r#"name = "real"
[[attempts]]
status = 429
headers = { retry-after = "2" }
error = { code = "rate_limit_exceeded", message = "Slow down" }
[[attempts]]
stream = { reasoning = "The user wants research.", text = "Let me delegate that.", function_call = { name = "Task", arguments = '{"agent": "deep-research"}' } }
"#;

/// A squall server forwarding to `upstream_base`, and a run that forwards everything.
async fn recorder(upstream_base: &str) -> (MockProvider, ScriptedRun) {
    let upstream = Upstream::parse(upstream_base, None).expect("a valid upstream");
    let mut config = ServerConfig::loopback(Catalogue::default());
    config.upstream = Some(upstream);
    let provider = MockProvider::start_with(config).await;
    let run = provider.run(from_toml_str("rec", "name = \"rec\"\nafter = \"ok\"\n").expect("valid"));
    (provider, run)
}

/// One request in `api`'s own form, streamed or not; the reply is read to its end.
async fn ask(run: &ScriptedRun, api: &str, stream: bool) {
    let client = reqwest::Client::new();
    let request = match api {
        "responses" => client
            .post(format!("{}/responses", run.base_url()))
            .json(&json!({"model": "m", "input": "hi", "stream": stream})),
        "chat" => client
            .post(format!("{}/chat/completions", run.base_url()))
            .json(&json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": stream})),
        "messages" => client.post(format!("{}/v1/messages", run.anthropic_base_url())).json(
            &json!({"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}], "stream": stream}),
        ),
        "bedrock_invoke" => {
            let operation = if stream { "invoke-with-response-stream" } else { "invoke" };
            client
                .post(format!("{}/model/m/{operation}", run.anthropic_base_url()))
                .json(&json!({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}))
        }
        "bedrock" => {
            let operation = if stream { "converse-stream" } else { "converse" };
            client
                .post(format!("{}/model/m/{operation}", run.anthropic_base_url()))
                .json(&json!({"messages": [{"role": "user", "content": [{"text": "hi"}]}]}))
        }
        _ => {
            let method = if stream { "streamGenerateContent?alt=sse" } else { "generateContent" };
            client
                .post(format!("{}/v1beta/models/g:{method}", run.gemini_base_url()))
                .json(&json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}))
        }
    };
    let response = request.bearer_auth(KEY).send().await.expect("sent");
    let _ = response.bytes().await;
}

/// Record `script` as `api` speaks it (each attempt once), through a fresh upstream and recorder.
async fn record(script: &str, api: &str, stream: bool) -> Scenario {
    let real = MockProvider::start().await;
    let real_run = real.run(from_toml_str("real", script).expect("valid"));
    let (_recorder, run) = recorder(real_run.base_url()).await;
    let attempts = from_toml_str("real", script).expect("valid").attempts.len();
    for _ in 0..attempts {
        ask(&run, api, stream).await;
    }
    // The recording is kept as each reply's body ends, just after the client has read it.
    for _ in 0..200 {
        if let Some(recorded) = run.recording().filter(|s| s.attempts.len() == attempts) {
            return recorded;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    panic!("the recording never held {attempts} attempts: {:?}", run.recording());
}

#[tokio::test]
async fn every_apis_replies_are_recorded_as_the_attempts_that_made_them() {
    let script = from_toml_str("real", SCRIPT).expect("valid");
    let spec = script.attempts[1].stream.clone().expect("a stream");
    for (api, stream) in [
        ("responses", true),
        ("responses", false),
        ("chat", true),
        ("chat", false),
        ("messages", true),
        ("messages", false),
        ("gemini", true),
        ("gemini", false),
        ("bedrock", true),
        ("bedrock", false),
        ("bedrock_invoke", true),
        ("bedrock_invoke", false),
    ] {
        let recorded = record(SCRIPT, api, stream).await;
        let refused = &recorded.attempts[0];
        assert_eq!(
            (refused.status, refused.headers.get("retry-after").map(String::as_str)),
            (Some(429), Some("2")),
            "{api} {stream}"
        );
        assert!(
            refused.error.as_ref().and_then(|e| e.message.as_deref()).is_some_and(|m| m.contains("Slow down")),
            "{api} {stream}: {refused:?}"
        );
        let got = recorded.attempts[1].stream.clone().expect("a stream");
        assert_eq!(got.text, spec.text, "{api} {stream}");
        let call = got.function_call.expect("the call");
        assert_eq!(call.name, "Task", "{api} {stream}");
        let arguments: Value = serde_json::from_str(&call.arguments).expect("JSON arguments");
        assert_eq!(arguments, json!({"agent": "deep-research"}), "{api} {stream}");
        // Chat has no reasoning channel.
        let reasoning = if api == "chat" { None } else { spec.reasoning.clone() };
        assert_eq!(got.reasoning, reasoning, "{api} {stream}");
    }
}

#[tokio::test]
async fn a_recording_replays_identically() {
    let first = record(SCRIPT, "responses", true).await;
    let as_file = toml::to_string(&first).expect("TOML");
    let reloaded = from_toml_str("recorded.toml", &as_file).expect("the written file loads");
    assert_eq!(reloaded, first, "through TOML and back");
    let again = record(&as_file, "responses", true).await;
    assert_eq!(again.attempts, first.attempts, "recording the replay records the same attempts");
}

#[test]
fn squall_record_writes_a_scenario_file_without_the_key() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let real = runtime.block_on(MockProvider::start());
    let real_run = real.run(from_toml_str("real", SCRIPT).expect("valid"));
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("provider-says-slow-down.toml");
    let mut child = squall()
        .args(["record", "--upstream", real_run.base_url(), "--addr", "127.0.0.1:0", "--requests", "2", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("squall record starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("the first line");
    let base_url = first.trim().strip_prefix("squall recording at ").expect("the base URL line").to_owned();
    runtime.block_on(async {
        for _ in 0..2 {
            let body = json!({"model": "m", "input": "hi", "stream": true});
            let response = reqwest::Client::new()
                .post(format!("{base_url}/responses"))
                .bearer_auth(KEY)
                .json(&body)
                .send()
                .await
                .expect("sent");
            let _ = response.bytes().await;
        }
    });
    let status = child.wait().expect("squall record ends");
    let mut stderr = String::new();
    let _ = std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr);
    assert!(status.success(), "{stderr}");
    let written = std::fs::read_to_string(&out).expect("the scenario file");
    assert!(!written.contains(KEY), "no key in the recording: {written}");
    let catalogue = Catalogue::load_dir(dir.path()).expect("the file is a catalogue scenario");
    let scenario = catalogue.get("provider-says-slow-down").expect("named by its stem");
    assert_eq!(scenario.attempts.len(), 2);
    assert_eq!(scenario.attempts[0].status, Some(429));
}

#[tokio::test]
async fn a_reply_that_broke_off_is_recorded_as_the_fault_it_was() {
    let path = crate::kit::suites::root().join("scenarios/reset-after-3-events-then-ok.toml");
    let script = std::fs::read_to_string(path).expect("a catalogue scenario");
    let recorded = record(&script, "responses", true).await;
    let broken = recorded.attempts[0].fault.as_ref().expect("the reset is recorded");
    assert_eq!((broken.kind, broken.after_deltas), (squall::scenario::FaultKind::Reset, Some(0)), "{broken:?}");
    assert!(recorded.attempts[1].fault.is_none());
    let truncated = "name = \"t\"\n[[attempts]]\nstream = { text = \"a b c\" }\nfault = { kind = \"truncate\", after_deltas = 2 }\n";
    let recorded = record(truncated, "chat", true).await;
    let fault = recorded.attempts[0].fault.as_ref().expect("the truncation is recorded");
    assert_eq!((fault.kind, fault.after_deltas), (squall::scenario::FaultKind::Truncate, Some(2)));
    assert_eq!(recorded.attempts[0].stream.as_ref().and_then(|s| s.text.as_deref()), Some("a b"));
}

/// A reply of 20,000 output deltas (a long answer, one word each) is recorded whole and its
/// recording replays: the scenario limits hold anything a recording keeps.
#[tokio::test]
async fn a_long_reply_is_recorded_and_its_recording_replays() {
    let words = vec!["w"; 20_000].join(" ");
    let script = format!("name = \"long\"\n[[attempts]]\nstream = {{ text = \"{words}\" }}\n");
    let recorded = record(&script, "responses", true).await;
    let text = recorded.attempts[0].stream.as_ref().and_then(|s| s.text.clone()).expect("the text");
    assert_eq!(text.split_whitespace().count(), 20_000, "recorded whole");
    let replay = MockProvider::start().await;
    if let Err(refused) = replay.try_run(recorded) {
        panic!("the recording does not replay: {refused}");
    }
}

/// `--out` is checked before anything is forwarded: a missing directory or a directory is
/// refused at once, naming the path as given, and nothing is left behind.
#[test]
fn squall_record_refuses_a_bad_out_before_forwarding_anything() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("taken.toml")).expect("a directory named like a scenario");
    // An upstream nobody listens on: were anything forwarded, it would fail differently.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let upstream = format!("http://{}/v1", closed.local_addr().expect("addr"));
    drop(closed);
    for (out, says) in [("missing/rec.toml", "does not exist"), ("taken.toml", "a directory")] {
        let mut child = squall()
            .args(["record", "--upstream", &upstream, "--addr", "127.0.0.1:0", "--requests", "1", "--out", out])
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("squall record starts");
        // Refused at once; left running, it would wait for a request that never comes.
        let started = std::time::Instant::now();
        while child.try_wait().expect("waits").is_none() && started.elapsed() < std::time::Duration::from_secs(10) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = child.kill();
        let output = child.wait_with_output().expect("squall record ends");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{out}: {stderr}");
        assert!(stderr.contains(&format!("--out {out}")) && stderr.contains(says), "{out}: {stderr}");
        assert!(output.stdout.is_empty(), "{out}: no run was started: {}", String::from_utf8_lossy(&output.stdout));
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).expect("dir").map(|e| e.expect("entry").file_name()).collect();
    assert_eq!(left, ["taken.toml"], "nothing left behind");
}
