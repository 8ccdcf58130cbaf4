//! The official OpenAI SDKs parse squall's streams as their own typed events.
//!
//! The SDKs are installed by `scripts/setup-sdks.sh` under `target/sdk/` (the README's test
//! command runs it). Without them these tests fail and say how to install them: a skipped
//! conformance check would be a check that cannot fail.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use squall::embedded::MockProvider;
use squall::scenario::load::from_toml_str;

use super::suite_kit::ONE_SUITE_AT_A_TIME;

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

fn sdk_dir() -> PathBuf {
    std::env::var_os("SQUALL_SDK_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/sdk"))
}

fn checker(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk").join(relative)
}

/// Start a server with one run per case; returns the server and `{case: base_url}`.
async fn runs() -> (MockProvider, String) {
    let server = MockProvider::start().await;
    let mut urls = BTreeMap::new();
    for (case, body) in CASES {
        let scenario = from_toml_str(case, &format!("name = \"{case}\"\n{body}")).expect("valid case");
        urls.insert(*case, server.run(scenario).base_url().to_owned());
    }
    (server, serde_json::to_string(&urls).expect("json"))
}

async fn run_checker(program: PathBuf, script: PathBuf) {
    // Interpreters starting up are heavy: never beside a timing-sensitive suite run.
    let _one = ONE_SUITE_AT_A_TIME.lock().await;
    let (_server, urls) = runs().await;
    let output =
        tokio::task::spawn_blocking(move || Command::new(program).arg(script).env("SQUALL_RUNS", urls).output())
            .await
            .expect("joined")
            .expect("the checker runs");
    let report = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the SDK rejected squall's wire format:\n{report}");
}

#[tokio::test(flavor = "multi_thread")]
async fn python_openai_sdk_parses_every_stream() {
    let python = sdk_dir().join("python/bin/python");
    assert!(
        python.exists(),
        "{} is missing: install the SDKs with `scripts/setup-sdks.sh` (the README's test command does)",
        python.display()
    );
    run_checker(python, checker("python/parse_streams.py")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn node_openai_sdk_parses_every_stream() {
    let node_dir = sdk_dir().join("node");
    assert!(node_dir.join("node_modules/openai").exists(), "node SDK missing: run `scripts/setup-sdks.sh`");
    // ES modules resolve `openai` from the script's own directory, so the checker runs
    // beside the installed package.
    let script = node_dir.join("parse_streams.mjs");
    std::fs::copy(checker("node/parse_streams.mjs"), &script).expect("copy the node checker");
    run_checker(PathBuf::from("node"), script).await;
}
