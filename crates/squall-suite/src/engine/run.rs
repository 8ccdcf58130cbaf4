//! Running a case: its time scale planned from its timing checks and the client's reaction, the
//! implementation run on its scenario, the run judged, and a slower run when the judge asks for
//! one (the client's reaction measured again first), or runs drawing anew (several at once
//! where the run's slots are spare, read in order).

use std::collections::VecDeque;
use std::time::Duration;

use super::calibrate::{calibrate, Measure};
use super::first_look::{after_first_look, confirming_look, first_look, FIRST_LOOK_RUNS};
use super::judge::{judge, Judgement, Judging, Stage};
use super::launch::{Execution, Launcher, ProcessClock, RunPlan, WarmPool};
use super::machine_turns::MachineTurns;
use crate::cases::CasePlan;
use crate::checks::{Observation, PairedRun};
use crate::digest::sha256_hex;
use crate::iut::{CaseSpec, Iut};
use crate::results::{CaseRecord, Draws};
use crate::runner::SuiteConfig;
use crate::steps::when::PROMPT;
use crate::timing::lockstep::{self, Lockstep};
use crate::timing::{choose_scale, scale_name, Calibration, CaseClock, Reaction, ScaleChoice};
use crate::verdict::{Level, Verdict};
use squall::clock::TimeScale;
use squall::scenario::Catalogue;
use squall::server::Server;

/// Runs of one case at most: the first, and a slower one to settle what it could not.
const MAX_RUNS: usize = 2;

/// Runs of one case at one scale at most when a check reads a client's random waits over several
/// (the simulation in docs/requirements.md decides every family owed a verdict within it: a
/// linear backoff with a full jitter takes 40 to 75 to be told from an exponential one).
pub(crate) const MAX_DRAWS: usize = 100;

/// The real time a case's draws may take, in case timeouts: five minutes at the default 60 s,
/// enough for a long case raised to 1/2 to draw about 30 runs.
const DRAW_BUDGET: u32 = 5;

/// Draw `n` (0 for the first run) of a case seeded `seed` gets `seed + n × DRAW_SEED_STRIDE`: far
/// from the seeds a herd's clients get (the suite's seed plus their number).
const DRAW_SEED_STRIDE: u64 = 10_000;

/// What every case of one suite run shares.
#[derive(Debug)]
pub(crate) struct SuiteContext {
    pub server: Server,
    pub catalogue: Catalogue,
    pub iut: Iut,
    /// The clock the implementation's processes run on.
    pub process_clock: ProcessClock,
    /// Where its processes are forked from, when started warm (`--warm`).
    pub warm: Option<WarmPool>,
    pub level: Level,
    /// Production values run at this fraction of real time (1 on the virtual clock).
    pub time_scale: TimeScale,
    /// The most a case's time scale may be raised to so that its timing checks can judge.
    pub max_time_scale: TimeScale,
    /// Time an implementation gets per case, at the case's own time scale (more when the scale is
    /// raised); policy time on the virtual clock.
    pub case_timeout: Duration,
    /// Passed to every case as `SQUALL_SEED`, for reproducible jitter.
    pub seed: Option<u64>,
    /// Instances a herd case runs at once.
    pub herd: u32,
    /// The implementation's reaction, measured before any case ran.
    pub calibration: Calibration,
    /// Calibration instances at each scale (for a case that measures the reaction again).
    pub calibration_instances: usize,
    /// How far a lockstep herd spread on this machine when last measured: before the first herd
    /// case, and again before a herd case's slower run.
    lockstep: tokio::sync::Mutex<Option<Lockstep>>,
    /// Every case's turn on the machine: shared, or alone for a herd.
    turns: MachineTurns,
}

impl SuiteContext {
    /// What the cases of `config`'s run share: its `server`, and the implementation's
    /// `calibration` (`instances` at each scale). On the virtual clock production values run as
    /// they are, and a case gets the policy time a case at the suite's scale would (60 s real at
    /// 1/100: 6,000 s).
    pub(crate) fn new(
        config: &SuiteConfig,
        server: Server,
        process_clock: ProcessClock,
        warm: Option<WarmPool>,
        calibration: Calibration,
        instances: usize,
    ) -> SuiteContext {
        let (time_scale, max_time_scale, case_timeout) = if calibration.is_virtual_clock() {
            (TimeScale::REAL, TimeScale::REAL, config.case_timeout.div_f64(config.time_scale.get()))
        } else {
            (config.time_scale, config.max_time_scale, config.case_timeout)
        };
        SuiteContext {
            server,
            catalogue: config.catalogue.clone(),
            iut: config.iut.clone(),
            process_clock,
            warm,
            level: config.level,
            time_scale,
            max_time_scale,
            case_timeout,
            seed: config.seed,
            herd: config.herd,
            calibration,
            calibration_instances: instances,
            lockstep: tokio::sync::Mutex::new(None),
            turns: MachineTurns::new(config.concurrency),
        }
    }

    /// Real time a case is given at the suite's scale: on the virtual clock its policy time
    /// takes none, so its runs are never stopped by it.
    fn real_case_budget(&self) -> Duration {
        match self.calibration.is_virtual_clock() {
            true => Duration::MAX,
            false => self.case_timeout,
        }
    }

    /// What starts the suite's implementation on its server.
    pub(crate) fn launcher(&self) -> Launcher<'_> {
        Launcher::new(&self.server, &self.iut, &self.process_clock).warm(self.warm.as_ref())
    }

    /// How far a lockstep herd of the suite's size spreads its retries: exact on the virtual
    /// clock; not measurable for a client that waits of its own when asked for 1 ms, longer
    /// than a busy machine spreads a steady client's retries at the suite's scale. Measured
    /// before the first herd case and kept; measured `again` for a herd case's slower run (the
    /// machine then, not at the suite's first herd) — and whenever the last measurement failed:
    /// one herd that could not be run must not leave every later herd case undecided.
    async fn lockstep(&self, again: bool) -> Lockstep {
        if self.calibration.is_virtual_clock() {
            return Lockstep::exact();
        }
        if self.calibration.reaction.waits_of_its_own_at(self.time_scale) {
            return Lockstep::unknown(
                "the client waits of its own when asked to wait 1 ms: its herd's spread cannot be told from the machine's",
            );
        }
        let mut kept = self.lockstep.lock().await;
        if let Some(measured) = kept.as_ref().filter(|l| !again && l.spread_ms.is_some()) {
            return measured.clone();
        }
        let timeout = self.case_timeout.min(std::time::Duration::from_secs(60));
        let plan = lockstep::plan(self.time_scale, self.herd, timeout, self.seed);
        let measured = Lockstep::of_run(self.launcher().run(plan).await, self.herd);
        if measured.spread_ms.is_some() || kept.is_none() {
            *kept = Some(measured.clone());
        }
        measured
    }

    /// The lockstep herd's spread as last measured, for the report (none when no herd ran).
    pub(crate) async fn last_lockstep(&self) -> Option<Lockstep> {
        self.lockstep.lock().await.clone()
    }
}

/// Run and judge `plan`: `n/a` when the implementation's level does not reach it, `error` when
/// it cannot be run; else the verdict of its last run.
pub(crate) async fn run_case(suite: &SuiteContext, plan: &CasePlan) -> CaseRecord {
    let Some((step, action)) = &plan.when else {
        return CaseRecord::judged(plan.case_name(), Vec::new(), Some("the case has no When step".to_owned()));
    };
    if suite.level < action.needs {
        let checks = plan.then.iter().flat_map(|step| step.not_applicable(plan.advisory())).collect();
        return CaseRecord::judged(plan.case_name(), checks, None);
    }
    let scenario = match plan.setup.script.build("case", &suite.catalogue) {
        Ok(scenario) => scenario,
        Err(e) => {
            let why = format!("cannot build the case's scenario: {e}");
            return CaseRecord::judged(plan.case_name(), Vec::new(), Some(why));
        }
    };
    let scenario_sha256 = serde_json::to_vec(&scenario).ok().map(|json| sha256_hex(&json));
    let _turn = suite.turns.take(action.herd, suite.calibration.is_virtual_clock()).await;
    let asked = plan.setup.asked_time_scale(suite.time_scale);
    let max = suite.max_time_scale.max(asked);
    let first: Vec<_> = plan.margins().into_iter().filter(|(_, m)| m.sets_first_scale()).collect();
    let mut reaction = suite.calibration.reaction.clone();
    let mut choice = choose_scale(asked, max, &first, &reaction, suite.calibration.machine());
    // While a first look at the case's own scale runs, the raised run it may save.
    let mut raised = first_look(plan, action.herd, &choice).map(|look| std::mem::replace(&mut choice, look));
    let mut runs = 0;
    // Earlier runs at this scale, drawn for a check over random waits; the checks that asked.
    let mut draws: Vec<Observation> = Vec::new();
    let mut drawn_for: Vec<String> = Vec::new();
    // A herd's slower run is judged against a lockstep herd measured again just before it.
    let mut lockstep_again = false;
    // Draws run ahead of their reading, at once in the slots no case holds; read in order.
    let mut ahead: VecDeque<Execution> = VecDeque::new();
    // The run at another scale a lower bound's pass is read against.
    let mut paired: Option<PairedRun> = None;
    loop {
        runs += 1;
        let looking = raised.is_some();
        // A raised case gets as much more time as it runs slower.
        let timeout = suite.case_timeout.mul_f64(choice.time_scale.ratio_to(asked).max(1.0));
        let spec = |draw: usize| CaseSpec {
            case: step.clone(),
            task: action.task,
            prompt: PROMPT.to_owned(),
            base_url: String::new(),
            time_scale: choice.time_scale,
            profile: plan.setup.profile.clone(),
            fallback: plan.setup.fallback.clone(),
            max_retries: plan.setup.max_retries,
            seed: draw_seed(suite.seed, draw),
            client: None,
            timeout,
        };
        let herd = action.herd.then_some(suite.herd);
        let execution = match ahead.pop_front() {
            Some(execution) => execution,
            None => {
                // While drawing, the draws this case may still make run at once in spare slots.
                let most = if looking { FIRST_LOOK_RUNS } else { MAX_DRAWS };
                let spare = match (draws.is_empty(), herd) {
                    (false, None) => suite.turns.spare(most.saturating_sub(draws.len() + 1)),
                    _ => Vec::new(),
                };
                let plans = (0..=spare.len())
                    .map(|k| RunPlan { scenario: scenario.clone(), spec: spec(draws.len() + k), herd })
                    .collect();
                let mut executed = suite.launcher().run_all(plans).await.into_iter();
                let first = match executed.next() {
                    Some(Ok(execution)) => execution,
                    Some(Err(why)) => return CaseRecord::judged(plan.case_name(), Vec::new(), Some(why)),
                    None => unreachable!("a run was planned"),
                };
                ahead.extend(executed.map_while(Result::ok));
                first
            }
        };
        let Execution { journal, iut, others, real_duration, ended_at_ms } = execution;
        let lockstep = match herd {
            Some(_) => suite.lockstep(lockstep_again).await.spread_ms,
            None => None,
        };
        let clock = CaseClock::new(choice.time_scale, reaction.clone())
            .with_lockstep(lockstep)
            .with_machine(suite.calibration.machine());
        let scale_note = choice.note.clone();
        let observation =
            Observation { journal, iut, others, clock, scale_note, real_duration, draws, paired: paired.take() };
        let stage = Stage {
            time_scale: choice.time_scale,
            asked,
            max,
            last: !looking && runs - observation.draws.len() >= MAX_RUNS,
            draws_left: draws_left(suite, &observation) && (!looking || observation.draws.len() + 1 < FIRST_LOOK_RUNS),
            draws_first: looking,
        };
        let Judgement { record, again } =
            judge(plan, &observation, Judging { level: suite.level, ended_at_ms }, &stage);
        // A first look stands where it decided (nothing asked for, and a MUST failed or nothing
        // left undecided) and draws anew where asked; else the raised run goes ahead as planned.
        let look_decided = again.is_none() && decided(&record);
        let look_undecided = looking && !look_decided && !again.as_ref().is_some_and(|a| a.draw);
        if let Some(planned) = raised.as_ref().filter(|_| look_undecided) {
            let against = (&reaction, suite.calibration.machine());
            choice = match confirming_look(plan, &record, choice.time_scale, planned, against) {
                Some(confirming) => confirming,
                None => {
                    let why = again.map_or_else(|| "a check stayed undecided".to_owned(), |a| a.why);
                    after_first_look(&raised.take().expect("a look has its raised run"), &why)
                }
            };
            (runs, draws, lockstep_again) = (0, Vec::new(), false);
            drawn_for.clear();
            ahead.clear();
            continue;
        }
        let Some(again) = again else {
            let seeds = (0..=observation.draws.len()).filter_map(|n| draw_seed(suite.seed, n)).collect();
            let record = record_draws(record, &drawn_for, observation.draws.len() + 1, seeds);
            return CaseRecord { scenario_sha256, ..record };
        };
        if again.draw {
            drawn_for
                .extend(again.drawn_for.into_iter().filter(|check| !drawn_for.contains(check)).collect::<Vec<_>>());
            let mut observation = observation;
            draws = std::mem::take(&mut observation.draws);
            draws.push(observation);
            continue;
        }
        // A slower run starts the draws afresh: they are read on one clock.
        draws = Vec::new();
        drawn_for.clear();
        ahead.clear();
        if again.pair {
            // The reaction cancels out across the two runs: the scale is the one asked for.
            paired = Some(PairedRun::of(&observation));
            let note = choice.note.take().map_or(again.why.clone(), |earlier| format!("{earlier}; {}", again.why));
            choice = ScaleChoice { time_scale: again.time_scale, note: Some(note), ..choice };
            continue;
        }
        lockstep_again = herd.is_some();
        // The slower run takes the client to react as fast as either measurement saw it (a
        // calibration taken while the machine was busier cannot fail it on a lower bound).
        let fresh = measure_reaction(suite).await;
        reaction = reaction.reaching_down_to(&fresh);
        let time_scale = again
            .time_scale
            .max(choose_scale(asked, max, &plan.margins(), &reaction, suite.calibration.machine()).time_scale);
        let why = format!(
            "{} (the client's reaction measured again: {:.1}–{:.1} ms real; running at {})",
            again.why,
            fresh.low_ms,
            fresh.high_ms,
            scale_name(time_scale)
        );
        choice = ScaleChoice {
            time_scale,
            note: Some(choice.note.map_or(why.clone(), |earlier| format!("{earlier}; {why}"))),
            ..choice
        };
    }
}

/// Whether a run's record decides its case: a MUST failed, or no check left undecided.
fn decided(record: &CaseRecord) -> bool {
    let verdicts = || record.checks.iter().map(|check| check.verdict);
    record.error.is_none() && (verdicts().any(|v| v == Verdict::Fail) || verdicts().all(|v| v != Verdict::Inconclusive))
}

/// Whether the case may be drawn again after `observation`: fewer than [`MAX_DRAWS`] runs so far,
/// which took less real time than [`DRAW_BUDGET`] cases are given. A client whose runs are longer
/// (a backoff without a cap) keeps what its runs decided.
fn draws_left(suite: &SuiteContext, observation: &Observation) -> bool {
    let runs = std::iter::once(observation).chain(&observation.draws);
    let spent: Duration = runs.clone().map(|run| run.real_duration).sum();
    runs.count() < MAX_DRAWS && spent < suite.real_case_budget().saturating_mul(DRAW_BUDGET)
}

/// The seed of draw `n` of a case, when the suite has one.
fn draw_seed(seed: Option<u64>, n: usize) -> Option<u64> {
    seed.map(|seed| seed.wrapping_add(n as u64 * DRAW_SEED_STRIDE))
}

/// `record` with the runs and seeds each check in `drawn_for` was read from.
fn record_draws(mut record: CaseRecord, drawn_for: &[String], runs: usize, seeds: Vec<u64>) -> CaseRecord {
    if runs > 1 {
        for check in record.checks.iter_mut().filter(|c| drawn_for.contains(&c.name)) {
            check.draws = Some(Draws { runs, seeds: seeds.clone() });
        }
    }
    record
}

/// The client's reaction measured now, as the run's calibration measured it (on the virtual
/// clock there is none to measure).
async fn measure_reaction(suite: &SuiteContext) -> Reaction {
    if suite.calibration.is_virtual_clock() {
        return suite.calibration.reaction.clone();
    }
    let measure = Measure {
        time_scale: suite.time_scale,
        instances: suite.calibration_instances,
        case_timeout: suite.case_timeout,
        seed: suite.seed,
    };
    let calibration = calibrate(suite.launcher(), measure, None).await;
    calibration.map_or_else(|e| Reaction::unknown(e.to_string()), |c| c.reaction)
}
