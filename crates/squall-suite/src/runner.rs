//! Running the features against an implementation: an in-process squall server, cucumber-rs
//! driving the steps, and one [`CaseRecord`] per scenario collected from the worlds.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use cucumber::event::ScenarioFinished;
use cucumber::gherkin::tagexpr::TagOperation;
use cucumber::tag::Ext as _;
use cucumber::{gherkin, writer, WriterExt as _};
use futures_util::FutureExt as _;

use super::cases::{all_tags, case_id, read_scenario, scenario_clauses, Shard};
use super::engine::{calibrate_clock, Measure, ProcessClock, SuiteContext, WarmPool};
use super::provenance::{feature_digests, FeatureDigest, Host};
use super::requirements::{requirement_tags, ProfileSelection};
use super::results::{by_profile, by_requirement, CaseName, CaseRecord, ProfileResult, RequirementResult};
use super::steps;
use super::timing::calibration::INSTANCES_PER_SCALE;
use super::timing::Calibration;
use super::verdict::{Level, RunVerdict, Tally};
use super::waivers::{apply, Waiver, WaiverRecord};
use super::world::SuiteWorld;
use crate::iut::{ClockMode, Iut};
use crate::SuiteError;
use squall::clock::TimeScale;
use squall::clock::{Clock, VirtualClock};
use squall::scenario::Catalogue;
use squall::server::{Server, ServerConfig};

/// How to run the suite.
#[derive(Debug, Clone)]
pub struct SuiteConfig {
    /// The implementation to judge.
    pub iut: Iut,
    /// The IUT contract level it declares.
    pub level: Level,
    /// The clock an outside implementation's process runs on.
    pub clock: ClockMode,
    /// Start a Python implementation (`PYTHON SCRIPT [ARG…]`) warm: one process imports what the
    /// script imports, once, and forks each case's process (`squall run --warm`).
    pub warm: bool,
    /// Production values run at this fraction of real time.
    pub time_scale: TimeScale,
    /// The most a case's time scale may be raised to so that its timing checks can judge the
    /// implementation's measured reaction (checks that would need more are `error`).
    pub max_time_scale: TimeScale,
    /// The directory of `.feature` files.
    pub features: PathBuf,
    /// The scenarios the features can name.
    pub catalogue: Catalogue,
    /// The profiles judged: only cases of their requirements run.
    pub profiles: ProfileSelection,
    /// A tag expression such as `@wire and not @should`.
    pub tags: Option<String>,
    /// Cases run side by side.
    pub concurrency: usize,
    /// Real time an implementation gets per case before its process group is killed.
    pub case_timeout: Duration,
    /// A jitter seed for the implementation (`SQUALL_SEED`); `None` lets it pick its own. A
    /// herd's client `k` gets this seed plus `k`.
    pub seed: Option<u64>,
    /// Instances of the implementation each herd case (a feature's `@herd` scenario) runs at once.
    pub herd: u32,
    /// Serve the implementation over TLS (HTTP/2 and HTTP/1.1 by ALPN), with a certificate of a
    /// test CA generated for the run, which the implementation is told to trust
    /// (`SQUALL_CA_FILE` and the variables its clients read: docs/iut-contract.md).
    pub tls: bool,
    /// Only the cases of this part (`--shard K/N`), by case id; `None`: every case.
    pub shard: Option<Shard>,
    /// Only the cases with these ids (`--case`); empty: every case.
    pub cases: Vec<String>,
    /// Print cucumber's own progress to stdout.
    pub console: bool,
    /// Also write Cucumber JSON here.
    pub cucumber_json: Option<PathBuf>,
    /// Called as each case finishes (progress display).
    pub progress: Option<Progress>,
}

/// A callback for each finished case.
#[derive(Clone)]
pub struct Progress(pub Arc<dyn Fn(&CaseRecord) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}

/// What a suite run found.
#[derive(Debug, Clone)]
pub struct SuiteOutcome {
    /// Every case that ran, by feature and name.
    pub cases: Vec<CaseRecord>,
    /// The requirements of those cases, in profile then id order.
    pub requirements: Vec<RequirementResult>,
    /// The selected profiles, each with its requirements' verdict.
    pub profiles: Vec<ProfileResult>,
    /// The profiles that were judged.
    pub selection: ProfileSelection,
    /// The tag expression the cases were filtered by, if any.
    pub tags: Option<String>,
    /// Whether the implementation was served over TLS (`--tls`).
    pub tls: bool,
    /// Whether its processes were forked from one started warm (`--warm`).
    pub warm: bool,
    /// The implementation's reaction, measured before the cases ran.
    pub calibration: Calibration,
    /// The clock the implementation's processes ran on: `scaled` or `accelerated`.
    pub clock: ClockMode,
    /// When the run began.
    pub started_at: SystemTime,
    /// How long it took.
    pub duration: Duration,
    /// The feature files read, digested, with the cases of each that ran.
    pub features: Vec<FeatureDigest>,
    /// The machine, and its load when the run began and ended.
    pub host: Host,
    /// The waivers given, and what each did ([`SuiteOutcome::waive`]).
    pub waivers: Vec<WaiverRecord>,
}

impl SuiteOutcome {
    /// The outcome with `waivers` applied on `today` (`YYYY-MM-DD`): failed MUSTs they name
    /// become `waived`, and the requirements and profiles are judged again.
    pub fn waive(mut self, waivers: &[Waiver], today: &str) -> SuiteOutcome {
        self.waivers = apply(&mut self.cases, waivers, today);
        self.requirements = by_requirement(&self.cases);
        self.profiles = by_profile(&self.selection, &self.requirements);
        self
    }

    /// The cases by verdict.
    pub fn cases_tally(&self) -> Tally {
        Tally::of(self.cases.iter().map(|c| c.verdict))
    }

    /// The requirements by verdict.
    pub fn requirements_tally(&self) -> Tally {
        Tally::of(self.requirements.iter().map(|r| r.verdict))
    }

    /// Passed (every judged requirement passes, warnings allowed), failed, or empty.
    pub fn verdict(&self) -> RunVerdict {
        RunVerdict::of(self.cases_tally(), self.requirements.iter().map(|r| r.verdict))
    }

    /// Every judged requirement passes and something was judged.
    pub fn passed(&self) -> bool {
        self.verdict() == RunVerdict::Passed
    }
}

type Collected = Arc<Mutex<Vec<CaseRecord>>>;

/// Run the features against the implementation and judge every case. An implementation in
/// squall's process runs on squall's virtual clock, on a thread of its own.
pub async fn run_suite(config: &SuiteConfig) -> Result<SuiteOutcome, SuiteError> {
    if !config.iut.runs_on_virtual_clock() {
        return run_on(config, Clock::Real).await;
    }
    let config = config.clone();
    let (sender, receiver) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("squall-virtual-time".to_owned())
        .spawn(move || {
            let outcome = match VirtualClock::runtime() {
                Ok((runtime, clock)) => runtime.block_on(run_on(&config, Clock::Virtual(clock))),
                Err(e) => Err(SuiteError::io("cannot start a runtime for the virtual clock")(e)),
            };
            let _ = sender.send(outcome);
        })
        .map_err(SuiteError::io("cannot start the suite's thread"))?;
    receiver.await.map_err(|_| SuiteError::Harness("the suite's thread ended without an outcome".to_owned()))?
}

/// Run the suite with its server and implementation on `clock`.
async fn run_on(config: &SuiteConfig, clock: Clock) -> Result<SuiteOutcome, SuiteError> {
    if !config.features.is_dir() {
        return Err(SuiteError::Usage(format!("the features directory {} does not exist", config.features.display())));
    }
    let filter: Option<TagOperation> = match &config.tags {
        Some(expr) => Some(expr.parse().map_err(|e| SuiteError::Usage(format!("--tags {expr:?}: {e}")))?),
        None => None,
    };
    let mut server = ServerConfig::loopback(config.catalogue.clone());
    server.clock = clock.clone();
    if config.tls {
        let tls = squall::server::tls::ServerTls::generated().map_err(|e| SuiteError::Harness(e.to_string()))?;
        server.tls = Some(tls);
    }
    let server = Server::start(server).await.map_err(SuiteError::io("cannot start the squall server"))?;
    let started_at = SystemTime::now();
    let began = Instant::now();
    let host = Host::now();
    let instances = config.concurrency.clamp(1, INSTANCES_PER_SCALE);
    let warm = (config.warm && matches!(config.iut, Iut::Command(_))).then(WarmPool::default);
    let warm_started = warm.is_some();
    let (process_clock, calibration) = if clock.is_virtual() {
        (ProcessClock::Scaled, Calibration::virtual_clock())
    } else {
        let measure =
            Measure { time_scale: config.time_scale, instances, case_timeout: config.case_timeout, seed: config.seed };
        calibrate_clock(&server, &config.iut, config.clock, measure, warm.as_ref()).await?
    };
    let clock_mode = process_clock.mode();
    let ctx = Arc::new(SuiteContext::new(config, server, process_clock, warm, calibration, instances));
    let collected: Collected = Arc::default();
    match (&config.cucumber_json, config.console) {
        (Some(path), _) => {
            let file =
                std::fs::File::create(path).map_err(SuiteError::io(format!("cannot create {}", path.display())))?;
            drive(writer::Json::new(file), config, &ctx, &collected, filter).await;
        }
        (None, true) => drive(writer::Basic::stdout().summarized(), config, &ctx, &collected, filter).await,
        (None, false) => drive(Silent.assert_normalized(), config, &ctx, &collected, filter).await,
    }
    let mut cases = std::mem::take(&mut *collected.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    cases.sort_by(|a, b| (&a.feature, &a.name).cmp(&(&b.feature, &b.name)));
    let requirements = by_requirement(&cases);
    let cases_ids: Vec<String> = cases.iter().map(|c| c.id.clone()).collect();
    Ok(SuiteOutcome {
        profiles: by_profile(&config.profiles, &requirements),
        requirements,
        calibration: Calibration { lockstep: ctx.last_lockstep().await, ..ctx.calibration.clone() },
        tls: config.tls,
        warm: warm_started,
        clock: clock_mode,
        cases,
        selection: config.profiles.clone(),
        tags: config.tags.clone(),
        started_at,
        duration: began.elapsed(),
        features: feature_digests(&config.features, cases_ids.iter().map(String::as_str)),
        host: host.ended(),
        waivers: Vec::new(),
    })
}

/// A writer for a run nobody watches: the cases' records come from the `after` hook. Nothing
/// is written, so the order of events does not matter, and cucumber's reordering (which hashes
/// the whole feature at each event) and its console writer (which formats the world of each
/// failed step) are spared.
struct Silent;

impl cucumber::Writer<SuiteWorld> for Silent {
    type Cli = cucumber::cli::Empty;

    async fn handle_event(
        &mut self,
        _: cucumber::parser::Result<cucumber::Event<cucumber::event::Cucumber<SuiteWorld>>>,
        _: &Self::Cli,
    ) {
    }
}

/// One cucumber run with the given writer; results land in `collected`.
async fn drive<Wr>(
    writer: Wr,
    config: &SuiteConfig,
    ctx: &Arc<SuiteContext>,
    collected: &Collected,
    filter: Option<TagOperation>,
) where
    Wr: cucumber::Writer<SuiteWorld> + cucumber::writer::Normalized,
    Wr::Cli: Default,
{
    let before_ctx = ctx.clone();
    let after_collected = collected.clone();
    let progress = config.progress.clone();
    let profiles = config.profiles.clone();
    let shard = config.shard;
    let chosen = config.cases.clone();
    let _ = cucumber::Cucumber::<SuiteWorld, _, PathBuf, _, _>::custom(
        cucumber::parser::Basic::new(),
        cucumber::runner::Basic::default(),
        writer,
    )
    // Explicit options: cucumber would otherwise parse this process's arguments (a test
    // filter, `squall run` flags) and exit on what it does not know.
    .with_cli(cucumber::cli::Opts::<_, _, _, cucumber::cli::Empty>::default())
    .steps(steps::collection())
    .max_concurrent_scenarios(Some(config.concurrency.max(1)))
    .before(move |feature, rule, scenario, world| {
        world.ctx = Some(before_ctx.clone());
        let file = feature_file(feature);
        world.plan = Some(read_scenario(&file, feature, rule, scenario).map_err(|e| e.to_string()));
        async {}.boxed_local()
    })
    .after(move |feature, rule, scenario, finished, world| {
        let record = case_record(feature, rule, scenario, finished, world);
        if let Some(progress) = &progress {
            (progress.0)(&record);
        }
        after_collected.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(record);
        async {}.boxed_local()
    })
    .filter_run(config.features.clone(), move |feature, rule, scenario| {
        let tags = all_tags(feature, rule, scenario);
        let id = case_id(&feature_file(feature), &scenario.name);
        let in_shard = || shard.is_none_or(|shard| shard.contains(&id));
        let chosen = || chosen.is_empty() || chosen.contains(&id);
        profiles.judges(&requirement_tags(&tags))
            && filter.as_ref().is_none_or(|expr| expr.eval(tags.iter()))
            && in_shard()
            && chosen()
    })
    .await;
}

/// The file name of a feature (what case ids are made from).
fn feature_file(feature: &gherkin::Feature) -> String {
    feature.path.as_ref().and_then(|p| p.file_name()).map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// The case's record: the engine's, or — when the engine never judged it — why not.
fn case_record(
    feature: &gherkin::Feature,
    rule: Option<&gherkin::Rule>,
    scenario: &gherkin::Scenario,
    finished: &ScenarioFinished,
    world: Option<&mut SuiteWorld>,
) -> CaseRecord {
    if let Some(record) = world.as_ref().and_then(|w| w.record.clone()) {
        return record;
    }
    let why = match (world.and_then(|w| w.plan.take()), finished) {
        (Some(Err(why)), _) => why,
        (_, ScenarioFinished::StepSkipped) => {
            "a step has no definition (the feature uses a step squall does not know)".to_owned()
        }
        (_, ScenarioFinished::BeforeHookFailed(_)) => "the harness could not prepare the case".to_owned(),
        _ => "the case has no When step".to_owned(),
    };
    let name = CaseName {
        id: case_id(&feature_file(feature), &scenario.name),
        name: scenario.name.clone(),
        feature: feature.name.clone(),
        tags: all_tags(feature, rule, scenario),
        clauses: scenario_clauses(scenario).unwrap_or_default(),
    };
    CaseRecord::judged(name, Vec::new(), Some(why))
}
