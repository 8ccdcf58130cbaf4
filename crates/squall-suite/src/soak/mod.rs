//! `squall soak`: one implementation run many times under a chaos scenario, each run with its
//! own chaos seed (the soak's seed plus the run's index), and the distribution judged rather than
//! one run: never `ok: true` on a broken answer, every give-up a provider error, a usable result
//! from every run, and a success rate at least what the chaos and the retry budget predict
//! ([`Prediction`]). Every run can be replayed alone from its seed.
//!
//! - `prediction` — the least success rate and its binomial allowance
//! - `judge` — each run's findings and the soak's checks
//! - [`report`] — `soak.json` and `soak.md`

mod prediction;
pub mod report;

mod judge;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::stream::{self, StreamExt as _};
use serde::Serialize;

use crate::engine::{Launcher, ProcessClock};
use crate::iut::RunPlan;
use crate::iut::{CaseSpec, ClockMode, Iut, TaskKind};
use crate::{SuiteError, Verdict};
use squall::scenario::{Catalogue, Scenario};
use squall::server::{Server, ServerConfig};

pub use prediction::{Prediction, ALPHA};
use squall::clock::TimeScale;

/// What to soak and how.
#[derive(Debug, Clone)]
pub struct SoakConfig {
    /// The implementation under test.
    pub iut: Iut,
    /// The catalogue the server loads (the scenario need not be in it).
    pub catalogue: Catalogue,
    /// The scenario every run gets; its chaos seed is replaced by each run's.
    pub scenario: Arc<Scenario>,
    /// How many times the implementation runs.
    pub runs: usize,
    /// The soak's seed: run `k` draws its chaos and its client's jitter from `seed + k`. `None`
    /// draws one (reported).
    pub seed: Option<u64>,
    /// Production values run at this fraction of real time (`SQUALL_TIME_SCALE`).
    pub time_scale: TimeScale,
    /// The clock the implementation's processes run on.
    pub clock: ClockMode,
    /// `SQUALL_MAX_RETRIES` for every run, and the budget the prediction assumes.
    pub max_retries: u32,
    /// Runs side by side.
    pub concurrency: usize,
    /// Real time one run gets before it is killed.
    pub case_timeout: Duration,
    /// The command line that replays this soak, without `--runs` and `--seed` (each run's replay
    /// appends `--runs 1 --seed <its seed>`).
    pub replay: String,
}

/// One run of the soak.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SoakRun {
    /// 0-based.
    pub index: usize,
    /// The seed its chaos and the client's jitter drew from.
    pub seed: u64,
    /// `ok` from its `result.json`; null without a usable result.
    pub ok: Option<bool>,
    /// `stop_reason`, `error_type` and `final_text` from its `result.json`.
    pub stop_reason: Option<String>,
    /// See `stop_reason`.
    pub error_type: Option<String>,
    /// See `stop_reason`.
    pub final_text: Option<String>,
    /// Model requests it made.
    pub attempts: usize,
    /// How each model request ended, and what answered it when chaos did (`eof: chaos (seed
    /// 7): eof after 3 output deltas`).
    pub requests: Vec<String>,
    /// The checks it breaks, each with why.
    pub problems: Vec<String>,
    /// The command that replays this run alone.
    pub replay: String,
    /// The tail of the implementation's stderr, kept for runs with problems.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub stderr: String,
}

/// One judged property of the soak.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SoakCheck {
    /// What it demands, in words.
    pub name: String,
    /// Where the seeds demand it.
    pub source: String,
    /// `pass`, `fail`, or `n/a` (the success rate of a scenario without a prediction).
    pub verdict: Verdict,
    /// The bound, with how it was derived.
    pub expected: String,
    /// What the runs showed, naming the first runs that break it.
    pub observed: String,
}

/// What a soak found.
#[derive(Debug, Clone, Serialize)]
pub struct SoakOutcome {
    /// The implementation, as reports name it.
    pub implementation: String,
    /// The scenario's name.
    pub scenario: String,
    /// The soak's seed: run `k` drew from `seed + k`.
    pub seed: u64,
    /// Runs made.
    pub runs: usize,
    /// The time scale every run ran at.
    pub time_scale: TimeScale,
    /// `SQUALL_MAX_RETRIES` of every run.
    pub max_retries: u32,
    /// `fail` when any check fails, else `pass`.
    pub verdict: Verdict,
    /// The four checks, in order.
    pub checks: Vec<SoakCheck>,
    /// Runs that ended `ok` with no problem.
    pub successes: usize,
    /// The prediction the success rate is judged against; null when the scenario has none
    /// (`unpredicted` says why).
    pub prediction: Option<Prediction>,
    /// Why there is no prediction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unpredicted: Option<String>,
    /// Runs by the number of model requests they made.
    pub attempts_histogram: BTreeMap<usize, usize>,
    /// Real seconds the soak took.
    pub duration_s: f64,
    /// Every run, by index.
    pub every_run: Vec<SoakRun>,
}

/// Run the soak: `config.runs` runs, `config.concurrency` at a time, each on a run of its own.
pub async fn run_soak(config: &SoakConfig) -> Result<SoakOutcome, SuiteError> {
    if config.runs < 1 {
        return Err(SuiteError::Usage("a soak needs at least one run".to_owned()));
    }
    if config.scenario.chaos.is_none() {
        return Err(SuiteError::Usage(format!(
            "scenario `{}` has no [chaos]: a soak draws each run's faults from it",
            config.scenario.name
        )));
    }
    let server = Server::start(ServerConfig::loopback(config.catalogue.clone()))
        .await
        .map_err(SuiteError::io("cannot start the squall server"))?;
    let seed = config.seed.unwrap_or_else(squall::scenario::fresh_seed);
    let started = Instant::now();
    let (process_clock, _) = ProcessClock::of(&config.iut, config.clock).map_err(SuiteError::Harness)?;
    let launcher = Launcher::new(&server, &config.iut, &process_clock);
    let runs: Vec<SoakRun> = stream::iter(0..config.runs)
        .map(|index| one_run(launcher, config, index, seed.wrapping_add(index as u64)))
        .buffer_unordered(config.concurrency.max(1))
        .collect::<Vec<Result<SoakRun, SuiteError>>>()
        .await
        .into_iter()
        .collect::<Result<_, _>>()?;
    let mut runs = runs;
    runs.sort_by_key(|r| r.index);
    let prediction = prediction::predict(&config.scenario, config.max_retries, config.runs);
    Ok(judge::judge(config, seed, runs, prediction, started.elapsed()))
}

/// Run `index`, drawing from `seed`.
async fn one_run(launcher: Launcher<'_>, config: &SoakConfig, index: usize, seed: u64) -> Result<SoakRun, SuiteError> {
    let mut scenario = (*config.scenario).clone();
    if let Some(chaos) = scenario.chaos.as_mut() {
        chaos.seed = Some(seed);
    }
    let spec = CaseSpec {
        case: format!("squall soak {} run {index}", config.scenario.name),
        task: TaskKind::Stream,
        prompt: "Say the scripted answer".to_owned(),
        base_url: String::new(),
        time_scale: config.time_scale,
        profile: None,
        fallback: None,
        max_retries: Some(config.max_retries),
        seed: Some(seed),
        client: None,
        timeout: config.case_timeout,
    };
    let execution = launcher.run(RunPlan { scenario, spec, herd: None }).await.map_err(SuiteError::Harness)?;
    let replay = format!("{} --runs 1 --seed {seed}", config.replay);
    Ok(judge::run_record(index, seed, &execution, replay))
}
