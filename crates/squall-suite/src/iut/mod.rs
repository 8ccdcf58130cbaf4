//! The IUT contract (`docs/iut-contract.md`) as data: which implementation, what one case asks
//! of it (the environment in), and what it left (`result.json` + `events.jsonl` out). Only the
//! engine starts an implementation (`engine::launch`); everything here is read or written by it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use squall::clock::TimeScale;

/// Which implementation to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Iut {
    /// `squall-reference`, in-process; optionally one of its deliberately broken mutants.
    Reference {
        /// The mutant's name (`never-retry-5xx`, ...), or `None` for the reference itself.
        mutant: Option<String>,
    },
    /// An outside implementation, started with `sh -c COMMAND`.
    Command(String),
}

impl Iut {
    /// Whether it runs in squall's process on squall's virtual clock: the reference and its
    /// mutants, when squall was built with it. Its waits then take no real time and every span
    /// squall measures is exact.
    pub fn runs_on_virtual_clock(&self) -> bool {
        cfg!(feature = "reference") && matches!(self, Iut::Reference { .. })
    }

    /// How reports name it: `reference (in-process)`, `reference mutant `…``, or the command;
    /// the reference names the API it speaks when `SQUALL_REFERENCE_PROVIDER` picks another, and
    /// HTTP/2 when `SQUALL_REFERENCE_HTTP` picks it.
    pub fn describe(&self) -> String {
        let chosen = |name: &str, default: &str| std::env::var(name).ok().filter(|v| !v.is_empty() && v != default);
        let api =
            chosen("SQUALL_REFERENCE_PROVIDER", "responses").map(|api| format!(", {api} API")).unwrap_or_default();
        let http = chosen("SQUALL_REFERENCE_HTTP", "1.1").map(|v| format!(", HTTP/{v}")).unwrap_or_default();
        let api = format!("{api}{http}");
        match self {
            Iut::Reference { mutant: None } => format!("reference (in-process{api})"),
            Iut::Reference { mutant: Some(m) } => format!("reference mutant `{m}` (in-process{api})"),
            Iut::Command(command) => command.clone(),
        }
    }
}

/// The clock an outside implementation's process runs on (`squall run --clock`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClockMode {
    /// Real time: the client reads `SQUALL_TIME_SCALE` and scales its own waits (its adapter
    /// multiplies them).
    #[default]
    Scaled,
    /// Sped up by `1 / time scale` with squall's preload: the client reads `SQUALL_TIME_SCALE=1`
    /// and waits production values, unmodified (Linux).
    Accelerated,
    /// Sped up where that can be had and reaches the client; else scaled, saying why (`squall
    /// run`'s default).
    Auto,
}

impl ClockMode {
    /// `scaled`, `accelerated` or `auto`.
    pub fn parse(text: &str) -> Option<ClockMode> {
        match text {
            "scaled" => Some(ClockMode::Scaled),
            "accelerated" => Some(ClockMode::Accelerated),
            "auto" => Some(ClockMode::Auto),
            _ => None,
        }
    }

    /// As `SQUALL_CLOCK` and reports name it.
    pub fn as_str(self) -> &'static str {
        match self {
            ClockMode::Scaled => "scaled",
            ClockMode::Accelerated => "accelerated",
            ClockMode::Auto => "auto",
        }
    }
}

/// `SQUALL_TASK`: what the case asks of the IUT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskKind {
    Stream,
    Task,
    Main,
}

impl TaskKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TaskKind::Stream => "stream",
            TaskKind::Task => "task",
            TaskKind::Main => "main",
        }
    }
}

/// One case for the IUT.
#[derive(Debug, Clone)]
pub(crate) struct CaseSpec {
    pub case: String,
    pub task: TaskKind,
    pub prompt: String,
    pub base_url: String,
    pub time_scale: TimeScale,
    pub profile: Option<String>,
    pub fallback: Option<String>,
    /// `providerRetry.maxRetries` to configure; `None` leaves the implementation's default.
    pub max_retries: Option<u32>,
    /// A seed for the implementation's jitter, when a reproducible run is wanted.
    pub seed: Option<u64>,
    /// The instance's number in a herd (`SQUALL_CLIENT`); `None` when it runs alone.
    pub client: Option<u32>,
    /// Real time the IUT gets before it is killed.
    pub timeout: Duration,
}

/// What an IUT left behind (clones share its output directory, removed with the last).
#[derive(Debug, Clone)]
pub(crate) struct IutRun {
    pub out_dir: std::sync::Arc<tempfile::TempDir>,
    pub result: Option<Value>,
    pub events: Vec<Value>,
    /// Problems reading the outputs (missing result, unparsable lines).
    pub output_errors: Vec<String>,
    pub stderr: String,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// The real time it was given.
    pub timeout: Duration,
    /// The `SQUALL_TIME_SCALE` it was told when that was not the case's time scale: 1 for a
    /// process on a sped-up clock, which waits production values.
    pub told_time_scale: Option<TimeScale>,
}

impl CaseSpec {
    /// The spec of instance `client` of a herd whose clients use `base_url(client)`: its own
    /// `SQUALL_CLIENT`, and its own jitter seed when one is set (the suite's seed plus its
    /// number), so that a herd seeded for a reproducible run does not jitter in lockstep.
    pub(crate) fn for_client(&self, client: u32, base_url: String) -> CaseSpec {
        CaseSpec {
            base_url,
            client: Some(client),
            seed: self.seed.map(|seed| seed.wrapping_add(u64::from(client))),
            case: format!("{}/client-{client}", self.case),
            ..self.clone()
        }
    }
}

impl IutRun {
    /// Resolve a path the IUT reported (relative paths are relative to `SQUALL_OUT`).
    pub(crate) fn resolve(&self, reported: &str) -> PathBuf {
        let path = Path::new(reported);
        if path.is_absolute() {
            path.to_owned()
        } else {
            self.out_dir.path().join(path)
        }
    }
}

/// The contract's environment for a case.
pub(crate) fn contract_env(spec: &CaseSpec, out: &Path) -> Vec<(&'static str, String)> {
    let mut env = vec![
        ("OPENAI_BASE_URL", spec.base_url.clone()),
        ("OPENAI_API_KEY", "sk-squall-test".to_owned()),
        // The same run for Anthropic's SDKs, which read these and append `/v1/messages`.
        ("ANTHROPIC_BASE_URL", spec.base_url.strip_suffix("/v1").unwrap_or(&spec.base_url).to_owned()),
        ("ANTHROPIC_API_KEY", "sk-ant-squall-test".to_owned()),
        // The same run for Google's google-genai SDKs, which read these and append
        // `/v1beta/models/{model}:generateContent`.
        ("GOOGLE_GEMINI_BASE_URL", spec.base_url.strip_suffix("/v1").unwrap_or(&spec.base_url).to_owned()),
        ("GEMINI_API_KEY", "squall-gemini-test".to_owned()),
        // The same run as an Azure OpenAI endpoint, which the openai SDKs' `AzureOpenAI` reads
        // (with the key and API version) and appends `/openai/deployments/{model}/…` to.
        ("AZURE_OPENAI_ENDPOINT", spec.base_url.strip_suffix("/v1").unwrap_or(&spec.base_url).to_owned()),
        ("AZURE_OPENAI_API_KEY", "squall-azure-test".to_owned()),
        ("OPENAI_API_VERSION", "2024-10-21".to_owned()),
        // The same run as an Ollama host, which the ollama clients read and append `/api/chat` to.
        ("OLLAMA_HOST", spec.base_url.strip_suffix("/v1").unwrap_or(&spec.base_url).to_owned()),
        // The same run as Bedrock Runtime's endpoint (the AWS SDKs read it, and append
        // `/model/{modelId}/converse-stream`), with test credentials and a region to sign with.
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", spec.base_url.strip_suffix("/v1").unwrap_or(&spec.base_url).to_owned()),
        ("AWS_ACCESS_KEY_ID", "AKIASQUALLTEST".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "squall-test-secret".to_owned()),
        // botocore reads the first, the AWS SDK for JavaScript the second.
        ("AWS_DEFAULT_REGION", "us-east-1".to_owned()),
        ("AWS_REGION", "us-east-1".to_owned()),
        ("SQUALL_CASE", spec.case.clone()),
        ("SQUALL_TASK", spec.task.as_str().to_owned()),
        ("SQUALL_PROMPT", spec.prompt.clone()),
        ("SQUALL_OUT", out.display().to_string()),
        ("SQUALL_TIME_SCALE", spec.time_scale.to_string()),
        ("SQUALL_PROFILE", spec.profile.clone().unwrap_or_else(|| "default".to_owned())),
    ];
    if let Some(fallback) = &spec.fallback {
        env.push(("SQUALL_FALLBACK", fallback.clone()));
    }
    if let Some(max_retries) = spec.max_retries {
        env.push(("SQUALL_MAX_RETRIES", max_retries.to_string()));
    }
    if let Some(seed) = spec.seed {
        env.push(("SQUALL_SEED", seed.to_string()));
    }
    if let Some(client) = spec.client {
        env.push(("SQUALL_CLIENT", client.to_string()));
    }
    env
}

/// The variables that tell an implementation's clients to trust the CA in `ca_file`, when the
/// suite serves over TLS: squall's own, then OpenSSL's (Python's `ssl`, curl built on it),
/// requests', Node's (added to its roots) and the AWS SDKs'.
pub(crate) fn trust_env(ca_file: &Path) -> Vec<(&'static str, String)> {
    let path = ca_file.display().to_string();
    ["SQUALL_CA_FILE", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "AWS_CA_BUNDLE", "CURL_CA_BUNDLE"]
        .into_iter()
        .map(|name| (name, path.clone()))
        .collect()
}

/// What an implementation left in its output directory: `result.json`, `events.jsonl`, and the
/// problems reading them.
pub(crate) fn read_outputs(out: &Path) -> (Option<Value>, Vec<Value>, Vec<String>) {
    let mut errors = Vec::new();
    let result = match std::fs::read_to_string(out.join("result.json")) {
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(value) if value.is_object() => Some(value),
            Ok(_) => {
                errors.push("result.json is not a JSON object".to_owned());
                None
            }
            Err(e) => {
                errors.push(format!("result.json is not JSON: {e}"));
                None
            }
        },
        Err(e) => {
            errors.push(format!("result.json: {e}"));
            None
        }
    };
    let mut events = Vec::new();
    if let Ok(text) = std::fs::read_to_string(out.join("events.jsonl")) {
        for (number, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            match serde_json::from_str(line) {
                Ok(event) => events.push(event),
                Err(e) => errors.push(format!("events.jsonl line {}: {e}", number + 1)),
            }
        }
    }
    (result, events, errors)
}

mod run;
pub(crate) use run::{Execution, RunPlan};
