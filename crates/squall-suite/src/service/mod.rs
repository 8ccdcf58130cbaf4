//! The judge as a service (public contract, `docs/service.md`): the suite's cases as data, runs
//! created for them, and verdicts on what a client posts — decided by the case engine's own
//! judge (the `engine` module), so a test runner in any language gets the verdict `squall
//! run` would give. Where the judge would run a case again slower, the service says so in the
//! verdict's `confirm`. [`CaseService`] is the server's [`CaseJudge`]; `squall serve` starts with
//! one.
//!
//! - `sessions` — each session's calibration, taken out of its timing checks
//! - `outcome` — what a client posts, read as the IUT contract's outputs
//! - `replies` — the welcome and the verdict, as documented

mod outcome;
mod replies;
mod sessions;

use std::collections::BTreeMap;
use std::time::Duration;

pub use self::replies::{CalibrationVerdict, CaseVerdict, ClientWelcome, Confirm, RunWelcome, VerdictReply};
use super::cases::export::{describe, scenario_name, CaseList, CaseQuery, CALIBRATION_ID};
use super::cases::CasePlan;
use super::checks::{Observation, PairedRun};
use super::engine::{judge, Judging, Stage};
use super::requirements::ProfileSelection;
use super::settings::{DEFAULT_HERD, DEFAULT_MAX_TIME_SCALE, DEFAULT_TIME_SCALE, HERD_SIZES};
use super::timing::lockstep;
use super::timing::wait_asks::{self, gaps_after_asks};
use super::timing::{choose_scale, CaseClock, Lockstep, ReactionMs, MOMENT};
use super::verdict::Level;
use crate::iut::{contract_env, CaseSpec, TaskKind};
use crate::SuiteError;
use squall::clock::{ClientFrame, TimeScale};
use squall::scenario::Catalogue;
use squall::server::{CaseJudge, CaseRunRequest, CasesQuery, JudgedRun, PreparedRun, Refusal, RunUrls};

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
#[derive(Debug, Clone)]
pub struct Ticket {
    case: String,
    session: String,
    level: Level,
    time_scale: TimeScale,
    /// The case's own scale, before its timing checks raised it.
    asked: TimeScale,
    scale_note: Option<String>,
    herd: Option<u32>,
    /// A run that confirms an earlier one (asked with a `time_scale`): no further confirmation.
    confirming: bool,
    /// The jitter seed the client is given (`SQUALL_SEED`; a herd's client `k` gets it plus `k`).
    seed: Option<u64>,
    /// The client runs on squall's sped-up clock: it is told time scale 1.
    sped_up: bool,
}

impl CaseService {
    /// A judge of `plans`, whose scenarios may name `catalogue`'s.
    pub fn new(plans: Vec<CasePlan>, catalogue: Catalogue) -> CaseService {
        CaseService { plans, catalogue, sessions: sessions::Sessions::default() }
    }

    /// A judge of the features in `dir` (`None`: `./features` when it exists, else the ones
    /// built into squall), whose scenarios may name `catalogue`'s.
    pub fn from_features(dir: Option<&std::path::Path>, catalogue: Catalogue) -> Result<CaseService, SuiteError> {
        let plans = super::cases::from_dir_or_embedded(dir)?;
        Ok(CaseService::new(plans, catalogue))
    }

    fn plan(&self, id: &str) -> Result<&CasePlan, Refusal> {
        self.plans.iter().find(|p| p.id == id).ok_or_else(|| {
            Refusal::not_found("case", format!("No case `{id}` (GET /__squall/cases lists them, with their ids)"))
        })
    }

    /// A calibration run: one client, or — with `herd` — a herd at once, which measures how far
    /// a herd in lockstep spreads on the client's machine.
    fn prepare_calibration(&self, request: Request) -> PreparedRun<Ticket> {
        let time_scale = request.time_scale.unwrap_or(DEFAULT_TIME_SCALE);
        let ticket = Ticket {
            case: CALIBRATION_ID.to_owned(),
            session: request.session,
            level: Level::Wire,
            time_scale,
            asked: time_scale,
            scale_note: None,
            herd: request.herd,
            confirming: false,
            seed: request.seed,
            sped_up: request.client_frame.is_some(),
        };
        let scenario = match request.herd {
            Some(_) => lockstep::scenario(time_scale),
            None => wait_asks::scenario(),
        };
        PreparedRun { scenario, time_scale, herd: request.herd, client_frame: request.client_frame, ticket }
    }

    fn judge_calibration(&self, ticket: &Ticket, run: &JudgedRun) -> CalibrationVerdict {
        let gaps = gaps_after_asks(&run.journal);
        match ticket.herd {
            Some(herd) => {
                self.sessions.record_lockstep(&ticket.session, Lockstep::of_herd(&run.journal, herd as usize))
            }
            None => self.sessions.record(&ticket.session, ticket.time_scale, gaps.clone()),
        }
        let reaction = self.sessions.reaction(&ticket.session);
        CalibrationVerdict {
            schema: VERDICT_SCHEMA,
            run: run.id.clone(),
            case: CALIBRATION_ID,
            session: ticket.session.clone(),
            time_scale: ticket.time_scale,
            gaps_ms: gaps,
            reaction_ms: ReactionMs::from(&reaction),
            samples: reaction.samples,
            missing: reaction.missing,
            lockstep_ms: self.sessions.lockstep_ms(&ticket.session),
            summary: self.sessions.summary(&ticket.session),
        }
    }

    /// The IUT contract's environment for `spec`, as values (all but `SQUALL_OUT`).
    fn environment(spec: &CaseSpec) -> BTreeMap<String, String> {
        contract_env(spec, std::path::Path::new(""))
            .into_iter()
            .filter(|(name, _)| *name != "SQUALL_OUT")
            .map(|(name, value)| (name.to_owned(), value))
            .collect()
    }
}

/// A case run's request, checked.
struct Request {
    session: String,
    level: Level,
    time_scale: Option<TimeScale>,
    herd: Option<u32>,
    seed: Option<u64>,
    /// The frame of squall's clock the client runs on, when it does.
    client_frame: Option<ClientFrame>,
}

impl Request {
    fn read(body: &CaseRunRequest) -> Result<Request, Refusal> {
        let session = match body.session.as_deref() {
            None => DEFAULT_SESSION.to_owned(),
            Some("") => return Err(Refusal::bad("session", "`session` is a non-empty string")),
            Some(session) => session.to_owned(),
        };
        let level = match body.level.as_deref() {
            None => Level::Wire,
            Some(level) => Level::parse(level).filter(|l| *l <= Level::Events).ok_or_else(|| {
                Refusal::bad("level", format!("level `{level}`: the service judges `wire` or `events`"))
            })?,
        };
        if let Some(scale) = body.time_scale {
            if scale > DEFAULT_MAX_TIME_SCALE {
                return Err(Refusal::bad("time_scale", format!("time scale {scale}: at most real time, 1")));
            }
        }
        if let Some(herd) = body.herd.filter(|n| !HERD_SIZES.contains(n)) {
            let message =
                format!("`herd` is a whole number from {} to {} ({herd} given)", HERD_SIZES.start(), HERD_SIZES.end());
            return Err(Refusal::bad("herd", message));
        }
        let client_frame = body
            .clock_frame
            .as_deref()
            .map(|path| ClientFrame::followed(std::path::Path::new(path)))
            .transpose()
            .map_err(|e| Refusal::bad("clock_frame", format!("{e} (docs/clock.md)")))?;
        Ok(Request { session, level, time_scale: body.time_scale, herd: body.herd, seed: body.seed, client_frame })
    }
}

impl CaseJudge for CaseService {
    type Ticket = Ticket;
    type Cases = CaseList;
    type Welcome = RunWelcome;
    type Verdict = VerdictReply;

    fn cases(&self, query: &CasesQuery) -> Result<CaseList, Refusal> {
        let profiles = ProfileSelection::parse(&query.profiles).map_err(|e| Refusal::bad("profile", e.to_string()))?;
        let level = match &query.level {
            None => Level::Events,
            Some(text) => Level::parse(text).ok_or_else(|| Refusal::bad("level", format!("unknown level `{text}`")))?,
        };
        let query = CaseQuery { profiles, level, tags: query.tags.clone(), time_scale: DEFAULT_TIME_SCALE };
        describe(&self.plans, &query, &self.catalogue).map_err(|e| Refusal::bad("query", e.to_string()))
    }

    fn prepare(&self, case: &str, body: &CaseRunRequest) -> Result<PreparedRun<Ticket>, Refusal> {
        let request = Request::read(body)?;
        if case == CALIBRATION_ID {
            return Ok(self.prepare_calibration(request));
        }
        let plan = self.plan(case)?;
        let Some((_, action)) = plan.when else {
            return Err(Refusal::bad("case", format!("case `{case}` runs nothing")));
        };
        if action.needs > Level::Events {
            let message = format!(
                "case `{case}` reads files the implementation wrote (level `tasks`): only `squall run` judges it"
            );
            return Err(Refusal::bad("case", message));
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
                let first: Vec<_> = plan.margins().into_iter().filter(|(_, m)| m.sets_first_scale()).collect();
                let reaction = self.sessions.reaction(&request.session);
                match &reaction.missing {
                    // Its timing checks will say why they cannot decide; the scale is the case's own.
                    Some(missing) if !first.is_empty() => (asked, Some(missing.clone()), false),
                    _ => {
                        let choice = choose_scale(asked, DEFAULT_MAX_TIME_SCALE, &first, &reaction, MOMENT);
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
            sped_up: request.client_frame.is_some(),
        };
        Ok(PreparedRun { scenario, time_scale, herd, client_frame: request.client_frame, ticket })
    }

    fn welcome(&self, ticket: &Ticket, urls: &RunUrls) -> RunWelcome {
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
            max_retries: if plan.is_some() { setup.max_retries } else { Some(wait_asks::RETRIES as u32) },
            seed: ticket.seed,
            client: None,
            timeout: Duration::ZERO,
        };
        let environment = |spec: &CaseSpec| {
            let mut env = Self::environment(spec);
            if ticket.sped_up {
                env.insert("SQUALL_TIME_SCALE".to_owned(), "1".to_owned());
                env.insert("SQUALL_CLOCK".to_owned(), "accelerated".to_owned());
                env.insert("SQUALL_CLOCK_RATE".to_owned(), ticket.time_scale.rate().to_string());
            }
            env
        };
        let clients = (urls.clients.iter().enumerate())
            .map(|(k, url)| ClientWelcome::at(url, environment(&spec.for_client(k as u32, url.clone()))))
            .collect();
        RunWelcome {
            id: urls.id.clone(),
            case: ticket.case.clone(),
            session: ticket.session.clone(),
            level: ticket.level,
            time_scale: ticket.time_scale,
            time_scale_note: ticket.scale_note.clone(),
            clock: if ticket.sped_up { "accelerated" } else { "scaled" },
            clock_rate: ticket.sped_up.then(|| ticket.time_scale.rate()),
            client_time_scale: if ticket.sped_up { TimeScale::REAL } else { ticket.time_scale },
            urls: ClientWelcome::at(&urls.base_url, environment(&spec)),
            clients,
            verdict: format!("/__squall/runs/{}/verdict", urls.id),
        }
    }

    fn judge(&self, ticket: &Ticket, run: JudgedRun) -> Result<VerdictReply, Refusal> {
        if ticket.case == CALIBRATION_ID {
            return Ok(VerdictReply::Calibration(Box::new(self.judge_calibration(ticket, &run))));
        }
        let plan = self.plan(&ticket.case)?;
        let mut runs = outcome::runs(&run.outcome, ticket.herd)?;
        if ticket.sped_up {
            runs.iter_mut().for_each(|run| run.told_time_scale = Some(TimeScale::REAL));
        }
        let iut = runs.remove(0);
        let reaction = self.sessions.reaction(&ticket.session);
        // Without a calibration a slower run measures nothing more: the checks say to calibrate.
        let calibrated = reaction.missing.is_none();
        let duration_ms = run.outcome.duration_ms.filter(|ms| ms.is_finite() && *ms >= 0.0).unwrap_or(0.0);
        let observation = Observation {
            journal: run.journal,
            iut,
            others: runs,
            clock: CaseClock::new(ticket.time_scale, reaction)
                .with_lockstep(ticket.herd.and_then(|_| self.sessions.lockstep_ms(&ticket.session))),
            scale_note: ticket.scale_note.clone(),
            real_duration: Duration::from_secs_f64(duration_ms / 1000.0),
            draws: Vec::new(),
            paired: ticket
                .confirming
                .then(|| self.sessions.take_paired(&ticket.session, &ticket.case, ticket.time_scale))
                .flatten(),
        };
        let stage = Stage {
            time_scale: ticket.time_scale,
            asked: ticket.asked,
            max: DEFAULT_MAX_TIME_SCALE,
            last: ticket.confirming,
            // A service verdict is one run's: a client's random waits are read over one run.
            draws_left: false,
            draws_first: false,
        };
        let judgement =
            judge(plan, &observation, Judging { level: ticket.level, ended_at_ms: run.posted_at_ms }, &stage);
        if judgement.again.as_ref().is_some_and(|again| again.pair && calibrated) {
            self.sessions.keep_for_pair(&ticket.session, &ticket.case, PairedRun::of(&observation));
        }
        let mut verdict =
            CaseVerdict::of(judgement.record, (run.id, ticket.case.clone(), ticket.session.clone()), ticket.level);
        verdict.confirm = judgement.again.filter(|_| calibrated).map(|again| Confirm {
            time_scale: again.time_scale,
            why: format!(
                "{}: create a run of the case with this time_scale (POST /__squall/cases/{}/runs) and take its verdict",
                again.why, ticket.case
            ),
        });
        Ok(VerdictReply::Case(Box::new(verdict)))
    }
}

#[cfg(test)]
mod tests;
