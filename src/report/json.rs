//! `report.json`: the public report schema (documented in `docs/reports.md`). The other
//! formats render this value, so they cannot disagree with it.

use serde_json::{json, Value};

use super::{timestamp, ReportMeta};
use crate::journal::JournalEntry;
use crate::suite::{CaseRecord, SuiteOutcome, Verdict};

/// Request bodies in the evidence are cut to this many bytes per string.
const EVIDENCE_STRING_BYTES: usize = 2048;

pub fn report(meta: &ReportMeta, outcome: &SuiteOutcome) -> Value {
    let requirements: Vec<Value> = outcome
        .requirements
        .iter()
        .map(|r| json!({"id": r.id, "title": r.title, "verdict": r.verdict.as_str(), "cases": r.cases.iter().map(case).collect::<Vec<_>>()}))
        .collect();
    let count = |v: Verdict| outcome.requirements.iter().filter(|r| r.verdict == v).count();
    let (pass, fail, na, error) = outcome.counts();
    json!({
        "iut": {"name": meta.name, "command": meta.command, "level": meta.level.as_str()},
        "squall_version": env!("CARGO_PKG_VERSION"),
        "started_at": timestamp(outcome.started_at),
        "duration_ms": outcome.duration.as_millis() as u64,
        "time_scale": meta.time_scale,
        "summary": {"pass": count(Verdict::Pass), "fail": count(Verdict::Fail), "n/a": count(Verdict::NotApplicable), "error": count(Verdict::Error)},
        "case_summary": {"pass": pass, "fail": fail, "n/a": na, "error": error},
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
        "checks": record.checks.iter().map(|c| json!({"name": c.name, "level": c.level.as_str(), "verdict": c.verdict.as_str(), "expected": c.expected, "observed": c.observed})).collect::<Vec<_>>(),
        "evidence": {
            "journal": record.evidence.journal.iter().map(journal_entry).collect::<Vec<_>>(),
            "events": record.evidence.events,
            "result": record.evidence.result,
            "stderr": record.evidence.stderr,
        },
    })
}

/// A journal entry with long strings in its body cut, so a report stays readable.
fn journal_entry(entry: &JournalEntry) -> Value {
    let mut value = serde_json::to_value(entry).unwrap_or_default();
    squall_reference::budget::budget_value(&mut value["body"], EVIDENCE_STRING_BYTES);
    value
}
