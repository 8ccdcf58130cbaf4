//! squall inside another crate's tests — the wiremock-rs `MockServer` experience, with faults:
//! start a server on a random loopback port, script a run in code, point the client under test
//! at its `base_url`, then read what happened as typed journal entries.
//!
//! ```no_run
//! # async fn example() {
//! use squall::embedded::MockProvider;
//! use squall::scenario::{Attempt, Scenario};
//!
//! let provider = MockProvider::start().await;
//! let run = provider.run(
//!     Scenario::named("reset-then-ok")
//!         .attempt(Attempt::text("partial answer").reset_after_events(3))
//!         .attempt(Attempt::text("full answer")),
//! );
//! // ... point your client at run.base_url() and call it ...
//! run.assert_attempts(2);
//! # }
//! ```
//!
#![doc = include_str!("../docs/embedded.md")]

use std::sync::Arc;

use crate::api::Api;
use crate::clock::TimeScale;
use crate::journal::{EndKind, JournalEntry};
use crate::scenario::{Catalogue, Scenario, ScenarioError};
use crate::server::runs::Run;
use crate::server::{Server, ServerConfig};

/// A squall server for one test: loopback, random port, stopped when dropped.
#[derive(Debug)]
pub struct MockProvider {
    server: Server,
}

impl MockProvider {
    /// Start on `127.0.0.1` with a free port.
    ///
    /// # Panics
    /// When no loopback port can be bound.
    pub async fn start() -> MockProvider {
        Self::start_with(ServerConfig::loopback(Catalogue::default())).await
    }

    /// Start with a configuration of one's own (body limit, admin token, run and journal
    /// caps...).
    ///
    /// # Panics
    /// When the configured address cannot be bound.
    pub async fn start_with(config: ServerConfig) -> MockProvider {
        let addr = config.addr;
        let server = Server::start(config).await.unwrap_or_else(|e| panic!("squall cannot listen on {addr}: {e}"));
        MockProvider { server }
    }

    /// A run scripted by `scenario`, at real time.
    ///
    /// # Panics
    /// When the scenario is invalid (a name that is not URL-safe, a bad header, a fault past
    /// the end of its stream, ...), with the message [`MockProvider::try_run`] returns.
    #[track_caller]
    pub fn run(&self, scenario: Scenario) -> ScriptedRun {
        self.run_scaled(scenario, TimeScale::REAL)
    }

    /// A run whose delays and stalls are multiplied by `time_scale`.
    ///
    /// # Panics
    /// When the scenario is invalid; see [`MockProvider::try_run_scaled`].
    #[track_caller]
    pub fn run_scaled(&self, scenario: Scenario, time_scale: TimeScale) -> ScriptedRun {
        match self.try_run_scaled(scenario, time_scale) {
            Ok(run) => run,
            Err(e) => panic!("squall cannot serve this scenario: {e}"),
        }
    }

    /// A run scripted by `scenario`, or why the server could not serve it.
    pub fn try_run(&self, scenario: Scenario) -> Result<ScriptedRun, ScenarioError> {
        self.try_run_scaled(scenario, TimeScale::REAL)
    }

    /// A run whose delays and stalls are multiplied by `time_scale`, or why the server could
    /// not serve it: the same checks as a scenario file or the admin API.
    pub fn try_run_scaled(&self, scenario: Scenario, time_scale: TimeScale) -> Result<ScriptedRun, ScenarioError> {
        ScriptedRun::on(&self.server, scenario, time_scale)
    }

    /// The server itself: its address, its open connections.
    pub fn server(&self) -> &Server {
        &self.server
    }
}

/// One scripted run: its base URL and what the server saw.
#[derive(Debug, Clone)]
pub struct ScriptedRun {
    base_url: String,
    run: Arc<Run>,
}

impl ScriptedRun {
    /// A run of `scenario` at `time_scale` on a server of one's own (what [`MockProvider`] does
    /// on its own server), checked as a scenario file or the admin API's is. It stays until
    /// [`Server::remove_run`] removes it or the server stops.
    pub fn on(server: &Server, scenario: Scenario, time_scale: TimeScale) -> Result<ScriptedRun, ScenarioError> {
        let run = server.create_run(scenario, time_scale)?;
        Ok(ScriptedRun { base_url: server.base_url(&run), run })
    }

    /// Dates sent to the run's client from now on (`@now+Ns` headers, a quota's resets) are in
    /// `frame`: the wall time a client on a sped-up clock reads.
    pub fn set_client_frame(&self, frame: crate::clock::ClientFrame) {
        self.run.journal.set_client_frame(frame);
    }

    /// The base URL a client of `api` is given: `…/v1` for OpenAI's APIs (Responses, Chat
    /// Completions), whose SDKs take the `/v1` in their `base_url`; the run's root for the
    /// others, whose clients append their own path (`/v1/messages`,
    /// `/v1beta/models/{model}:generateContent`, `/api/chat`, `/model/{modelId}/converse-stream`).
    /// The getters below are this for one vendor's SDK parameter each.
    pub fn url(&self, api: Api) -> &str {
        match api {
            Api::Responses | Api::Chat => &self.base_url,
            Api::Messages | Api::Gemini | Api::OllamaChat | Api::OllamaGenerate | Api::Bedrock | Api::BedrockInvoke => {
                self.root()
            }
        }
    }

    /// The run's URL without `/v1`.
    fn root(&self) -> &str {
        self.base_url.strip_suffix("/v1").unwrap_or(&self.base_url)
    }

    /// Use as the OpenAI SDK's `base_url` (it ends in `/v1`): `url(Api::Responses)`.
    pub fn base_url(&self) -> &str {
        self.url(Api::Responses)
    }

    /// Use as an Anthropic SDK's `base_url`, to which the SDK appends `/v1/messages`:
    /// `url(Api::Messages)`.
    pub fn anthropic_base_url(&self) -> &str {
        self.url(Api::Messages)
    }

    /// Use as a google-genai SDK's `base_url` (`http_options`, or `GOOGLE_GEMINI_BASE_URL`), to
    /// which the SDK appends `/v1beta/models/{model}:generateContent`: `url(Api::Gemini)`.
    pub fn gemini_base_url(&self) -> &str {
        self.url(Api::Gemini)
    }

    /// Use as the openai SDKs' `AzureOpenAI` `azure_endpoint` (or `AZURE_OPENAI_ENDPOINT`): the
    /// run's root, to which the client appends
    /// `/openai/deployments/{model}/chat/completions?api-version=…` (Chat Completions on Azure's
    /// paths, which `url(Api::Chat)`, with `/v1`, is not).
    pub fn azure_openai_endpoint(&self) -> &str {
        self.root()
    }

    /// Use as an ollama client's `host` (or `OLLAMA_HOST`), to which the client appends
    /// `/api/chat` and `/api/generate`: `url(Api::OllamaChat)`.
    pub fn ollama_host(&self) -> &str {
        self.url(Api::OllamaChat)
    }

    /// Use as a Bedrock Runtime client's endpoint (boto3's `endpoint_url`, the AWS SDKs'
    /// `endpoint`, `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`), to which the client appends
    /// `/model/{modelId}/converse-stream`: `url(Api::Bedrock)`.
    pub fn bedrock_base_url(&self) -> &str {
        self.url(Api::Bedrock)
    }

    /// On a server with an upstream (docs/proxy.md): the scenario that replays what the upstream
    /// answered this run's forwarded requests, one attempt per reply in arrival order; `None`
    /// when nothing was forwarded.
    pub fn recording(&self) -> Option<Scenario> {
        let description = format!("Recorded through run {}: one attempt per upstream reply, in order.", self.run.id);
        self.run.replies.scenario(&format!("recorded-{}", self.run.id), description)
    }

    /// The Responses API's WebSocket (OpenAI's WebSocket mode): `ws://…/v1/responses`, to open
    /// with an upgrade and send `response.create` events to. An SDK's `websocket_base_url` is
    /// the same without `/responses` ([`ScriptedRun::base_url`] with `ws://`).
    pub fn responses_websocket_url(&self) -> String {
        crate::server::responses_websocket_url(&self.base_url)
    }

    /// The OpenAI base URL of herd client `client` (`0..10_000`) of this run: each client's
    /// requests are journaled with its number (`JournalEntry::client`) and count their attempts
    /// on their own, while outages, chaos and quota are shared by the whole run.
    pub fn client_base_url(&self, client: u32) -> String {
        format!("{}/clients/{client}/v1", self.root())
    }

    /// The run's id, as the admin API names it (`/__squall/runs/{id}`).
    pub fn id(&self) -> &str {
        &self.run.id
    }

    /// Every request so far, including ones still in progress.
    pub fn journal(&self) -> Vec<JournalEntry> {
        self.run.journal.snapshot()
    }

    /// Model calls only: the requests an attempt of the script answered (Responses, Chat
    /// Completions, Messages, Gemini, each `response.create` on a WebSocket), without `/models`
    /// and without requests refused before an attempt was chosen.
    pub fn model_calls(&self) -> Vec<JournalEntry> {
        self.journal().into_iter().filter(|e| e.attempt.is_some()).collect()
    }

    /// How each model call ended, in order.
    pub fn endings(&self) -> Vec<Option<EndKind>> {
        self.model_calls().iter().map(|e| e.end).collect()
    }

    /// Milliseconds between model call `n` ending and call `n + 1` arriving (0-based `n`).
    pub fn gap_ms(&self, n: usize) -> Option<f64> {
        let calls = self.model_calls();
        Some(calls.get(n + 1)?.received_at_ms - calls.get(n)?.finished_at_ms?)
    }

    /// Panics with the journal unless exactly `expected` model calls arrived; the panic points at
    /// the caller's line.
    #[track_caller]
    pub fn assert_attempts(&self, expected: usize) {
        let calls = self.model_calls();
        assert_eq!(
            calls.len(),
            expected,
            "expected {expected} model calls, the server saw {}: {:#?}",
            calls.len(),
            self.endings()
        );
    }

    /// Panics unless the client waited at least `ms` before retrying after call `n`; the panic
    /// points at the caller's line.
    #[track_caller]
    pub fn assert_waited_at_least(&self, n: usize, ms: f64) {
        let gap = self.gap_ms(n);
        assert!(gap.is_some_and(|g| g >= ms), "expected a wait of at least {ms} ms after call {n}, saw {gap:?}");
    }
}

#[cfg(all(test, not(feature = "websocket")))]
mod tests {
    use super::MockProvider;
    use crate::scenario::{Attempt, Scenario};

    /// Without the feature an upgrade is refused, naming it, rather than served as a plain GET.
    #[tokio::test]
    async fn without_the_websocket_feature_an_upgrade_names_it() {
        let provider = MockProvider::start().await;
        let run = provider.run(Scenario::named("socket").attempt(Attempt::text("hi")));
        let reply = reqwest::Client::new()
            .get(format!("{}/responses", run.base_url()))
            .header("upgrade", "websocket")
            .header("connection", "Upgrade")
            .header("sec-websocket-version", "13")
            .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
            .send()
            .await
            .expect("answered");
        assert_eq!(reply.status(), 501);
        let body = reply.text().await.expect("a body");
        assert!(body.contains("`websocket` feature"), "{body}");
    }
}
