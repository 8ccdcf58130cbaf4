//! The embedded API (`squall::embedded`): scripting runs in code and asserting on the journal.

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
    let output = std::process::Command::new(env!("CARGO"))
        // The features `cargo test --all-features` built with, so nothing is compiled again.
        .args(["run", "--quiet", "--all-features", "--example", "embedded"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs the example");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("attempt 2: HTTP 200 OK, body broken") && stdout.contains("Some(Reset)"), "{stdout}");
}
