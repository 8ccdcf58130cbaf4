//! The service's documents, held to docs/service.md's examples (every field, no more), and its
//! judging of a posted outcome without HTTP.

use serde_json::{json, Value};

use super::*;
use crate::doc_examples::{json_blocks, paths};
use squall::server::PostedOutcome;

fn service() -> CaseService {
    let plans = crate::cases::from_texts(crate::features::embedded_features().iter().copied())
        .expect("the built-in features read");
    CaseService::new(plans, Catalogue::embedded().expect("the built-in catalogue"))
}

fn examples() -> Vec<Value> {
    json_blocks(include_str!("../../../../docs/service.md"))
}

fn same_fields(documented: &Value, actual: &Value, opaque: &[&str]) {
    let (documented, actual) = (paths(documented, opaque), paths(actual, opaque));
    let undocumented: Vec<&String> = actual.difference(&documented).collect();
    let gone: Vec<&String> = documented.difference(&actual).collect();
    assert!(undocumented.is_empty(), "fields missing from docs/service.md: {undocumented:?}");
    assert!(gone.is_empty(), "docs/service.md names fields that are not there: {gone:?}");
}

const CASE: &str = "req-0006-001/status-503-is-retried";

fn request(body: Value) -> CaseRunRequest {
    serde_json::from_value(body).expect("a request")
}

/// What the service answers for `run`, as JSON.
fn judged(service: &CaseService, ticket: &Ticket, outcome: Value) -> Value {
    let outcome: PostedOutcome = serde_json::from_value(outcome).expect("an outcome");
    let run = JudgedRun { id: "r3-x".into(), journal: Vec::new(), outcome, posted_at_ms: 0.0 };
    serde_json::to_value(CaseJudge::judge(service, ticket, run).expect("judged")).expect("JSON")
}

fn urls() -> RunUrls {
    RunUrls {
        id: "r3-x".into(),
        base_url: "http://h/runs/r3-x/v1".into(),
        anthropic_base_url: "http://h/runs/r3-x".into(),
        clients: Vec::new(),
    }
}

#[test]
fn the_documented_case_list_run_and_verdict_have_exactly_the_fields_served() {
    let service = service();
    let examples = examples();
    let query = CasesQuery { profiles: vec!["prd-0006".into()], ..CasesQuery::default() };
    let list = serde_json::to_value(service.cases(&query).expect("cases")).expect("JSON");
    same_fields(&examples[0], &list, &["scenario"]);
    let prepared = service.prepare(CASE, &request(json!({"session": "ci-42"}))).expect("a run");
    let welcome = serde_json::to_value(service.welcome(&prepared.ticket, &urls())).expect("JSON");
    same_fields(&examples[1], &welcome, &["env"]);
    let verdict = judged(&service, &prepared.ticket, json!({"result": {"ok": false}}));
    same_fields(&examples[2], &verdict, &["reaction_ms"]);
}

#[test]
fn a_posted_outcome_is_judged_by_the_cases_checks_on_the_runs_journal() {
    let service = service();
    let prepared = service.prepare(CASE, &request(json!({}))).expect("a run");
    // No request reached the server, yet the client says it succeeded.
    let verdict = judged(&service, &prepared.ticket, json!({"result": {"ok": true}}));
    assert_eq!(verdict["verdict"], "fail", "{verdict}");
    assert_eq!(verdict["checks"][0]["observed"], "0 attempts");
    assert_eq!(verdict["checks"].as_array().map(Vec::len), Some(1), "checks stop at the first failed MUST");
    // A client that says nothing cannot be judged.
    let verdict = judged(&service, &prepared.ticket, json!({}));
    assert_eq!((verdict["verdict"].as_str(), verdict["checks"].as_array().map(Vec::len)), (Some("error"), Some(0)));
}

#[test]
fn a_timed_case_asks_for_a_calibration_and_then_runs_where_its_checks_can_judge() {
    let service = service();
    let timed = "req-0006-002/waits-grow-exponentially";
    let prepared = service.prepare(timed, &request(json!({"session": "s"}))).expect("a run");
    assert_eq!(prepared.time_scale, TimeScale::of(0.01), "no reaction measured: the case's own scale");
    let verdict = judged(&service, &prepared.ticket, json!({"result": {"ok": false}}));
    let note = verdict["time_scale_note"].as_str().unwrap_or("");
    assert!(note.starts_with("session `s` has no calibration"), "{verdict}");
    assert!(verdict["confirm"].is_null(), "nothing to confirm without a calibration");
    // A client that takes 40–60 ms of its own per retry: its timing checks need a slower scale.
    for gaps in [[40.0, 60.0, 50.0], [45.0, 55.0, 58.0]] {
        service.sessions.record("s", TimeScale::of(0.01), gaps.to_vec());
        service.sessions.record("s", TimeScale::of(0.04), gaps.to_vec());
    }
    let prepared = service.prepare(timed, &request(json!({"session": "s"}))).expect("a run");
    assert!(prepared.time_scale > TimeScale::of(0.01), "raised to {}", prepared.time_scale);
    let refused =
        service.prepare(timed, &request(json!({"time_scale": 0.001}))).expect_err("faster than the case").message;
    assert!(refused.contains("runs at 0.01 or slower"), "{refused}");
}

#[test]
fn at_level_events_a_client_that_gave_no_events_is_told_so() {
    let service = service();
    let case = "req-0006-001/exhausting-the-retries-ends-in-runtime-error-and-stop-reason-error";
    let prepared = service.prepare(case, &request(json!({"level": "events"}))).expect("a run");
    let verdict = judged(&service, &prepared.ticket, json!({"result": {"ok": false, "stop_reason": "error"}}));
    let events = verdict["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"].as_str().is_some_and(|n| n.contains("runtime.error")));
    let observed = events.map(|c| c["observed"].as_str().unwrap_or("")).unwrap_or("");
    assert!(observed.starts_with("0 runtime.error event(s): the client gave no events at all"), "{verdict}");
    let prepared = service.prepare(case, &request(json!({"level": "events"}))).expect("a run");
    let given = json!({"result": {"ok": false}, "events": [{"type": "result", "stop_reason": "error"}]});
    let verdict = judged(&service, &prepared.ticket, given);
    assert!(!verdict.to_string().contains("gave no events"), "{verdict}");
}

#[test]
fn a_client_on_squalls_clock_is_told_to_scale_nothing_and_judged_at_its_rate() {
    let service = service();
    let dir = tempfile::tempdir().expect("tempdir");
    let frame = dir.path().join("frame");
    crate::clock::frame_from_now(1.0).create(&frame).expect("a frame");
    let body = json!({"session": "s", "clock_frame": frame.display().to_string()});
    let prepared = service.prepare(CASE, &request(body)).expect("a run");
    assert!(prepared.client_frame.is_some(), "the run's dates follow the runner's frame");
    let welcome = serde_json::to_value(service.welcome(&prepared.ticket, &urls())).expect("JSON");
    assert_eq!((welcome["clock"].as_str(), welcome["clock_rate"].as_f64()), (Some("accelerated"), Some(100.0)));
    assert_eq!((welcome["time_scale"].as_f64(), welcome["client_time_scale"].as_f64()), (Some(0.01), Some(1.0)));
    assert_eq!(welcome["env"]["SQUALL_TIME_SCALE"], "1");
    // It reports the scale it was told: no error for that.
    let verdict = judged(&service, &prepared.ticket, json!({"result": {"ok": false, "time_scale": 1}}));
    assert_eq!(verdict["verdict"], "fail", "{verdict}");
    // A scaled client that says 1 cannot be judged.
    let scaled = service.prepare(CASE, &request(json!({"session": "s"}))).expect("a run");
    let verdict = judged(&service, &scaled.ticket, json!({"result": {"ok": false, "time_scale": 1}}));
    assert_eq!(verdict["verdict"], "error", "{verdict}");
    // A file that is no frame is refused, naming the field.
    std::fs::write(dir.path().join("nope"), b"nope").expect("writes");
    let body = json!({"clock_frame": dir.path().join("nope").display().to_string()});
    let refused = service.prepare(CASE, &request(body)).expect_err("refused");
    assert_eq!(refused.param.as_deref(), Some("clock_frame"), "{}", refused.message);
}
