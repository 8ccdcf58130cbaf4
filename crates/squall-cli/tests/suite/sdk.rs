//! The official OpenAI, Anthropic and Google (google-genai, @google/genai) SDKs parse squall's
//! streams as their own typed events.
//!
//! The SDKs are installed by `scripts/setup-sdks.sh` under `target/sdk/` (the README's test
//! command runs it). Without them these tests fail and say how to install them: a skipped
//! conformance check would be a check that cannot fail.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use squall::embedded::{MockProvider, ScriptedRun};
use squall::journal::{EndKind, Protocol};
use squall::scenario::load::from_toml_str;

use crate::kit::sdks::{python, sdk_dir};

const CASES: &[(&str, &str)] = &[
    ("text", "[[attempts]]\nstream = { text = \"The quick brown fox\" }\n"),
    (
        "rich",
        "[[attempts]]\nstream = { reasoning = \"The user wants research.\", text = \"Let me delegate.\", function_call = { name = \"Task\", arguments = '{\"agent\": \"deep-research\", \"prompt\": \"x\"}' } }\n",
    ),
    ("failed", "[[attempts]]\nstream = { text = \"part\", fail = { code = \"rate_limit_exceeded\", message = \"Please try again in 1.5s\" } }\n"),
    ("rate_limited", "[[attempts]]\nstatus = 429\nheaders = { \"retry-after\" = \"2\" }\n"),
    ("reset", "[[attempts]]\nstream = { text = \"a b c d\" }\nfault = { kind = \"reset\", after_events = 4 }\n"),
];

fn checker(relative: &str) -> PathBuf {
    crate::kit::suites::root().to_path_buf().join("crates/squall-cli/tests/sdk").join(relative)
}

/// The Messages API cases; the checkers read each run at its Anthropic base URL.
const ANTHROPIC_CASES: &[(&str, &str)] = &[
    ("text", "[[attempts]]\nstream = { text = \"The quick brown fox\" }\n"),
    (
        "rich",
        "[[attempts]]\nstream = { reasoning = \"The user wants research.\", text = \"Let me delegate.\", function_call = { name = \"Task\", arguments = '{\"agent\": \"deep-research\", \"prompt\": \"x\"}' } }\n",
    ),
    ("overloaded", "[[attempts]]\nstream = { text = \"part\", fail = { code = \"overloaded_error\" } }\n"),
    ("overloaded_status", "[[attempts]]\nstatus = 529\n"),
    (
        "retried",
        "[[attempts]]\nstatus = 529\nheaders = { \"retry-after\" = \"1\" }\n[[attempts]]\nstream = { text = \"The quick brown fox\" }\n",
    ),
    ("rate_limited", "[[attempts]]\nstatus = 429\nheaders = { \"retry-after\" = \"2\" }\n"),
    ("reset", "[[attempts]]\nstream = { text = \"a b c d\" }\nfault = { kind = \"reset\", after_events = 4 }\n"),
];

/// The Gemini API cases; the checker reads each run at its Gemini base URL.
const GEMINI_CASES: &[(&str, &str)] = &[
    ("text", "[[attempts]]\nstream = { text = \"The quick brown fox\" }\n"),
    (
        "rich",
        "[[attempts]]\nstream = { reasoning = \"The user wants research.\", text = \"Let me delegate.\", function_call = { name = \"Task\", arguments = '{\"agent\": \"deep-research\", \"prompt\": \"x\"}' } }\n",
    ),
    ("failed", "[[attempts]]\nstream = { text = \"part\", fail = { code = \"rate_limit_exceeded\", message = \"Please try again in 1.5s\" } }\n"),
    ("overloaded", "[[attempts]]\nstream = { text = \"part\", fail = { code = \"overloaded_error\" } }\n"),
    ("rate_limited", "[[attempts]]\nstatus = 429\nheaders = { \"retry-after\" = \"2\" }\n"),
    ("retried", "[[attempts]]\nstatus = 503\n[[attempts]]\nstream = { text = \"The quick brown fox\" }\n"),
    ("reset", "[[attempts]]\nstream = { text = \"a b c d\" }\nfault = { kind = \"reset\", after_events = 2 }\n"),
];

/// The Responses API over WebSocket; the checker reads each run at its OpenAI base URL, from
/// which the SDK derives `ws://…/responses`.
const WEBSOCKET_CASES: &[(&str, &str)] = &[
    ("text", "[[attempts]]\nstream = { text = \"The quick brown fox\" }\n[[attempts]]\nstream = { text = \"Jumps over\" }\n"),
    (
        "rich",
        "[[attempts]]\nstream = { reasoning = \"The user wants research.\", text = \"Let me delegate.\", function_call = { name = \"Task\", arguments = '{\"agent\": \"deep-research\", \"prompt\": \"x\"}' } }\n",
    ),
    (
        "second_turn_429",
        "[[attempts]]\nstream = { text = \"The quick brown fox\" }\n[[attempts]]\nstatus = 429\nheaders = { \"retry-after\" = \"2\" }\n[[attempts]]\nstream = { text = \"The quick brown fox\" }\n",
    ),
    ("upgrade_503", "[[attempts]]\nstatus = 503\nheaders = { \"retry-after\" = \"1\" }\n"),
    ("reset", "[[attempts]]\nstream = { text = \"a b c d\" }\nfault = { kind = \"reset\", after_deltas = 2 }\n"),
    ("closed_1011", "[[attempts]]\nstream = { text = \"a b c d\" }\nfault = { kind = \"truncate\", after_deltas = 1, close_code = 1011 }\n"),
];

/// Azure OpenAI: the checker gives each run's URL to `AzureOpenAI` as its endpoint.
const AZURE_CASES: &[(&str, &str)] = &[
    ("text", "[[attempts]]\nstream = { text = \"The quick brown fox\" }\n"),
    ("responses", "[[attempts]]\nstream = { text = \"The quick brown fox\" }\n"),
    ("rate_limited", "[[attempts]]\nstatus = 429\nheaders = { \"retry-after-ms\" = \"1500\" }\n"),
    ("retried", "[[attempts]]\nstatus = 503\nheaders = { \"retry-after-ms\" = \"10\" }\n[[attempts]]\nstream = { text = \"The quick brown fox\" }\n"),
    ("filtered", "[[attempts]]\nstatus = 400\nerror = { code = \"content_filter\" }\n"),
];

/// Ollama's native API: the checkers give each run's URL to the client as its host.
const OLLAMA_CASES: &[(&str, &str)] = &[
    ("text", "[[attempts]]\nstream = { text = \"The quick brown fox\" }\n[[attempts]]\nstream = { text = \"The quick brown fox\" }\n"),
    (
        "rich",
        "[[attempts]]\nstream = { reasoning = \"The user wants research.\", text = \"Let me delegate.\", function_call = { name = \"Task\", arguments = '{\"agent\": \"deep-research\", \"prompt\": \"x\"}' } }\n",
    ),
    ("failed", "[[attempts]]\nstream = { text = \"part\", fail = { code = \"rate_limit_exceeded\", message = \"Please try again in 1.5s\" } }\n"),
    ("busy", "[[attempts]]\nstatus = 503\n"),
    ("reset", "[[attempts]]\nstream = { text = \"a b c d\" }\nfault = { kind = \"reset\", after_deltas = 2 }\n"),
];

/// Amazon Bedrock's Converse API: the checkers give each run's URL to the Bedrock Runtime client
/// as its endpoint.
const BEDROCK_CASES: &[(&str, &str)] = &[
    ("text", "[[attempts]]\nstream = { text = \"The quick brown fox\" }\n"),
    (
        "rich",
        "[[attempts]]\nstream = { reasoning = \"The user wants research.\", text = \"Let me delegate.\", function_call = { name = \"Task\", arguments = '{\"agent\": \"deep-research\", \"prompt\": \"x\"}' } }\n",
    ),
    ("throttled", "[[attempts]]\nstream = { text = \"part\", fail = { code = \"rate_limit_exceeded\", message = \"Please try again in 1.5s\" } }\n"),
    ("internal", "[[attempts]]\nstream = { text = \"part\", fail = { code = \"server_error\" } }\n"),
    ("model_stream", "[[attempts]]\nstream = { text = \"part\", fail = { code = \"modelStreamErrorException\" } }\n"),
    ("unavailable", "[[attempts]]\nstream = { text = \"part\", fail = { code = \"serviceUnavailableException\" } }\n"),
    ("rate_limited", "[[attempts]]\nstatus = 429\nheaders = { \"retry-after\" = \"2\" }\n"),
    ("not_ready", "[[attempts]]\nstatus = 429\nerror = { type = \"ModelNotReadyException\" }\n"),
    ("busy", "[[attempts]]\nstatus = 503\n"),
    ("internal_status", "[[attempts]]\nstatus = 500\n"),
    ("invalid", "[[attempts]]\nstatus = 400\n"),
    ("eof", "[[attempts]]\nstream = { text = \"a b c d\" }\nfault = { kind = \"eof\", after_events = 3 }\n"),
    ("reset_internal", "[[attempts]]\nstream = { text = \"a b c d\" }\nfault = { kind = \"reset\", after_deltas = 2 }\n"),
    ("goaway", "[[attempts]]\nstream = { text = \"a b c d\" }\nfault = { kind = \"goaway\", after_deltas = 1 }\n"),
    ("goaway_cut", "[[attempts]]\nstream = { text = \"a b c d\" }\nfault = { kind = \"goaway\", after_deltas = 2, h2_code = \"internal_error\" }\n"),
    ("garbage", "[[attempts]]\nstream = { text = \"a b c d\" }\nfault = { kind = \"garbage\", after_deltas = 1 }\n"),
    ("reset", "[[attempts]]\nstream = { text = \"a b c d\" }\nfault = { kind = \"reset\", after_deltas = 2, h2_code = \"cancel\" }\n"),
    ("refused", "[[attempts]]\nfault = { kind = \"refuse\" }\n"),
    ("closed", "[[attempts]]\nstream = { text = \"a b c d\" }\nfault = { kind = \"close\", after_deltas = 2 }\n"),
    ("refused_then_ok", "[[attempts]]\nfault = { kind = \"refuse\" }\n[[attempts]]\nstream = { text = \"a b\" }\n"),
];

/// Which wire format a checker drives.
#[derive(Clone, Copy)]
enum Wire {
    OpenAi,
    Azure,
    Ollama,
    Bedrock,
    OpenAiWebSocket,
    Anthropic,
    Gemini,
}

/// Start a server with one run per case; returns the server, the runs, and `{case: base_url}`.
async fn runs(wire: Wire) -> (MockProvider, BTreeMap<&'static str, ScriptedRun>, String) {
    let server = MockProvider::start().await;
    let cases = match wire {
        Wire::OpenAi => CASES,
        Wire::OpenAiWebSocket => WEBSOCKET_CASES,
        Wire::Anthropic => ANTHROPIC_CASES,
        Wire::Gemini => GEMINI_CASES,
        Wire::Azure => AZURE_CASES,
        Wire::Ollama => OLLAMA_CASES,
        Wire::Bedrock => BEDROCK_CASES,
    };
    let mut runs = BTreeMap::new();
    let mut urls = BTreeMap::new();
    for (case, body) in cases {
        let scenario = from_toml_str(case, &format!("name = \"{case}\"\n{body}")).expect("valid case");
        let run = server.run(scenario);
        let url = match wire {
            Wire::OpenAi | Wire::OpenAiWebSocket => run.base_url(),
            Wire::Anthropic => run.anthropic_base_url(),
            Wire::Azure => run.azure_openai_endpoint(),
            Wire::Ollama => run.ollama_host(),
            Wire::Bedrock => run.bedrock_base_url(),
            Wire::Gemini => run.gemini_base_url(),
        };
        urls.insert(*case, url.to_owned());
        runs.insert(*case, run);
    }
    (server, runs, serde_json::to_string(&urls).expect("json"))
}

/// Runs a checker script against fresh runs; returns the runs, to read their journals.
async fn run_checker(program: PathBuf, script: PathBuf, wire: Wire) -> BTreeMap<&'static str, ScriptedRun> {
    // Interpreters starting up are heavy: never beside a timing-sensitive suite run.
    let (_server, runs, urls) = runs(wire).await;
    let output =
        tokio::task::spawn_blocking(move || Command::new(program).arg(script).env("SQUALL_RUNS", urls).output())
            .await
            .expect("joined")
            .expect("the checker runs");
    let report = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the SDK rejected squall's wire format:\n{report}");
    runs
}

/// The SDK retried the 529 once, after its Retry-After, and every request spoke Messages.
fn assert_529_retried(runs: &BTreeMap<&'static str, ScriptedRun>) {
    let journal = runs["retried"].journal();
    let statuses: Vec<Option<u16>> = journal.iter().map(|e| e.status).collect();
    assert_eq!(statuses, [Some(529), Some(200)], "the SDK retries a 529 once, then succeeds");
    let waited = journal[1].received_at_ms - journal[0].finished_at_ms.unwrap_or(journal[0].received_at_ms);
    assert!(waited >= 900.0, "the retry came {waited:.0} ms after the 529 that said `retry-after: 1`");
    assert!(
        journal.iter().all(|e| e.api == Some(squall::journal::Api::Messages)),
        "journaled as Messages API requests"
    );
}

/// A node checker copied beside the installed packages: ES modules resolve packages from
/// the script's own directory.
fn node_checker(name: &str, package: &str) -> PathBuf {
    let node_dir = sdk_dir().join("node");
    assert!(
        node_dir.join("node_modules").join(package).exists(),
        "node SDK {package} missing: run `scripts/setup-sdks.sh`"
    );
    let script = node_dir.join(name);
    std::fs::copy(checker(&format!("node/{name}")), &script).expect("copy the node checker");
    std::fs::copy(checker("node/checker_kit.mjs"), node_dir.join("checker_kit.mjs")).expect("copy the checkers' kit");
    script
}

/// Azure OpenAI's paths (`/openai/deployments/{model}/chat/completions?api-version=…`,
/// `/openai/responses`) are the OpenAI APIs they mirror; the `api-key` header is never journaled.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
async fn python_azure_openai_client_parses_every_reply_and_retries() {
    let runs = run_checker(python(), checker("python/parse_azure.py"), Wire::Azure).await;
    let chat = runs["text"].journal();
    assert_eq!(chat[0].path, "/openai/deployments/gpt-4o/chat/completions");
    assert_eq!(chat[0].api, Some(squall::journal::Api::Chat));
    assert_eq!(chat[0].headers.get("api-key").map(String::as_str), Some("[redacted]"));
    let responses = runs["responses"].journal();
    assert_eq!(responses[0].api, Some(squall::journal::Api::Responses), "{}", responses[0].path);
    let statuses: Vec<Option<u16>> = runs["retried"].journal().iter().map(|e| e.status).collect();
    assert_eq!(statuses, [Some(503), Some(200)], "AzureOpenAI retries a 503, then succeeds");
}

/// Ollama's `/api/chat` and `/api/generate`: newline-delimited JSON, journaled as Ollama's APIs.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
async fn python_ollama_client_parses_every_reply() {
    let runs = run_checker(python(), checker("python/parse_ollama.py"), Wire::Ollama).await;
    let text = runs["text"].journal();
    let apis: Vec<Option<squall::journal::Api>> = text.iter().map(|e| e.api).collect();
    use squall::journal::Api::{OllamaChat, OllamaGenerate};
    assert_eq!(apis, [Some(OllamaChat), Some(OllamaGenerate)]);
    assert!(text.iter().all(|e| e.stream), "Ollama streams unless told not to");
    assert_eq!(text[0].path, "/api/chat");
    let reset = &runs["reset"].journal()[0];
    assert_eq!((reset.events_sent, reset.end), (2, Some(squall::journal::EndKind::Reset)), "{reset:?}");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
async fn node_ollama_client_parses_every_reply() {
    run_checker("node".into(), node_checker("parse_ollama.mjs", "ollama"), Wire::Ollama).await;
}

/// Bedrock's InvokeModel as the Anthropic SDK's `AnthropicBedrock` calls it:
/// `/model/{modelId}/invoke-with-response-stream`, Messages events in event-stream `chunk`s.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
async fn python_anthropic_bedrock_client_parses_every_reply() {
    let runs = run_checker(python(), checker("python/parse_anthropic_bedrock.py"), Wire::Bedrock).await;
    let text = &runs["text"].journal()[0];
    assert_eq!((text.api, text.stream), (Some(squall::journal::Api::BedrockInvoke), true));
    assert!(text.path.ends_with("/invoke-with-response-stream"), "{}", text.path);
    let whole = &runs["rich"].journal()[1];
    assert!(!whole.stream && whole.path.ends_with("/invoke"), "{whole:?}");
}

/// Bedrock's `/model/{modelId}/converse-stream`: AWS event-stream messages, journaled as the
/// Bedrock API with the SigV4 signature redacted.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
async fn python_boto3_bedrock_runtime_parses_every_reply() {
    let runs = run_checker(python(), checker("python/parse_bedrock.py"), Wire::Bedrock).await;
    let text = &runs["text"].journal()[0];
    assert_eq!((text.api, text.stream), (Some(squall::journal::Api::Bedrock), true));
    assert!(text.path.starts_with("/model/") && text.path.ends_with("/converse-stream"), "{}", text.path);
    let signature = text.headers.get("authorization").expect("boto3 signs its requests");
    assert_eq!(signature, "[redacted]", "a SigV4 signature is a credential");
    let whole = &runs["rich"].journal()[1];
    assert!(!whole.stream && whole.path.ends_with("/converse"), "{whole:?}");
    let garbage = &runs["garbage"].journal()[0];
    assert_eq!(garbage.end, Some(squall::journal::EndKind::Garbage), "{garbage:?}");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
async fn node_aws_sdk_bedrock_runtime_parses_every_reply() {
    let runs =
        run_checker("node".into(), node_checker("parse_bedrock.mjs", "@aws-sdk/client-bedrock-runtime"), Wire::Bedrock)
            .await;
    // As shipped, over HTTP/2: each fault ended its own stream with the frame the client read.
    let (reset, eof) = (&runs["reset"].journal()[0], &runs["eof"].journal()[0]);
    assert_eq!((reset.protocol, reset.end_frame.as_deref()), (Protocol::Http2, Some("RST_STREAM CANCEL")), "{reset:?}");
    let internal = &runs["reset_internal"].journal()[0];
    assert_eq!(internal.end_frame.as_deref(), Some("RST_STREAM INTERNAL_ERROR"), "{internal:?}");
    assert_eq!((eof.protocol, eof.end_frame.as_deref()), (Protocol::Http2, Some("END_STREAM")), "{eof:?}");
    // The SDK's default strategy retried the refused stream once: two attempts reached squall.
    let refused = runs["refused_then_ok"].journal();
    let ends: Vec<_> = refused.iter().map(|e| (e.end, e.end_frame.as_deref())).collect();
    assert_eq!(
        ends,
        [(Some(EndKind::Refused), Some("RST_STREAM REFUSED_STREAM")), (Some(EndKind::Completed), Some("END_STREAM"))]
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
async fn python_openai_sdk_parses_every_stream() {
    run_checker(python(), checker("python/parse_streams.py"), Wire::OpenAi).await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
async fn python_openai_sdk_parses_every_response_over_websocket() {
    let runs = run_checker(python(), checker("python/parse_responses_websocket.py"), Wire::OpenAiWebSocket).await;
    // Both turns of the first socket are journaled with it, and the upgrade the 503 refused
    // is journaled as the GET it was.
    let text = runs["text"].journal();
    assert_eq!(
        text.iter().map(|e| (e.method.as_str(), e.socket)).collect::<Vec<_>>(),
        [("WS", Some(1)), ("WS", Some(1))]
    );
    let refused = runs["upgrade_503"].journal();
    assert_eq!((refused[0].method.as_str(), refused[0].status), ("GET", Some(503)));
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
async fn node_openai_sdk_parses_every_stream() {
    run_checker(PathBuf::from("node"), node_checker("parse_streams.mjs", "openai"), Wire::OpenAi).await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
async fn python_anthropic_sdk_parses_every_messages_stream() {
    let runs = run_checker(python(), checker("python/parse_anthropic.py"), Wire::Anthropic).await;
    assert_529_retried(&runs);
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
async fn node_anthropic_sdk_parses_every_messages_stream() {
    let script = node_checker("parse_anthropic.mjs", "@anthropic-ai/sdk");
    let runs = run_checker(PathBuf::from("node"), script, Wire::Anthropic).await;
    assert_529_retried(&runs);
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
async fn python_google_genai_sdk_parses_every_gemini_stream() {
    let runs = run_checker(python(), checker("python/parse_gemini.py"), Wire::Gemini).await;
    // Both API versions' paths were journaled as Gemini requests, and the SDK retried the 503.
    let journal = runs["retried"].journal();
    assert_eq!(journal.iter().map(|e| e.status).collect::<Vec<_>>(), [Some(503), Some(200)]);
    let paths: Vec<String> = runs["text"].journal().iter().map(|e| e.path.clone()).collect();
    assert!(paths.iter().any(|p| p.starts_with("/v1beta/models/")), "{paths:?}");
    assert!(runs["text"].journal().iter().all(|e| e.api == Some(squall::journal::Api::Gemini)), "{paths:?}");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
async fn node_google_genai_sdk_parses_every_gemini_stream() {
    let script = node_checker("parse_gemini.mjs", "@google/genai");
    run_checker(PathBuf::from("node"), script, Wire::Gemini).await;
}
