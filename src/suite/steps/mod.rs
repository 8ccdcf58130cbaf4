//! Step definitions, registered with regexes (no macros, so they live in the library and
//! `squall run` uses the very same steps as `cargo test`). Steps read like the PRD.

mod given;
mod then;
mod when;

use cucumber::step::{Collection, Context};
use futures_util::future::LocalBoxFuture;
use regex::Regex;

use super::world::SuiteWorld;

pub(super) type StepFn = for<'a> fn(&'a mut SuiteWorld, Context) -> LocalBoxFuture<'a, ()>;

/// Every step squall knows.
pub(super) fn collection() -> Collection<SuiteWorld> {
    let mut steps = Collection::new();
    for (pattern, step) in given::STEPS {
        steps = steps.given(None, regex(pattern), *step);
    }
    for (pattern, step) in when::STEPS {
        steps = steps.when(None, regex(pattern), *step);
    }
    for pattern in super::checks::patterns() {
        steps = steps.then(None, pattern.clone(), then::step);
    }
    steps
}

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("step pattern {pattern}: {e}"))
}

/// The text of capture group `i` (1-based; empty when the group did not match).
fn arg(ctx: &Context, i: usize) -> &str {
    ctx.matches.get(i).map_or("", |(_, text)| text.as_str())
}

/// Capture group `i` parsed; a feature that does not parse is a harness error.
fn num<T: std::str::FromStr>(ctx: &Context, i: usize) -> T {
    let text = arg(ctx, i);
    text.parse().unwrap_or_else(|_| panic!("`{text}` in step `{}` is not a number", ctx.step.value))
}

/// A finished step (most steps do their work synchronously).
fn done<'a>() -> LocalBoxFuture<'a, ()> {
    Box::pin(std::future::ready(()))
}

#[cfg(test)]
mod tests {
    use cucumber::gherkin;
    use regex::Regex;

    /// Every pattern, by keyword, compiled as [`super::collection`] registers it.
    fn patterns() -> [(&'static str, Vec<Regex>); 3] {
        let compile = |steps: &[(&str, super::StepFn)], form: fn(&str) -> String| -> Vec<Regex> {
            steps.iter().map(|(pattern, _)| super::regex(&form(pattern))).collect()
        };
        let then: Vec<Regex> = crate::suite::checks::patterns().into_iter().cloned().collect();
        [
            ("Given", compile(super::given::STEPS, str::to_owned)),
            ("When", compile(super::when::STEPS, str::to_owned)),
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
        for (file, text) in crate::suite::features::embedded_features() {
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
