//! Checks as plain functions: each Then step of the features names one or two checks, and each
//! check is a function over an [`Observation`] — what one case left behind (the server journal,
//! `result.json`, `events.jsonl`, the files it points to) — that says what it observed and
//! whether the seed's bound held. Nothing here knows cucumber: the suite's steps, and anything
//! else that has a case's evidence, judge it with the same code ([`StepChecks`]).
//!
//! - [`observation`] — what a case left behind, and how its real times read as policy time
//! - [`wire`], [`backoff`] — the journal: attempts, sessions, waits, timeouts; [`paired`] — a
//!   lower bound read across two runs at different time scales
//! - [`events`] — `result.json` and `events.jsonl` with their decision records
//! - [`sessions`], [`tasks`] — the main session, the deep-research sub-session, Task results
//! - [`herd`] — many instances at once against one run: storms, recovery, lockstep
//! - [`each_client`] — any check, judged on every instance of a herd alone
//! - [`timed`] — how a timing check reads what it measured: a verdict, a miss a slower run must
//!   confirm, or a measurement too noisy to decide

mod backoff;
pub(crate) mod decorrelated;
mod each_client;
pub(crate) mod envelope;
mod events;
mod herd;
mod observation;
mod paired;
mod schedules;
mod sessions;
mod tasks;
pub(crate) mod timed;
mod wire;

use std::sync::OnceLock;

use regex::Regex;

pub(crate) use observation::{Observation, PairedRun};
pub(crate) use timed::{Planned, Timed, Timing};

use super::results::CheckRecord;
use super::timing::margin::describe_needed;
use super::timing::{scale_name, Margin, Reading};
use super::verdict::{Level, Strength, Verdict};

/// A Then step starting with this word is a SHOULD in a case whose other checks are MUSTs.
pub(crate) const SHOULD_PREFIX: &str = "ideally ";

/// A step's text (`[0]`) and each capture group's.
pub(crate) type Args = [String];

/// What a check found: what it observed, and whether the bound held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub observed: String,
    pub held: bool,
}

impl Found {
    pub(crate) fn new(observed: impl Into<String>, held: bool) -> Found {
        Found { observed: observed.into(), held }
    }
}

/// How a check judges an observation.
#[derive(Debug)]
pub(crate) enum Judge {
    /// On what was recorded: the bound holds or not.
    Plain(fn(&Observation, &Args) -> Found),
    /// On times, which carry noise: see [`Timing`].
    Timed(Timing),
}

/// One check: the step it answers, the contract level it needs, what it expects, and how it
/// judges. A step that makes two checks (an outcome at `wire`, its details at `events`) has two
/// entries with one pattern, told apart by `part`.
#[derive(Debug)]
pub(crate) struct Check {
    pub pattern: &'static str,
    /// Added to the step's text to name this check when its step makes more than one.
    pub part: &'static str,
    pub level: Level,
    pub expected: fn(&Args) -> String,
    pub judge: Judge,
}

impl Check {
    /// A check judged on what was recorded.
    pub(crate) const fn plain(
        pattern: &'static str,
        level: Level,
        expected: fn(&Args) -> String,
        judge: fn(&Observation, &Args) -> Found,
    ) -> Check {
        Check { pattern, part: "", level, expected, judge: Judge::Plain(judge) }
    }

    /// A check judged on times.
    pub(crate) const fn timed(
        pattern: &'static str,
        level: Level,
        expected: fn(&Args) -> String,
        timing: Timing,
    ) -> Check {
        Check { pattern, part: "", level, expected, judge: Judge::Timed(timing) }
    }

    /// The check as one of two its step makes, named by `part`.
    pub(crate) const fn part(self, part: &'static str) -> Check {
        Check { part, ..self }
    }
}

/// Every check, by the file that holds it.
fn tables() -> [&'static [Check]; 6] {
    [wire::CHECKS, backoff::CHECKS, events::CHECKS, sessions::CHECKS, tasks::CHECKS, herd::CHECKS]
}

/// Every check with its compiled pattern (matching the SHOULD form too).
fn compiled() -> &'static [(Regex, &'static Check)] {
    static COMPILED: OnceLock<Vec<(Regex, &'static Check)>> = OnceLock::new();
    COMPILED.get_or_init(|| {
        tables().into_iter().flatten().map(|check| (pattern_regex(&advisory_form(check.pattern)), check)).collect()
    })
}

fn pattern_regex(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("check pattern {pattern}: {e}"))
}

/// A pattern that also matches its SHOULD form, "ideally <step>" (see [`SHOULD_PREFIX`]), and
/// its form for each client of a herd, "every client of the herd: <step>" (see
/// [`each_client::PREFIX`]); the groups do not capture, so arguments keep their numbers.
pub(crate) fn advisory_form(pattern: &str) -> String {
    let body = pattern.strip_prefix('^').unwrap_or(pattern);
    format!("^(?:{})?(?:{})?{body}", regex::escape(SHOULD_PREFIX), regex::escape(each_client::PREFIX))
}

/// The patterns of every Then step, each once (what the suite registers with cucumber).
pub(crate) fn patterns() -> Vec<&'static Regex> {
    let mut seen = std::collections::BTreeSet::new();
    compiled().iter().filter(|(regex, _)| seen.insert(regex.as_str())).map(|(regex, _)| regex).collect()
}

/// The checks one Then step makes, with the step's arguments.
#[derive(Debug, Clone)]
pub(crate) struct StepChecks {
    step: String,
    args: Vec<String>,
    checks: Vec<&'static Check>,
    /// The step is judged on every client of a herd alone ([`each_client`]).
    each_client: bool,
}

impl StepChecks {
    /// The checks `step` (a Then step's text) calls for; `None` when no check answers it.
    pub(crate) fn for_step(step: &str) -> Option<StepChecks> {
        let mut args = None;
        let checks: Vec<&'static Check> = compiled()
            .iter()
            .filter_map(|(pattern, check)| {
                let captures = pattern.captures(step)?;
                args.get_or_insert_with(|| {
                    captures.iter().map(|c| c.map_or(String::new(), |m| m.as_str().to_owned())).collect()
                });
                Some(*check)
            })
            .collect();
        let each_client = step.strip_prefix(SHOULD_PREFIX).unwrap_or(step).starts_with(each_client::PREFIX);
        Some(StepChecks { step: step.to_owned(), args: args?, checks, each_client })
    }

    /// The step's timing checks, to plan a case's time scale.
    pub(crate) fn timed(&self) -> impl Iterator<Item = Planned> + '_ {
        self.checks.iter().filter_map(|check| match &check.judge {
            Judge::Timed(timing) => Some(Planned { step: self.step.clone(), timing, args: self.args.clone() }),
            Judge::Plain(_) => None,
        })
    }

    /// Every check `n/a`: the case does not apply to the implementation.
    pub(crate) fn not_applicable(&self, advisory: bool) -> Vec<CheckRecord> {
        self.checks
            .iter()
            .map(|check| self.record(check, advisory, Verdict::NotApplicable, String::new(), ""))
            .collect()
    }

    /// Judge `observation` as an implementation following the IUT contract up to `level`:
    /// checks above it are `n/a`. Every check is a SHOULD when `advisory` (a `@should` case) or
    /// when the step starts with "ideally", else a MUST.
    pub(crate) fn judge(&self, observation: &Observation, level: Level, advisory: bool) -> Vec<Finding> {
        self.checks
            .iter()
            .map(|check| {
                if level < check.level {
                    let record = self.record(check, advisory, Verdict::NotApplicable, String::new(), "");
                    return Finding { record, unsure: None };
                }
                let strength = self.strength(advisory);
                let judged = if self.each_client {
                    let clients = observation.each_client();
                    each_client::combine(clients.iter().map(|client| self.judge_one(check, client, strength)).collect())
                } else {
                    self.judge_one(check, observation, strength)
                };
                let record = self.record(check, advisory, judged.verdict, judged.observed, &judged.note);
                Finding { record, unsure: judged.unsure }
            })
            .collect()
    }

    /// One check on one observation.
    fn judge_one(&self, check: &Check, observation: &Observation, strength: Strength) -> Judged {
        match &check.judge {
            Judge::Plain(judge) => {
                let found = judge(observation, &self.args);
                Judged {
                    verdict: Verdict::of_check(strength, true, found.held),
                    observed: found.observed,
                    note: String::new(),
                    unsure: None,
                }
            }
            Judge::Timed(timing) => judge_timed(timing, observation, &self.args, strength),
        }
    }

    fn strength(&self, advisory: bool) -> Strength {
        if advisory || self.step.starts_with(SHOULD_PREFIX) {
            Strength::Should
        } else {
            Strength::Must
        }
    }

    fn record(&self, check: &Check, advisory: bool, verdict: Verdict, observed: String, note: &str) -> CheckRecord {
        CheckRecord {
            name: format!("{}{}", self.step, check.part),
            level: check.level,
            strength: self.strength(advisory),
            verdict,
            expected: (check.expected)(&self.args) + note,
            observed,
            draws: None,
        }
    }
}

/// A check's record, and — when another run could change its verdict — why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Finding {
    pub record: CheckRecord,
    pub unsure: Option<Unsure>,
}

/// What another run of the case could settle, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unsure {
    /// A timing check's miss that a busy machine could explain, or its measurement too noisy
    /// to decide: a slower run would settle it.
    Slower(String),
    /// The client's own randomness (its jitter wider than one run can read through): more
    /// runs, each drawing anew, would settle it.
    Draws(String),
    /// A lower bound's pass that the client's own work on an uncalibrated path could fake: a run
    /// at another time scale, read with this one, would settle it.
    Paired(String),
}

#[cfg(test)]
impl Unsure {
    /// Why.
    pub(crate) fn why(&self) -> &str {
        match self {
            Unsure::Slower(why) | Unsure::Draws(why) | Unsure::Paired(why) => why,
        }
    }
}

/// One check's verdict, what it observed, what the expectation adds (a timing check's margin),
/// and what leaves it unsure.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Judged {
    pub verdict: Verdict,
    pub observed: String,
    pub note: String,
    pub unsure: Option<Unsure>,
}

/// Judge a timing check: a miss no machine explains is a verdict; one a busy machine could
/// explain is the verdict of this run, unsure; a measurement too noisy for the margin is
/// `inconclusive`, with the reason — never a guess. The expectation names the margin in real time.
fn judge_timed(timing: &Timing, observation: &Observation, args: &Args, strength: Strength) -> Judged {
    let finding = timing.find(observation, args);
    let margin: Margin = (timing.margin)(args);
    let scale = observation.time_scale();
    let note = format!(
        " (it tells apart clients {} s beyond: {:.1} ms real at {})",
        margin.seconds,
        scale.real_ms(margin.seconds * 1000.0),
        scale_name(scale)
    );
    let (verdict, observed, unsure) = match finding.reading {
        Reading::Holds => (Verdict::Pass, finding.observed, None),
        Reading::Misses if finding.certain => (Verdict::of_check(strength, true, false), finding.observed, None),
        Reading::Misses => {
            let why = "a busy machine could explain the miss".to_owned();
            (Verdict::of_check(strength, true, false), finding.observed, Some(Unsure::Slower(why)))
        }
        // Nothing this client's runs show settles it: no run is asked for.
        Reading::Undecided if finding.beyond_runs.is_some() => {
            let why = finding.beyond_runs.unwrap_or_default();
            (Verdict::Inconclusive, format!("cannot decide: {why}; observed {}", finding.observed), None)
        }
        // The client's own randomness: a slower run would not settle it, more draws may.
        Reading::Undecided if finding.undecidable.is_some() => {
            let why = finding.undecidable.unwrap_or_default();
            let observed = format!("cannot decide: {why}; observed {}", finding.observed);
            (Verdict::Inconclusive, observed, Some(Unsure::Draws(why)))
        }
        Reading::Undecided => {
            let why = undecided(observation, &margin, finding.noise);
            let observed = format!("cannot decide: {why}; observed {}", finding.observed);
            (Verdict::Inconclusive, observed, Some(Unsure::Slower(why)))
        }
    };
    // One run's verdict that runs drawing anew, or a run at another scale, must confirm, when
    // no slower run is asked first.
    let unsure = match (unsure, finding.confirm, finding.pair) {
        (None, Some(why), _) => Some(Unsure::Draws(why)),
        (None, None, Some(why)) => Some(Unsure::Paired(why)),
        (unsure, _, _) => unsure,
    };
    Judged { verdict, observed, note, unsure }
}

/// Why a timing check could not decide: no measured reaction, nothing measured, or noise (a
/// busy machine's moment in it) too large for its margin at this scale, with the scale it needs.
fn undecided(observation: &Observation, margin: &Margin, noise: f64) -> String {
    let scale = observation.time_scale();
    let clock = &observation.clock;
    let reaction = &clock.reaction;
    let moment = match clock.machine.held_back_ms > 0.0 {
        true => format!(", and a busy machine may hold it back {:.0} ms more", clock.machine.held_back_ms),
        false => String::new(),
    };
    match &reaction.missing {
        Some(missing) => missing.clone(),
        None if !noise.is_finite() => "the case gave it nothing to measure".to_owned(),
        None => format!(
            "the noise, ±{noise:.2} s (the client's reaction varies over {:.1}–{:.1} ms real at {}{moment}), is not under half the {} s margin; it needs {} (--max-time-scale)",
            reaction.low_ms,
            reaction.high_ms,
            scale_name(scale),
            margin.seconds,
            describe_needed(scale.get() * noise / margin.max_noise())
        ),
    }
}

/// Argument `i` as a number; a feature whose step does not parse is a harness error.
pub(crate) fn number<T: std::str::FromStr>(args: &Args, i: usize) -> T {
    let text = arg(args, i);
    text.parse().unwrap_or_else(|_| panic!("`{text}` in step `{}` is not a number", args[0]))
}

/// Argument `i`'s text (empty when its group did not match).
pub(crate) fn arg(args: &Args, i: usize) -> &str {
    args.get(i).map_or("", String::as_str)
}

/// "has the fields error_type, stop_reason": the field names.
pub(crate) fn field_list(text: &str) -> Vec<String> {
    text.split(',').map(|f| f.trim().trim_matches('"').to_owned()).filter(|f| !f.is_empty()).collect()
}

/// Whether every field is a non-empty string in `value`.
pub(crate) fn missing_fields(value: &serde_json::Value, fields: &[String]) -> Found {
    let missing: Vec<&String> =
        fields.iter().filter(|f| value[f.as_str()].as_str().is_none_or(str::is_empty)).collect();
    match missing.as_slice() {
        [] => Found::new("all present", true),
        missing => Found::new(format!("missing or empty: {missing:?}"), false),
    }
}

/// Whether `result.json`'s `field` (the Task result in `task` cases) equals the step's
/// argument 1, read as a boolean when it is `true` or `false`, else as a string.
pub(crate) fn result_field_is(observation: &Observation, field: &str, args: &Args) -> Found {
    let expected = expected_value(args);
    let seen = &observation.result()[field];
    Found::new(format!("{field}: {seen}"), *seen == expected)
}

/// The step's argument 1 as the JSON value it names: `true`/`false`, else a string.
pub(crate) fn expected_value(args: &Args) -> serde_json::Value {
    match arg(args, 1) {
        "true" => serde_json::Value::Bool(true),
        "false" => serde_json::Value::Bool(false),
        text => serde_json::Value::from(text),
    }
}

#[cfg(test)]
mod tests;
