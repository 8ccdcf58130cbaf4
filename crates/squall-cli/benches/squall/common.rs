//! Shared by the benches: a runtime, a server with scripted runs, and percentile reports.

use std::sync::Mutex;
use std::time::Duration;

use futures_util::StreamExt;
use squall::clock::TimeScale;
use squall::embedded::{MockProvider, ScriptedRun};
use squall::scenario::load::from_toml_str;
use squall::scenario::Catalogue;
use squall::server::{ServerConfig, Serving};
use tokio::runtime::Runtime;

pub(crate) fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

/// A server that serves connections as `squall serve` does: on threads of its own.
pub(crate) async fn server() -> MockProvider {
    let mut config = ServerConfig::loopback(Catalogue::default());
    config.serving = Serving::one_thread_per_core();
    MockProvider::start_with(config).await
}

/// The benches' streamed Responses request.
pub(crate) const STREAMED_REQUEST: &str = r#"{"model": "m", "input": "x", "stream": true}"#;

/// Sends [`STREAMED_REQUEST`] to `url` (a run's `/responses`).
pub(crate) async fn send_streamed(client: &reqwest::Client, url: &str) -> reqwest::Response {
    let request = client.post(url).header("content-type", "application/json").body(STREAMED_REQUEST);
    request.send().await.expect("sent")
}

/// One streamed request read to its end (or to the fault that ends it); returns the bytes read.
pub(crate) async fn drain(client: &reqwest::Client, url: &str) -> usize {
    let mut body = send_streamed(client, url).await.bytes_stream();
    let mut total = 0;
    while let Some(Ok(bytes)) = body.next().await {
        total += bytes.len();
    }
    total
}

/// A run scripted by TOML attempts; returns its base URL and the run.
pub(crate) fn scripted(server: &MockProvider, toml: &str, time_scale: TimeScale) -> (String, ScriptedRun) {
    let scenario = from_toml_str("bench", &format!("name = \"bench\"\n{toml}")).expect("bench scenario");
    let run = server.run_scaled(scenario, time_scale);
    (run.base_url().to_owned(), run)
}

/// Errors (ms) collected while criterion iterates, reported as percentiles afterwards.
#[derive(Default)]
pub(crate) struct Errors(Mutex<Vec<f64>>);

impl Errors {
    pub(crate) fn push(&self, ms: f64) {
        self.0.lock().expect("lock").push(ms);
    }

    /// Print `name: n samples, p50, p99, max` and forget the samples.
    pub(crate) fn report(&self, name: &str) {
        let mut values = std::mem::take(&mut *self.0.lock().expect("lock"));
        if values.is_empty() {
            return;
        }
        values.sort_by(f64::total_cmp);
        let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
        println!(
            "{name}: {} samples, |error| p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
            values.len(),
            at(0.5),
            at(0.99),
            values[values.len() - 1]
        );
    }
}

pub(crate) fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
