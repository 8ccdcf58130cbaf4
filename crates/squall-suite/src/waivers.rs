//! Waivers: known gaps accepted on the record instead of hidden. A waivers file (TOML) names a
//! case (`req-0006-001/status-425-is-retried`) or one check of it (`…#the-server-sees-exactly-2-attempts`),
//! why, who owns it, and the date it expires:
//!
//! ```toml
//! [[waiver]]
//! id = "req-0006-001/status-425-is-retried"
//! reason = "our gateway never sends 425; JIRA-123"
//! owner = "alice@example.com"
//! expires = "2027-01-31"
//! ```
//!
//! A waiver turns its failed MUST checks into `waived` — never `pass` — and so its case, and a
//! requirement with nothing worse reads "pass with waivers". From its expiry date on it is
//! ignored, and says so. A waiver cannot accept an `error` or `inconclusive`: only a check that
//! was judged and failed. An id no case of the features has is an error naming it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::results::CaseRecord;
use crate::Verdict;

/// One waiver, as the file gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Waiver {
    /// A case id, or a check id (`<case id>#<check>`).
    pub id: String,
    /// Why the gap is accepted.
    pub reason: String,
    /// Who answers for it.
    pub owner: String,
    /// The date it stops applying, `YYYY-MM-DD` (from that day on it is ignored).
    pub expires: String,
}

/// What became of a waiver in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaiverStatus {
    /// It accepted failed MUST checks.
    Applied,
    /// Its case ran and nothing of it failed: nothing to accept.
    Unused,
    /// Its case did not run (another shard, a tag filter).
    NotRun,
    /// Its date has passed: ignored.
    Expired,
}

impl WaiverStatus {
    /// `applied`, `unused`, `not_run` or `expired`, as report.json writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            WaiverStatus::Applied => "applied",
            WaiverStatus::Unused => "unused",
            WaiverStatus::NotRun => "not_run",
            WaiverStatus::Expired => "expired",
        }
    }
}

/// A waiver and what it did, as reports list it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaiverRecord {
    /// The waiver.
    #[serde(flatten)]
    pub waiver: Waiver,
    /// What became of it.
    pub status: WaiverStatus,
    /// The checks it turned from `fail` to `waived` (`<case id>#<check>`).
    pub waived: Vec<String>,
}

impl WaiverRecord {
    /// Its columns as reports show them: id, reason, owner, expires, status, checks waived.
    pub fn columns(&self) -> [String; 6] {
        let w = &self.waiver;
        let waived = if self.waived.is_empty() { "none".to_owned() } else { self.waived.join(", ") };
        [w.id.clone(), w.reason.clone(), w.owner.clone(), w.expires.clone(), self.status.as_str().to_owned(), waived]
    }
}

/// The header of [`WaiverRecord::columns`].
pub const WAIVER_COLUMNS: [&str; 6] = ["Waiver", "Reason", "Owner", "Expires", "Status", "Checks waived"];

/// A waivers file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum WaiverError {
    /// Unreadable or not the expected TOML.
    #[error("{file}: {message}")]
    File {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A waiver whose id no case has, or whose date is not a date.
    #[error("{file}: waiver `{id}`: {message}")]
    Waiver {
        /// The file.
        file: String,
        /// The waiver's id.
        id: String,
        /// What is wrong.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WaiversFile {
    #[serde(default)]
    waiver: Vec<Waiver>,
}

/// The waivers in `path`, each checked: its date a date, its id one of `known` case ids (or a
/// check of one).
pub fn read(path: &Path, known: &[String]) -> Result<Vec<Waiver>, WaiverError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| WaiverError::File { file: file.clone(), message: format!("cannot read: {e}") })?;
    let parsed: WaiversFile = toml::from_str(&text)
        .map_err(|e| WaiverError::File { file: file.clone(), message: format!("not a waivers file: {e}") })?;
    for waiver in &parsed.waiver {
        let problem = |message: String| WaiverError::Waiver { file: file.clone(), id: waiver.id.clone(), message };
        if !is_date(&waiver.expires) {
            return Err(problem(format!("expires `{}` is not a date (YYYY-MM-DD)", waiver.expires)));
        }
        if waiver.reason.trim().is_empty() || waiver.owner.trim().is_empty() {
            return Err(problem("a waiver needs a reason and an owner".to_owned()));
        }
        if !known.iter().any(|id| *id == case_part(&waiver.id)) {
            return Err(problem(
                "no case has this id (`squall cases` lists them; a check is `<case id>#<check>`)".into(),
            ));
        }
    }
    Ok(parsed.waiver)
}

fn is_date(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let widths = parts.iter().map(|p| p.len()).collect::<Vec<_>>();
    widths == [4, 2, 2]
        && parts.iter().all(|p| p.chars().all(|c| c.is_ascii_digit()))
        && humantime::parse_rfc3339(&format!("{text}T00:00:00Z")).is_ok()
}

/// The case id of a case or check id.
fn case_part(id: &str) -> &str {
    id.split_once('#').map_or(id, |(case, _)| case)
}

/// The id of a case's check: `<case id>#<the check's name, lowercased, words joined by ->`.
pub fn check_id(case: &CaseRecord, check: &str) -> String {
    let lower = check.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    format!("{}#{}", case.id, words.join("-"))
}

/// Today, `YYYY-MM-DD` in UTC.
pub fn today() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()[..10].to_owned()
}

/// Apply `waivers` to `cases` (each case once) on `today`: their failed MUST checks become
/// `waived`, and their cases' verdicts follow. Returns what became of each waiver.
pub fn apply(cases: &mut [CaseRecord], waivers: &[Waiver], today: &str) -> Vec<WaiverRecord> {
    waivers
        .iter()
        .map(|waiver| {
            let status_of = |status| WaiverRecord { waiver: waiver.clone(), status, waived: Vec::new() };
            if waiver.expires.as_str() <= today {
                return status_of(WaiverStatus::Expired);
            }
            let mut record = status_of(WaiverStatus::NotRun);
            for case in cases.iter_mut().filter(|c| c.id == case_part(&waiver.id)) {
                record.status = WaiverStatus::Unused;
                let ids: Vec<String> = case.checks.iter().map(|c| check_id(case, &c.name)).collect();
                for (check, id) in case.checks.iter_mut().zip(ids) {
                    let named = waiver.id == case.id || waiver.id == id;
                    if named && check.verdict == Verdict::Fail {
                        check.verdict = Verdict::Waived;
                        record.waived.push(id);
                    }
                }
                if case.verdict == Verdict::Fail {
                    case.verdict = Verdict::worst(case.checks.iter().map(|c| c.verdict));
                }
            }
            if !record.waived.is_empty() {
                record.status = WaiverStatus::Applied;
            }
            record
        })
        .collect()
}

#[cfg(test)]
mod tests;
