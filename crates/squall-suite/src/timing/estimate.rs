//! Real time observed on the wire, turned into policy time for one case: the case's time scale
//! undone and the client's reaction taken out. Every figure comes with its noise, so a check can
//! give the benefit of the doubt within it — and refuse to judge when it is too large.

use serde::Serialize;

use super::allowance::{Allowance, MOMENT};
use super::reaction::{Reaction, TIMER_NOISE_MS};
use squall::clock::TimeScale;

/// A policy-time figure and how far the truth may lie from it, in policy seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// The best estimate.
    pub value: f64,
    /// The truth lies within `value ± noise`.
    pub noise: f64,
}

impl Estimate {
    /// Whether the truth may be at least `bound`: a lower bound passes when some value within
    /// the noise meets it.
    /// Without a measurement (infinite noise) anything may be true.
    pub fn may_be_at_least(&self, bound: f64) -> bool {
        !self.noise.is_finite() || self.value + self.noise >= bound
    }

    /// Whether the truth may be at most `bound` (anything may be, without a measurement).
    pub fn may_be_at_most(&self, bound: f64) -> bool {
        !self.noise.is_finite() || self.value - self.noise <= bound
    }

    /// "4.02 s ± 0.06".
    pub fn describe(&self) -> String {
        format!("{:.2} s ± {:.2}", self.value, self.noise)
    }
}

/// What a measured span holds besides policy time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpanShape {
    /// Waits between attempts: each holds one reaction.
    pub waits: usize,
    /// Attempts: each may hold up to one reaction (between the client's timer and its hang-up).
    pub attempts: usize,
}

impl SpanShape {
    /// The least and the most real time of the client's own in the span.
    fn reaction_range(&self, reaction: &Reaction) -> (f64, f64) {
        let (waits, attempts) = (self.waits as f64, self.attempts as f64);
        (waits * reaction.low_ms, (waits + attempts) * reaction.high_ms)
    }

    /// The noise of the span's policy time, in real ms.
    pub fn noise_real_ms(&self, reaction: &Reaction) -> f64 {
        let (least, most) = self.reaction_range(reaction);
        (most - least) / 2.0 + TIMER_NOISE_MS
    }
}

/// How one case converts real time to policy time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseClock {
    /// The fraction of real time the case ran at.
    pub time_scale: TimeScale,
    /// The client's reaction, as calibrated for this run.
    pub reaction: Reaction,
    /// For a herd: how far a herd in lockstep spreads its waits on this machine, in real ms
    /// (`None`: not measured).
    pub lockstep_ms: Option<f64>,
    /// What a busy machine may hold the client back at each wait and attempt.
    pub machine: Allowance,
}

impl CaseClock {
    /// A clock for a case at `time_scale` with a calibrated `reaction`, in real time: a busy
    /// machine may hold the client back a [`MOMENT`].
    pub fn new(time_scale: TimeScale, reaction: Reaction) -> CaseClock {
        CaseClock { time_scale, reaction, lockstep_ms: None, machine: MOMENT }
    }

    /// The clock of a case on squall's virtual clock: production values at their own time, no
    /// reaction, no machine, a herd in lockstep exactly together.
    pub fn exact() -> CaseClock {
        CaseClock {
            time_scale: TimeScale::REAL,
            reaction: Reaction::exactly(0.0),
            lockstep_ms: Some(0.0),
            machine: Allowance::NONE,
        }
    }

    /// Whether it reads time exactly: squall's virtual clock, no reaction and no machine.
    pub fn is_exact(&self) -> bool {
        self.machine.held_back_ms == 0.0 && self.reaction.low_ms == 0.0 && self.reaction.high_ms == 0.0
    }

    /// The clock read as if a busy machine had held the client back `ms` more at each wait and
    /// attempt: its reaction's slow end later by `ms`, and a herd in lockstep spread `ms` wider.
    pub fn held_back(&self, ms: f64) -> CaseClock {
        CaseClock {
            reaction: self.reaction.held_back_by(ms),
            lockstep_ms: self.lockstep_ms.map(|spread| spread + ms),
            ..self.clone()
        }
    }

    /// The same clock with a busy machine allowed `machine` (none for recorded exact runs).
    pub fn with_machine(self, machine: Allowance) -> CaseClock {
        CaseClock { machine, ..self }
    }

    /// The same clock, for a herd whose lockstep spread is `lockstep_ms` (real ms).
    pub fn with_lockstep(self, lockstep_ms: Option<f64>) -> CaseClock {
        CaseClock { lockstep_ms, ..self }
    }

    /// `real_ms` counted wholly as policy time, nothing of it the client's own: the longest the
    /// policy part of a span can be, whatever the reaction.
    pub fn all_policy(&self, real_ms: f64) -> f64 {
        self.time_scale.policy_ms(real_ms) / 1000.0
    }

    /// A wait between two attempts, `real_ms` from the end of one to the arrival of the next:
    /// the client's reaction is in it and is taken out.
    pub fn wait(&self, real_ms: f64) -> Estimate {
        self.span(real_ms, SpanShape { waits: 1, attempts: 0 })
    }

    /// How long one attempt lasted on the wire, `real_ms` from its arrival to its end. The
    /// client's own timer ran for the policy part; anything between nothing and its slowest
    /// reaction may have passed between the timer firing and the hang-up.
    pub fn duration(&self, real_ms: f64) -> Estimate {
        self.span(real_ms, SpanShape { waits: 0, attempts: 1 })
    }

    /// A span of `real_ms` with the given shape.
    pub fn span(&self, real_ms: f64, shape: SpanShape) -> Estimate {
        let (least, most) = shape.reaction_range(&self.reaction);
        let policy_s = |real_ms: f64| self.time_scale.policy_ms(real_ms) / 1000.0;
        Estimate {
            value: policy_s(real_ms - (least + most) / 2.0),
            noise: policy_s(shape.noise_real_ms(&self.reaction)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(low: f64, high: f64) -> CaseClock {
        CaseClock::new(
            TimeScale::of(0.01),
            Reaction { low_ms: low, high_ms: high, ..Reaction::exactly((low + high) / 2.0) },
        )
    }

    #[test]
    fn a_slow_clients_reaction_is_taken_out_of_its_wait() {
        // 4 s asked at 1/100, and 118 ms of the client's own before the request.
        let wait = clock(116.0, 120.0).wait(40.0 + 118.0);
        assert!((wait.value - 4.0).abs() < 1e-9, "{wait:?}");
        assert!((wait.noise - 0.3).abs() < 1e-9, "2 ms of reaction spread and 1 ms of timer noise: {wait:?}");
        assert!(wait.may_be_at_least(4.0) && !wait.may_be_at_least(4.4));
        assert!(wait.may_be_at_most(4.0) && !wait.may_be_at_most(3.6));
    }

    #[test]
    fn an_attempt_may_hold_anything_up_to_the_slowest_reaction() {
        let lasted = clock(100.0, 300.0).duration(750.0);
        assert!((lasted.value - 60.0).abs() < 1e-9, "{lasted:?}");
        assert!((lasted.noise - 15.1).abs() < 1e-9, "{lasted:?}");
    }

    #[test]
    fn without_a_measurement_nothing_can_be_decided() {
        let clock = CaseClock::new(TimeScale::of(0.01), Reaction::unknown("no calibration"));
        let wait = clock.wait(40.0);
        assert!(wait.noise.is_infinite());
        assert!(
            wait.may_be_at_least(4.0) && wait.may_be_at_most(4.0),
            "no bound is missed without a measurement: {wait:?}"
        );
    }
}
