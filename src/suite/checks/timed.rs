//! Timing checks: what one measures carries noise, so each names the margin it must tell apart
//! and reads its measurement twice — with a busy machine's [`MOMENT`] allowed at each wait, for
//! its verdict; with a [`STALL`] allowed, to tell a miss no machine explains (failed at once) from
//! one a slower run must confirm. What neither reading decides is undecided: run again slower,
//! and `inconclusive` where no slower run is allowed.

use super::{Args, Observation};
use crate::suite::timing::{Doubt, Margin, Measured, Reaction, Reading};

/// What a timing check measured.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Timed {
    /// What was observed, in policy seconds.
    pub observed: String,
    /// What it says, for [`Margin::read`].
    pub measured: Measured,
}

impl Timed {
    /// A bound on one span (or on each of several spans): missed with the benefit of the doubt
    /// is missed whatever the noise.
    pub(crate) fn bound(observed: impl Into<String>, held: bool, noise: f64) -> Timed {
        Timed { observed: observed.into(), measured: Measured { held, certain_miss: !held, noise } }
    }

    /// A bound over several spans compared with each other: `held` with the noise given once,
    /// `certain_miss` when no value within each span's own noise meets it.
    pub(crate) fn compared(observed: impl Into<String>, held: bool, certain_miss: bool, noise: f64) -> Timed {
        Timed { observed: observed.into(), measured: Measured { held, certain_miss, noise } }
    }

    /// Evidence (a jitter, a spread): seen beyond the noise, or not; its absence is never certain
    /// from one run.
    pub(crate) fn evidence(observed: impl Into<String>, seen: bool, noise: f64) -> Timed {
        Timed { observed: observed.into(), measured: Measured { held: seen, certain_miss: false, noise } }
    }

    /// Decided by counting what the case did, with no clock: too few attempts or retries.
    pub(crate) fn by_count(observed: impl Into<String>, held: bool) -> Timed {
        Timed { observed: observed.into(), measured: Measured { held, certain_miss: !held, noise: 0.0 } }
    }
}

/// How a timing check judges: its margin, and its measurement.
#[derive(Debug)]
pub(crate) struct Timing {
    pub margin: fn(&Args) -> Margin,
    pub measure: fn(&Observation, &Args) -> Timed,
}

/// A busy machine's hold on a client at a wait, beyond its calibrated reaction: it can only make
/// a client look slower (a wait longer), never faster.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Allowance {
    /// Real milliseconds at each wait.
    pub held_back_ms: f64,
}

/// What a verdict allows a machine at each wait between attempts, as far as the check's margin
/// leaves room: a moment (twice the longest seen on the 2-core runner; docs/testing.md).
pub(crate) const MOMENT: Allowance = Allowance { held_back_ms: 25.0 };

/// What a miss must survive to be certain without a slower run: a stall of a second at each wait
/// and attempt, and a client that reacts in no time at all (fifteen times the widest reaction
/// calibrated on the runner; docs/testing.md).
pub(crate) const STALL: Allowance = Allowance { held_back_ms: 1_000.0 };

/// The share of half the margin the [`MOMENT`] may fill with noise.
const MARGIN_USED: f64 = 0.95;

/// A timing check's finding on one observation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TimedFinding {
    pub observed: String,
    pub reading: Reading,
    /// A miss no machine explains: no slower run can change it.
    pub certain: bool,
}

impl Timing {
    /// Read the check on `observation`: its verdict's reading (with a [`MOMENT`] at each wait,
    /// where the margin leaves room), and whether a miss survives a [`STALL`].
    pub(crate) fn find(&self, observation: &Observation, args: &Args) -> TimedFinding {
        let margin = (self.margin)(args);
        let timed = (self.measure)(observation, args);
        let reading = margin.read(&timed.measured);
        if reading != Reading::Misses {
            return TimedFinding { observed: timed.observed, reading, certain: false };
        }
        if let Some(moment) = self.within_a_moment(observation, args, &margin, &timed) {
            return moment;
        }
        let certain = timed.measured.certain_miss
            && (margin.doubt == Doubt::AgainstClient
                || self.misses_with(observation, args, STALL, |r| r.down_to_zero()));
        TimedFinding { observed: timed.observed, reading, certain }
    }

    /// A bound on waits alone, missed: met if a busy machine held the client back up to a
    /// [`MOMENT`] at each wait (never more than keeps the noise under the margin's half, so a
    /// client a margin beyond still misses)? Spans that hold attempts are budgets, not loosened.
    fn within_a_moment(
        &self,
        observation: &Observation,
        args: &Args,
        margin: &Margin,
        timed: &Timed,
    ) -> Option<TimedFinding> {
        if margin.doubt != Doubt::ToClient || margin.attempts > 0 || margin.waits == 0 {
            return None;
        }
        let room_s = margin.max_noise() * MARGIN_USED - timed.measured.noise;
        // Held back h at each wait adds h / 2 to each wait's noise.
        let room_ms = 2.0 * room_s * observation.time_scale() * 1000.0 / margin.waits as f64;
        let held_back_ms = room_ms.min(MOMENT.held_back_ms);
        if held_back_ms <= 0.0 {
            return None;
        }
        let again =
            (self.measure)(&observation.with_reaction(observation.clock.reaction.held_back_by(held_back_ms)), args);
        (margin.read(&again.measured) == Reading::Holds).then(|| TimedFinding {
            observed: format!(
                "{} — met if the machine held the client back up to {held_back_ms:.1} ms real at a wait",
                timed.observed
            ),
            reading: Reading::Holds,
            certain: false,
        })
    }

    /// Whether the check still misses with `allowance` at each wait and attempt, and the
    /// reaction read as `reaching` says.
    fn misses_with(
        &self,
        observation: &Observation,
        args: &Args,
        allowance: Allowance,
        reaching: fn(&Reaction) -> Reaction,
    ) -> bool {
        let reaction = reaching(&observation.clock.reaction).held_back_by(allowance.held_back_ms);
        (self.measure)(&observation.with_reaction(reaction), args).measured.certain_miss
    }
}

/// A timing check found among a case's steps, with its arguments.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    pub step: String,
    pub timing: &'static Timing,
    pub args: Vec<String>,
}

impl Planned {
    pub(crate) fn margin(&self) -> Margin {
        (self.timing.margin)(&self.args)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_cases_timing_checks_are_found_with_their_margins_in_any_form() {
        let planned: Vec<super::Planned> = [
            "attempt 2 starts at least 4.5 seconds after attempt 1 ends",
            "ideally attempt 2 starts at least 3 seconds after attempt 1 ends",
            "the server sees exactly 2 attempts",
            "attempt 1 lasts between 59 and 65 seconds",
        ]
        .into_iter()
        .filter_map(super::super::StepChecks::for_step)
        .flat_map(|checks| checks.timed().collect::<Vec<_>>())
        .collect();
        let seconds: Vec<f64> = planned.iter().map(|p| p.margin().seconds).collect();
        assert_eq!(seconds, [2.5, 1.0, 29.5]);
        assert_eq!(planned[1].args[2], "3");
    }
}
