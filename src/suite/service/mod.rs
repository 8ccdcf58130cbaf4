//! The judge as a service (public contract, `docs/service.md`): the suite's cases as data, runs
//! created for them, and verdicts on what a client posts — decided by the very checks and case
//! verdicts `squall run` uses ([`super::cases::judge`]), so a test runner in any language gets
//! the verdict `squall run` would give. [`CaseService`] is the server's
//! [`CaseJudge`](crate::server::CaseJudge); `squall serve` starts with one.
//!
//! - `sessions` — each session's calibration, taken out of its timing checks
//! - `outcome` — what a client posts, read as the IUT contract's outputs

mod outcome;
mod sessions;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::cases::export::{describe, scenario_name, CaseQuery, CALIBRATION_ID};
use super::cases::judge::judge_case;
use super::cases::CasePlan;
use super::checks::Observation;
use super::requirements::ProfileSelection;
use super::settings::{DEFAULT_HERD, DEFAULT_MAX_TIME_SCALE, DEFAULT_TIME_SCALE, HERD_SIZES};
use super::steps::when::unjudgeable_case;
use super::timing::calibration::{self, gaps_after_asks};
use super::timing::margin::slower;
use super::timing::{choose_scale, scale_name, CaseClock, Margin, ReactionMs};
use super::verdict::Level;
use crate::iut::{contract_env, CaseSpec, TaskKind};
use crate::journal::JournalEntry;
use crate::scenario::limits::check_time_scale;
use crate::scenario::Catalogue;
use crate::server::judge_api::{CaseJudge, PreparedRun, Refusal, RunUrls};

/// The schema of a verdict's reply.
pub const VERDICT_SCHEMA: &str = "squall.verdict/1";

/// The session a run belongs to when its request names none.
const DEFAULT_SESSION: &str = "default";

/// The judge: the cases it knows and the sessions' calibrations.
#[derive(Debug)]
pub struct CaseService {
    plans: Vec<CasePlan>,
    catalogue: Catalogue,
    sessions: sessions::Sessions,
}

/// What a case run carries from its creation to its verdict.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Ticket {
    case: String,
    session: String,
    level: Level,
    time_scale: f64,
    /// The case's own scale, before its timing checks raised it.
    asked: f64,
    scale_note: Option<String>,
    herd: Option<u32>,
    /// A run that confirms an earlier one (asked with a `time_scale`): no further confirmation.
    confirming: bool,
    /// The jitter seed the client is given (`SQUALL_SEED`; a herd's client `k` gets it plus `k`).
    seed: Option<u64>,
}

impl CaseService {
    /// A judge of `plans`, whose scenarios may name `catalogue`'s.
    pub fn new(plans: Vec<CasePlan>, catalogue: Catalogue) -> CaseService {
        CaseService { plans, catalogue, sessions: sessions::Sessions::default() }
    }

    /// A judge of the features in `dir` (`None`: `./features` when it exists, else the ones
    /// built into squall), whose scenarios may name `catalogue`'s.
    pub fn from_features(dir: Option<&std::path::Path>, catalogue: Catalogue) -> anyhow::Result<CaseService> {
        let plans = super::cases::from_dir_or_embedded(dir)?;
        Ok(CaseService::new(plans, catalogue))
    }

    fn plan(&self, id: &str) -> Result<&CasePlan, Refusal> {
        self.plans.iter().find(|p| p.id == id).ok_or_else(|| {
            Refusal::not_found("case", format!("No case `{id}` (GET /__squall/cases lists them, with their ids)"))
        })
    }

    fn prepare_calibration(&self, request: &Request) -> Result<PreparedRun, Refusal> {
        let time_scale = request.time_scale.unwrap_or(DEFAULT_TIME_SCALE);
        let ticket = Ticket {
            case: CALIBRATION_ID.to_owned(),
            session: request.session.clone(),
            level: Level::Wire,
            time_scale,
            asked: time_scale,
            scale_note: None,
            herd: None,
            confirming: false,
            seed: request.seed,
        };
        Ok(PreparedRun { scenario: calibration::scenario(), time_scale, herd: None, ticket: to_value(&ticket) })
    }

    fn judge_calibration(&self, ticket: &Ticket, journal: &[JournalEntry]) -> Value {
        let gaps = gaps_after_asks(journal);
        self.sessions.record(&ticket.session, ticket.time_scale, gaps.clone());
        let reaction = self.sessions.reaction(&ticket.session);
        json!({
            "schema": VERDICT_SCHEMA,
            "case": CALIBRATION_ID,
            "session": ticket.session,
            "time_scale": ticket.time_scale,
            "gaps_ms": gaps,
            "reaction_ms": ReactionMs::from(&reaction),
            "samples": reaction.samples,
            "missing": reaction.missing,
        })
    }
}

/// A `POST /__squall/cases/{id}/runs` body, read.
struct Request {
    session: String,
    level: Level,
    time_scale: Option<f64>,
    herd: Option<u32>,
    seed: Option<u64>,
}

impl Request {
    fn read(body: &Value) -> Result<Request, Refusal> {
        let text = |name: &str| -> Result<Option<&str>, Refusal> {
            match body.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if !s.is_empty() => Ok(Some(s)),
                Some(_) => Err(Refusal::bad(name, format!("`{name}` is a non-empty string"))),
            }
        };
        let session = text("session")?.unwrap_or(DEFAULT_SESSION).to_owned();
        let level = match text("level")? {
            None => Level::Wire,
            Some(level) => Level::parse(level).filter(|l| *l <= Level::Events).ok_or_else(|| {
                Refusal::bad("level", format!("level `{level}`: the service judges `wire` or `events`"))
            })?,
        };
        let time_scale = match body.get("time_scale") {
            None | Some(Value::Null) => None,
            Some(value) => {
                let scale = value.as_f64().unwrap_or(f64::NAN);
                check_time_scale(scale).map_err(|message| Refusal::bad("time_scale", message))?;
                if scale > DEFAULT_MAX_TIME_SCALE {
                    return Err(Refusal::bad("time_scale", format!("time scale {scale}: at most real time, 1")));
                }
                Some(scale)
            }
        };
        let herd = match body.get("herd") {
            None | Some(Value::Null) => None,
            Some(value) => {
                Some(value.as_u64().and_then(|n| u32::try_from(n).ok()).filter(|n| HERD_SIZES.contains(n)).ok_or_else(
                    || {
                        Refusal::bad(
                            "herd",
                            format!("`herd` is a whole number from {} to {}", HERD_SIZES.start(), HERD_SIZES.end()),
                        )
                    },
                )?)
            }
        };
        let seed = match body.get("seed") {
            None | Some(Value::Null) => None,
            Some(value) => Some(value.as_u64().ok_or_else(|| Refusal::bad("seed", "`seed` is an unsigned integer"))?),
        };
        Ok(Request { session, level, time_scale, herd, seed })
    }
}

fn to_value(ticket: &Ticket) -> Value {
    serde_json::to_value(ticket).unwrap_or_default()
}

fn from_value(ticket: &Value) -> Result<Ticket, Refusal> {
    serde_json::from_value(ticket.clone())
        .map_err(|e| Refusal::bad("id", format!("the run's ticket is unreadable: {e}")))
}

impl CaseJudge for CaseService {
    fn cases(&self, query: &[(String, String)]) -> Result<Value, Refusal> {
        let values =
            |key: &str| -> Vec<&str> { query.iter().filter(|(k, _)| k == key).map(|(_, v)| v.as_str()).collect() };
        let profiles =
            ProfileSelection::parse(&values("profile")).map_err(|e| Refusal::bad("profile", e.to_string()))?;
        let level = match values("level").first() {
            None => Level::Events,
            Some(text) => Level::parse(text).ok_or_else(|| Refusal::bad("level", format!("unknown level `{text}`")))?,
        };
        let tags = values("tags").first().map(|t| (*t).to_owned());
        let query = CaseQuery { profiles, level, tags, time_scale: DEFAULT_TIME_SCALE };
        let list = describe(&self.plans, &query, &self.catalogue).map_err(|e| Refusal::bad("query", e.to_string()))?;
        serde_json::to_value(list).map_err(|e| Refusal::bad("query", e.to_string()))
    }

    fn prepare(&self, case: &str, body: &Value) -> Result<PreparedRun, Refusal> {
        let request = Request::read(body)?;
        if case == CALIBRATION_ID {
            return self.prepare_calibration(&request);
        }
        let plan = self.plan(case)?;
        let Some((_, action)) = plan.when else {
            return Err(Refusal::bad("case", format!("case `{case}` runs nothing")));
        };
        if action.needs > Level::Events {
            return Err(Refusal::bad(
                "case",
                format!(
                    "case `{case}` reads files the implementation wrote (level `tasks`): only `squall run` judges it"
                ),
            ));
        }
        let scenario =
            plan.setup.script.build(&scenario_name(case), &self.catalogue).map_err(|e| Refusal::bad("case", e))?;
        let asked = plan.setup.asked_time_scale(DEFAULT_TIME_SCALE);
        let (time_scale, scale_note, confirming) = match request.time_scale {
            Some(scale) if scale < asked => {
                return Err(Refusal::bad("time_scale", format!("case `{case}` runs at {asked} or slower")));
            }
            Some(scale) => (scale, None, true),
            None => {
                let first: Vec<(String, Margin)> = plan
                    .timing()
                    .iter()
                    .map(|p| (p.step.clone(), p.margin()))
                    .filter(|(_, m)| m.sets_first_scale())
                    .collect();
                let reaction = self.sessions.reaction(&request.session);
                match &reaction.missing {
                    // Its timing checks will say why they cannot judge; the scale is the case's own.
                    Some(missing) if !first.is_empty() => (asked, Some(missing.clone()), false),
                    _ => {
                        let choice = choose_scale(asked, DEFAULT_MAX_TIME_SCALE, &first, &reaction);
                        (choice.time_scale, choice.note, false)
                    }
                }
            }
        };
        let herd = action.herd.then(|| request.herd.unwrap_or(DEFAULT_HERD));
        let ticket = Ticket {
            case: case.to_owned(),
            session: request.session,
            level: request.level,
            time_scale,
            asked,
            scale_note,
            herd,
            confirming,
            seed: request.seed,
        };
        Ok(PreparedRun { scenario, time_scale, herd, ticket: to_value(&ticket) })
    }

    fn welcome(&self, ticket: &Value, urls: &RunUrls) -> Value {
        let Ok(ticket) = from_value(ticket) else { return json!({"id": urls.id}) };
        let plan = self.plans.iter().find(|p| p.id == ticket.case);
        let setup = plan.map(|p| p.setup.clone()).unwrap_or_default();
        let spec = CaseSpec {
            case: format!("{}#{}", ticket.case, urls.id),
            task: TaskKind::Stream,
            prompt: if plan.is_some() { super::steps::when::PROMPT.to_owned() } else { "Calibrate".to_owned() },
            base_url: urls.base_url.clone(),
            time_scale: ticket.time_scale,
            profile: setup.profile.clone(),
            fallback: setup.fallback.clone(),
            max_retries: if plan.is_some() { setup.max_retries } else { Some(calibration::RETRIES as u32) },
            seed: ticket.seed,
            client: None,
            timeout: Duration::ZERO,
        };
        let env = |spec: &CaseSpec| -> Value {
            contract_env(spec, std::path::Path::new(""))
                .into_iter()
                .filter(|(name, _)| *name != "SQUALL_OUT")
                .map(|(name, value)| (name.to_owned(), Value::String(value)))
                .collect::<serde_json::Map<String, Value>>()
                .into()
        };
        let clients: Vec<Value> = urls
            .clients
            .iter()
            .enumerate()
            .map(|(k, url)| {
                let client = spec.for_client(k as u32, url.clone());
                {
                    let root = url.strip_suffix("/v1").unwrap_or(url);
                    let websocket = format!("{}/responses", url.replacen("http://", "ws://", 1));
                    json!({"base_url": url, "anthropic_base_url": root, "gemini_base_url": root, "responses_websocket_url": websocket, "env": env(&client)})
                }
            })
            .collect();
        json!({
            "id": urls.id,
            "case": ticket.case,
            "session": ticket.session,
            "level": ticket.level,
            "time_scale": ticket.time_scale,
            "time_scale_note": ticket.scale_note,
            "base_url": urls.base_url,
            "anthropic_base_url": urls.anthropic_base_url,
            "gemini_base_url": urls.anthropic_base_url,
            "responses_websocket_url": format!("{}/responses", urls.base_url.replacen("http://", "ws://", 1)),
            "env": env(&spec),
            "clients": clients,
            "verdict": format!("/__squall/runs/{}/verdict", urls.id),
        })
    }

    fn judge(
        &self,
        ticket: &Value,
        journal: Vec<JournalEntry>,
        posted: &Value,
        posted_at_ms: f64,
    ) -> Result<Value, Refusal> {
        let ticket = from_value(ticket)?;
        if ticket.case == CALIBRATION_ID {
            return Ok(self.judge_calibration(&ticket, &journal));
        }
        let plan = self.plan(&ticket.case)?;
        let mut runs = outcome::runs(posted, ticket.herd)?;
        let iut = runs.remove(0);
        let reaction = self.sessions.reaction(&ticket.session);
        let duration_ms = posted.get("duration_ms").and_then(Value::as_f64).filter(|ms| ms.is_finite() && *ms >= 0.0);
        let mut observation = Observation {
            journal,
            iut,
            others: runs,
            clock: CaseClock::new(ticket.time_scale, reaction.clone()),
            scale_note: ticket.scale_note.clone(),
            real_duration: Duration::from_secs_f64(duration_ms.unwrap_or(0.0) / 1000.0),
        };
        // Without a calibration there is nothing to confirm: the timing checks say to calibrate.
        let confirm = (!ticket.confirming && reaction.missing.is_none() && unjudgeable_case(&observation).is_none())
            .then(|| slower(ticket.time_scale, DEFAULT_MAX_TIME_SCALE))
            .flatten()
            .filter(|_| plan.timing().iter().any(|check| check.needs_confirmation(&mut observation)))
            .map(|slower_scale| {
                let margins: Vec<(String, Margin)> = plan.timing().iter().map(|p| (p.step.clone(), p.margin())).collect();
                let scale = slower_scale.max(choose_scale(ticket.asked, DEFAULT_MAX_TIME_SCALE, &margins, &reaction).time_scale);
                json!({
                    "time_scale": scale,
                    "why": format!(
                        "a timing check found what a busy machine could explain at {}: run the case again at {} (POST /__squall/cases/{}/runs with this time_scale) and take that run's verdict",
                        scale_name(ticket.time_scale), scale_name(scale), ticket.case
                    ),
                })
            });
        let record = judge_case(plan, &observation, ticket.level, posted_at_ms);
        let mut verdict = serde_json::to_value(&record).map_err(|e| Refusal::bad("body", e.to_string()))?;
        if let Value::Object(fields) = &mut verdict {
            fields.remove("evidence");
            fields.insert("schema".to_owned(), json!(VERDICT_SCHEMA));
            fields.insert("case".to_owned(), json!(ticket.case));
            fields.insert("session".to_owned(), json!(ticket.session));
            fields.insert("level".to_owned(), json!(ticket.level));
            fields.insert("confirm".to_owned(), confirm.unwrap_or(Value::Null));
        }
        Ok(verdict)
    }
}

#[cfg(test)]
mod tests;
