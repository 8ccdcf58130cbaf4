//! Evidence written for the checks the kept reports cannot show: a step no built-in feature
//! uses, whole tool outputs (a report cuts long strings), and the files a `tasks` check reads
//! (a report does not keep them) — each written once to pass and once to fail.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::checks::{Observation, Unsure};
use crate::iut::IutRun;
use crate::timing::{Allowance, CaseClock, Reaction, Reading};
use crate::verdict::Level;
use crate::verdict::Verdict::{self, Fail, Inconclusive, Pass};
use squall::journal::JournalEntry;

/// A model request on `track` with `body`, the `n`th (0-based) of the case.
pub(super) fn request(n: usize, track: &str, body: Value) -> JournalEntry {
    serde_json::from_value(json!({
        "index": n, "track": track, "attempt": n, "method": "POST", "path": "/responses", "headers": {},
        "body": body, "stream": true, "received_at_ms": n as f64 * 10.0, "finished_at_ms": n as f64 * 10.0 + 5.0,
        "status": 200, "fault": null, "end": "completed", "events_sent": 1, "bytes_sent": 1, "terminal_sent": true
    }))
    .expect("a journal entry")
}

/// What a case observed: `journal`, `result.json`, and `files` written under its output
/// directory (the paths `result` names are relative to it, as the IUT contract allows).
pub(super) fn observed(journal: Vec<JournalEntry>, result: Value, files: &[(&str, &str)]) -> Observation {
    let out_dir = tempfile::tempdir().expect("a temporary directory");
    for (path, text) in files {
        let path = out_dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).expect("a directory");
        std::fs::write(path, text).expect("a file");
    }
    Observation {
        journal,
        iut: finished(out_dir, result),
        others: Vec::new(),
        clock: CaseClock::exact(),
        scale_note: None,
        real_duration: Duration::ZERO,
        draws: Vec::new(),
        paired: None,
    }
}

/// An instance that exited 0 with `result` in `out_dir`.
fn finished(out_dir: tempfile::TempDir, result: Value) -> IutRun {
    IutRun {
        out_dir: out_dir.into(),
        result: Some(result),
        events: Vec::new(),
        output_errors: Vec::new(),
        stderr: String::new(),
        exit_code: Some(0),
        timed_out: false,
        timeout: Duration::ZERO,
        told_time_scale: None,
    }
}

/// A herd at time scale 1: client k makes `attempts[k]` attempts of 5 ms, its first retry
/// `first_waits_ms[k]` after its first attempt ended and the others a second apart, and its
/// result says `ok[k]`.
fn herd(attempts: &[usize], first_waits_ms: &[f64], ok: &[bool]) -> Observation {
    let mut journal = Vec::new();
    for (k, count) in attempts.iter().enumerate() {
        for n in 0..*count {
            let received = if n == 0 { 0.0 } else { 5.0 + first_waits_ms[k] + 1000.0 * (n - 1) as f64 };
            let mut entry = request(journal.len(), "default", json!({}));
            (entry.client, entry.attempt) = (u32::try_from(k).ok(), u32::try_from(n).ok());
            (entry.received_at_ms, entry.finished_at_ms) = (received, Some(received + 5.0));
            journal.push(entry);
        }
    }
    let mut runs = ok.iter().map(|ok| finished(tempfile::tempdir().expect("a temporary directory"), json!({"ok": ok})));
    let iut = runs.next().expect("a herd has a client 0");
    Observation { others: runs.collect(), iut, ..observed(journal, json!({}), &[]) }
}

/// A herd under a quota, at time scale 1: client k's first attempt is refused with a 429
/// asking for `asked_s[k]` seconds in `retry-after` (none for 0), and its second starts
/// `waited_ms[k]` after the refusal ended.
fn refused_herd(asked_s: &[u32], waited_ms: &[f64]) -> Observation {
    refused_herd_of(2, asked_s, waited_ms)
}

/// [`refused_herd`] with `attempts` attempts a client (1: none came back after its 429).
fn refused_herd_of(attempts: usize, asked_s: &[u32], waited_ms: &[f64]) -> Observation {
    let mut observation = herd(&vec![attempts; asked_s.len()], waited_ms, &vec![true; asked_s.len()]);
    for entry in observation.journal.iter_mut().filter(|e| e.attempt == Some(0)) {
        let asked = asked_s[entry.client.unwrap_or(0) as usize];
        entry.status = Some(429);
        if asked > 0 {
            entry.response_headers.insert("retry-after".to_owned(), asked.to_string());
        }
    }
    observation
}

/// The sub-session's request after its search, carrying `output` as the web_search result.
fn after_search(output: &str) -> JournalEntry {
    request(
        0,
        "sub",
        json!({"input": [
            {"role": "user", "content": "research"},
            {"type": "function_call", "call_id": "c1", "name": "web_search", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": output},
        ]}),
    )
}

/// The `squall:huge-output` fixture (IUT contract): `BEGIN `, about 1 MB of `retry `, ` END`.
fn huge_output() -> String {
    format!("BEGIN {} END", "retry ".repeat(175_000))
}

fn cut_output() -> String {
    let huge = huge_output();
    format!("{}\n…[1040000 bytes omitted]…\n{}", &huge[..4000], &huge[huge.len() - 4000..])
}

const EVENTS: &str = ".agents/sessions/s1/events.jsonl";

/// A failed deep-research Task that did what PRD-0006 asks: its report states the error and
/// cites what the search returned, its events file records the runtime.error.
fn failed_task(report: &str, events: &str, result_changes: Value) -> Observation {
    let mut result = json!({
        "ok": false, "stop_reason": "error", "error_type": "ProviderTimeoutException",
        "error_message": "the provider went silent", "report_path": "report.md", "events_path": EVENTS,
        "sub_session_id": "s1",
        "final_text": "The research failed: the provider timed out. Shall I retry?",
    });
    for (field, value) in result_changes.as_object().into_iter().flatten() {
        result[field] = value.clone();
    }
    let search = after_search("1. https://example.invalid/retry-study — a study of retries");
    observed(vec![search], result, &[("report.md", report), (EVENTS, events)])
}

const GOOD_REPORT: &str = "# Deep research\nFailed with ProviderTimeoutException. Sources so far: \
https://example.invalid/retry-study; events in .agents/sessions/s1/events.jsonl.";
const ERROR_LINE: &str = r#"{"type":"runtime.error","phase":"streaming","error_type":"ProviderTimeoutException"}"#;

/// (step, evidence, the verdict it must get).
pub(super) fn cases() -> Vec<(&'static str, Observation, Verdict)> {
    let three = || observed((0..3).map(|n| request(n, "main", json!({}))).collect(), json!({"ok": false}), &[]);
    let good = || failed_task(GOOD_REPORT, ERROR_LINE, json!({}));
    let bad = || failed_task("(empty)", "", json!({"events_path": "elsewhere/events.jsonl", "final_text": "Done."}));
    vec![
        ("the server sees at most 3 attempts", three(), Pass),
        ("the server sees at most 2 attempts", three(), Fail),
        (
            "the request after the tool call carries the tool output cut head and tail around a marker",
            observed(vec![after_search(&cut_output())], json!({}), &[]),
            Pass,
        ),
        (
            "the request after the tool call carries the tool output cut head and tail around a marker",
            observed(vec![after_search(&huge_output())], json!({}), &[]),
            Fail,
        ),
        (
            "the request after the tool call carries the tool output cut head and tail around a marker",
            observed(vec![after_search(&huge_output()[..8000])], json!({}), &[]),
            Fail,
        ),
        (
            "the request after the tool call carries at most 64 KB of tool output",
            observed(vec![after_search(&cut_output())], json!({}), &[]),
            Pass,
        ),
        (
            "the request after the tool call carries at most 64 KB of tool output",
            observed(vec![after_search(&huge_output())], json!({}), &[]),
            Fail,
        ),
        ("the task result has ok false", good(), Pass),
        ("the task result has ok true", good(), Fail),
        ("the task result has the fields error_type, error_message, report_path", good(), Pass),
        (
            "the task result has the fields error_type, error_message, report_path",
            failed_task(GOOD_REPORT, ERROR_LINE, json!({"error_message": ""})),
            Fail,
        ),
        ("the task result has stop_reason \"error\"", good(), Pass),
        ("the task result has stop_reason \"end_turn\"", good(), Fail),
        ("the report is not empty and not \"(empty)\"", good(), Pass),
        ("the report is not empty and not \"(empty)\"", bad(), Fail),
        ("the report contains \"ProviderTimeoutException\"", good(), Pass),
        ("the report contains \"ProviderTimeoutException\"", bad(), Fail),
        ("the report states the error of the task result", good(), Pass),
        ("the report states the error of the task result", bad(), Fail),
        ("the report points to the sources the sub-session collected", good(), Pass),
        ("the report points to the sources the sub-session collected", bad(), Fail),
        ("every path the report names exists", good(), Pass),
        ("every path the report names exists", failed_task("See /nowhere/at/all.txt", ERROR_LINE, json!({})), Fail),
        ("the task's events file records the runtime.error", good(), Pass),
        (
            "the task's events file records the runtime.error",
            failed_task(GOOD_REPORT, "{\"type\":\"provider.retry\"}", json!({})),
            Fail,
        ),
        ("the task events are under .agents/sessions/<sub_session_id>/events.jsonl", good(), Pass),
        ("the task events are under .agents/sessions/<sub_session_id>/events.jsonl", bad(), Fail),
        ("the task summary is at most 200 bytes", good(), Pass),
        ("the task summary is at most 20 bytes", good(), Fail),
        ("the turn ends with a message that reports the failure and suggests a retry", good(), Pass),
        ("the turn ends with a message that reports the failure and suggests a retry", bad(), Fail),
        ("every client of the herd makes at most 7 attempts", herd(&[7, 3, 7], &[1000.0; 3], &[false; 3]), Pass),
        ("every client of the herd makes at most 7 attempts", herd(&[7, 11, 7], &[1000.0; 3], &[false; 3]), Fail),
        // A client that sent nothing does not hide in a herd that met the bound.
        ("every client of the herd makes at most 7 attempts", herd(&[7, 0, 7], &[1000.0; 3], &[false; 3]), Fail),
        ("every client of the herd ends with ok true", herd(&[2, 2], &[1000.0; 2], &[true, true]), Pass),
        ("every client of the herd ends with ok true", herd(&[2, 2], &[1000.0; 2], &[true, false]), Fail),
        (
            "the herd's first retries spread over at least 0.2 seconds",
            herd(&[2; 4], &[1030.0, 1810.0, 1450.0, 1222.0], &[true; 4]),
            Pass,
        ),
        // Lockstep: every client waits its 1 s to the millisecond.
        ("the herd's first retries spread over at least 0.2 seconds", herd(&[2; 4], &[1000.0; 4], &[true; 4]), Fail),
        // One client retried: no spread to see.
        ("the herd's first retries spread over at least 0.2 seconds", herd(&[2, 1], &[1000.0, 0.0], &[true; 2]), Fail),
        (
            "every client of the herd waits each 429's retry-after before its next attempt",
            refused_herd(&[30, 12, 30], &[30_000.0, 12_400.0, 31_000.0]),
            Pass,
        ),
        // Client 1 backs off 1 s where the quota asked for 12.
        (
            "every client of the herd waits each 429's retry-after before its next attempt",
            refused_herd(&[30, 12, 30], &[30_000.0, 1_000.0, 31_000.0]),
            Fail,
        ),
        // Any check, judged on each client alone: client 1's third attempt fails the herd.
        ("every client of the herd: the server sees exactly 2 attempts", herd(&[2, 2], &[1000.0; 2], &[true; 2]), Pass),
        ("every client of the herd: the server sees exactly 2 attempts", herd(&[2, 3], &[1000.0; 2], &[true; 2]), Fail),
        // No 429 asked for a wait: nothing to decide, whatever the clients did.
        (
            "every client of the herd waits each 429's retry-after before its next attempt",
            refused_herd(&[0, 0], &[1_000.0, 1_000.0]),
            Inconclusive,
        ),
        // Asked to wait, no client came back at all: none came back early.
        (
            "every client of the herd waits each 429's retry-after before its next attempt",
            refused_herd_of(1, &[30, 12], &[0.0, 0.0]),
            Pass,
        ),
    ]
}

/// One client at time scale 1/10 that waited `waits_s` (policy seconds) between attempts of
/// 5 ms, its reaction calibrated at exactly 2 ms.
fn waited(waits_s: &[f64]) -> Observation {
    waited_at(0.1, waits_s)
}

/// [`waited`] at time scale `scale`.
fn waited_at(scale: f64, waits_s: &[f64]) -> Observation {
    let mut journal = vec![request(0, "default", json!({}))];
    for (n, wait) in waits_s.iter().enumerate() {
        let ended = journal[n].finished_at_ms.expect("ended");
        let mut entry = request(n + 1, "default", json!({}));
        entry.received_at_ms = ended + 2.0 + wait * 1000.0 * scale;
        entry.finished_at_ms = Some(entry.received_at_ms + 5.0);
        journal.push(entry);
    }
    let clock = CaseClock::new(squall::clock::TimeScale::of(scale), Reaction::exactly(2.0));
    Observation { clock, ..observed(journal, json!({"ok": false}), &[]) }
}

/// The one timing check a step makes.
pub(super) fn timing_of(step: &str) -> super::super::Planned {
    let checks = super::super::StepChecks::for_step(step).expect("a step");
    let mut timed: Vec<_> = checks.timed().collect();
    assert_eq!(timed.len(), 1, "one timing check");
    timed.remove(0)
}

#[test]
fn an_upper_bound_missed_beyond_any_stall_of_the_machine_needs_no_slower_run() {
    let cap = timing_of("the waits level off at a cap");
    let find = |observation: &Observation| cap.timing.find(observation, &cap.args);
    // An uncapped backoff misses the cap by minutes (its last wait 512 s, 154 s past 1.4 × 256 s):
    // 6.1 s of real time at 1/25, 15 s at 1/10 — beyond the second a busy machine is allowed to
    // have held the client back at each wait (at 1/25, 5 s would have sent it to a 103 s run).
    let uncapped: Vec<f64> = (0..10).map(|n| 2f64.powi(n)).collect();
    for scale in [0.04, 0.1] {
        let found = find(&waited_at(scale, &uncapped));
        assert!(found.reading == Reading::Misses && found.certain, "at {scale}: {found:?}");
    }
    // A last wait 1.2 s past 1.4 × 32 s is 120 ms of real time: a busy moment could explain it.
    let mut nearly = uncapped[..6].to_vec();
    nearly.extend([32.0, 32.0, 46.0]);
    for scale in [0.04, 0.1] {
        let found = find(&waited_at(scale, &nearly));
        assert!(found.reading == Reading::Misses && !found.certain, "at {scale}: {found:?}");
    }
    // Waits that level off are judged at once.
    nearly[8] = 32.0;
    assert_eq!(find(&waited(&nearly)).reading, Reading::Holds);
}

#[test]
fn a_jitter_too_wide_for_the_cap_asks_for_more_draws_not_a_slower_run() {
    let cap = super::super::StepChecks::for_step("the waits level off at a cap").expect("a step");
    let judge = |waits: &[f64]| cap.judge(&waited(waits), Level::Wire, false).remove(0);
    // A full jitter under a cap (boto3's kind): wait 8 is a fifth of wait 7, so the last three
    // waits (here growing 10×) tell nothing of the cap.
    let full = judge(&[0.03, 0.08, 0.15, 0.31, 0.52, 1.2, 6.14, 1.14, 12.08, 15.04]);
    assert!(matches!((full.record.verdict, &full.unsure), (Inconclusive, Some(Unsure::Draws(_)))), "{full:?}");
    assert!(full.record.observed.starts_with("cannot decide: the client's jitter is wider"), "{full:?}");
    // A drop a busy machine's moment at a wait (25 ms real: 0.25 s here) could explain is no
    // evidence of jitter: a client capped at 0.5 s, its sixth wait stretched 0.25 s, levels off.
    let stretched = judge(&[0.1, 0.2, 0.4, 0.5, 0.5, 0.75, 0.5, 0.5, 0.5, 0.5]);
    assert_eq!(stretched.record.verdict, Pass, "{stretched:?}");
    // A −25 % jitter levels off, and doubling does not.
    let narrow = judge(&[0.42, 0.83, 1.63, 3.91, 7.44, 7.14, 6.22, 7.16, 7.68, 7.79]);
    assert_eq!(narrow.record.verdict, Pass, "{narrow:?}");
    let doubling: Vec<f64> = (0..10).map(|n| 2f64.powi(n)).collect();
    assert_eq!(judge(&doubling).record.verdict, Fail);
}

#[test]
fn a_jitter_too_wide_for_growth_asks_for_more_draws_and_waits_that_never_grow_fourfold_still_fail() {
    let growth = super::super::StepChecks::for_step("the waits between attempts grow exponentially").expect("a step");
    let judge = |waits: &[f64]| growth.judge(&waited(waits), Level::Wire, false).remove(0);
    let inconclusive = |waits: &[f64]| {
        let found = judge(waits);
        assert!(matches!((found.record.verdict, &found.unsure), (Inconclusive, Some(Unsure::Draws(_)))), "{found:?}");
        assert!(found.record.observed.starts_with("cannot decide: the client's jitter is wider"), "{found:?}");
    };
    // A full jitter under an 8 s cap (a random share of min(0.5 s × 2^n, 8 s)), drawn: its
    // capped 4th to 6th waits (3.78, 3.79, 5.31 s) read as still growing and not doubling — it
    // failed — and its 7th wait is a tenth of the 6th.
    inconclusive(&[0.29, 0.46, 1.68, 3.78, 3.79, 5.31, 0.49, 5.61, 5.18, 7.94]);
    // A constant backoff of 4 s with a full jitter, drawn: its draws grew — it passed.
    inconclusive(&[0.28, 0.36, 1.7, 3.31, 0.5, 0.89]);
    // Waits that never grow fourfold fail, whatever their jitter.
    assert_eq!(judge(&[1.9, 0.7, 1.6, 0.8, 1.9, 1.0]).record.verdict, Fail);
    // A −25 % jitter (the OpenAI SDKs', capped at 8 s) is read, and so are linear waits.
    assert_eq!(judge(&[0.42, 0.83, 1.63, 3.91, 7.44, 7.14, 6.22, 7.16, 7.68, 7.79]).record.verdict, Pass);
    let linear: Vec<f64> = (1..=10).map(f64::from).collect();
    assert_eq!(judge(&linear).record.verdict, Fail);
}

#[test]
fn a_wait_a_busy_moment_made_too_long_is_met_and_one_beyond_the_moment_or_the_margin_is_not() {
    let schedule = timing_of("the first 5 waits follow 1 s × 2^n plus a jitter between 0 and 1 s");
    let judge = |waits: &[f64]| schedule.timing.find(&waited(waits), &schedule.args);
    // A correct client's first wait 12 ms of real time longer than its window allows (a busy
    // machine's moment), at 1/10 with a noise of 0.01 s.
    let held_back = judge(&[2.12, 2.51, 4.64, 8.01, 16.90]);
    assert_eq!(held_back.reading, Reading::Holds, "{held_back:?}");
    assert!(held_back.observed.contains("met if the machine held the client back"), "{}", held_back.observed);
    // A 2 s base is a second out of its windows from the second wait: still a miss.
    assert_eq!(judge(&[2.5, 4.5, 8.5, 16.5, 32.5]).reading, Reading::Misses);
    // The allowance is 25 ms of real time at a wait: 20 ms past a window passes (0.2 s at
    // 1/10), 30 ms does not, and neither does a whole margin (0.5 s) past.
    assert_eq!(judge(&[1.5, 3.2, 4.5, 8.5, 16.5]).reading, Reading::Holds);
    assert_eq!(judge(&[1.5, 3.3, 4.5, 8.5, 16.5]).reading, Reading::Misses);
    assert_eq!(judge(&[1.5, 3.51, 4.5, 8.5, 16.5]).reading, Reading::Misses);
    // A lower bound is not loosened: a first wait under a second stays a miss.
    assert_eq!(judge(&[0.95, 2.5, 4.5, 8.5, 16.5]).reading, Reading::Misses);
}

#[test]
fn a_lower_bound_passes_only_where_a_busy_machines_moment_could_not_have_faked_it() {
    let at_least = timing_of("attempt 2 starts at least 3 seconds after attempt 1 ends");
    let find = |scale: f64, wait: f64| at_least.timing.find(&waited_at(scale, &[wait]), &at_least.args);
    // At 1/100 its 1 s margin is 10 ms of real time: a client that waited 2 s and was held back
    // 14 ms shows 3.4 s. As measured that passes; with the moment allowed it cannot be decided.
    let held = find(0.01, 3.4);
    assert_eq!(held.reading, Reading::Undecided, "{held:?}");
    assert!(held.observed.contains("could make it look met"), "{}", held.observed);
    // At 1/25 the margin is 40 ms: the wait passes. A wait short of the bound misses at any scale.
    assert_eq!(find(0.04, 3.4).reading, Reading::Holds);
    assert_eq!(find(0.01, 2.8).reading, Reading::Misses);
    // Where nothing can hold the client back, the measurement stands as it is.
    let measured = waited_at(0.01, &[3.4]);
    let exact = Observation { clock: measured.clock.clone().with_machine(Allowance::NONE), ..measured };
    assert_eq!(at_least.timing.find(&exact, &at_least.args).reading, Reading::Holds);
}

#[test]
fn a_herd_whose_lockstep_cannot_be_run_is_inconclusive_at_once_and_one_not_yet_measured_runs_again() {
    let spread = super::super::StepChecks::for_step("the herd's first retries spread over at least 0.2 seconds")
        .expect("a step");
    let spread_by = |reaction: Reaction| {
        let mut observation = herd(&[2; 4], &[1030.0, 1810.0, 1450.0, 1222.0], &[true; 4]);
        observation.clock = CaseClock { reaction, ..observation.clock.clone() }.with_lockstep(None);
        spread.judge(&observation, Level::Wire, false).remove(0)
    };
    // Asked to wait 1 ms it waited seconds of its own (boto3's kind): no herd of it can be asked
    // for the same waits, at this scale or a slower one, so no run is asked for.
    let own_waits = Reaction { unasked_wait_ms: vec![900.0, 1900.0], ..Reaction::exactly(2.0) };
    let found = spread_by(own_waits);
    assert!(matches!((found.record.verdict, &found.unsure), (Inconclusive, None)), "{found:?}");
    assert!(found.record.observed.contains("no herd of it can be asked for the same waits"), "{found:?}");
    // A client that waits as asked, its lockstep herd not measured (yet): a slower run measures it.
    let found = spread_by(Reaction::exactly(2.0));
    assert!(matches!((found.record.verdict, &found.unsure), (Inconclusive, Some(Unsure::Slower(_)))), "{found:?}");
}
