//! Timing checks: what one measures carries noise, so each names the margin it must tell apart
//! and reads its measurement as measured and with a busy machine's moment allowed at each wait
//! (for the outcome a longer span could fake), for its verdict; and with a [`STALL`] allowed, to
//! tell a miss no machine explains (failed at once) from one a slower run must confirm. What the
//! readings do not decide is undecided: run again slower, and `inconclusive` where no slower run
//! is allowed. What the client's own randomness leaves open asks for more runs that draw anew
//! (no slower run would settle it), and is `inconclusive`, with why, when the budget is spent.

use super::{Args, Observation};
use crate::timing::{CaseClock, Doubt, Margin, Measured, Reading, STALL};

/// What a timing check measured.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Timed {
    /// What was observed, in policy seconds.
    pub observed: String,
    /// What it says, for [`Margin::read`].
    pub measured: Measured,
    /// Why the runs so far cannot decide the check, whatever their time scale (the client's
    /// jitter is wider than they read through): more runs, drawing anew, may.
    pub undecidable: Option<String>,
    /// Why this run's verdict stands only until runs drawing anew confirm it (one run read as
    /// from a narrow jitter, where a wider one would read otherwise).
    pub confirm: Option<String>,
    /// Why no run of this client, slower or drawn anew, can decide the check (a herd's spread
    /// where no lockstep herd of it can be run): `inconclusive` at once.
    pub beyond_runs: Option<String>,
    /// Why this run's pass stands only once a run at another time scale confirms it (a lower
    /// bound the client's own work on an uncalibrated path could fake).
    pub pair: Option<String>,
}

impl Timed {
    /// A bound on one span (or on each of several spans): missed with the benefit of the doubt
    /// is missed whatever the noise.
    pub(crate) fn bound(observed: impl Into<String>, held: bool, noise: f64) -> Timed {
        Timed {
            observed: observed.into(),
            measured: Measured { held, certain_miss: !held, noise },
            undecidable: None,
            confirm: None,
            beyond_runs: None,
            pair: None,
        }
    }

    /// A bound over several spans compared with each other: `held` with the noise given once,
    /// `certain_miss` when no value within each span's own noise meets it.
    pub(crate) fn compared(observed: impl Into<String>, held: bool, certain_miss: bool, noise: f64) -> Timed {
        Timed {
            observed: observed.into(),
            measured: Measured { held, certain_miss, noise },
            undecidable: None,
            confirm: None,
            beyond_runs: None,
            pair: None,
        }
    }

    /// Evidence (a jitter, a spread): seen beyond the noise, or not; its absence is never certain
    /// from one run.
    pub(crate) fn evidence(observed: impl Into<String>, seen: bool, noise: f64) -> Timed {
        Timed {
            observed: observed.into(),
            measured: Measured { held: seen, certain_miss: false, noise },
            undecidable: None,
            confirm: None,
            beyond_runs: None,
            pair: None,
        }
    }

    /// Decided whatever the client's reaction: by counting what the case did (too few attempts
    /// or retries), or a span that meets an upper bound even when all of it is counted as the
    /// client's waiting.
    pub(crate) fn decided(observed: impl Into<String>, held: bool) -> Timed {
        Timed {
            observed: observed.into(),
            measured: Measured { held, certain_miss: !held, noise: 0.0 },
            undecidable: None,
            confirm: None,
            beyond_runs: None,
            pair: None,
        }
    }

    /// Not decided by the runs so far, whatever the noise: `why` says what more draws of the
    /// client's random waits would settle.
    pub(crate) fn open(observed: impl Into<String>, why: String) -> Timed {
        let measured = Measured { held: false, certain_miss: false, noise: f64::INFINITY };
        Timed {
            observed: observed.into(),
            measured,
            undecidable: Some(why),
            confirm: None,
            beyond_runs: None,
            pair: None,
        }
    }

    /// Not decided, and no other run of this client would decide it: `why` says why.
    pub(crate) fn beyond_runs(observed: impl Into<String>, why: String) -> Timed {
        let measured = Measured { held: false, certain_miss: false, noise: f64::INFINITY };
        Timed {
            observed: observed.into(),
            measured,
            undecidable: None,
            confirm: None,
            beyond_runs: Some(why),
            pair: None,
        }
    }

    /// The same measurement, undecidable by one run of this client when `why` says why (its
    /// jitter is wider than the check can read through: runs that draw anew may decide it) —
    /// unless a busy machine's moment could explain what `why` saw ([`Timing::find`] reads it
    /// again with the moment allowed).
    pub(crate) fn undecidable_if(self, why: Option<String>) -> Timed {
        Timed { undecidable: why, ..self }
    }

    /// The same measurement, its verdict standing until runs drawing anew confirm it, when `why`
    /// says why.
    pub(crate) fn confirmed_by_draws_if(self, why: Option<String>) -> Timed {
        Timed { confirm: why, ..self }
    }

    /// The same measurement, a pass standing only once a run at another time scale confirms it,
    /// when `why` says why.
    pub(crate) fn paired_if(self, why: Option<String>) -> Timed {
        Timed { pair: why, ..self }
    }
}

/// How a timing check judges: its margin, and its measurement.
#[derive(Debug)]
pub(crate) struct Timing {
    pub margin: fn(&Args) -> Margin,
    pub measure: fn(&Observation, &Args) -> Timed,
}

/// A timing check's finding on one observation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TimedFinding {
    pub observed: String,
    pub reading: Reading,
    /// A miss no machine explains: no slower run can change it.
    pub certain: bool,
    /// The noise the reading was made with (a busy machine's moment in it), policy seconds.
    pub noise: f64,
    /// Why the runs so far cannot decide it ([`Timed::undecidable`]).
    pub undecidable: Option<String>,
    /// Why its verdict stands only until draws confirm it ([`Timed::confirm`]).
    pub confirm: Option<String>,
    /// Why no run can decide it ([`Timed::beyond_runs`]).
    pub beyond_runs: Option<String>,
    /// Why a pass needs a run at another time scale to stand ([`Timed::pair`]).
    pub pair: Option<String>,
}

impl TimedFinding {
    /// Undecided by this run, for `undecidable` (more draws may decide it) or `beyond_runs` (no
    /// run can).
    fn undecided(observed: String, noise: f64, undecidable: Option<String>, beyond_runs: Option<String>) -> Self {
        let reading = Reading::Undecided;
        TimedFinding { observed, reading, certain: false, noise, undecidable, confirm: None, beyond_runs, pair: None }
    }
}

impl Timing {
    /// Read the check on `observation`. What a busy machine can fake — it only lengthens spans —
    /// is read with the case clock's moment allowed at each wait and attempt: a pass then holds
    /// when it would with the moment (or, for an upper bound, without it), a miss when it would
    /// with the moment (or, for a lower bound or evidence, without it). A miss is certain when it
    /// survives a [`STALL`] and a client that reacts in no time.
    pub(crate) fn find(&self, observation: &Observation, args: &Args) -> TimedFinding {
        let margin = (self.margin)(args);
        let plain = (self.measure)(observation, args);
        if let Some(why) = plain.beyond_runs {
            return TimedFinding::undecided(plain.observed, plain.measured.noise, None, Some(why));
        }
        let clock = &observation.clock;
        let held = match clock.machine.held_back_ms > 0.0 {
            true => (self.measure)(&observation.with_clock(clock.held_back(clock.machine.held_back_ms)), args),
            false => plain.clone(),
        };
        // The client's own randomness, where a busy machine's moment at each wait cannot explain
        // it — or the runs drawn so far, which no reading of one run's moments decides.
        let drawn_open = !plain.measured.noise.is_finite();
        if let (Some(why), true) = (&plain.undecidable, held.undecidable.is_some() || drawn_open) {
            return TimedFinding::undecided(plain.observed.clone(), held.measured.noise, Some(why.clone()), None);
        }
        let (as_measured, with_moment) = (margin.read(&plain.measured), margin.read(&held.measured));
        // Runs drawn anew are read within the noise each measured: a busy machine's moment at
        // every wait (2.5 s of policy time at 1/100) would widen each retry's bound beyond what
        // the runs drawn narrow. The one run that asked for the draws was read with it.
        let drawn = !observation.draws.is_empty();
        let trusted = |reading: Reading, without_moment: bool| {
            with_moment == reading || ((without_moment || drawn) && as_measured == reading)
        };
        let reading = if trusted(Reading::Holds, !margin.lengthened.pass_needs_moment()) {
            Reading::Holds
        } else if trusted(Reading::Misses, !margin.lengthened.miss_needs_moment()) {
            Reading::Misses
        } else {
            Reading::Undecided
        };
        let certain = reading == Reading::Misses
            && plain.measured.certain_miss
            && (margin.doubt == Doubt::AgainstClient || self.misses_in_a_stall(observation, args));
        let moment = clock.machine.held_back_ms;
        let observed = match (reading, as_measured) {
            (now, before) if now == before => plain.observed,
            (Reading::Holds, _) => {
                format!("{} — met if the machine held the client back {moment:.0} ms real at a wait", plain.observed)
            }
            (_, Reading::Misses) => format!(
                "{} — the machine holding the client back {moment:.0} ms real at a wait could explain the miss",
                plain.observed
            ),
            _ => format!(
                "{} — the machine holding the client back {moment:.0} ms real at a wait could make it look met",
                plain.observed
            ),
        };
        let noise = held.measured.noise;
        let pair = (reading == Reading::Holds).then(|| plain.pair.or(held.pair)).flatten();
        TimedFinding { observed, reading, certain, noise, undecidable: None, confirm: None, beyond_runs: None, pair }
    }

    /// Whether the check still misses for certain with a [`STALL`] at each wait and attempt and
    /// a client that reacts in no time.
    fn misses_in_a_stall(&self, observation: &Observation, args: &Args) -> bool {
        let clock = &observation.clock;
        let stalled =
            CaseClock { reaction: clock.reaction.down_to_zero(), ..clock.clone() }.held_back(STALL.held_back_ms);
        (self.measure)(&observation.with_clock(stalled), args).measured.certain_miss
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
