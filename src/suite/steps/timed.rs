//! Timing checks as plain functions: each judges a case's run from its step's arguments and
//! names the margin it must tell apart. One generic step calls them; the When step calls them
//! too, to give a case its time scale before it runs and to confirm a failed or unjudged timing
//! check with a slower run before any verdict is given.

use std::sync::OnceLock;

use cucumber::step::Context;
use futures_util::future::LocalBoxFuture;
use regex::Regex;

use super::{advisory_form, done, regex, then_backoff, then_events, then_wire};
use crate::suite::timing::{Doubt, Margin};
use crate::suite::verdict::Level;
use crate::suite::world::{CaseRun, SuiteWorld};

/// A step's text (`[0]`) and each capture group's.
pub(crate) type Args = [String];

/// What a timing check found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Timed {
    /// What was observed, in policy seconds.
    pub observed: String,
    /// Whether the bound held, with the benefit of the doubt within the noise.
    pub held: bool,
    /// The noise of what was measured, in policy seconds.
    pub noise: f64,
}

/// A timing check: the step it answers, the contract level it needs, its margin, what it
/// expects, and how it judges a run.
#[derive(Debug)]
pub(crate) struct TimedCheck {
    pub pattern: &'static str,
    pub level: Level,
    pub margin: fn(&Args) -> Margin,
    pub expected: fn(&Args) -> String,
    pub judge: fn(&CaseRun, &Args) -> Timed,
    /// The check only bounds spans from below. A busy machine can only lengthen what squall
    /// sees (a stalled client, a late arrival), so it cannot fail such a check; any other
    /// check's failure may be a moment of the machine's and is confirmed by a slower run.
    pub lower_bound_only: bool,
}

/// A timing check found among a case's steps, with its arguments.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    pub step: String,
    pub check: &'static TimedCheck,
    pub args: Vec<String>,
}

impl Planned {
    pub(crate) fn margin(&self) -> Margin {
        (self.check.margin)(&self.args)
    }

    /// Whether the check needs another run to be sure: it cannot judge this one, it misses
    /// evidence (jitter) that a slower run may show, it finds an upper bound missed (a busy
    /// machine may have held the client back for a moment), or a lower bound missed that it
    /// would find met were the client's reaction shorter than calibrated (the machine may have
    /// been busier while it was calibrated than during the case).
    pub(crate) fn needs_confirmation(&self, run: &mut CaseRun) -> bool {
        let timed = (self.check.judge)(run, &self.args);
        let margin = self.margin();
        if !margin.judges(timed.held, timed.noise) {
            return true;
        }
        match (margin.doubt, timed.held) {
            (_, true) => return false,
            (Doubt::AgainstClient, false) => return true,
            (Doubt::ToClient, false) if !self.check.lower_bound_only => return true,
            (Doubt::ToClient, false) => {}
        }
        let calibrated = run.clock.reaction.clone();
        run.clock.reaction = calibrated.down_to_zero();
        let met_at_zero = (self.check.judge)(run, &self.args).held;
        run.clock.reaction = calibrated;
        met_at_zero
    }
}

/// Every timing check, with its compiled pattern (matching the SHOULD form too).
fn checks() -> &'static [(Regex, &'static TimedCheck)] {
    static CHECKS: OnceLock<Vec<(Regex, &'static TimedCheck)>> = OnceLock::new();
    CHECKS.get_or_init(|| {
        [then_wire::TIMED, then_backoff::TIMED, then_events::TIMED]
            .into_iter()
            .flatten()
            .map(|check| (regex(&advisory_form(check.pattern)), check))
            .collect()
    })
}

/// The patterns to register, each answered by [`step`].
pub(super) fn patterns() -> impl Iterator<Item = &'static Regex> {
    checks().iter().map(|(pattern, _)| pattern)
}

/// The timing check a step's text calls for, with its arguments.
fn find(step: &str) -> Option<Planned> {
    checks().iter().find_map(|(pattern, check)| {
        let captures = pattern.captures(step)?;
        let args = captures.iter().map(|c| c.map_or(String::new(), |m| m.as_str().to_owned())).collect();
        Some(Planned { step: step.to_owned(), check, args })
    })
}

/// The timing checks among a case's steps.
pub(crate) fn plan<'a>(steps: impl IntoIterator<Item = &'a str>) -> Vec<Planned> {
    steps.into_iter().filter_map(find).collect()
}

/// The step every timing check answers to.
pub(super) fn step(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let planned = find(&ctx.step.value).unwrap_or_else(|| panic!("`{}` is not a timing check", ctx.step.value));
    let (check, args) = (planned.check, planned.args);
    world.check_timed(check.level, &ctx.step.value, (check.expected)(&args), (check.margin)(&args), |run| {
        let timed = (check.judge)(run, &args);
        (timed.observed, timed.held, timed.noise)
    });
    done()
}

/// Argument `i` as a number; a feature whose step does not parse is a harness error.
pub(super) fn number<T: std::str::FromStr>(args: &Args, i: usize) -> T {
    let text = args.get(i).map_or("", String::as_str);
    text.parse().unwrap_or_else(|_| panic!("`{text}` in step `{}` is not a number", args[0]))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_cases_timing_checks_are_found_with_their_margins_in_any_form() {
        let planned = super::plan([
            "attempt 2 starts at least 4.5 seconds after attempt 1 ends",
            "ideally attempt 2 starts at least 3 seconds after attempt 1 ends",
            "the server sees exactly 2 attempts",
            "attempt 1 lasts between 59 and 65 seconds",
        ]);
        let seconds: Vec<f64> = planned.iter().map(|p| p.margin().seconds).collect();
        assert_eq!(seconds, [2.5, 1.0, 29.5]);
        assert_eq!(planned[1].args[2], "3");
    }
}
