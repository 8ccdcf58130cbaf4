//! Running the features against an implementation: an in-process squall server, cucumber-rs
//! driving the steps, and one [`CaseRecord`] per scenario collected from the worlds.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context as _;
use cucumber::event::ScenarioFinished;
use cucumber::gherkin::tagexpr::TagOperation;
use cucumber::tag::Ext as _;
use cucumber::{gherkin, writer, WriterExt as _};
use futures_util::FutureExt as _;

use super::cases::{all_tags, case_id, Shard};
use super::requirements::{requirement_tags, ProfileSelection};
use super::results::{by_profile, by_requirement, CaseName, CaseRecord, ProfileResult, RequirementResult};
use super::steps;
use super::timing::calibration::{calibrate, INSTANCES_PER_SCALE};
use super::timing::Calibration;
use super::verdict::{Level, RunVerdict, Tally};
use super::world::{SuiteContext, SuiteWorld};
use crate::iut::Iut;
use crate::scenario::Catalogue;
use crate::server::{Server, ServerConfig};

/// How to run the suite.
#[derive(Debug, Clone)]
pub struct SuiteConfig {
    /// The implementation to judge.
    pub iut: Iut,
    /// The IUT contract level it declares.
    pub level: Level,
    /// Production values run at this fraction of real time.
    pub time_scale: f64,
    /// The most a case's time scale may be raised to so that its timing checks can judge the
    /// implementation's measured reaction (checks that would need more are `error`).
    pub max_time_scale: f64,
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
    /// Only the cases of this part (`--shard K/N`), by case id; `None`: every case.
    pub shard: Option<Shard>,
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

impl SuiteConfig {
    /// The defaults: level `tasks`, time scale 0.01 (raised as far as real time where a timing
    /// check needs it), profile `prd-0006`, 8 cases at once, 60 s per case.
    pub fn new(iut: Iut, features: PathBuf, catalogue: Catalogue) -> Self {
        SuiteConfig {
            iut,
            level: Level::Tasks,
            time_scale: 0.01,
            max_time_scale: 1.0,
            features,
            catalogue,
            profiles: ProfileSelection::default(),
            tags: None,
            concurrency: 8,
            case_timeout: Duration::from_secs(60),
            seed: None,
            herd: super::settings::DEFAULT_HERD,
            shard: None,
            console: false,
            cucumber_json: None,
            progress: None,
        }
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
    /// The implementation's reaction, measured before the cases ran.
    pub calibration: Calibration,
    /// When the run began.
    pub started_at: SystemTime,
    /// How long it took.
    pub duration: Duration,
}

impl SuiteOutcome {
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

/// Run the features against the implementation and judge every case.
pub async fn run_suite(config: &SuiteConfig) -> anyhow::Result<SuiteOutcome> {
    anyhow::ensure!(config.features.is_dir(), "the features directory {} does not exist", config.features.display());
    let filter: Option<TagOperation> = match &config.tags {
        Some(expr) => Some(expr.parse().map_err(|e| anyhow::anyhow!("--tags {expr:?}: {e}"))?),
        None => None,
    };
    let server = Server::start(ServerConfig::loopback(config.catalogue.clone()))
        .await
        .context("cannot start the squall server")?;
    let started_at = SystemTime::now();
    let clock = Instant::now();
    let instances = config.concurrency.clamp(1, INSTANCES_PER_SCALE);
    let calibration =
        calibrate(&server, &config.iut, config.time_scale, instances, config.case_timeout, config.seed).await?;
    let ctx = Arc::new(SuiteContext {
        server,
        catalogue: config.catalogue.clone(),
        iut: config.iut.clone(),
        level: config.level,
        time_scale: config.time_scale,
        max_time_scale: config.max_time_scale,
        case_timeout: config.case_timeout,
        seed: config.seed,
        herd: config.herd,
        calibration,
        calibration_instances: instances,
    });
    let collected: Collected = Arc::default();
    match (&config.cucumber_json, config.console) {
        (Some(path), _) => {
            let file = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            drive(writer::Json::new(file), config, &ctx, &collected, filter).await;
        }
        (None, true) => drive(writer::Basic::stdout().summarized(), config, &ctx, &collected, filter).await,
        (None, false) => {
            drive(
                writer::Basic::new(std::io::sink(), writer::Coloring::Never, writer::Verbosity::Default).summarized(),
                config,
                &ctx,
                &collected,
                filter,
            )
            .await
        }
    }
    let mut cases = std::mem::take(&mut *collected.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    cases.sort_by(|a, b| (&a.feature, &a.name).cmp(&(&b.feature, &b.name)));
    let requirements = by_requirement(&cases);
    Ok(SuiteOutcome {
        profiles: by_profile(&config.profiles, &requirements),
        requirements,
        calibration: ctx.calibration.clone(),
        cases,
        selection: config.profiles.clone(),
        tags: config.tags.clone(),
        started_at,
        duration: clock.elapsed(),
    })
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
        world.advisory = all_tags(feature, rule, scenario).iter().any(|t| t == "should");
        world.timing = super::checks::timed::plan(scenario.steps.iter().map(|s| s.value.as_str()));
        async {}.boxed_local()
    })
    .after(move |feature, rule, scenario, finished, world| {
        let record = case_record(feature, rule, scenario, finished, world.map(|w| &*w));
        if let Some(progress) = &progress {
            (progress.0)(&record);
        }
        after_collected.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(record);
        async {}.boxed_local()
    })
    .filter_run(config.features.clone(), move |feature, rule, scenario| {
        let tags = all_tags(feature, rule, scenario);
        let in_shard = || {
            let file = feature.path.as_ref().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned());
            shard.is_none_or(|shard| shard.contains(&case_id(file.as_deref().unwrap_or(""), &scenario.name)))
        };
        profiles.judges(&requirement_tags(&tags))
            && filter.as_ref().is_none_or(|expr| expr.eval(tags.iter()))
            && in_shard()
    })
    .await;
}

/// Why a step failed, in plain words: what the step said when it stopped (a failed check, a
/// dead implementation), not cucumber's "Step panicked. Captured output: …" wrapping.
fn step_failure(error: &cucumber::event::StepError) -> String {
    match error {
        cucumber::event::StepError::Panic(info) => super::cases::panic_message(info.as_ref()),
        other => other.to_string(),
    }
}

fn case_record(
    feature: &gherkin::Feature,
    rule: Option<&gherkin::Rule>,
    scenario: &gherkin::Scenario,
    finished: &ScenarioFinished,
    world: Option<&SuiteWorld>,
) -> CaseRecord {
    let tags = all_tags(feature, rule, scenario);
    let checks = world.map(|w| w.checks.clone()).unwrap_or_default();
    let step_error = match finished {
        ScenarioFinished::StepPassed => None,
        ScenarioFinished::StepSkipped => {
            Some("a step has no definition (the feature uses a step squall does not know)".to_owned())
        }
        ScenarioFinished::StepFailed(_, _, error) => Some(step_failure(error)),
        ScenarioFinished::BeforeHookFailed(_) => Some("the harness could not prepare the case".to_owned()),
    };
    // A step that failed because a MUST check failed was judged; any other failure means the
    // case could not be judged (a dead implementation, a harness problem).
    let failed_a_must = world.is_some_and(|w| w.failed_a_must);
    let unjudgeable = step_error.filter(|_| !failed_a_must);
    CaseRecord::judged(
        CaseName { name: scenario.name.clone(), feature: feature.name.clone(), tags },
        checks,
        unjudgeable,
        world.and_then(|w| w.run.as_ref()),
    )
}
