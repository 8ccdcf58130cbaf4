//! A Python client started warm gets the verdicts it gets cold: the independent implementation,
//! unmodified on the sped-up clock, case by case, each child at its own case's rate.

use crate::kit::harness::require;
use crate::kit::independent_suites::{same_verdicts, IndependentSuites};

/// Started warm, the one on the sped-up clock gets the verdicts it gets cold.
pub(super) fn started_warm_the_verdicts_it_gets_cold(suites: &IndependentSuites) {
    let same = same_verdicts(&suites.sped_up, &suites.warm, ("cold", "warm"));
    require(same.is_ok(), &same.err().unwrap_or_default());
    require(suites.warm.passed(), "the correct implementation passes started warm");
    // Cases ran at more than one time scale (raised where timing needed it): each child took its
    // own case's rate, or the raised cases' waits would have read 4–100× too long or short.
    let scales: std::collections::BTreeSet<String> =
        suites.warm.cases.iter().filter_map(|c| c.time_scale.map(|s| s.to_string())).collect();
    require(scales.len() > 1, &format!("the warm run's cases ran at one time scale only: {scales:?}"));
    let clock = suites.warm.calibration.clock.clone().unwrap_or_default();
    require(clock.contains("accelerated") && clock.contains("started warm"), &format!("recorded: {clock}"));
}
