//! What a timing check must tell apart, and the time scale that lets it.
//!
//! Every timing check judges a bound (a wait of at least 4 s, an attempt of at most 65 s) and
//! exists to reject some behaviour the seeds name (backing off instead of honouring the asked
//! wait, the other rung of the 60 s → 120 s ladder). Its **margin** is the policy-time distance
//! between the two. Most checks give the client the benefit of the doubt within the
//! measurement's noise: a miss is then certain, but a pass rejects every client a margin beyond
//! the bound only while the noise is below half the margin; past that the check refuses to
//! judge. A few look for evidence that must stand out of the noise (jitter): there a sighting is
//! certain and an absence needs the margin. Before a case runs, the suite raises its time scale
//! until every check of the first kind can judge — a scaled wait grows, the client's reaction
//! does not — up to the largest scale the run allows; checks of the second kind raise it only
//! to confirm an absence.

use super::allowance::{Allowance, Lengthened};
use super::estimate::SpanShape;
use super::reaction::Reaction;
use squall::clock::TimeScale;

/// What one timing check must tell apart, and what its measurement holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Margin {
    /// Policy seconds between the check's bound and the behaviour it must reject.
    pub seconds: f64,
    /// Waits between attempts in the measured span (each holds one reaction).
    pub waits: usize,
    /// Attempts in the measured span (each may hold up to one reaction).
    pub attempts: usize,
    /// To whom the check gives the noise, and so which of its outcomes needs the margin.
    pub doubt: Doubt,
    /// Which of its outcomes a span a busy machine lengthened could fake.
    pub lengthened: Lengthened,
}

/// What a timing check measured, in policy seconds, as [`Margin::read`] reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// The bound met with the benefit of the doubt (or the evidence seen beyond the noise).
    pub held: bool,
    /// No value within each measured span's own noise meets the bound: a miss whatever the
    /// noise. A count decided without a clock (too few attempts, no client retried) is one too,
    /// for evidence as well.
    pub certain_miss: bool,
    /// The noise of the measurement; infinite without a measured reaction.
    pub noise: f64,
}

/// What one measurement says of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// The bound holds, or the evidence is there.
    Holds,
    /// The bound is missed, or the evidence is not there.
    Misses,
    /// The noise is too large to say either.
    Undecided,
}

/// To whom a timing check gives the measurement's noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doubt {
    /// A bound judged with the benefit of the doubt: a miss is certain, a pass needs the noise
    /// under half the margin.
    ToClient,
    /// Evidence that must stand out of the noise (a random jitter): a sighting is certain, an
    /// absence needs the noise under half the margin.
    AgainstClient,
}

impl Margin {
    /// A check on single waits between attempts (either of its outcomes a longer wait can fake,
    /// until [`Margin::at_least`] or [`Margin::at_most`] says which).
    pub const fn of_waits(seconds: f64) -> Margin {
        Margin { seconds, waits: 1, attempts: 0, doubt: Doubt::ToClient, lengthened: Lengthened::Either }
    }

    /// A check on single attempts' durations.
    pub const fn of_attempts(seconds: f64) -> Margin {
        Margin { seconds, waits: 0, attempts: 1, doubt: Doubt::ToClient, lengthened: Lengthened::Either }
    }

    /// The same margin for a lower bound: a longer span can fake its pass.
    pub const fn at_least(self) -> Margin {
        Margin { lengthened: Lengthened::CanPass, ..self }
    }

    /// The same margin for an upper bound: a longer span can fake its miss.
    pub const fn at_most(self) -> Margin {
        Margin { lengthened: Lengthened::CanMiss, ..self }
    }

    /// The same margin for a check whose evidence must stand out of the noise (a longer span
    /// can fake a sighting).
    pub const fn for_evidence(self) -> Margin {
        Margin { doubt: Doubt::AgainstClient, lengthened: Lengthened::CanPass, ..self }
    }

    /// The most noise (policy seconds) at which the check still rejects every client a margin
    /// beyond its bound: half the margin.
    pub fn max_noise(&self) -> f64 {
        self.seconds / 2.0
    }

    /// What a measurement says: a bound holds when met with the benefit of the doubt and the
    /// noise is under half the margin (so a client a margin beyond would have missed it); it
    /// misses when no value within each span's own noise meets it. Evidence holds when seen
    /// beyond the noise, and is missing when not seen with the noise under half the margin.
    /// Anything else is undecided — and everything is, without a measurement (infinite noise).
    pub fn read(&self, timed: &Measured) -> Reading {
        let decides = timed.noise < self.max_noise();
        match self.doubt {
            _ if timed.certain_miss => Reading::Misses,
            _ if !timed.noise.is_finite() => Reading::Undecided,
            Doubt::ToClient if !timed.held => Reading::Misses,
            Doubt::ToClient if decides => Reading::Holds,
            Doubt::AgainstClient if timed.held => Reading::Holds,
            Doubt::AgainstClient if decides => Reading::Misses,
            _ => Reading::Undecided,
        }
    }

    /// Whether a case must run slowly enough for this check before it runs at all: a pass of a
    /// bound needs it; evidence of jitter usually stands out at any scale, and its absence is
    /// confirmed by a slower run.
    pub fn sets_first_scale(&self) -> bool {
        self.doubt == Doubt::ToClient
    }

    /// The smallest time scale at which a client with `reaction` can pass this check on a
    /// machine that may hold it back as `machine` allows (where a longer span could fake a pass):
    /// a number, since it may lie beyond every time scale.
    pub fn scale_needed(&self, reaction: &Reaction, machine: Allowance) -> f64 {
        let shape = SpanShape { waits: self.waits, attempts: self.attempts };
        let read_with = match self.lengthened.pass_needs_moment() {
            true => reaction.held_back_by(machine.held_back_ms),
            false => reaction.clone(),
        };
        shape.noise_real_ms(&read_with) / 1000.0 / self.max_noise()
    }
}

/// The time scales a case may be raised to, in order: 1/N, each rung at most a third slower than
/// the one before below real time, so that a case raised for its margins runs at most that much
/// slower than they need (with rungs a factor of 2 apart, as they once were, a case that needed
/// 1/9.8 ran at 1/5: twice its time, for nothing its checks asked).
const LADDER: [TimeScale; 18] = [
    TimeScale::of(1.0 / 100.0),
    TimeScale::of(1.0 / 80.0),
    TimeScale::of(1.0 / 64.0),
    TimeScale::of(1.0 / 50.0),
    TimeScale::of(1.0 / 40.0),
    TimeScale::of(1.0 / 32.0),
    TimeScale::of(1.0 / 25.0),
    TimeScale::of(1.0 / 20.0),
    TimeScale::of(1.0 / 16.0),
    TimeScale::of(1.0 / 12.0),
    TimeScale::of(1.0 / 10.0),
    TimeScale::of(1.0 / 8.0),
    TimeScale::of(1.0 / 6.0),
    TimeScale::of(1.0 / 5.0),
    TimeScale::of(1.0 / 4.0),
    TimeScale::of(1.0 / 3.0),
    TimeScale::of(1.0 / 2.0),
    TimeScale::REAL,
];

/// The first time scale of the ladder above `current` that is at least twice it, if any up to
/// `max`: where a case runs again to confirm what a timing check found.
pub(crate) fn slower(current: TimeScale, max: TimeScale) -> Option<TimeScale> {
    LADDER.iter().copied().find(|s| s.get() >= 2.0 * current.get() - 1e-12 && *s <= max)
}

/// The time scale a lower bound's pass at `current` is read against ([`crate::checks::PairedRun`]),
/// if one up to `max` will do: at least four times as slow, so that a jitter drawn anew shifts the
/// wait read across both runs by at most a third of its range; and far enough from `current`
/// that the two runs' noise, over the difference of their scales, fits every margin in `margins`.
pub(crate) fn paired_scale(
    current: TimeScale,
    max: TimeScale,
    margins: &[(String, Margin)],
    reaction: &Reaction,
    machine: Allowance,
) -> Option<TimeScale> {
    let apart = margins.iter().map(|(_, m)| 2.0 * m.scale_needed(reaction, machine)).fold(0.0, f64::max);
    let needed = (4.0 * current.get()).max(current.get() + apart);
    LADDER.iter().copied().find(|s| s.get() >= needed - 1e-12 && *s <= max)
}

/// The first time scale of the ladder at or above `needed`, as people read it; or that none is.
pub(crate) fn describe_needed(needed: f64) -> String {
    match LADDER.iter().find(|s| s.get() >= needed) {
        Some(scale) => format!("a time scale of {} or more", super::scale_name(*scale)),
        None => "more than real time: it cannot be judged at any scale".to_owned(),
    }
}

/// The time scale chosen for a case, and why when it is not the one asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleChoice {
    /// The scale the case runs at.
    pub time_scale: TimeScale,
    /// The case's own scale (the suite's, or the feature's "timing is measured at 1/N").
    pub asked: TimeScale,
    /// Why it was raised, or why some check cannot be judged even at the largest scale.
    pub note: Option<String>,
    /// Some timing check of the case cannot judge this reaction at any allowed scale.
    pub beyond_max: bool,
}

/// The scale for a case asking for `asked`, whose timing checks need `margins`, for a client
/// with `reaction` on a machine that may hold it back as `machine` allows, raised at most to
/// `max` (never lowered below `asked`).
pub fn choose_scale(
    asked: TimeScale,
    max: TimeScale,
    margins: &[(String, Margin)],
    reaction: &Reaction,
    machine: Allowance,
) -> ScaleChoice {
    let mut needed = asked.get();
    let mut beyond: Vec<String> = Vec::new();
    for (step, margin) in margins {
        let scale = margin.scale_needed(reaction, machine);
        if scale <= max.get() {
            needed = needed.max(scale);
        } else {
            beyond.push(format!("`{step}` needs {}", describe_needed(scale)));
        }
    }
    let time_scale = match TimeScale::new(needed) {
        Ok(needed) if needed > asked => {
            LADDER.iter().copied().find(|s| *s >= needed && *s <= max).unwrap_or(needed.min(max))
        }
        _ => asked,
    };
    let mut notes = Vec::new();
    if time_scale > asked {
        let moment = match machine.held_back_ms > 0.0 {
            true => format!(" with a busy machine's {:.0} ms", machine.held_back_ms),
            false => String::new(),
        };
        notes.push(format!(
            "raised from {} to {}: the client's reaction ({:.1}–{:.1} ms real){moment} is too uncertain for its timing checks at {}",
            super::scale_name(asked),
            super::scale_name(time_scale),
            reaction.low_ms,
            reaction.high_ms,
            super::scale_name(asked)
        ));
    }
    if !beyond.is_empty() {
        notes.push(format!("not judged beyond {}: {} (--max-time-scale)", super::scale_name(max), beyond.join("; ")));
    }
    ScaleChoice {
        time_scale,
        asked,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
        beyond_max: !beyond.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::allowance::MOMENT;

    fn s(scale: f64) -> TimeScale {
        TimeScale::of(scale)
    }

    fn reaction(low: f64, high: f64) -> Reaction {
        Reaction { low_ms: low, high_ms: high, ..Reaction::exactly((low + high) / 2.0) }
    }

    #[test]
    fn a_steady_client_runs_at_the_asked_scale_and_a_noisier_one_is_raised() {
        let margins = [("attempt 2 starts at least 4 seconds after attempt 1 ends".to_owned(), Margin::of_waits(2.0))];
        // ±2 ms of noise: 0.2 s at 1/100, under half of 2 s.
        let steady = choose_scale(s(0.01), s(0.25), &margins, &reaction(150.0, 152.0), Allowance::NONE);
        assert_eq!((steady.time_scale, steady.note), (s(0.01), None));
        // ±21 ms: 2.1 s at 1/100, 0.84 s at 1/40 (the first rung at or above 1/47.6).
        let noisy = choose_scale(s(0.01), s(0.25), &margins, &reaction(100.0, 140.0), Allowance::NONE);
        assert_eq!(noisy.time_scale, s(0.025));
        assert!(noisy.note.is_some_and(|n| n.contains("raised from 1/100 to 1/40")));
    }

    #[test]
    fn a_busy_machines_moment_raises_the_scale_only_where_a_longer_span_could_fake_a_pass() {
        let steady = reaction(150.0, 152.0);
        let at_least = [("at least 3 s".to_owned(), Margin::of_waits(1.0).at_least())];
        let at_most = [("within 4 s".to_owned(), Margin::of_waits(1.0).at_most())];
        // ±(2 + 25) / 2 + 1 ms = 14.5 ms must be under half of 1 s: 1/32 (0.46 s), not 1/40 (0.58 s).
        let raised = choose_scale(s(0.01), s(0.25), &at_least, &steady, MOMENT);
        assert_eq!(raised.time_scale, s(1.0 / 32.0));
        assert!(raised.note.is_some_and(|n| n.contains("with a busy machine's 25 ms")));
        assert_eq!(choose_scale(s(0.01), s(0.25), &at_most, &steady, MOMENT).time_scale, s(0.01));
        assert_eq!(choose_scale(s(0.01), s(0.25), &at_least, &steady, Allowance::NONE).time_scale, s(0.01));
    }

    #[test]
    fn a_check_that_needs_more_than_the_largest_scale_is_named_and_does_not_slow_the_others() {
        let margins = [
            ("at least 4 s".to_owned(), Margin::of_waits(2.0)),
            ("the waits carry a random jitter".to_owned(), Margin::of_waits(0.1)),
        ];
        let jittery = choose_scale(s(0.01), s(0.25), &margins, &reaction(0.0, 360.0), Allowance::NONE);
        assert_eq!(jittery.time_scale, s(0.2));
        let note = jittery.note.expect("a note");
        assert!(
            note.contains("`the waits carry a random jitter` needs") && note.contains("--max-time-scale"),
            "{note}"
        );
    }

    /// A bound's measurement: missed with the benefit of the doubt is missed for certain.
    fn measured(held: bool, noise: f64) -> Measured {
        Measured { held, certain_miss: !held, noise }
    }

    /// Evidence: seen or not, never certainly absent.
    fn seen(held: bool, noise: f64) -> Measured {
        Measured { held, certain_miss: false, noise }
    }

    #[test]
    fn a_missed_bound_and_a_seen_jitter_stand_whatever_the_noise() {
        let bound = Margin::of_waits(2.0);
        assert_eq!(bound.read(&measured(false, 5.0)), Reading::Misses, "missed with the benefit of the doubt");
        assert_eq!(bound.read(&measured(true, 1.0)), Reading::Undecided, "a pass needs noise under half the margin");
        assert_eq!(bound.read(&measured(true, 0.99)), Reading::Holds);
        let jitter = Margin::of_waits(0.1).for_evidence();
        assert_eq!(jitter.read(&seen(true, 5.0)), Reading::Holds, "jitter seen beyond the noise");
        assert_eq!(jitter.read(&seen(false, 0.05)), Reading::Undecided, "an absence needs the margin");
        assert_eq!(jitter.read(&seen(false, 0.049)), Reading::Misses);
        assert!(bound.sets_first_scale() && !jitter.sets_first_scale());
        let unmeasured = Measured { held: true, certain_miss: false, noise: f64::INFINITY };
        assert_eq!(bound.read(&unmeasured), Reading::Undecided, "no verdict without a measurement");
        assert_eq!(jitter.read(&unmeasured), Reading::Undecided);
        let by_count = Measured { held: false, certain_miss: true, noise: f64::INFINITY };
        assert_eq!(bound.read(&by_count), Reading::Misses, "too few attempts need no clock");
    }

    #[test]
    fn a_confirmation_runs_at_least_twice_as_slow_within_the_largest_scale() {
        assert_eq!(slower(s(0.01), s(1.0)), Some(s(0.02)));
        assert_eq!(slower(s(0.02), s(1.0)), Some(s(0.04)));
        assert_eq!(slower(s(0.04), s(1.0)), Some(s(1.0 / 12.0)));
        assert_eq!(slower(s(0.25), s(1.0)), Some(s(0.5)));
        assert_eq!(slower(s(0.25), s(0.25)), None);
        assert_eq!(slower(s(1.0), s(1.0)), None);
    }

    #[test]
    fn the_asked_scale_is_never_lowered() {
        let margins = [("lasts between 59 and 65 seconds".to_owned(), Margin::of_attempts(29.5))];
        assert_eq!(choose_scale(s(0.25), s(0.25), &margins, &reaction(1.0, 2.0), MOMENT).time_scale, s(0.25));
    }
}
