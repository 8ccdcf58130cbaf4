//! The case an IUT run is asked for, read from the contract's environment
//! (`docs/iut-contract.md`). One parser for the adapter binary (process environment) and for
//! squall's in-process driver (the same variables, handed over as a list).

use std::path::PathBuf;
use std::sync::Arc;

use super::CaseError;
use crate::clock::Clock;
use crate::decide::policy::{AgentProfile, RetryPolicy};
use crate::mutants::Mutant;
use crate::provider::{Api, HttpVersion};

/// What kind of case to run (`SQUALL_TASK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseTask {
    /// One streamed model call through the provider and retry pipeline.
    Stream,
    /// A Task(deep-research) sub-session.
    Task,
    /// A main-session turn that may call Task.
    Main,
}

/// One case, as the contract's environment describes it.
#[derive(Debug, Clone)]
pub struct CaseEnv {
    /// `OPENAI_BASE_URL`: where the run is served.
    pub base_url: String,
    /// `OPENAI_API_KEY`: sent as the provider key.
    pub api_key: String,
    /// `SQUALL_CASE`: the case's name, for messages.
    pub case: String,
    /// `SQUALL_TASK`: what the case asks of the implementation.
    pub task: CaseTask,
    /// `SQUALL_PROMPT`: what to ask the model.
    pub prompt: String,
    /// `SQUALL_OUT`: where `result.json` and `events.jsonl` go.
    pub out: PathBuf,
    /// `SQUALL_TIME_SCALE`: policy time as a fraction of real time.
    pub time_scale: f64,
    /// `SQUALL_PROFILE`: default | fast-fail | writer | read-only | reasoning.
    pub profile: String,
    /// `SQUALL_FALLBACK`: attach a fallback answering with this text (seed 004 degrade).
    pub fallback: Option<String>,
    /// `SQUALL_MAX_RETRIES`: `providerRetry.maxRetries`, when the case configures it.
    pub max_retries: Option<u32>,
    /// `SQUALL_SEED`: a fixed jitter seed, to reproduce a run.
    pub seed: Option<u64>,
    /// `SQUALL_REFERENCE_MUTANT`: run a deliberately broken variant.
    pub mutant: Option<Mutant>,
    /// `SQUALL_REFERENCE_PROVIDER`: the API the reference speaks (responses, chat, messages, gemini, responses-websocket, bedrock).
    pub provider: Api,
    /// `SQUALL_REFERENCE_HTTP`: `2` speaks HTTP/2 only (with prior knowledge over cleartext);
    /// `1.1` HTTP/1.1 only; unset: HTTP/1.1 over cleartext and what ALPN chooses over TLS. The
    /// Responses API's WebSocket is HTTP/1.1 either way.
    pub http: HttpVersion,
    /// `SQUALL_CA_FILE`: the CA certificates (PEM) to trust over TLS (a suite run `--tls`).
    pub ca_file: Option<PathBuf>,
    /// A clock of the caller's instead of real time scaled by `SQUALL_TIME_SCALE`: squall's
    /// virtual clock, when the reference runs in squall's process (no variable sets it).
    pub clock: Option<Arc<dyn Clock>>,
}

impl CaseEnv {
    /// Read the case from the process environment; the error names the variable at fault.
    pub fn from_env() -> Result<CaseEnv, CaseError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Read the case from `lookup` (a variable's value, or `None` when unset).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<CaseEnv, CaseError> {
        let set = |name: &str| lookup(name).filter(|v| !v.is_empty());
        let required = |name: &'static str| set(name).ok_or_else(|| CaseError::unset(name));
        let task = match required("SQUALL_TASK")?.as_str() {
            "stream" => CaseTask::Stream,
            "task" => CaseTask::Task,
            "main" => CaseTask::Main,
            other => return Err(CaseError::bad("SQUALL_TASK", other, "expected stream, task or main")),
        };
        let time_scale = match set("SQUALL_TIME_SCALE") {
            Some(text) => text
                .parse::<f64>()
                .ok()
                .filter(|s| *s > 0.0 && *s <= 1.0)
                .ok_or_else(|| CaseError::bad("SQUALL_TIME_SCALE", &text, "expected a number in (0, 1]"))?,
            None => 1.0,
        };
        let number = |name: &'static str| -> Result<Option<u64>, CaseError> {
            set(name)
                .map(|text| text.parse::<u64>().map_err(|_| CaseError::bad(name, &text, "expected a whole number")))
                .transpose()
        };
        let max_retries = number("SQUALL_MAX_RETRIES")?
            .map(|n| u32::try_from(n).map_err(|_| CaseError::bad("SQUALL_MAX_RETRIES", &n.to_string(), "too large")))
            .transpose()?;
        let provider = match set("SQUALL_REFERENCE_PROVIDER") {
            Some(name) => Api::parse(&name).ok_or_else(|| {
                CaseError::bad(
                    "SQUALL_REFERENCE_PROVIDER",
                    &name,
                    "expected responses, chat, messages, gemini, responses-websocket or bedrock",
                )
            })?,
            None => Api::default(),
        };
        let http = match set("SQUALL_REFERENCE_HTTP").as_deref() {
            None => HttpVersion::Negotiated,
            Some("1.1") => HttpVersion::Http1,
            Some("2") => HttpVersion::Http2,
            Some(other) => return Err(CaseError::bad("SQUALL_REFERENCE_HTTP", other, "expected 1.1 or 2")),
        };
        let mutant = match set("SQUALL_REFERENCE_MUTANT") {
            Some(name) => Some(
                Mutant::parse(&name)
                    .ok_or_else(|| CaseError::bad("SQUALL_REFERENCE_MUTANT", &name, "no such mutant"))?,
            ),
            None => None,
        };
        Ok(CaseEnv {
            base_url: required("OPENAI_BASE_URL")?,
            api_key: set("OPENAI_API_KEY").unwrap_or_default(),
            case: set("SQUALL_CASE").unwrap_or_default(),
            task,
            prompt: set("SQUALL_PROMPT").unwrap_or_else(|| "hello".to_owned()),
            out: PathBuf::from(required("SQUALL_OUT")?),
            time_scale,
            profile: set("SQUALL_PROFILE").unwrap_or_else(|| "default".to_owned()),
            fallback: set("SQUALL_FALLBACK"),
            max_retries,
            seed: number("SQUALL_SEED")?,
            mutant,
            provider,
            http,
            ca_file: set("SQUALL_CA_FILE").map(PathBuf::from),
            clock: None,
        })
    }

    /// The retry policy of the case: the profile's, bent by the mutant if any, with the
    /// configured `maxRetries` and jitter seed.
    pub fn policy(&self) -> Result<RetryPolicy, CaseError> {
        let mut policy = match self.profile.as_str() {
            "default" | "" => RetryPolicy::default(),
            "fast-fail" => RetryPolicy::fast_fail(),
            "writer" => RetryPolicy::for_agent(AgentProfile::Writer),
            "read-only" => RetryPolicy::for_agent(AgentProfile::ReadOnly),
            "reasoning" => RetryPolicy::reasoning_ladder(),
            other => {
                return Err(CaseError::bad(
                    "SQUALL_PROFILE",
                    other,
                    "expected default, fast-fail, writer, read-only or reasoning",
                ))
            }
        };
        if let Some(mutant) = self.mutant {
            crate::mutants::adjust_policy(mutant, &mut policy);
        }
        if let Some(max_retries) = self.max_retries.filter(|_| crate::mutants::honours_max_retries(self.mutant)) {
            policy.max_retries = max_retries;
        }
        if let Some(seed) = self.seed {
            policy.jitter_seed = seed;
        }
        Ok(policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn the_contract_variables_configure_the_policy() {
        let vars = [
            ("SQUALL_TASK", "stream"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:1/v1"),
            ("SQUALL_OUT", "/tmp/out"),
            ("SQUALL_MAX_RETRIES", "10"),
            ("SQUALL_SEED", "42"),
        ];
        let policy = CaseEnv::from_lookup(lookup(&vars)).expect("valid").policy().expect("policy");
        assert_eq!((policy.max_retries, policy.jitter_seed), (10, 42));
    }

    #[test]
    fn a_bad_variable_is_named_in_the_error() {
        let vars =
            [("SQUALL_TASK", "stream"), ("OPENAI_BASE_URL", "x"), ("SQUALL_OUT", "/o"), ("SQUALL_MAX_RETRIES", "-1")];
        let error = CaseEnv::from_lookup(lookup(&vars)).expect_err("invalid");
        assert!(error.to_string().starts_with("SQUALL_MAX_RETRIES=-1: "), "{error}");
        let error = CaseEnv::from_lookup(lookup(&[("SQUALL_TASK", "stream")])).expect_err("missing");
        assert_eq!(error.to_string(), "OPENAI_BASE_URL: is not set");
    }
}
