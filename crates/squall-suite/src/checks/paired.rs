//! A lower bound read across two runs at different time scales. The calibration measures the
//! client's own time per retry on one path (a 429 that asks for 1 ms); another kind of failure
//! may cost it more, and on a sped-up clock that real work reads as `rate` times as much waiting
//! — enough to pass a lower bound the client does not meet. The work is the same at every scale
//! and the wait is not, so the wait is what a gap gains between the two runs over the
//! difference of their scales.

use super::{Observation, PairedRun, Timed};
use crate::timing::{CaseClock, Estimate};
use squall::journal::JournalEntry;

/// Why a lower bound's pass waits for a run at another scale.
pub(super) const WHY: &str = "a lower bound holds against the client's own work on this path only when read across two time scales (the calibration measured it after a 429 that asked for 1 ms)";

/// The gap from the end of attempt `earlier` to the start of attempt `later` in `journal`, real ms.
pub(super) fn real_gap(journal: &[JournalEntry], earlier: usize, later: usize) -> Option<f64> {
    let attempts: Vec<&JournalEntry> = journal.iter().filter(|e| e.attempt.is_some()).collect();
    let (a, b) = (attempts.get(earlier.checked_sub(1)?)?, attempts.get(later.checked_sub(1)?)?);
    Some(b.received_at_ms - a.finished_at_ms?)
}

/// The noise of one wait on `clock`, in real ms, a busy machine's moment in it.
fn noise_real_ms(clock: &CaseClock) -> f64 {
    let held = clock.held_back(clock.machine.held_back_ms);
    held.wait(0.0).noise * held.time_scale.get() * 1000.0
}

/// The wait between `earlier` and `later` read across `observation` and the run it is paired
/// with: whether it may be at least `bound` (and this run's own reading, `single`, passes too),
/// described with the client's own time each gap held. `None` when either run lacks the attempts.
pub(super) fn at_least(
    observation: &Observation,
    paired: &PairedRun,
    earlier: usize,
    later: usize,
    bound: f64,
    single: &Timed,
) -> Option<Timed> {
    let (here, there) = (real_gap(&observation.journal, earlier, later)?, real_gap(&paired.journal, earlier, later)?);
    let (scale_here, scale_there) = (observation.clock.time_scale.get(), paired.clock.time_scale.get());
    let apart = scale_here - scale_there;
    if apart.abs() < 1e-9 {
        return None;
    }
    let wait = Estimate {
        value: (here - there) / 1000.0 / apart,
        noise: (noise_real_ms(&observation.clock) + noise_real_ms(&paired.clock)) / 1000.0 / apart.abs(),
    };
    let own_ms = there - wait.value * scale_there * 1000.0;
    let observed = format!(
        "waited {} read across {} and {} (gaps of {there:.1} and {here:.1} ms real, each with about {own_ms:.0} ms of the client's own); at {} alone: {}",
        wait.describe(),
        crate::timing::scale_name(paired.clock.time_scale),
        crate::timing::scale_name(observation.clock.time_scale),
        crate::timing::scale_name(observation.clock.time_scale),
        single.observed
    );
    // This run alone misses, yet its whole gap counted as waiting meets the bound, and across
    // both runs the wait may too: the client's own time differed between them, below the floor
    // a busier calibration set. Neither reading decides: undecided, for a slower run or
    // `inconclusive`.
    let whole_gap_meets = here >= bound * 1000.0 * scale_here;
    if !single.measured.held && whole_gap_meets && wait.may_be_at_least(bound) {
        let observed = format!("{observed}; across both it may meet the bound, alone it misses");
        return Some(Timed::compared(observed, false, false, f64::INFINITY));
    }
    // A busy machine that held the client back in the faster run shrinks what a gap gains: a miss
    // across both is never certain (a slower run, read alone, decides it); one this run makes
    // alone is as certain as it is.
    let held = single.measured.held && wait.may_be_at_least(bound);
    let certain_miss = !single.measured.held && single.measured.certain_miss;
    Some(Timed::compared(observed, held, certain_miss, wait.noise))
}
