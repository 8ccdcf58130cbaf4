//! The calibration's scenario: 429 replies that each ask for a wait (`retry-after-ms`), then a
//! success — and the real gaps a client left after them. The calibration asks for 1 ms each
//! time ([`super::calibration`]); the lockstep herd asks for a ladder ([`super::lockstep`]).

use std::time::Duration;

use crate::iut::{CaseSpec, TaskKind};
use squall::clock::TimeScale;
use squall::journal::{EndKind, JournalEntry};
use squall::scenario::{Attempt, Scenario};

/// 429s before the success, in each instance.
pub(crate) const RETRIES: usize = 6;

/// What the implementation is asked to do in a calibration run named `case`: a streamed call
/// that may retry [`RETRIES`] times (its base URL filled in when it runs).
pub(crate) fn spec(case: String, time_scale: TimeScale, timeout: Duration, seed: Option<u64>) -> CaseSpec {
    CaseSpec {
        case,
        task: TaskKind::Stream,
        prompt: "Calibrate".to_owned(),
        base_url: String::new(),
        time_scale,
        profile: None,
        fallback: None,
        max_retries: Some(RETRIES as u32),
        seed,
        client: None,
        timeout,
    }
}

/// The scenario every instance runs: [`RETRIES`] 429s asking for 1 ms, then a success.
pub(crate) fn scenario() -> Scenario {
    asking_each(&[1; RETRIES])
}

/// The calibration's shape with an ask of its own for each 429 (`retries_after_ms[k]` for the
/// `k`-th), then a success.
pub(crate) fn asking_each(retries_after_ms: &[u64]) -> Scenario {
    retries_after_ms
        .iter()
        .fold(Scenario::named("squall-calibration"), |scenario, ms| {
            scenario.attempt(Attempt::status(429).header("retry-after-ms", &ms.to_string()))
        })
        .attempt(Attempt::text("calibrated"))
}

/// Real ms from the end of each 429 to the next model request.
pub(crate) fn gaps_after_asks(journal: &[JournalEntry]) -> Vec<f64> {
    let calls: Vec<&JournalEntry> = journal.iter().filter(|e| e.attempt.is_some()).collect();
    calls
        .windows(2)
        .filter(|pair| pair[0].status == Some(429) && pair[0].end == Some(EndKind::ErrorStatus))
        .filter_map(|pair| Some(pair[1].received_at_ms - pair[0].finished_at_ms?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scenario_asks_for_one_millisecond_six_times_then_answers() {
        let scenario = scenario();
        assert_eq!(scenario.attempts.len(), RETRIES + 1);
        assert!(scenario.attempts[..RETRIES]
            .iter()
            .all(|a| a.status == Some(429) && a.headers.get("retry-after-ms").map(String::as_str) == Some("1")));
        assert!(!scenario.attempts[RETRIES].is_status_reply());
        squall::scenario::validate::validate(&scenario).expect("a valid scenario");
    }
}
