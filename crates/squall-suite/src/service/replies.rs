//! The service's answers, as `docs/service.md` shows them: a run's welcome (how to configure the
//! client, where it sends requests) and a verdict (`squall.verdict/1`) — a case's record without
//! its evidence, or a calibration run's measurement.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::results::{CaseRecord, CheckRecord};
use crate::timing::ReactionMs;
use crate::verdict::{Level, Verdict};
use squall::clock::TimeScale;

/// What the client is told of a run just made for a case.
#[derive(Debug, Clone, Serialize)]
pub struct RunWelcome {
    pub(super) id: String,
    pub(super) case: String,
    pub(super) session: String,
    pub(super) level: Level,
    pub(super) time_scale: TimeScale,
    pub(super) time_scale_note: Option<String>,
    /// `accelerated` when the client runs on squall's clock (it asked with `clock_frame`), else `scaled`.
    pub(super) clock: &'static str,
    /// The rate its clock runs at during the case (1 / `time_scale`), when accelerated.
    pub(super) clock_rate: Option<f64>,
    /// What the client multiplies its own waits by: 1 on squall's clock, else `time_scale`.
    pub(super) client_time_scale: TimeScale,
    #[serde(flatten)]
    pub(super) urls: ClientWelcome,
    pub(super) clients: Vec<ClientWelcome>,
    pub(super) verdict: String,
}

/// Where one client sends its requests, and the IUT contract's environment for it.
#[derive(Debug, Clone, Serialize)]
pub struct ClientWelcome {
    pub(super) base_url: String,
    pub(super) anthropic_base_url: String,
    pub(super) gemini_base_url: String,
    pub(super) azure_openai_endpoint: String,
    pub(super) ollama_host: String,
    pub(super) bedrock_base_url: String,
    pub(super) responses_websocket_url: String,
    pub(super) env: BTreeMap<String, String>,
}

impl ClientWelcome {
    /// A client at the OpenAI base URL `base_url` (ending in `/v1`) with `env`.
    pub(super) fn at(base_url: &str, env: BTreeMap<String, String>) -> ClientWelcome {
        let root = base_url.strip_suffix("/v1").unwrap_or(base_url).to_owned();
        ClientWelcome {
            base_url: base_url.to_owned(),
            anthropic_base_url: root.clone(),
            gemini_base_url: root.clone(),
            azure_openai_endpoint: root.clone(),
            ollama_host: root.clone(),
            bedrock_base_url: root,
            responses_websocket_url: squall::server::responses_websocket_url(base_url),
            env,
        }
    }
}

/// A verdict's answer.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum VerdictReply {
    /// A case's verdict.
    Case(Box<CaseVerdict>),
    /// What a calibration run measured.
    Calibration(Box<CalibrationVerdict>),
}

/// A case's verdict: its record, without the evidence the client already has.
#[derive(Debug, Clone, Serialize)]
pub struct CaseVerdict {
    pub(super) schema: &'static str,
    pub(super) run: String,
    pub(super) case: String,
    pub(super) session: String,
    pub(super) level: Level,
    pub(super) name: String,
    pub(super) feature: String,
    pub(super) requirements: Vec<String>,
    pub(super) tags: Vec<String>,
    pub(super) verdict: Verdict,
    pub(super) error: Option<String>,
    pub(super) inconclusive: Option<String>,
    pub(super) checks: Vec<CheckRecord>,
    pub(super) time_scale: Option<TimeScale>,
    pub(super) time_scale_note: Option<String>,
    pub(super) reaction_ms: Option<ReactionMs>,
    pub(super) confirm: Option<Confirm>,
}

/// A slower run that could change the verdict: create one with this `time_scale`, and take its
/// verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Confirm {
    pub(super) time_scale: TimeScale,
    pub(super) why: String,
}

impl CaseVerdict {
    /// The verdict of `record`, for a run of `case` in `session` at `level`.
    pub(super) fn of(record: CaseRecord, (run, case, session): (String, String, String), level: Level) -> CaseVerdict {
        CaseVerdict {
            schema: super::VERDICT_SCHEMA,
            run,
            case,
            session,
            level,
            name: record.name,
            feature: record.feature,
            requirements: record.requirements,
            tags: record.tags,
            verdict: record.verdict,
            error: record.error,
            inconclusive: record.inconclusive,
            checks: record.checks,
            time_scale: record.time_scale,
            time_scale_note: record.time_scale_note,
            reaction_ms: record.reaction_ms,
            confirm: None,
        }
    }
}

/// What a calibration run measured, and the session's reaction so far.
#[derive(Debug, Clone, Serialize)]
pub struct CalibrationVerdict {
    pub(super) schema: &'static str,
    pub(super) run: String,
    pub(super) case: &'static str,
    pub(super) session: String,
    pub(super) time_scale: TimeScale,
    pub(super) gaps_ms: Vec<f64>,
    pub(super) reaction_ms: ReactionMs,
    pub(super) samples: usize,
    pub(super) missing: Option<String>,
    /// How far the session's lockstep herd spread, real ms (null before a herd calibration).
    pub(super) lockstep_ms: Option<f64>,
    /// The session's calibration so far in one line, as `squall run` prints it.
    pub(super) summary: String,
}
