//! Whether a sped-up clock reached the client. A process started under libfaketime may still
//! read real time: a statically linked program, Go's runtime, anything that asks the kernel
//! without libc. Before any case is judged, one run asks the client for a wait long enough to
//! tell, in a header the contract makes it honour (PRD-0006: "优先遵循 retryAfterMs"):
//! [`ASKS`] 429s with `retry-after: 2`, then a success. On a clock sped up `r` times the client
//! waits about `2 / r` s real each time; on real time, 2 s. A gap below the geometric middle,
//! `2 / √r` s, is a client on the sped-up clock — a client that ignores the header and waits a
//! backoff of its own `b` instead is read the same way unless `b` is above `2·√r` s (20 s at
//! ×100) or below `2 / √r` s (0.2 s at ×100) — and any gap at or above it is a client the clock
//! did not reach, which no case is judged on.

use std::time::Duration;

use super::asks::{self, gaps_after_asks};
use crate::iut::{Execution, RunPlan};
use squall::scenario::{Attempt, Scenario};

/// The 429s of the probe.
const ASKS: usize = 2;

/// What each asks for, in seconds of the client's own time.
const ASKED_S: u64 = 2;

/// The run that tells whether the client's waits run on a clock sped up `1 / time_scale` times.
pub(crate) fn plan(time_scale: f64, timeout: Duration, seed: Option<u64>) -> RunPlan {
    let scenario = (0..ASKS)
        .fold(Scenario::named("squall-clock-probe"), |scenario, _| {
            scenario.attempt(Attempt::status(429).header("retry-after", &ASKED_S.to_string()))
        })
        .attempt(Attempt::text("probed"));
    let mut spec = asks::spec(format!("squall clock probe at {time_scale}"), time_scale, timeout, seed);
    spec.max_retries = Some(ASKS as u32);
    RunPlan { scenario, spec, herd: None }
}

/// Why the sped-up clock did not reach the client, from the probe's run at `time_scale`;
/// `None` when it did, or when the run cannot tell (the client did not retry: calibration
/// reports that on its own).
pub(crate) fn not_reached(outcome: &Result<Execution, String>, time_scale: f64) -> Option<String> {
    let execution = outcome.as_ref().ok()?;
    let gaps_s: Vec<f64> = gaps_after_asks(&execution.journal).iter().map(|ms| ms / 1000.0).collect();
    let killed = execution.iut.timed_out && gaps_s.len() < ASKS;
    not_reached_by(&gaps_s, killed, time_scale)
}

/// [`not_reached`] from the real gaps (s) after the probe's asks, and whether the client was
/// killed before it retried them all.
fn not_reached_by(gaps_s: &[f64], killed: bool, time_scale: f64) -> Option<String> {
    let rate = 1.0 / time_scale;
    let threshold_s = ASKED_S as f64 / rate.sqrt();
    let slow = gaps_s.iter().filter(|gap| **gap >= threshold_s).count();
    if slow == 0 && !killed {
        return None;
    }
    let seen: Vec<String> = gaps_s.iter().map(|gap| format!("{gap:.2} s")).collect();
    let waited =
        if seen.is_empty() { "never retried".to_owned() } else { format!("waited {} real", seen.join(" and ")) };
    Some(format!(
        "is not reached by the sped-up clock: asked {ASKS} times to wait {ASKED_S} s (`retry-after: {ASKED_S}`) on a clock {rate}× real time, it {waited}{} (a client on that clock waits about {:.3} s; anything from {threshold_s:.2} s is real time). A statically linked program, Go's runtime, or anything that reads the clock without libc cannot be sped up by LD_PRELOAD; run it with `--clock scaled` and scale its waits by SQUALL_TIME_SCALE in its adapter, or in real time with `--clock scaled --time-scale 1`",
        if killed { " before it was killed at the instance timeout" } else { "" },
        ASKED_S as f64 / rate
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_asks_for_whole_seconds_of_the_clients_own_time() {
        let plan = plan(0.01, Duration::from_secs(10), None);
        let asked: Vec<Option<&str>> =
            plan.scenario.attempts.iter().map(|a| a.headers.get("retry-after").map(String::as_str)).collect();
        assert_eq!(asked, [Some("2"), Some("2"), None]);
        assert_eq!(plan.spec.max_retries, Some(2));
        squall::scenario::validate::validate(&plan.scenario).expect("a valid scenario");
    }

    #[test]
    fn a_client_on_real_time_is_told_from_one_on_the_sped_up_clock() {
        // At ×100 the line is 0.2 s: 2 s asked is 20 ms sped up, 2 s on real time.
        assert_eq!(not_reached_by(&[0.021, 0.035], false, 0.01), None);
        assert_eq!(not_reached_by(&[0.19, 0.05], false, 0.01), None, "a busy moment below the line");
        let real = not_reached_by(&[2.003, 2.001], false, 0.01).expect("not reached");
        assert!(real.contains("waited 2.00 s and 2.00 s real") && real.contains("--clock scaled"), "{real}");
        assert!(not_reached_by(&[0.02, 0.25], false, 0.01).is_some(), "one wait on real time is enough");
        let killed = not_reached_by(&[], true, 0.01).expect("killed before it retried");
        assert!(killed.contains("never retried before it was killed"), "{killed}");
        assert_eq!(not_reached_by(&[], false, 0.01), None, "no retry and not killed: calibration says why");
        // At ×4 the line is 1 s.
        assert_eq!(not_reached_by(&[0.6, 0.55], false, 0.25), None);
        assert!(not_reached_by(&[1.9, 2.0], false, 0.25).is_some());
    }
}
