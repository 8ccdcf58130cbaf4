//! Step definitions, registered with regexes (no macros, so they live in the library and
//! `squall run` uses the very same steps as `cargo test`). Steps read like the PRD.

pub(crate) mod given;
mod then;
pub(crate) mod when;

use cucumber::step::{Collection, Context};
use futures_util::future::LocalBoxFuture;
use regex::{Captures, Regex};

use super::world::SuiteWorld;

/// Every step squall knows, registered with cucumber. Given and When steps are looked up again
/// by their text ([`given::find`], [`when::find`]): what they mean lives in those tables, which
/// the cases as data ([`crate::suite::cases`]) read without cucumber.
pub(super) fn collection() -> Collection<SuiteWorld> {
    let mut steps = Collection::new();
    for (pattern, _) in given::STEPS {
        steps = steps.given(None, regex(pattern), given_step);
    }
    for (pattern, _) in when::STEPS {
        steps = steps.when(None, regex(pattern), when::step);
    }
    for pattern in super::checks::patterns() {
        steps = steps.then(None, pattern.clone(), then::step);
    }
    steps
}

/// A Given step: the case's setup changed as its table says.
fn given_step(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let (apply, args) = given::find(&ctx.step.value).unwrap_or_else(|| {
        panic!("no Given step reads `{}` (its pattern matched one squall registered)", ctx.step.value)
    });
    apply(&mut world.setup, &args);
    Box::pin(std::future::ready(()))
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
        let then: Vec<Regex> = crate::suite::checks::patterns().into_iter().cloned().collect();
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
