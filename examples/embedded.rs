//! squall embedded in a Rust program or test: `cargo run -p squall --example embedded`.
//!
//! Starts a mock provider on a random port, scripts a 503 then a stream that is reset after
//! three events then a good stream, calls it the way a retrying client would, and prints what
//! the server saw.

use squall::embedded::MockProvider;
use squall::scenario::{Attempt, Scenario};

#[tokio::main]
async fn main() {
    let provider = MockProvider::start().await;
    let run = provider.run(
        Scenario::named("flaky-provider")
            .attempt(Attempt::status(503).header("retry-after-ms", "50"))
            .attempt(Attempt::text("The quick brown fox").reset_after_events(3))
            .attempt(Attempt::text("The quick brown fox")),
    );
    let client = reqwest::Client::new();
    for attempt in 1..=3 {
        let response = client
            .post(format!("{}/responses", run.base_url()))
            .json(&serde_json::json!({"model": "gpt-4o", "input": "hi", "stream": true}))
            .send()
            .await
            .expect("squall answers");
        let status = response.status();
        let body = response.text().await;
        println!("attempt {attempt}: HTTP {status}, body {}", if body.is_ok() { "complete" } else { "broken" });
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    run.assert_attempts(3);
    for entry in run.model_calls() {
        println!(
            "server saw #{} {} → {:?} after {} events ({:?})",
            entry.index, entry.path, entry.status, entry.events_sent, entry.end
        );
    }
}
