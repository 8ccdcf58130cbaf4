//! Implementations that leave nothing to judge — dead, hung, no usable `result.json`, or one
//! that says it ran at another time scale — and the one kill that is a verdict: a client still
//! waiting, at the case timeout, on a reply squall withholds on purpose.

use crate::checks::Observation;
use crate::timing::reported_scale_mismatch;
use crate::verdict::unjudgeable_run;
use squall::clock::TimeScale;
use squall::journal::{EndKind, JournalEntry};
use squall::scenario::FaultKind;

/// The check recorded when an implementation is killed while it waits on a reply squall
/// withholds on purpose: it never gave up on a silent provider (REQ-0006-001's
/// `ProviderTimeoutException`, seed 004's timeouts), which is a failure, not an unjudgeable case.
pub(crate) const GIVES_UP_ON_SILENCE: &str = "the implementation gives up on a silent provider";

/// Why a case's run cannot be judged, whatever its checks would say: an instance that died, hung
/// or left no usable result, or one that reports another time scale than it was given.
pub(crate) fn unjudgeable_case(run: &Observation) -> Option<String> {
    let told = run.iut.told_time_scale.unwrap_or_else(|| run.time_scale());
    dead_client(run).or_else(|| reported_scale_mismatch(run.iut.result.as_ref(), told))
}

/// Why an instance's run cannot be judged (a herd's: the first such client, named), if one
/// cannot.
fn dead_client(run: &Observation) -> Option<String> {
    let herd = run.is_herd();
    run.clients().enumerate().find_map(|(k, client)| {
        unjudgeable_run(client).map(|why| if herd { format!("client {k} of the herd: {why}") } else { why })
    })
}

/// A withheld reply still awaited after this much policy time is awaited forever: twice the
/// longest default timeout of the official SDKs (openai's 600 s read timeout), and far past seed
/// 001's 60 s → 120 s ladder and seed 004's 5-minute budget for a whole call.
const GIVES_UP_WITHIN_S: f64 = 1200.0;

/// What [`GIVES_UP_ON_SILENCE`] expects.
pub(crate) const SILENCE_EXPECTED: &str =
    "it gives up on a silent attempt (its own timeout) and retries or reports the failure";

/// What [`GIVES_UP_ON_SILENCE`] observed, when the implementation was killed (at `ended_at_ms`
/// of the run's journal time: at the case timeout, or as soon as it had waited forever,
/// [`awaited_forever`]) while still waiting on a reply squall withholds ([`waiting_on_silence`]);
/// `None` when it was not.
pub(crate) fn still_waiting_on_silence(run: &Observation, ended_at_ms: f64) -> Option<String> {
    let time_scale = run.time_scale();
    let (attempt, open_ms) =
        run.iut.timed_out.then(|| waiting_on_silence(&run.journal, ended_at_ms, time_scale)).flatten()?;
    Some(format!(
        "still waiting on attempt {attempt}, whose reply squall withholds, after {:.1} s real ({:.0} s of policy time; past {GIVES_UP_WITHIN_S:.0} s it is awaited forever), when squall killed it",
        open_ms / 1000.0,
        time_scale.policy_ms(open_ms) / 1000.0
    ))
}

/// Whether an implementation is, at `now_ms` of its run's journal time, waiting on a reply squall
/// withholds that has been open for more than [`GIVES_UP_WITHIN_S`] of policy time. Its case is
/// then decided — killed now, it fails [`GIVES_UP_ON_SILENCE`] as it would at the case timeout —
/// so the launcher kills it now: a client with no timeout of its own need not hold its case
/// for the whole case timeout (120 s of real time for 1200 s of policy time at 1/100).
pub(crate) fn awaited_forever(journal: &[JournalEntry], now_ms: f64, time_scale: TimeScale) -> bool {
    let Some(last) = last_call(journal) else { return false };
    withheld(last) && last.end.is_none() && forever(now_ms - last.received_at_ms, time_scale)
}

/// The implementation's last model request.
fn last_call(journal: &[JournalEntry]) -> Option<&JournalEntry> {
    journal.iter().rfind(|e| e.attempt.is_some())
}

/// A reply squall withholds on purpose: its head delayed, or its stream stalled.
fn withheld(call: &JournalEntry) -> bool {
    call.status.is_none() || call.fault == Some(FaultKind::Stall)
}

/// Open for longer than a reply is ever awaited ([`GIVES_UP_WITHIN_S`] of policy time).
fn forever(open_ms: f64, time_scale: TimeScale) -> bool {
    time_scale.policy_ms(open_ms) / 1000.0 > GIVES_UP_WITHIN_S
}

/// Why a kill at the case timeout is a verdict rather than no verdict: the implementation was
/// still waiting on a reply squall withholds on purpose (headers delayed, or a stall) — its last
/// model request had no reply yet or was stalled, ended only with the kill, and had been open for
/// more than [`GIVES_UP_WITHIN_S`] of policy time (a client whose timeouts are merely longer than
/// the case allows is not judged so). Returns the 1-based attempt and how long it was open (ms).
fn waiting_on_silence(journal: &[JournalEntry], killed_at_ms: f64, time_scale: TimeScale) -> Option<(usize, f64)> {
    /// A hang-up noticed this long after the kill is the kill's.
    const KILL_NOTICED_MS: f64 = 1000.0;
    let last = last_call(journal)?;
    let ended_by_kill = match (last.end, last.finished_at_ms) {
        (None, _) => true,
        (Some(EndKind::ClientClosed | EndKind::Stalled), Some(at)) => at >= killed_at_ms - KILL_NOTICED_MS,
        _ => false,
    };
    let open_ms = killed_at_ms - last.received_at_ms;
    let attempts = journal.iter().filter(|e| e.attempt.is_some()).count();
    (withheld(last) && ended_by_kill && forever(open_ms, time_scale)).then_some((attempts, open_ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(
        status: Option<u16>,
        fault: Option<FaultKind>,
        end: Option<EndKind>,
        finished: Option<f64>,
    ) -> JournalEntry {
        let mut entry: JournalEntry = serde_json::from_value(json!({
            "index": 0, "track": "default", "attempt": 0, "method": "POST", "path": "/responses", "headers": {},
            "body": null, "stream": true, "received_at_ms": 0.0, "finished_at_ms": null, "status": null,
            "fault": null, "end": null, "events_sent": 0, "bytes_sent": 0, "terminal_sent": false
        }))
        .expect("entry");
        (entry.status, entry.fault, entry.end, entry.finished_at_ms) = (status, fault, end, finished);
        entry
    }

    #[test]
    fn a_kill_while_squall_withholds_a_reply_is_waiting_on_silence_and_a_hang_elsewhere_is_not() {
        let answered = call(Some(503), None, Some(EndKind::ErrorStatus), Some(10.0));
        let header_delay = call(None, None, Some(EndKind::ClientClosed), Some(60_010.0));
        assert_eq!(
            waiting_on_silence(&[answered.clone(), header_delay], 60_000.0, TimeScale::of(0.01)),
            Some((2, 60_000.0))
        );
        let stalled_until_killed = call(Some(200), Some(FaultKind::Stall), None, None);
        assert_eq!(
            waiting_on_silence(std::slice::from_ref(&stalled_until_killed), 60_000.0, TimeScale::of(0.01)),
            Some((1, 60_000.0))
        );
        // It gave up on the stall long before, then hung in its own code.
        let gave_up = call(Some(200), Some(FaultKind::Stall), Some(EndKind::Stalled), Some(600.0));
        assert_eq!(waiting_on_silence(&[gave_up], 60_000.0, TimeScale::of(0.01)), None);
        assert_eq!(waiting_on_silence(&[answered], 60_000.0, TimeScale::of(0.01)), None);
        // Killed 4 s into its run at 1/50, its attempt open 200 s of policy time: its timeouts
        // may just be longer than the case allows.
        assert_eq!(waiting_on_silence(&[stalled_until_killed], 4_000.0, TimeScale::of(0.02)), None);
    }

    #[test]
    fn a_reply_withheld_past_1200_s_of_policy_time_is_awaited_forever_while_it_is_open() {
        let at_1_100 = TimeScale::of(0.01);
        let stalled = call(Some(200), Some(FaultKind::Stall), None, None);
        assert!(awaited_forever(std::slice::from_ref(&stalled), 12_001.0, at_1_100), "1200.1 s of policy time");
        assert!(!awaited_forever(std::slice::from_ref(&stalled), 11_999.0, at_1_100), "1199.9 s: not yet");
        let head_delayed = call(None, None, None, None);
        assert!(awaited_forever(&[head_delayed], 12_001.0, at_1_100));
        // It gave up on the stall (the entry ended), or the reply was not withheld at all.
        let gave_up = call(Some(200), Some(FaultKind::Stall), Some(EndKind::Stalled), Some(600.0));
        assert!(!awaited_forever(&[gave_up], 60_000.0, at_1_100));
        let streaming = call(Some(200), None, None, None);
        assert!(!awaited_forever(&[streaming], 60_000.0, at_1_100), "a reply squall sends is not silence");
        assert!(!awaited_forever(&[], 60_000.0, at_1_100), "nothing asked yet");
        // Whatever is killed so is judged waiting on silence.
        assert_eq!(waiting_on_silence(&[stalled], 12_001.0, at_1_100), Some((1, 12_001.0)));
    }

    #[test]
    fn a_reported_time_scale_must_be_the_one_given() {
        assert_eq!(reported_scale_mismatch(Some(&json!({"ok": true, "time_scale": 0.01})), TimeScale::of(0.01)), None);
        assert_eq!(
            reported_scale_mismatch(Some(&json!({"ok": true})), TimeScale::of(0.01)),
            None,
            "missing is allowed"
        );
        let wrong = reported_scale_mismatch(Some(&json!({"ok": true, "time_scale": 1.0})), TimeScale::of(0.01))
            .expect("an error");
        assert!(wrong.contains("time_scale 1") && wrong.contains("--time-scale 1"), "{wrong}");
        assert!(
            reported_scale_mismatch(Some(&json!({"ok": true, "time_scale": "fast"})), TimeScale::of(0.01)).is_some()
        );
    }
}
