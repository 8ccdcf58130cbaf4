//! Whether a sped-up clock reached the client. A process started with squall's preload may still
//! read real time: a statically linked program, Go's runtime, anything that asks the kernel
//! without libc. Before any case is judged, one run asks the client for a wait long enough to
//! tell, in the header clients most often honour — PRD-0006 asks for the provider's wait to come
//! first ("优先遵循 `retryAfterMs`"), and `retry-after` in seconds is its most common form:
//! [`ASKS`] 429s with `retry-after: 10`, then a success. On a clock sped up `r` times the client
//! waits about `10 / r` s real each time; on real time, 10 s. A gap below the geometric middle,
//! `10 / √r` s (1 s at ×100), is a client on the sped-up clock — so a client's own work of up
//! to most of a second per retry (a Node process warming up on a busy machine) is no evidence,
//! and a client that ignores the header and waits a backoff of its own `b` instead is read the
//! same way unless `b` is above `10·√r` s or below `10 / √r` s — and a gap at or above it, or as
//! long a wait cut short by the instance's timeout, is a client the clock did not reach, which
//! no case is judged on. A client that never sent its first request tells nothing.

use std::time::Duration;

use super::wait_asks::{self, gaps_after_asks};
use crate::iut::{Execution, RunPlan};
use squall::clock::TimeScale;
use squall::scenario::{Attempt, Scenario};

/// The 429s of the probe.
const ASKS: usize = 2;

/// What each asks for, in seconds of the client's own time: long enough that a sped-up client's
/// own work cannot pass for it, short enough that a client on real time shows it within an
/// instance's timeout (at least 5 s: its first wait, cut short, already tells).
const ASKED_S: u64 = 10;

/// The run that tells whether the client's waits run on a clock sped up `1 / time_scale` times.
pub(crate) fn plan(time_scale: TimeScale, timeout: Duration, seed: Option<u64>) -> RunPlan {
    let scenario = (0..ASKS)
        .fold(Scenario::named("squall-clock-probe"), |scenario, _| {
            scenario.attempt(Attempt::status(429).header("retry-after", &ASKED_S.to_string()))
        })
        .attempt(Attempt::text("probed"));
    let mut spec = wait_asks::spec(format!("squall clock probe at {time_scale}"), time_scale, timeout, seed);
    spec.max_retries = Some(ASKS as u32);
    RunPlan { scenario, spec, herd: None }
}

/// What the probe saw of a client squall's clock did not reach.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Unreached {
    /// The real waits it saw, as people read them ("10.00 s and 5.00 s before it was killed …").
    waited: String,
    rate: f64,
}

impl Unreached {
    /// What it saw, in a clause: "asked to wait 10 s at ×100, it waited 10.00 s real".
    pub(crate) fn seen(&self) -> String {
        format!("asked to wait {ASKED_S} s on a clock {}× real time, it waited {} real", self.rate, self.waited)
    }

    /// Why no case can be judged on the sped-up clock, and the ways out.
    pub(crate) fn why(&self) -> String {
        let threshold_s = ASKED_S as f64 / self.rate.sqrt();
        format!(
            "is not reached by the sped-up clock: asked {ASKS} times to wait {ASKED_S} s (`retry-after: {ASKED_S}`) on a clock {}× real time, it waited {} real (a client on that clock waits about {:.2} s; anything from {threshold_s:.2} s is real time). A statically linked program, Go's runtime, or anything that reads the clock without libc cannot be sped up by LD_PRELOAD; run it with `--clock scaled` and scale its waits by SQUALL_TIME_SCALE in its adapter, or in real time with `--clock scaled --time-scale 1`",
            self.rate,
            self.waited,
            ASKED_S as f64 / self.rate
        )
    }
}

/// What the probe's run at `time_scale` saw, when squall's clock did not reach the client;
/// `None` when it did, or when the run cannot tell (the client did not retry: calibration
/// reports that on its own).
pub(crate) fn not_reached(outcome: &Result<Execution, String>, time_scale: TimeScale) -> Option<Unreached> {
    let execution = outcome.as_ref().ok()?;
    let gaps_s: Vec<f64> = gaps_after_asks(&execution.journal).iter().map(|ms| ms / 1000.0).collect();
    // Killed while it waited after a 429: how long it had waited by then.
    let cut_short_s = (execution.iut.timed_out && gaps_s.len() < ASKS)
        .then(|| {
            let calls = execution.journal.iter().filter(|e| e.attempt.is_some());
            let last_ask = calls.filter(|e| e.status == Some(429)).filter_map(|e| e.finished_at_ms).reduce(f64::max)?;
            Some((execution.ended_at_ms - last_ask) / 1000.0)
        })
        .flatten();
    not_reached_by(&gaps_s, cut_short_s, time_scale)
}

/// [`not_reached`] from the real gaps (s) after the probe's asks, and how long the client had
/// waited after its last 429 when it was killed, if it was.
fn not_reached_by(gaps_s: &[f64], cut_short_s: Option<f64>, time_scale: TimeScale) -> Option<Unreached> {
    let rate = time_scale.rate();
    let threshold_s = ASKED_S as f64 / rate.sqrt();
    let cut_short = cut_short_s.filter(|waited| *waited >= threshold_s);
    if gaps_s.iter().all(|gap| *gap < threshold_s) && cut_short.is_none() {
        return None;
    }
    let mut seen: Vec<String> = gaps_s.iter().map(|gap| format!("{gap:.2} s")).collect();
    if let Some(waited) = cut_short {
        seen.push(format!("{waited:.2} s before it was killed at the instance timeout"));
    }
    Some(Unreached { waited: seen.join(" and "), rate })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_asks_for_whole_seconds_of_the_clients_own_time() {
        let plan = plan(TimeScale::of(0.01), Duration::from_secs(10), None);
        let asked: Vec<Option<&str>> =
            plan.scenario.attempts.iter().map(|a| a.headers.get("retry-after").map(String::as_str)).collect();
        assert_eq!(asked, [Some("10"), Some("10"), None]);
        assert_eq!(plan.spec.max_retries, Some(2));
        squall::scenario::validate::validate(&plan.scenario).expect("a valid scenario");
    }

    #[test]
    fn a_client_on_real_time_is_told_from_one_on_the_sped_up_clock() {
        // At ×100 the line is 1 s: 10 s asked is 0.1 s sped up, 10 s on real time.
        assert_eq!(not_reached_by(&[0.101, 0.135], None, TimeScale::of(0.01)), None);
        assert_eq!(
            not_reached_by(&[0.41, 0.09], None, TimeScale::of(0.01)),
            None,
            "a Node client warming up on a busy machine"
        );
        let real = not_reached_by(&[10.003, 10.001], None, TimeScale::of(0.01)).expect("not reached").why();
        assert!(real.contains("waited 10.00 s and 10.00 s real") && real.contains("--clock scaled"), "{real}");
        assert!(not_reached_by(&[0.1, 1.2], None, TimeScale::of(0.01)).is_some(), "one wait on real time is enough");
        let killed = not_reached_by(&[10.0], Some(5.0), TimeScale::of(0.01)).expect("killed while it waited");
        assert!(killed.why().contains("5.00 s before it was killed"), "{killed:?}");
        assert_eq!(killed.seen(), "asked to wait 10 s on a clock 100× real time, it waited 10.00 s and 5.00 s before it was killed at the instance timeout real");
        assert!(not_reached_by(&[], Some(4.0), TimeScale::of(0.01)).is_some(), "cut short after waiting 4 s");
        assert_eq!(
            not_reached_by(&[], Some(0.3), TimeScale::of(0.01)),
            None,
            "killed 0.3 s after its 429: no evidence"
        );
        assert_eq!(
            not_reached_by(&[], None, TimeScale::of(0.01)),
            None,
            "no retry and not killed: calibration says why"
        );
        // At ×4 the line is 5 s.
        assert_eq!(not_reached_by(&[2.6, 2.55], None, TimeScale::of(0.25)), None);
        assert!(not_reached_by(&[9.9, 10.0], None, TimeScale::of(0.25)).is_some());
    }
}
