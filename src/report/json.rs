//! `report.json`: the public report schema (documented in `docs/reports.md`; fields are added,
//! never renamed). The other formats render this value, so they cannot disagree with it.

use serde_json::{json, Value};

use super::{timestamp, ReportMeta};
use crate::journal::JournalEntry;
use crate::suite::timing::{Calibration, Reaction};
use crate::suite::{CaseRecord, SuiteOutcome};

/// Request bodies in the evidence are cut to this many bytes per string.
const EVIDENCE_STRING_BYTES: usize = 2048;

pub(super) fn report(meta: &ReportMeta, outcome: &SuiteOutcome) -> Value {
    let requirements: Vec<Value> = outcome
        .requirements
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "title": r.title,
                "profile": r.profile,
                "verdict": r.verdict.as_str(),
                "cases_tally": r.cases_tally,
                "checks_tally": r.checks_tally,
                "cases": r.cases.iter().map(case).collect::<Vec<_>>(),
            })
        })
        .collect();
    let not_judged: Vec<Value> =
        outcome.selection.others().iter().map(|p| json!({"id": p.id, "title": p.title})).collect();
    json!({
        "iut": {"name": meta.name, "command": meta.command, "run_as": meta.run_as, "level": meta.level.as_str()},
        "squall_version": env!("CARGO_PKG_VERSION"),
        "started_at": timestamp(outcome.started_at),
        "duration_ms": outcome.duration.as_millis() as u64,
        "time_scale": meta.time_scale,
        "max_time_scale": meta.max_time_scale,
        "calibration": calibration(&outcome.calibration),
        "case_timeout_s": meta.case_timeout.as_secs_f64(),
        "concurrency": meta.concurrency,
        "verdict": outcome.verdict().as_str(),
        "profiles": {"judged": outcome.profiles, "not_judged": not_judged},
        "tags": outcome.tags,
        "summary": outcome.requirements_tally(),
        "case_summary": outcome.cases_tally(),
        "requirements": requirements,
    })
}

fn case(record: &CaseRecord) -> Value {
    json!({
        "name": record.name,
        "feature": record.feature,
        "tags": record.tags,
        "verdict": record.verdict.as_str(),
        "error": record.error,
        "time_scale": record.time_scale,
        "time_scale_note": record.time_scale_note,
        "reaction_ms": record.reaction.as_ref().map(reaction_ms),
        "checks": record.checks,
        "evidence": {
            "journal": record.evidence.journal.iter().map(journal_entry).collect::<Vec<_>>(),
            "events": record.evidence.events,
            "result": record.evidence.result,
            "stderr": record.evidence.stderr,
            "exit_code": record.evidence.exit_code,
            "timed_out": record.evidence.timed_out,
            "duration_ms": record.evidence.duration_ms,
        },
    })
}

/// How the implementation's reaction was measured, and what is taken out of every wait.
fn calibration(calibration: &Calibration) -> Value {
    let r = &calibration.reaction;
    json!({
        "summary": calibration.summary(),
        "reaction_ms": reaction_ms(r),
        "samples": r.samples,
        "unasked_wait_ms": r.unasked_wait_ms,
        "missing": r.missing,
        "scales": calibration.samples,
        "instances": calibration.instances,
        "duration_ms": calibration.duration_ms,
    })
}

/// A reaction as reports give it: median, the center taken out of waits, and its spread (`high`
/// null when nothing was measured).
fn reaction_ms(r: &Reaction) -> Value {
    let finite = |ms: f64| if ms.is_finite() { json!(ms) } else { Value::Null };
    json!({"median": r.median_ms, "center": r.center_ms, "low": r.low_ms, "high": finite(r.high_ms)})
}

/// A journal entry with long strings in its body cut, so a report stays readable.
fn journal_entry(entry: &JournalEntry) -> Value {
    let mut value = serde_json::to_value(entry).unwrap_or_default();
    cut_long_strings(&mut value["body"], EVIDENCE_STRING_BYTES);
    value
}

/// Every string in `value` longer than `max` bytes keeps its head and tail around a note of
/// how much was left out.
fn cut_long_strings(value: &mut Value, max: usize) {
    match value {
        Value::String(text) if text.len() > max => {
            let head = floor_boundary(text, max / 2);
            let tail = ceil_boundary(text, text.len() - max / 2);
            *text = format!("{}…[{} bytes left out of the report]…{}", &text[..head], tail - head, &text[tail..]);
        }
        Value::Array(items) => items.iter_mut().for_each(|item| cut_long_strings(item, max)),
        Value::Object(fields) => fields.values_mut().for_each(|item| cut_long_strings(item, max)),
        _ => {}
    }
}

fn floor_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn ceil_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::cut_long_strings;
    use serde_json::json;

    #[test]
    fn long_strings_keep_head_and_tail_on_character_boundaries() {
        let mut value = json!({"input": [{"text": format!("BEGIN{}END", "é".repeat(5000))}], "n": 1});
        cut_long_strings(&mut value, 100);
        let text = value["input"][0]["text"].as_str().expect("a string");
        assert!(text.starts_with("BEGIN") && text.ends_with("END") && text.contains("bytes left out"), "{text}");
        assert!(text.len() < 200, "{}", text.len());
        assert_eq!(value["n"], 1);
    }
}
