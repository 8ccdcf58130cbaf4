//! cucumber's glue: the step definitions `squall run` and `cargo test --test conformance` register,
//! with regexes (no macros, so they live in the library). They hold no verdict logic: the runner
//! reads each scenario as a case before its steps run ([`crate::cases`]), the When step
//! has the case engine run and judge it ([`crate::engine`]), and each Then step reports
//! its checks' verdicts from the engine's record — failing, for cucumber's output, where a MUST
//! failed or a check could not decide.

pub(crate) mod given;
pub(crate) mod when;

use cucumber::step::{Collection, Context};
use futures_util::future::LocalBoxFuture;
use regex::{Captures, Regex};

use super::engine::run_case;
use super::verdict::Verdict;
use super::world::SuiteWorld;

/// Every step squall knows, registered with cucumber. What Given and When steps mean lives in
/// their tables ([`given::STEPS`], [`when::STEPS`]), which the cases are read with.
pub(super) fn collection() -> Collection<SuiteWorld> {
    let mut steps = Collection::new();
    for (pattern, _) in given::STEPS {
        steps = steps.given(None, regex(pattern), given_step);
    }
    for (pattern, _) in when::STEPS {
        steps = steps.when(None, regex(pattern), when_step);
    }
    for pattern in super::checks::patterns() {
        steps = steps.then(None, pattern.clone(), then_step);
    }
    steps
}

/// A Given step: read into the case before the scenario started. A scenario that cannot be read
/// fails here, with the reason.
fn given_step(world: &mut SuiteWorld, _: Context) -> LocalBoxFuture<'_, ()> {
    if let Some(Err(why)) = &world.plan {
        fail_step(why.clone());
    }
    Box::pin(std::future::ready(()))
}

/// The When step: the case engine runs and judges the case. An implementation that left nothing
/// to judge fails the step, with the reason.
fn when_step(world: &mut SuiteWorld, _: Context) -> LocalBoxFuture<'_, ()> {
    Box::pin(async move {
        let plan = match &world.plan {
            Some(Ok(plan)) => plan.clone(),
            Some(Err(why)) => fail_step(why.clone()),
            None => fail_step("the runner reads every scenario before its steps".to_owned()),
        };
        let suite = world.ctx.clone().unwrap_or_else(|| fail_step("the runner sets the suite's context".to_owned()));
        let record = run_case(&suite, &plan).await;
        let error = record.error.clone().filter(|_| record.verdict == Verdict::Error);
        world.record = Some(record);
        if let Some(why) = error {
            fail_step(why);
        }
    })
}

/// A Then step: its checks as the engine recorded them.
fn then_step(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let step = ctx.step.value.as_str();
    let unmet: Vec<String> = world
        .record
        .iter()
        .flat_map(|record| record.checks.iter())
        .filter(|check| check.name.strip_prefix(step).is_some_and(|part| part.is_empty() || part.starts_with(':')))
        .filter(|check| matches!(check.verdict, Verdict::Fail | Verdict::Inconclusive))
        .map(|check| {
            format!(
                "{} [{}]\n  expected: {}\n  observed: {}",
                check.name,
                check.verdict.as_str(),
                check.expected,
                check.observed
            )
        })
        .collect();
    if !unmet.is_empty() {
        fail_step(unmet.join("\n"));
    }
    Box::pin(std::future::ready(()))
}

/// Fail a step for cucumber's output, without the panic hook: a verdict is not a crash, and a
/// message and backtrace on stderr per failed check would bury the output of whoever runs the
/// suite (the record holds everything).
fn fail_step(message: String) -> ! {
    std::panic::resume_unwind(Box::new(message))
}

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("step pattern {pattern}: {e}"))
}

/// A match's text (`[0]`) and each capture group's (empty when a group did not match).
fn captures(captures: &Captures<'_>) -> Vec<String> {
    captures.iter().map(|c| c.map_or(String::new(), |m| m.as_str().to_owned())).collect()
}

#[cfg(test)]
mod tests {
    use cucumber::gherkin;
    use regex::Regex;

    /// Every pattern, by keyword, compiled as [`super::collection`] registers it.
    fn patterns() -> [(&'static str, Vec<Regex>); 3] {
        let then: Vec<Regex> = crate::checks::patterns().into_iter().cloned().collect();
        [
            ("Given", super::given::STEPS.iter().map(|(pattern, _)| super::regex(pattern)).collect()),
            ("When", super::when::STEPS.iter().map(|(pattern, _)| super::regex(pattern)).collect()),
            ("Then", then),
        ]
    }

    /// Every step of `scenario`, an outline's once per Examples row.
    fn expanded(scenario: &gherkin::Scenario) -> Vec<(gherkin::StepType, String)> {
        let rows: Vec<Vec<(String, String)>> = scenario
            .examples
            .iter()
            .filter_map(|e| e.table.as_ref())
            .flat_map(|table| {
                let header = table.rows.first().cloned().unwrap_or_default();
                table.rows.iter().skip(1).map(move |row| header.iter().cloned().zip(row.iter().cloned()).collect())
            })
            .collect();
        let rows = if rows.is_empty() { vec![Vec::new()] } else { rows };
        rows.iter()
            .flat_map(|row| {
                scenario.steps.iter().map(move |step| {
                    let text = row.iter().fold(step.value.clone(), |text, (k, v)| text.replace(&format!("<{k}>"), v));
                    (step.ty, text)
                })
            })
            .collect()
    }

    /// Every step the built-in features use matches exactly one pattern of its keyword: none
    /// would leave the case unjudged, two would make the step's meaning depend on the order of
    /// registration.
    #[test]
    fn every_step_the_features_use_matches_exactly_one_pattern() {
        let patterns = patterns();
        let mut checked = 0;
        for (file, text) in crate::features::embedded_features() {
            let feature = gherkin::Feature::parse(text, gherkin::GherkinEnv::default()).expect("the feature parses");
            let scenarios = feature.scenarios.iter().chain(feature.rules.iter().flat_map(|r| r.scenarios.iter()));
            let backgrounds =
                feature.background.iter().chain(feature.rules.iter().filter_map(|r| r.background.as_ref()));
            let mut steps: Vec<(gherkin::StepType, String)> = scenarios.flat_map(expanded).collect();
            steps.extend(backgrounds.flat_map(|b| b.steps.iter().map(|s| (s.ty, s.value.clone()))));
            for (kind, step) in steps {
                let keyword = match kind {
                    gherkin::StepType::Given => "Given",
                    gherkin::StepType::When => "When",
                    gherkin::StepType::Then => "Then",
                };
                let (_, candidates) = patterns.iter().find(|(k, _)| *k == keyword).expect("a keyword");
                let matching: Vec<&str> = candidates.iter().filter(|p| p.is_match(&step)).map(Regex::as_str).collect();
                assert_eq!(matching.len(), 1, "{file}: `{keyword} {step}` matches {matching:?}");
                checked += 1;
            }
        }
        assert!(checked > 100, "only {checked} steps found in the features");
    }
}
