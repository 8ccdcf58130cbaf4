//! A lower bound read across two time scales: a client's own work after a kind of failure the
//! calibration never showed cannot pass a bound its waiting does not meet, and one whose waiting
//! does meet it still passes.

use serde_json::json;

use super::written_evidence::{observed, request, timing_of};
use crate::checks::{Observation, PairedRun};
use crate::timing::{CaseClock, Reaction, Reading};

/// One retry at `scale` after a wait of `wait_s` (policy) and `own_ms` of the client's own real
/// time — none of it seen by the calibration, which measured a reaction of exactly 2 ms.
fn retried(scale: f64, wait_s: f64, own_ms: f64) -> Observation {
    retried_after(scale, wait_s, own_ms, Reaction::exactly(2.0))
}

/// [`retried`] with the reaction a calibration measured.
fn retried_after(scale: f64, wait_s: f64, own_ms: f64, reaction: Reaction) -> Observation {
    let first = request(0, "default", json!({}));
    let mut second = request(1, "default", json!({}));
    second.received_at_ms = first.finished_at_ms.expect("ended") + own_ms + wait_s * 1000.0 * scale;
    second.finished_at_ms = Some(second.received_at_ms + 5.0);
    let clock = CaseClock::new(squall::clock::TimeScale::of(scale), reaction);
    Observation { clock, ..observed(vec![first, second], json!({"ok": true}), &[]) }
}

#[test]
fn own_work_after_an_uncalibrated_failure_passes_alone_and_misses_across_two_scales() {
    let at_least = timing_of("attempt 2 starts at least 3 seconds after attempt 1 ends");
    let find = |observation: &Observation| at_least.timing.find(observation, &at_least.args);
    // 2 s of waiting and 300 ms of its own at 1/16: read alone, 6.8 s. It holds, pending a pair.
    let alone = retried(1.0 / 16.0, 2.0, 300.0);
    let first = find(&alone);
    assert_eq!(first.reading, Reading::Holds, "{first:?}");
    assert!(first.pair.is_some(), "a pass waits for another scale: {first:?}");
    // At 1/4 alone it still reads 3.2 s; read with the run at 1/16, the gaps grow by 375 ms real
    // over 3/16 of scale: 2 s of waiting.
    let paired = Observation { paired: Some(PairedRun::of(&alone)), ..retried(0.25, 2.0, 300.0) };
    let across = find(&paired);
    assert_eq!(across.reading, Reading::Misses, "{across:?}");
    assert!(!across.certain, "a stall in either run could explain it: a slower run decides");
    let said = &across.observed;
    assert!(said.contains("waited 2.00 s") && said.contains("300 ms of the client's own"), "{said}");
    assert!(across.pair.is_none());
    // With 140 ms of its own, the run at 1/4 misses alone too (2.55 s): as certain as ever.
    let alone = retried(1.0 / 16.0, 2.0, 140.0);
    let paired = Observation { paired: Some(PairedRun::of(&alone)), ..retried(0.25, 2.0, 140.0) };
    let across = find(&paired);
    assert!(across.reading == Reading::Misses && across.certain, "{across:?}");
}

#[test]
fn a_wait_that_meets_the_bound_passes_across_two_scales_whatever_its_own_work() {
    let at_least = timing_of("attempt 2 starts at least 3 seconds after attempt 1 ends");
    let alone = retried(1.0 / 16.0, 3.2, 140.0);
    let paired = Observation { paired: Some(PairedRun::of(&alone)), ..retried(0.25, 3.2, 140.0) };
    let across = at_least.timing.find(&paired, &at_least.args);
    assert_eq!(across.reading, Reading::Holds, "{across:?}");
    assert!(across.observed.contains("waited 3.20 s"), "{}", across.observed);
    // On squall's virtual clock nothing waits for a pair: time there is exact.
    let exact = Observation { clock: CaseClock::exact(), ..retried(1.0, 3.2, 0.0) };
    assert!(at_least.timing.find(&exact, &at_least.args).pair.is_none());
}

#[test]
fn a_wait_that_meets_the_bound_is_never_failed_for_own_time_under_a_busier_calibration() {
    // The official OpenAI SDK waits the 4 s a retry-after asks. Its calibration, at a busy
    // moment, read its reaction as 8.2–64.7 ms; in the case it took 22.7 ms of its own at 1/16
    // and 5.3 ms at 1/4. Read alone at 1/4 the wait looks 3.9 s; across both runs 3.91 s, and
    // the bound may be met: undecided, never a fail (a clean clone once failed it so).
    let at_least = timing_of("attempt 2 starts at least 4 seconds after attempt 1 ends");
    let busy = Reaction { low_ms: 8.2, high_ms: 64.7, ..Reaction::exactly(36.45) };
    let alone = retried_after(1.0 / 16.0, 4.0, 22.7, busy.clone());
    let paired = Observation { paired: Some(PairedRun::of(&alone)), ..retried_after(0.25, 4.0, 5.3, busy) };
    let across = at_least.timing.find(&paired, &at_least.args);
    assert_eq!(across.reading, Reading::Undecided, "{across:?}");
    assert!(across.observed.contains("alone it misses"), "{}", across.observed);
}
