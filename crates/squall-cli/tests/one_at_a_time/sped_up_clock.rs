//! The client as shipped: an implementation's process on squall's sped-up clock (`--clock
//! accelerated`). The independent implementation, unmodified and
//! reading `SQUALL_TIME_SCALE=1`, waiting between attempts on a thread primitive with a timeout
//! (`threading.Event().wait`), gets on it the
//! verdicts it gets scaled. (A statically linked client, which no preload reaches, named before
//! anything is judged: `mostly_waiting::sped_up_clock`.)

use crate::kit::harness::require;
use crate::kit::independent_suites::{same_verdicts, IndependentSuites};

/// The correct one, unmodified on the sped-up clock, gets the verdicts it gets scaled.
pub(super) fn on_the_sped_up_clock_the_verdicts_it_gets_scaled(suites: &IndependentSuites) {
    let same = same_verdicts(&suites.correct, &suites.sped_up, ("scaled", "on the sped-up clock"));
    require(same.is_ok(), &same.err().unwrap_or_default());
    require(suites.sped_up.passed(), "the correct implementation passes on the sped-up clock");
    let summary = suites.sped_up.calibration.summary();
    require(
        summary.contains("the client's clock: accelerated (squall-clock 2)"),
        &format!("the clock is recorded: {summary}"),
    );
    require(suites.correct.calibration.clock.is_none(), "a scaled run records no sped-up clock");
}
