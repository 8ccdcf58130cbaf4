//! Test kit: a `MockProvider` with one run scripted in TOML, reqwest to talk to it, and the
//! journal read back through the admin API, as an outside user reads it.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use squall::clock::TimeScale;
use squall::embedded::{MockProvider, ScriptedRun};
use squall::journal::JournalEntry;
use squall::scenario::load::from_toml_str;
use tokio::time::Instant;

/// A server with one run scripted by `toml`.
pub struct Harness {
    pub provider: MockProvider,
    pub run: ScriptedRun,
    pub base_url: String,
    pub client: reqwest::Client,
}

impl Harness {
    pub async fn new(toml: &str) -> Harness {
        Self::scaled(toml, TimeScale::of(1.0)).await
    }

    /// A run of a scenario from the shipped catalogue (`scenarios/NAME.toml`).
    pub async fn catalogue(name: &str, time_scale: TimeScale) -> Harness {
        let path = crate::root().join("scenarios").join(format!("{name}.toml"));
        Self::scaled(&std::fs::read_to_string(&path).expect("catalogue scenario exists"), time_scale).await
    }

    pub async fn scaled(toml: &str, time_scale: TimeScale) -> Harness {
        let scenario = from_toml_str("test scenario", toml).expect("test scenario is valid");
        let provider = MockProvider::start().await;
        let run = provider.run_scaled(scenario, time_scale);
        Harness { base_url: run.base_url().to_owned(), run, provider, client: reqwest::Client::new() }
    }

    pub async fn post(&self, path: &str, body: Value) -> reqwest::Response {
        self.client.post(format!("{}{path}", self.base_url)).json(&body).send().await.expect("request sent")
    }

    /// `POST /responses` with `stream: true`.
    pub async fn stream_responses(&self) -> reqwest::Response {
        self.post("/responses", crate::calls::responses_request()).await
    }

    /// The run's journal, through the admin API as an outside user reads it.
    pub async fn journal(&self) -> Vec<JournalEntry> {
        let url = format!("{}/__squall/runs/{}/journal", self.provider.server().origin(), self.run.id());
        let body: Value = self.client.get(url).send().await.expect("journal").json().await.expect("json");
        serde_json::from_value(body["requests"].clone()).expect("journal entries")
    }

    /// The journal once every entry has ended (the server finishes entries just after the
    /// client sees the end of a reply).
    pub async fn settled_journal(&self) -> Vec<JournalEntry> {
        for _ in 0..200 {
            let journal = self.journal().await;
            if journal.iter().all(|e| e.end.is_some()) {
                return journal;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("journal entries never ended: {:#?}", self.journal().await);
    }
}

/// What a client read from a body before it ended or failed.
pub struct BodyRead {
    pub bytes: Vec<u8>,
    pub error: Option<reqwest::Error>,
    /// When each chunk arrived, relative to the first.
    pub arrivals: Vec<(Duration, usize)>,
}

impl BodyRead {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// Complete SSE events: `(event name, data)`.
    pub fn events(&self) -> Vec<(Option<String>, String)> {
        parse_sse(&self.text())
    }

    pub fn event_names(&self) -> Vec<String> {
        self.events().into_iter().filter_map(|(name, _)| name).collect()
    }

    /// The io::ErrorKind at the bottom of the error, if the body failed with one.
    pub fn io_error_kind(&self) -> Option<std::io::ErrorKind> {
        let mut source: Option<&(dyn std::error::Error + 'static)> = self.error.as_ref().map(|e| e as _);
        while let Some(error) = source {
            if let Some(io) = error.downcast_ref::<std::io::Error>() {
                return Some(io.kind());
            }
            source = error.source();
        }
        None
    }

    pub fn error_chain(&self) -> String {
        let mut out = String::new();
        let mut source: Option<&(dyn std::error::Error + 'static)> = self.error.as_ref().map(|e| e as _);
        while let Some(error) = source {
            out.push_str(&format!("{error} / "));
            source = error.source();
        }
        out
    }
}

/// The JSON a request the test expects answered gets back (an admin API call, mostly).
pub async fn json_reply(request: reqwest::RequestBuilder) -> Value {
    request.send().await.expect("sent").json().await.expect("json")
}

/// Read a body to its end or its failure, timing each chunk.
pub async fn read_body(response: reqwest::Response) -> BodyRead {
    let mut stream = response.bytes_stream();
    let mut read = BodyRead { bytes: Vec::new(), error: None, arrivals: Vec::new() };
    let start = Instant::now();
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(bytes) => {
                read.arrivals.push((start.elapsed(), read.bytes.len()));
                read.bytes.extend_from_slice(&bytes);
            }
            Err(e) => {
                read.error = Some(e);
                break;
            }
        }
    }
    read
}

/// A minimal SSE parser: events end with a blank line; text after the last blank line is an
/// incomplete event and is left out. Returns `(event name, data)` per event.
pub fn parse_sse(text: &str) -> Vec<(Option<String>, String)> {
    let Some(end) = text.rfind("\n\n") else { return Vec::new() };
    text[..end]
        .split("\n\n")
        .filter_map(|block| {
            let mut name = None;
            let mut data = Vec::new();
            for line in block.lines() {
                if let Some(value) = line.strip_prefix("event: ") {
                    name = Some(value.to_owned());
                } else if let Some(value) = line.strip_prefix("data: ") {
                    data.push(value);
                }
            }
            (name.is_some() || !data.is_empty()).then(|| (name, data.join("\n")))
        })
        .collect()
}

/// cucumber-rs (run by other tests in this binary) installs a panic hook that swallows
/// assertion messages, so assertions that matter print their explanation to stdout first.
pub fn require(ok: bool, explanation: &str) {
    if !ok {
        println!("{explanation}");
    }
    assert!(ok, "{explanation}");
}

/// Wait (up to `limit`) for `done`, checking every 20 ms.
pub async fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    done()
}
