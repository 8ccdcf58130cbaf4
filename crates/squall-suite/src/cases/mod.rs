//! The suite's cases as data: every scenario of the features (an outline's once per Examples
//! row, named as cucumber names it) read into a [`CasePlan`] — the scenario the server plays, how
//! the implementation is configured, what it is asked to do, and the checks its Then steps
//! make — by the same step tables cucumber runs, without running anything.
//!
//! - [`export`] — the cases as JSON for `squall cases` and `GET /__squall/cases` (a versioned
//!   public schema)
//! - `shard` — a deterministic split ([`Shard`]) of the cases by id, for `squall run --shard K/N`
//!
//! The case engine (`super::engine`) runs and judges them.

pub mod export;
mod shard;

use std::path::Path;

use cucumber::feature::Ext as _;
use cucumber::gherkin;

use super::checks::{Planned, StepChecks};
use super::clauses::Clause;
use super::requirements::requirement_tags;
use super::results::CaseName;
use super::script::CaseSetup;
use super::steps::{given, when};
use super::timing::Margin;

pub use shard::{BadShard, Shard};

/// One case: a scenario of a feature, read.
#[derive(Debug, Clone)]
pub struct CasePlan {
    /// A stable id: the feature file's stem and the scenario's name, lowercased, each word
    /// joined by `-` (`req-0006-001/status-408-is-retried`).
    pub id: String,
    /// The scenario's name (an outline's with its example filled in).
    pub name: String,
    /// The feature's name.
    pub feature: String,
    /// The feature's file name.
    pub file: String,
    /// All its tags, the feature's and the examples' included (without `@`).
    pub tags: Vec<String>,
    /// The requirement ids it is tagged with.
    pub requirements: Vec<String>,
    /// The seed clauses its description names (`Seed 000, line 54: "…"`).
    pub clauses: Vec<Clause>,
    /// What its Given steps set up.
    pub(crate) setup: CaseSetup,
    /// Its When step, and the action it names.
    pub(crate) when: Option<(String, when::Action)>,
    /// Its Then steps' checks, in order.
    pub(crate) then: Vec<StepChecks>,
}

impl CasePlan {
    /// A `@should` case: every check in it is advisory.
    pub fn advisory(&self) -> bool {
        self.tags.iter().any(|t| t == "should")
    }

    /// Its timing checks.
    pub(crate) fn timing(&self) -> Vec<Planned> {
        self.then.iter().flat_map(|step| step.timed().collect::<Vec<_>>()).collect()
    }

    /// Its timing checks' margins, by step: what its time scale is planned for.
    pub(crate) fn margins(&self) -> Vec<(String, Margin)> {
        self.timing().iter().map(|p| (p.step.clone(), p.margin())).collect()
    }

    /// Which case a record is of.
    pub(crate) fn case_name(&self) -> CaseName {
        CaseName {
            id: self.id.clone(),
            name: self.name.clone(),
            feature: self.feature.clone(),
            tags: self.tags.clone(),
            clauses: self.clauses.clone(),
        }
    }
}

/// A feature the cases cannot be read from.
#[derive(Debug, thiserror::Error)]
pub enum CasesError {
    /// A file that cannot be read.
    #[error("{file}: cannot read the file: {source}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// A file that is not Gherkin, or an outline whose examples do not expand.
    #[error("{file}: not a Gherkin feature: {message}")]
    Parse {
        /// The file.
        file: String,
        /// What the parser said.
        message: String,
    },
    /// A step no step definition reads, or one whose arguments do not parse.
    #[error("{file}: scenario `{scenario}`: step `{step}`: {message}")]
    Step {
        /// The file.
        file: String,
        /// The scenario's name.
        scenario: String,
        /// The step's text.
        step: String,
        /// What is wrong with it.
        message: String,
    },
    /// Two scenarios whose names make the same id.
    #[error("{file}: two scenarios have the id `{id}`: rename one")]
    DuplicateId {
        /// The file of the second.
        file: String,
        /// The id.
        id: String,
    },
}

/// The stable id of scenario `name` in the feature file `file`.
pub fn case_id(file: &str, name: &str) -> String {
    let stem = Path::new(file).file_stem().and_then(|s| s.to_str()).unwrap_or(file);
    format!("{}/{}", slug(stem), slug(name))
}

/// Lowercase words joined by `-`.
fn slug(text: &str) -> String {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    words.join("-")
}

/// The cases of `dir`'s features when given, else of `./features` when it exists, else of the
/// features built into squall (the choice `squall run` makes).
pub fn from_dir_or_embedded(dir: Option<&Path>) -> Result<Vec<CasePlan>, CasesError> {
    match dir {
        Some(dir) => from_dir(dir),
        None if Path::new("features").is_dir() => from_dir(Path::new("features")),
        None => from_texts(super::features::embedded_features().iter().copied()),
    }
}

/// The cases of every `.feature` file in `dir`, by file name then scenario order.
pub fn from_dir(dir: &Path) -> Result<Vec<CasePlan>, CasesError> {
    let read_error = |source| CasesError::Read { file: dir.display().to_string(), source };
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(read_error)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "feature"))
        .collect();
    files.sort();
    let mut texts = Vec::new();
    for path in files {
        let file = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let text = std::fs::read_to_string(&path)
            .map_err(|source| CasesError::Read { file: path.display().to_string(), source })?;
        texts.push((file, text));
    }
    from_texts(texts.iter().map(|(file, text)| (file.as_str(), text.as_str())))
}

/// The cases of features given as (file name, text).
pub fn from_texts<'a>(features: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Vec<CasePlan>, CasesError> {
    let mut plans: Vec<CasePlan> = Vec::new();
    for (file, text) in features {
        let parse_error = |message: String| CasesError::Parse { file: file.to_owned(), message };
        let feature = gherkin::Feature::parse(text, gherkin::GherkinEnv::default())
            .map_err(|e| parse_error(e.to_string()))?
            .expand_examples()
            .map_err(|e| parse_error(e.to_string()))?;
        let rules = feature.rules.iter().flat_map(|rule| rule.scenarios.iter().map(move |s| (Some(rule), s)));
        for (rule, scenario) in feature.scenarios.iter().map(|s| (None, s)).chain(rules) {
            let plan = read_scenario(file, &feature, rule, scenario)?;
            if plans.iter().any(|p| p.id == plan.id) {
                return Err(CasesError::DuplicateId { file: file.to_owned(), id: plan.id });
            }
            plans.push(plan);
        }
    }
    Ok(plans)
}

/// Every tag of a scenario: its feature's, its rule's and its own (an outline's examples' too).
pub(crate) fn all_tags(
    feature: &gherkin::Feature,
    rule: Option<&gherkin::Rule>,
    scenario: &gherkin::Scenario,
) -> Vec<String> {
    let rule_tags = rule.map(|r| r.tags.clone()).unwrap_or_default();
    feature.tags.iter().chain(&rule_tags).chain(&scenario.tags).cloned().collect()
}

/// One scenario of a feature (an outline's row, expanded) as a case.
pub(crate) fn read_scenario(
    file: &str,
    feature: &gherkin::Feature,
    rule: Option<&gherkin::Rule>,
    scenario: &gherkin::Scenario,
) -> Result<CasePlan, CasesError> {
    let step_error = |step: &str, message: String| CasesError::Step {
        file: file.to_owned(),
        scenario: scenario.name.clone(),
        step: step.to_owned(),
        message,
    };
    let tags = all_tags(feature, rule, scenario);
    let clauses = scenario_clauses(scenario).map_err(|message| CasesError::Parse {
        file: file.to_owned(),
        message: format!("scenario `{}`: {message}", scenario.name),
    })?;
    let mut plan = CasePlan {
        id: case_id(file, &scenario.name),
        name: scenario.name.clone(),
        feature: feature.name.clone(),
        file: file.to_owned(),
        requirements: requirement_tags(&tags),
        tags,
        clauses,
        setup: CaseSetup::default(),
        when: None,
        then: Vec::new(),
    };
    let background = feature.background.iter().chain(rule.and_then(|r| r.background.as_ref()));
    let steps = background.flat_map(|b| b.steps.iter()).chain(&scenario.steps);
    for step in steps {
        let text = step.value.as_str();
        match step.ty {
            gherkin::StepType::Given => {
                let (apply, args) =
                    given::find(text).ok_or_else(|| step_error(text, "no Given step reads so".into()))?;
                // A Given step panics on arguments it cannot read (an unknown fault point).
                let setup = &mut plan.setup;
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| apply(setup, &args)))
                    .map_err(|panic| step_error(text, panic_message(panic.as_ref())))?;
            }
            gherkin::StepType::When => {
                let action = when::find(text).ok_or_else(|| step_error(text, "no When step reads so".into()))?;
                plan.when = Some((text.to_owned(), action));
            }
            gherkin::StepType::Then => {
                let checks =
                    StepChecks::for_step(text).ok_or_else(|| step_error(text, "no check answers it".into()))?;
                plan.then.push(checks);
            }
        }
    }
    Ok(plan)
}

/// The seed clauses a scenario's description names.
pub(crate) fn scenario_clauses(scenario: &gherkin::Scenario) -> Result<Vec<Clause>, String> {
    scenario.description.as_deref().map_or(Ok(Vec::new()), Clause::all_in)
}

/// What a panic said.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "the step cannot be read".to_owned())
}

#[cfg(test)]
mod tests;
