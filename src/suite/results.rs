//! Verdicts: per check, per case, per requirement. What the runner collects and every report
//! renders (`report.json` is this, serialized).

use serde::Serialize;
use serde_json::Value;

use crate::journal::JournalEntry;

/// How much of the IUT contract an implementation follows; checks above it are `n/a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Only the server journal is judged.
    Wire,
    /// Plus `result.json` and `events.jsonl`.
    Events,
    /// Plus Task results and reports.
    Tasks,
}

impl Level {
    pub fn parse(text: &str) -> Option<Level> {
        match text {
            "wire" => Some(Level::Wire),
            "events" => Some(Level::Events),
            "tasks" => Some(Level::Tasks),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Wire => "wire",
            Level::Events => "events",
            Level::Tasks => "tasks",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Verdict {
    #[serde(rename = "pass")]
    Pass,
    #[serde(rename = "fail")]
    Fail,
    /// The implementation's level does not cover this check.
    #[serde(rename = "n/a")]
    NotApplicable,
    /// The harness could not judge (a bad feature, a step without a definition).
    #[serde(rename = "error")]
    Error,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::NotApplicable => "n/a",
            Verdict::Error => "error",
        }
    }

    /// Combine verdicts: any error, else any fail, else any pass, else n/a.
    pub fn combine(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
        let all: Vec<Verdict> = verdicts.into_iter().collect();
        for worst in [Verdict::Error, Verdict::Fail, Verdict::Pass] {
            if all.contains(&worst) {
                return worst;
            }
        }
        Verdict::NotApplicable
    }
}

/// One check: what was expected, what was observed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckRecord {
    pub name: String,
    pub level: Level,
    pub verdict: Verdict,
    pub expected: String,
    pub observed: String,
}

/// What a case leaves behind for a person to look at.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Evidence {
    pub journal: Vec<JournalEntry>,
    pub events: Vec<Value>,
    pub result: Option<Value>,
    pub stderr: String,
}

/// One scenario (or one Examples row of an outline).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseRecord {
    pub name: String,
    pub feature: String,
    pub requirements: Vec<String>,
    pub tags: Vec<String>,
    pub verdict: Verdict,
    pub checks: Vec<CheckRecord>,
    /// Why the case could not be judged, or why the IUT failed to run.
    pub error: Option<String>,
    pub evidence: Evidence,
}

/// All cases of one requirement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequirementResult {
    pub id: String,
    pub title: String,
    pub verdict: Verdict,
    pub cases: Vec<CaseRecord>,
}

/// Group cases by requirement id (a case may count for several), in id order.
pub fn by_requirement(cases: &[CaseRecord]) -> Vec<RequirementResult> {
    let mut ids: Vec<&str> = cases.iter().flat_map(|c| c.requirements.iter().map(String::as_str)).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter()
        .map(|id| {
            let cases: Vec<CaseRecord> =
                cases.iter().filter(|c| c.requirements.iter().any(|r| r == id)).cloned().collect();
            RequirementResult {
                id: id.to_owned(),
                title: requirement_title(id).to_owned(),
                verdict: Verdict::combine(cases.iter().map(|c| c.verdict)),
                cases,
            }
        })
        .collect()
}

/// Titles of the requirements the features encode.
pub fn requirement_title(id: &str) -> &'static str {
    match id {
        "REQ-0006-001" => "Generic provider retry: timeouts, 408/425/429/5xx, Retry-After; final runtime.error",
        "REQ-0006-002" => "Retry is bounded: max_retries = 6 by default, capped exponential backoff",
        "REQ-0006-010" => {
            "Stream breaks (EOF, reset, truncation, stall) become ProviderTimeoutException and are retried"
        }
        "REQ-0006-020" => "Task(deep-research) failure returns ok=false with error and sub-session fields",
        "REQ-0006-021" => "Deep-research reports: structured on success; cause, sources and resume guidance on failure",
        "REQ-0006-030" => "No retry storm: a failed deep research is not relaunched automatically",
        "REQ-0003-001" => "Tool outputs are budgeted head+tail with a marker before entering provider input",
        "REQ-0003-020" => "Task sub-sessions return small JSON with sub_session_id, report_path and a bounded summary",
        "SEED-001-GATE" => {
            "Safety gate: no automatic replay after visible output, tool calls, quota or context overflow"
        }
        "SEED-001-OBSERVABILITY" => {
            "Every failure has a decision record: retryable, gate, retried, attempt, timeout, outcome"
        }
        "SEED-001-TIMEOUT-LADDER" => "Reasoning timeout ladder: 60 s, then one safe retry at 120 s, no third attempt",
        "SEED-002-PROFILES" => "Per-agent retry profiles: a writing agent 0 retries, a read-only agent 1",
        "SEED-002-JITTER" => "Backoff jitter stays within 0-1 s of the exponential schedule",
        "SEED-002-SESSION" => "Retries keep the session id",
        "SEED-004-LIMITS" => "Per-error-kind limits: timeouts 2 attempts, 429/5xx 3",
        "SEED-004-DEGRADE" => "Degrade instead of fail, within 5 minutes",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_combine_worst_first_and_ignore_not_applicable() {
        assert_eq!(Verdict::combine([Verdict::Pass, Verdict::NotApplicable]), Verdict::Pass);
        assert_eq!(Verdict::combine([Verdict::Pass, Verdict::Fail, Verdict::NotApplicable]), Verdict::Fail);
        assert_eq!(Verdict::combine([Verdict::Fail, Verdict::Error]), Verdict::Error);
        assert_eq!(Verdict::combine([Verdict::NotApplicable]), Verdict::NotApplicable);
        assert_eq!(Verdict::combine([]), Verdict::NotApplicable);
    }
}
