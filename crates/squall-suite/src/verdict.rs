//! Verdicts, decided in one place: check → case → requirement → profile → run.
//!
//! - A **check** is a MUST (the seed's text demands it) or a SHOULD (advisory). It passes,
//!   fails, or is `n/a` above the implementation's declared level; a failed SHOULD is `warn`; a
//!   timing check whose measurement cannot support a verdict at any allowed scale is
//!   `inconclusive`.
//! - A **case** is `error` when the implementation left nothing to judge: it crashed, was
//!   killed on timeout or left no usable `result.json`, or the harness could not run a step.
//!   Otherwise a MUST that failed makes it `fail`, whatever other checks could not decide; then
//!   a check that could not decide makes it `inconclusive`; then `warn`, `pass`, `n/a`.
//! - A **requirement** and a **profile** take the worst verdict of what they hold, in the order
//!   fail, error, inconclusive, warn, pass, `n/a`: evidence that decides outranks a case that
//!   could not be judged.
//! - A **run** passes when every judged requirement passes (warnings allowed); a run in which
//!   nothing was judged is empty, which is a usage error unless the caller allows it.
//!
//! Every report and summary reads its counts from [`Tally`], so "passed of judged" means the
//! same thing everywhere. Docs: `docs/reports.md`.

use serde::{Deserialize, Serialize};

use crate::iut::IutRun;

/// How much of the IUT contract an implementation follows; checks above it are `n/a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The server journal and the outcome in `result.json` (`ok`).
    Wire,
    /// Plus the rest of `result.json` and `events.jsonl`.
    Events,
    /// Plus Task results and reports.
    Tasks,
}

impl Level {
    /// `wire`, `events` or `tasks`.
    pub fn parse(text: &str) -> Option<Level> {
        match text {
            "wire" => Some(Level::Wire),
            "events" => Some(Level::Events),
            "tasks" => Some(Level::Tasks),
            _ => None,
        }
    }

    /// The level's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Wire => "wire",
            Level::Events => "events",
            Level::Tasks => "tasks",
        }
    }
}

/// The normative strength of a check (RFC 2119).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strength {
    /// The seed's text demands it: failing it fails the requirement.
    Must,
    /// Advisory: failing it gives a warning, never a failure.
    Should,
}

impl Strength {
    /// `must` or `should`.
    pub fn as_str(self) -> &'static str {
        match self {
            Strength::Must => "must",
            Strength::Should => "should",
        }
    }
}

/// A verdict on a check, a case, a requirement or a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    #[serde(rename = "pass")]
    /// Every check held.
    Pass,
    /// Passed with warnings: only SHOULD checks failed.
    #[serde(rename = "warn")]
    Warn,
    #[serde(rename = "fail")]
    /// A MUST did not hold.
    Fail,
    /// Above the implementation's declared level.
    #[serde(rename = "n/a")]
    NotApplicable,
    /// Could not be judged: the implementation crashed, hung or left no usable result, or the
    /// harness could not run a step.
    #[serde(rename = "error")]
    Error,
    /// The measurement cannot support a verdict: a timing check's noise too large for its
    /// margin at every time scale allowed, or a case that gave it nothing to measure.
    #[serde(rename = "inconclusive")]
    Inconclusive,
    /// A failed MUST accepted on the record by a waiver (reason, owner, expiry): never a pass;
    /// a requirement with one reads "pass with waivers".
    #[serde(rename = "waived")]
    Waived,
}

impl Verdict {
    /// Worst first: what a group takes when it holds several verdicts. A failure decides; a case
    /// that could not be judged, or a check that could not decide, never outranks it.
    const SEVERITY: [Verdict; 7] = [
        Verdict::Fail,
        Verdict::Error,
        Verdict::Inconclusive,
        Verdict::Waived,
        Verdict::Warn,
        Verdict::Pass,
        Verdict::NotApplicable,
    ];

    /// `pass`, `warn`, `fail`, `n/a`, `error`, `inconclusive` or `waived`, as reports write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
            Verdict::NotApplicable => "n/a",
            Verdict::Error => "error",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Waived => "waived",
        }
    }

    /// How a requirement's verdict reads: `waived` reads "pass with waivers".
    pub fn as_requirement(self) -> &'static str {
        match self {
            Verdict::Waived => "pass with waivers",
            other => other.as_str(),
        }
    }

    /// The worst of `verdicts` (fail, error, inconclusive, warn, pass), or `n/a` when there is
    /// nothing else.
    pub fn worst(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
        let all: Vec<Verdict> = verdicts.into_iter().collect();
        Verdict::SEVERITY.into_iter().find(|v| all.contains(v)).unwrap_or(Verdict::NotApplicable)
    }

    /// Whether this verdict lets a requirement (and the run) pass.
    pub fn is_acceptable(self) -> bool {
        matches!(self, Verdict::Pass | Verdict::Warn | Verdict::Waived | Verdict::NotApplicable)
    }

    /// The verdict of one check: `n/a` when not applicable, else pass, or fail for a MUST and
    /// warn for a SHOULD.
    pub fn of_check(strength: Strength, applicable: bool, passed: bool) -> Verdict {
        match (applicable, passed, strength) {
            (false, _, _) => Verdict::NotApplicable,
            (true, true, _) => Verdict::Pass,
            (true, false, Strength::Must) => Verdict::Fail,
            (true, false, Strength::Should) => Verdict::Warn,
        }
    }

    /// The verdict of a case from why it could not be judged (if it could not) and its checks:
    /// `error` for an implementation that left nothing to judge, else the worst of its checks.
    pub fn of_case(unjudgeable: Option<&str>, checks: impl IntoIterator<Item = Verdict>) -> Verdict {
        if unjudgeable.is_some() {
            return Verdict::Error;
        }
        let checks: Vec<Verdict> = checks.into_iter().collect();
        if checks.is_empty() {
            // A case that judged nothing proves nothing: the feature is missing its Then steps.
            return Verdict::Error;
        }
        Verdict::worst(checks)
    }
}

/// Why an implementation's run of a case cannot be judged, if it cannot — at every level:
/// it was killed at the case timeout, it left no usable `result.json` (a JSON object with a
/// boolean `ok`), a signal ended it, or it exited non-zero without reporting a give-up with
/// `ok: false`. A case that expects a give-up still needs a result that says so.
pub(crate) fn unjudgeable_run(run: &IutRun) -> Option<String> {
    let stderr = last_line(&run.stderr).map(|line| format!("; its stderr ends: {line}")).unwrap_or_default();
    if run.timed_out {
        return Some(format!(
            "the implementation did not finish within the case timeout ({:.1} s) and was killed{stderr}",
            run.timeout.as_secs_f64()
        ));
    }
    let Some(result) = &run.result else {
        return Some(format!(
            "the implementation left no usable result.json ({}){stderr}",
            run.output_errors.join("; ")
        ));
    };
    let Some(ok) = result["ok"].as_bool() else {
        return Some(format!("result.json has no boolean `ok` (found {}){stderr}", result["ok"]));
    };
    match run.exit_code {
        Some(0) => None,
        None => Some(format!("the implementation was ended by a signal{stderr}")),
        Some(_) if !ok => None,
        Some(code) => {
            Some(format!("the implementation exited with code {code} although result.json says ok: true{stderr}"))
        }
    }
}

fn last_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rfind(|l| !l.is_empty())
}

/// Counts by verdict: of cases in a requirement, of requirements in a profile or a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Tally {
    /// Passed.
    pub pass: usize,
    /// Passed with warnings.
    pub warn: usize,
    /// Failed a MUST.
    pub fail: usize,
    #[serde(rename = "n/a")]
    /// Above the declared level.
    pub not_applicable: usize,
    /// Could not be judged: the implementation left nothing to judge.
    pub error: usize,
    /// The measurement could not support a verdict.
    pub inconclusive: usize,
    /// Failed MUSTs accepted by a waiver (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub waived: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Tally {
    /// Count `verdicts`.
    pub fn of(verdicts: impl IntoIterator<Item = Verdict>) -> Tally {
        let mut tally = Tally::default();
        for verdict in verdicts {
            *match verdict {
                Verdict::Pass => &mut tally.pass,
                Verdict::Warn => &mut tally.warn,
                Verdict::Fail => &mut tally.fail,
                Verdict::NotApplicable => &mut tally.not_applicable,
                Verdict::Error => &mut tally.error,
                Verdict::Inconclusive => &mut tally.inconclusive,
                Verdict::Waived => &mut tally.waived,
            } += 1;
        }
        tally
    }

    /// Everything counted.
    pub fn total(&self) -> usize {
        self.judged() + self.not_applicable
    }

    /// Everything but `n/a`.
    pub fn judged(&self) -> usize {
        self.pass + self.warn + self.fail + self.error + self.inconclusive + self.waived
    }

    /// Passed, with or without warnings.
    pub fn passed(&self) -> usize {
        self.pass + self.warn
    }

    /// "12/14" — passed of judged — with the warnings and waivers when there are any: "12/14
    /// (2 warn)", "12/14 (1 waived)". A waived case never counts as passed.
    pub fn passed_of_judged(&self) -> String {
        let notes: Vec<String> = [(self.warn, "warn"), (self.waived, "waived")]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
        match notes.is_empty() {
            true => format!("{}/{}", self.passed(), self.judged()),
            false => format!("{}/{} ({})", self.passed(), self.judged(), notes.join(", ")),
        }
    }

    /// "3 pass, 1 warn, 0 fail, 2 n/a, 0 error", and the inconclusive and waived ones when there
    /// are any.
    pub fn describe(&self) -> String {
        let extra = |n: usize, what: &str| if n == 0 { String::new() } else { format!(", {n} {what}") };
        format!(
            "{} pass, {} warn, {} fail, {} n/a, {} error{}{}",
            self.pass,
            self.warn,
            self.fail,
            self.not_applicable,
            self.error,
            extra(self.inconclusive, "inconclusive"),
            extra(self.waived, "waived")
        )
    }
}

/// How a whole run ends, from its cases and its judged requirements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunVerdict {
    /// Every judged requirement passes (some perhaps with warnings).
    Passed,
    /// Some judged requirement fails, could not be judged, or is inconclusive.
    Failed,
    /// No case ran, or every case was `n/a`: nothing was judged.
    Empty,
}

impl RunVerdict {
    /// The run's verdict from its cases and its requirements' verdicts.
    pub fn of(cases: Tally, requirements: impl IntoIterator<Item = Verdict>) -> RunVerdict {
        if cases.judged() == 0 {
            return RunVerdict::Empty;
        }
        if requirements.into_iter().all(Verdict::is_acceptable) {
            RunVerdict::Passed
        } else {
            RunVerdict::Failed
        }
    }

    /// `passed`, `failed` or `empty`, as report.json writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            RunVerdict::Passed => "passed",
            RunVerdict::Failed => "failed",
            RunVerdict::Empty => "empty",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Verdict::*;

    #[test]
    fn a_failed_should_warns_and_a_failed_must_fails() {
        assert_eq!(Verdict::of_check(Strength::Must, true, false), Fail);
        assert_eq!(Verdict::of_check(Strength::Should, true, false), Warn);
        assert_eq!(Verdict::of_check(Strength::Should, true, true), Pass);
        assert_eq!(Verdict::of_check(Strength::Must, false, false), NotApplicable);
    }

    #[test]
    fn groups_take_the_worst_verdict_and_n_a_only_when_nothing_else() {
        assert_eq!(Verdict::worst([Pass, NotApplicable]), Pass);
        assert_eq!(Verdict::worst([Pass, Warn, NotApplicable]), Warn);
        assert_eq!(Verdict::worst([Warn, Fail]), Fail);
        assert_eq!(Verdict::worst([Warn, Inconclusive]), Inconclusive);
        assert_eq!(Verdict::worst([Inconclusive, Error]), Error);
        assert_eq!(Verdict::worst([NotApplicable]), NotApplicable);
        assert_eq!(Verdict::worst([]), NotApplicable);
    }

    /// Evidence that decides outranks what could not be judged: a requirement with a certainly
    /// failed case fails, whatever its other cases could not show.
    #[test]
    fn a_failure_outranks_an_error_and_an_inconclusive_check_in_every_group() {
        assert_eq!(Verdict::worst([Fail, Error]), Fail);
        assert_eq!(Verdict::worst([Error, Fail, Inconclusive, Pass]), Fail);
        assert_eq!(Verdict::of_case(None, [Inconclusive, Fail, Warn]), Fail);
        assert_eq!(Verdict::of_case(None, [Pass, Inconclusive, Warn]), Inconclusive);
    }

    #[test]
    fn a_case_that_cannot_be_judged_is_an_error_whatever_its_checks_say() {
        assert_eq!(Verdict::of_case(Some("killed after 60 s"), [Pass, Pass]), Error);
        assert_eq!(Verdict::of_case(Some("killed after 60 s"), [Fail]), Error);
        assert_eq!(Verdict::of_case(None, []), Error);
        assert_eq!(Verdict::of_case(None, [Pass, Warn]), Warn);
        assert_eq!(Verdict::of_case(None, [NotApplicable, NotApplicable]), NotApplicable);
    }

    #[test]
    fn tallies_count_warnings_as_passed_and_n_a_as_not_judged() {
        let tally = Tally::of([Pass, Warn, Fail, NotApplicable, Error, Pass]);
        assert_eq!((tally.passed(), tally.judged(), tally.total()), (3, 5, 6));
        assert_eq!(tally.passed_of_judged(), "3/5 (1 warn)");
        assert_eq!(Tally::of([Pass]).passed_of_judged(), "1/1");
    }

    #[test]
    fn a_run_passes_with_warnings_fails_on_errors_and_is_empty_when_nothing_was_judged() {
        assert_eq!(RunVerdict::of(Tally::of([Pass, Warn]), [Pass, Warn, NotApplicable]), RunVerdict::Passed);
        assert_eq!(RunVerdict::of(Tally::of([Pass, Error]), [Pass, Error]), RunVerdict::Failed);
        assert_eq!(RunVerdict::of(Tally::of([Pass, Inconclusive]), [Pass, Inconclusive]), RunVerdict::Failed);
        assert_eq!(RunVerdict::of(Tally::of([NotApplicable]), [NotApplicable]), RunVerdict::Empty);
        assert_eq!(RunVerdict::of(Tally::default(), []), RunVerdict::Empty);
    }
}
