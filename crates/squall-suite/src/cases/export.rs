//! The cases as data (public schema [`SCHEMA`], documented in `docs/service.md`): what
//! `squall cases --format json` prints and `GET /__squall/cases` answers. Each case names its
//! requirements, the scenario the server plays (inline), how the client must be configured, and
//! every check it makes with its strength and what the seed expects, in words — enough for a test
//! runner in any language to run the case and ask the judge for the verdict.
//!
//! Only the cases the judge as a service can judge are exported: the `wire` and `events` levels
//! (what a client can post: `result.json` and `events.jsonl`); `tasks` cases read files the
//! implementation wrote, which only `squall run` sees.

use cucumber::gherkin::tagexpr::TagOperation;
use cucumber::tag::Ext as _;
use serde::{Deserialize, Serialize};

use super::CasePlan;
use crate::clauses::Clause;
use crate::iut::TaskKind;
use crate::requirements::ProfileSelection;
use crate::steps::when::PROMPT;
use crate::timing::{calibration, wait_asks};
use crate::verdict::{Level, Strength};
use squall::clock::TimeScale;
use squall::scenario::{Catalogue, Scenario};

/// The schema's name and version: fields are added within a version, never renamed or removed.
pub const SCHEMA: &str = "squall.cases/1";

/// The id of the calibration case (see [`CalibrationCase`]).
pub const CALIBRATION_ID: &str = "calibration";

/// Every case of a selection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseList {
    /// [`SCHEMA`].
    pub schema: String,
    /// The squall that made the list.
    pub squall_version: String,
    /// The level the list was made for: cases needing more are left out.
    pub level: Level,
    /// The profiles whose requirements the cases judge.
    pub profiles: Vec<String>,
    /// The tag expression the cases were selected by, if any.
    pub tags: Option<String>,
    /// How a client's own time per retry is measured before timing checks can judge it.
    pub calibration: CalibrationCase,
    /// The cases, by feature file then scenario order.
    pub cases: Vec<CaseDescription>,
}

/// One case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseDescription {
    /// Stable: the feature file's stem and the scenario's name (`req-0006-001/status-408-is-retried`).
    pub id: String,
    /// The scenario's name.
    pub name: String,
    /// The feature's name.
    pub feature: String,
    /// The feature's file.
    pub file: String,
    /// The requirement ids it judges.
    pub requirements: Vec<String>,
    /// Every tag (without `@`): `wire`, `events`, `should`, `herd`, the requirement ids.
    pub tags: Vec<String>,
    /// The seed clauses it answers (file, line, the seed's words), as its scenario names them.
    pub clauses: Vec<Clause>,
    /// The least level the client must declare for the case to apply.
    pub level: Level,
    /// Many instances at once against one run, each at its own client base URL.
    pub herd: bool,
    /// Whether a check measures time (its verdict needs the session's calibration).
    pub timed: bool,
    /// How the client must be configured and what it does.
    pub client: ClientSettings,
    /// The scenario the server plays (the scenario format, inline).
    pub scenario: Scenario,
    /// What the case checks, in step order.
    pub checks: Vec<ExpectedCheck>,
}

/// How the client must be configured for a case: the IUT contract's variables, as values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientSettings {
    /// `stream`: one streamed model call (`SQUALL_TASK`).
    pub task: String,
    /// The prompt (`SQUALL_PROMPT`).
    pub prompt: String,
    /// `providerRetry.maxRetries` (`SQUALL_MAX_RETRIES`); null: the client's own default.
    pub max_retries: Option<u32>,
    /// The agent profile (`SQUALL_PROFILE`): `default`, `writer`, `read-only`, ...
    pub agent_profile: String,
    /// A fallback answer the client degrades to (`SQUALL_FALLBACK`), if any.
    pub fallback: Option<String>,
    /// The time scale the case asks for; the run created for it says the one to use.
    pub time_scale: TimeScale,
}

/// One check of a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpectedCheck {
    /// The Then step it answers (with the part it judges when a step makes two checks).
    pub name: String,
    /// The level it needs: above the client's, it is `n/a`.
    pub level: Level,
    /// MUST (a miss fails the requirement) or SHOULD (a miss warns).
    pub strength: Strength,
    /// What the seed demands, in words.
    pub expected: String,
}

/// The calibration: runs of a scenario of 429s that ask for `retry-after-ms: 1` and a success,
/// at two time scales, which measure what the client spends of its own per retry; a session's
/// timing checks take it out of every wait (`docs/requirements.md`, "Timing").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationCase {
    /// [`CALIBRATION_ID`].
    pub id: String,
    /// Run `instances_per_scale` instances at each scale, all at once.
    pub time_scales: [TimeScale; 2],
    /// Instances at each scale.
    pub instances_per_scale: usize,
    /// How the client is configured (the time scale is the run's).
    pub client: ClientSettings,
    /// The scenario.
    pub scenario: Scenario,
    /// Some case is a herd's: run the calibration once more as a herd (`herd`: its size, all
    /// instances at once), which measures how far a herd asked for the same wait spreads anyway.
    pub herd_run: bool,
}

/// Which cases to export.
#[derive(Debug, Clone)]
pub struct CaseQuery {
    /// Cases of these profiles' requirements.
    pub profiles: ProfileSelection,
    /// The client's level: `wire` or `events`.
    pub level: Level,
    /// A tag expression such as `@wire and not @should`.
    pub tags: Option<String>,
    /// The suite's time scale.
    pub time_scale: TimeScale,
}

/// A selection that cannot be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// A level the service cannot judge.
    #[error("level `{0}`: the judge as a service judges at `wire` and `events` (`tasks` cases read files only `squall run` sees)")]
    Level(String),
    /// A tag expression that does not parse.
    #[error("tags `{expression}`: {message}")]
    Tags {
        /// The expression.
        expression: String,
        /// What is wrong.
        message: String,
    },
    /// A case whose scenario cannot be built (a catalogue scenario that is not there).
    #[error("case `{case}`: {message}")]
    Scenario {
        /// The case.
        case: String,
        /// What is wrong.
        message: String,
    },
}

/// The cases of `plans` that `query` selects, described.
pub fn describe(plans: &[CasePlan], query: &CaseQuery, catalogue: &Catalogue) -> Result<CaseList, ExportError> {
    if query.level > Level::Events {
        return Err(ExportError::Level(query.level.as_str().to_owned()));
    }
    let filter: Option<TagOperation> = match &query.tags {
        Some(expression) => Some(
            expression
                .parse()
                .map_err(|e| ExportError::Tags { expression: expression.clone(), message: format!("{e}") })?,
        ),
        None => None,
    };
    let cases = plans
        .iter()
        .filter(|plan| selected(plan, query, filter.as_ref()))
        .map(|plan| describe_case(plan, query.time_scale, catalogue))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(CaseList {
        schema: SCHEMA.to_owned(),
        squall_version: env!("CARGO_PKG_VERSION").to_owned(),
        level: query.level,
        profiles: query.profiles.profiles().iter().map(|p| p.id.to_owned()).collect(),
        tags: query.tags.clone(),
        calibration: calibration_case(query.time_scale, cases.iter().any(|c| c.herd)),
        cases,
    })
}

/// Whether `query` selects `plan`: a case of a chosen profile, within the level, matching the tags.
pub(crate) fn selected(plan: &CasePlan, query: &CaseQuery, tags: Option<&TagOperation>) -> bool {
    let within_level = plan.when.as_ref().is_some_and(|(_, action)| action.needs <= query.level);
    within_level
        && query.profiles.judges(&plan.requirements)
        && tags.is_none_or(|expression| expression.eval(plan.tags.iter()))
}

fn describe_case(
    plan: &CasePlan,
    time_scale: TimeScale,
    catalogue: &Catalogue,
) -> Result<CaseDescription, ExportError> {
    let scenario = plan
        .setup
        .script
        .build(&scenario_name(&plan.id), catalogue)
        .map_err(|message| ExportError::Scenario { case: plan.id.clone(), message })?;
    let (task, level, herd) = plan
        .when
        .as_ref()
        .map_or((TaskKind::Stream, Level::Wire, false), |(_, action)| (action.task, action.needs, action.herd));
    let setup = &plan.setup;
    let checks = plan
        .then
        .iter()
        .flat_map(|step| step.not_applicable(plan.advisory()))
        .map(|c| ExpectedCheck { name: c.name, level: c.level, strength: c.strength, expected: c.expected })
        .collect();
    Ok(CaseDescription {
        id: plan.id.clone(),
        name: plan.name.clone(),
        feature: plan.feature.clone(),
        file: plan.file.clone(),
        requirements: plan.requirements.clone(),
        tags: plan.tags.clone(),
        clauses: plan.clauses.clone(),
        level,
        herd,
        timed: !plan.timing().is_empty(),
        client: ClientSettings {
            task: task.as_str().to_owned(),
            prompt: PROMPT.to_owned(),
            max_retries: setup.max_retries,
            agent_profile: setup.profile.clone().unwrap_or_else(|| "default".to_owned()),
            fallback: setup.fallback.clone(),
            time_scale: setup.asked_time_scale(time_scale),
        },
        scenario,
        checks,
    })
}

/// A scenario name for case `id` (a scenario's name has no `/` and at most 128 characters).
pub(crate) fn scenario_name(id: &str) -> String {
    id.replace('/', ".").chars().take(128).collect()
}

/// The calibration as a case, at the suite's time scale and the second one.
pub(crate) fn calibration_case(time_scale: TimeScale, herd_run: bool) -> CalibrationCase {
    CalibrationCase {
        id: CALIBRATION_ID.to_owned(),
        time_scales: [time_scale, calibration::second_scale(time_scale)],
        instances_per_scale: calibration::INSTANCES_PER_SCALE,
        client: ClientSettings {
            task: TaskKind::Stream.as_str().to_owned(),
            prompt: "Calibrate".to_owned(),
            max_retries: Some(wait_asks::RETRIES as u32),
            agent_profile: "default".to_owned(),
            fallback: None,
            time_scale,
        },
        scenario: wait_asks::scenario(),
        herd_run,
    }
}
