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

use super::results::{by_requirement, CaseRecord, Evidence, Level, RequirementResult, Verdict};
use super::steps;
use super::world::{SuiteContext, SuiteWorld};
use crate::iut::Iut;
use crate::scenario::Catalogue;
use crate::server::{Server, ServerConfig};

/// How to run the suite.
#[derive(Debug, Clone)]
pub struct SuiteConfig {
    pub iut: Iut,
    pub level: Level,
    pub time_scale: f64,
    /// The directory of `.feature` files.
    pub features: PathBuf,
    pub catalogue: Catalogue,
    /// A tag expression such as `@wire and not @should`.
    pub tags: Option<String>,
    pub concurrency: usize,
    pub case_timeout: Duration,
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
    pub fn new(iut: Iut, features: PathBuf, catalogue: Catalogue) -> Self {
        SuiteConfig {
            iut,
            level: Level::Tasks,
            time_scale: 0.01,
            features,
            catalogue,
            tags: None,
            concurrency: 8,
            case_timeout: Duration::from_secs(60),
            console: false,
            cucumber_json: None,
            progress: None,
        }
    }
}

/// What a suite run found.
#[derive(Debug, Clone)]
pub struct SuiteOutcome {
    pub cases: Vec<CaseRecord>,
    pub requirements: Vec<RequirementResult>,
    pub started_at: SystemTime,
    pub duration: Duration,
}

impl SuiteOutcome {
    /// Counts of cases by verdict: (pass, fail, n/a, error).
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        let count = |v: Verdict| self.cases.iter().filter(|c| c.verdict == v).count();
        (count(Verdict::Pass), count(Verdict::Fail), count(Verdict::NotApplicable), count(Verdict::Error))
    }

    /// Every judged requirement passes (n/a ones do not count against).
    pub fn passed(&self) -> bool {
        self.requirements.iter().all(|r| matches!(r.verdict, Verdict::Pass | Verdict::NotApplicable))
    }
}

type Collected = Arc<Mutex<Vec<CaseRecord>>>;

pub async fn run_suite(config: &SuiteConfig) -> anyhow::Result<SuiteOutcome> {
    anyhow::ensure!(config.features.is_dir(), "the features directory {} does not exist", config.features.display());
    let filter: Option<TagOperation> = match &config.tags {
        Some(expr) => Some(expr.parse().map_err(|e| anyhow::anyhow!("--tags {expr:?}: {e}"))?),
        None => None,
    };
    let server = Server::start(ServerConfig::loopback(config.catalogue.clone()))
        .await
        .context("cannot start the squall server")?;
    let ctx = Arc::new(SuiteContext {
        server,
        catalogue: config.catalogue.clone(),
        iut: config.iut.clone(),
        level: config.level,
        time_scale: config.time_scale,
        case_timeout: config.case_timeout,
    });
    let collected: Collected = Arc::default();
    let started_at = SystemTime::now();
    let clock = Instant::now();
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
    Ok(SuiteOutcome { requirements: by_requirement(&cases), cases, started_at, duration: clock.elapsed() })
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
    .before(move |_, _, _, world| {
        world.ctx = Some(before_ctx.clone());
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
    .filter_run(config.features.clone(), move |feature, rule, scenario| match &filter {
        Some(expr) => expr.eval(all_tags(feature, rule, scenario).iter()),
        None => true,
    })
    .await;
}

fn all_tags(feature: &gherkin::Feature, rule: Option<&gherkin::Rule>, scenario: &gherkin::Scenario) -> Vec<String> {
    let rule_tags = rule.map(|r| r.tags.clone()).unwrap_or_default();
    feature.tags.iter().chain(&rule_tags).chain(&scenario.tags).cloned().collect()
}

fn case_record(
    feature: &gherkin::Feature,
    rule: Option<&gherkin::Rule>,
    scenario: &gherkin::Scenario,
    finished: &ScenarioFinished,
    world: Option<&SuiteWorld>,
) -> CaseRecord {
    let tags = all_tags(feature, rule, scenario);
    let requirements: Vec<String> = tags
        .iter()
        .map(|t| t.trim_start_matches('@').to_owned())
        .filter(|t| t.starts_with("REQ-") || t.starts_with("SEED-"))
        .collect();
    let checks = world.map(|w| w.checks.clone()).unwrap_or_default();
    let step_error = match finished {
        ScenarioFinished::StepPassed => None,
        ScenarioFinished::StepSkipped => {
            Some("a step has no definition (the feature uses a step squall does not know)".to_owned())
        }
        ScenarioFinished::StepFailed(_, _, error) => Some(error.to_string()),
        ScenarioFinished::BeforeHookFailed(_) => Some("the harness could not prepare the case".to_owned()),
    };
    let judged = Verdict::combine(checks.iter().map(|c| c.verdict));
    let verdict = match (&step_error, judged) {
        // A failed check explains the step failure.
        (Some(_), Verdict::Fail) => Verdict::Fail,
        (Some(_), _) => Verdict::Error,
        (None, Verdict::NotApplicable) if checks.is_empty() => Verdict::Error,
        (None, judged) => judged,
    };
    let error = match (verdict, step_error) {
        (Verdict::Error, Some(e)) => Some(e),
        (Verdict::Error, None) => Some("the case made no check".to_owned()),
        _ => world.and_then(|w| w.run.as_ref()).and_then(|r| r.iut.failure()),
    };
    let evidence = world
        .and_then(|w| w.run.as_ref())
        .map(|run| Evidence {
            journal: run.journal.clone(),
            events: run.iut.events.clone(),
            result: run.iut.result.clone(),
            stderr: run.iut.stderr.clone(),
        })
        .unwrap_or_default();
    CaseRecord {
        name: scenario.name.clone(),
        feature: feature.name.clone(),
        requirements,
        tags,
        verdict,
        checks,
        error,
        evidence,
    }
}
