//! Joining the reports of a sharded run (`squall run --shard K/N` on N machines, then
//! `squall report merge DIR…`): every case once, requirements and profiles judged again from
//! the cases by the verdict module, so the merged report is the report one unsharded run of the
//! same implementation would have written — same cases, verdicts and counts. Each shard took its
//! own calibration; the merged report keeps the first and names them all.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::read::read_report;
use super::schema::{Profiles, Report, Timestamp};
use crate::provenance::CaseOrigin;
use crate::requirements::ProfileSelection;
use crate::results::{by_profile, by_requirement, CaseRecord};
use crate::waivers::{apply, Waiver};
use crate::{RunVerdict, Tally};

/// Reports that cannot be joined.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no report to merge: name the directories the shards wrote")]
    Nothing,
    /// A report that cannot be read: the message names the file.
    #[error("{0}")]
    Read(String),
    /// Reports of different runs.
    #[error("{path} is not a shard of the same run as {first}: its {field} is {found}, not {expected}")]
    Mismatch {
        /// The report that differs.
        path: PathBuf,
        /// The first report.
        first: PathBuf,
        /// What differs.
        field: &'static str,
        /// The first report's value.
        expected: String,
        /// This one's.
        found: String,
    },
    /// A case judged in two reports: overlapping shards, or one shard given twice.
    #[error("case `{case}` is in both {first} and {second}: shards are disjoint (was one given twice?)")]
    Overlap {
        /// The case (its feature and name).
        case: String,
        /// One report.
        first: PathBuf,
        /// The other.
        second: PathBuf,
    },
}

/// The report in each directory (or the file itself), read ([`super::read::read_report`]).
pub fn read_reports(paths: &[PathBuf]) -> Result<Vec<(PathBuf, Report)>, MergeError> {
    paths.iter().map(|path| read_report(path).map_err(MergeError::Read)).collect()
}

/// The reports of one run's shards, joined.
pub fn merge(reports: Vec<(PathBuf, Report)>) -> Result<Report, MergeError> {
    let mut reports = reports.into_iter();
    let (first_path, first) = reports.next().ok_or(MergeError::Nothing)?;
    let mut cases: BTreeMap<(String, String), (PathBuf, CaseRecord)> = BTreeMap::new();
    let mut calibrations = Vec::new();
    let mut shard_origins: Vec<CaseOrigin> = Vec::new();
    let mut merged = first.clone();
    for (path, report) in std::iter::once((first_path.clone(), first.clone())).chain(reports) {
        same_run(&first_path, &first, &path, &report)?;
        calibrations.push(format!("{}: {}", path.display(), report.calibration.summary));
        shard_origins.extend(report.provenance.iter().flat_map(|p| p.cases.iter().cloned()));
        merged.started_at = Timestamp(merged.started_at.0.min(report.started_at.0));
        merged.duration_ms = merged.duration_ms.max(report.duration_ms);
        for case in unique_cases(&report) {
            let key = (case.feature.clone(), case.name.clone());
            if let Some((other, _)) = cases.get(&key) {
                return Err(MergeError::Overlap {
                    case: format!("{}: {}", key.0, key.1),
                    first: other.clone(),
                    second: path.clone(),
                });
            }
            cases.insert(key, (path.clone(), case.clone()));
        }
    }
    let cases: Vec<CaseRecord> = cases.into_values().map(|(_, case)| case).collect();
    if calibrations.len() > 1 {
        merged.calibration.summary = format!("each shard measured its own: {}", calibrations.join("; "));
    }
    if let Some(provenance) = merged.provenance.as_mut() {
        provenance.cases = cases.iter().filter_map(|c| origin_in(c, &shard_origins)).collect();
    }
    Ok(rejudged(merged, cases))
}

/// `report` judged again from `cases` (each once): requirements, profiles, tallies, verdict.
fn rejudged(mut report: Report, cases: Vec<CaseRecord>) -> Report {
    let judged: Vec<&str> = report.profiles.judged.iter().map(|p| p.id.as_str()).collect();
    let selection = ProfileSelection::parse(&judged).unwrap_or_default();
    let requirements = by_requirement(&cases);
    let case_summary = Tally::of(cases.iter().map(|c| c.verdict));
    report.profiles = Profiles { judged: by_profile(&selection, &requirements), ..report.profiles.clone() };
    report.summary = Tally::of(requirements.iter().map(|r| r.verdict));
    report.verdict = RunVerdict::of(case_summary, requirements.iter().map(|r| r.verdict));
    report.case_summary = case_summary;
    report.requirements = requirements;
    report
}

/// `report` with `waivers` applied on `today` (a merged report's; `squall run` waives its
/// outcome before it writes the report): every waiver listed with what became of it.
pub fn waive(report: Report, waivers: &[Waiver], today: &str) -> Report {
    let mut cases: Vec<CaseRecord> = unique_cases(&report).into_iter().cloned().collect();
    let records = apply(&mut cases, waivers, today);
    let mut report = rejudged(report, cases);
    report.waivers = records;
    report
}

fn origin_in(case: &CaseRecord, origins: &[CaseOrigin]) -> Option<CaseOrigin> {
    origins.iter().find(|o| o.id == case.id).cloned()
}

/// Each case of a report once (a case of two requirements is listed under both).
pub fn unique_cases(report: &Report) -> Vec<&CaseRecord> {
    let mut seen = std::collections::BTreeSet::new();
    report.cases().filter(|c| seen.insert((c.feature.as_str(), c.name.as_str()))).collect()
}

/// Shards of one run judge one implementation at one level, the same profiles and tags.
fn same_run(first_path: &Path, first: &Report, path: &Path, report: &Report) -> Result<(), MergeError> {
    let profiles = |r: &Report| r.profiles.judged.iter().map(|p| p.id.clone()).collect::<Vec<_>>().join(",");
    let fields: [(&'static str, String, String); 4] = [
        ("implementation (iut.run_as)", first.iut.run_as.clone(), report.iut.run_as.clone()),
        ("level", first.iut.level.as_str().to_owned(), report.iut.level.as_str().to_owned()),
        ("judged profiles", profiles(first), profiles(report)),
        ("tag expression", format!("{:?}", first.tags), format!("{:?}", report.tags)),
    ];
    match fields.into_iter().find(|(_, expected, found)| expected != found) {
        None => Ok(()),
        Some((field, expected, found)) => {
            Err(MergeError::Mismatch { path: path.to_owned(), first: first_path.to_owned(), field, expected, found })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept() -> Report {
        let text = super::super::read::gunzip(include_bytes!("../../../../reports/reference/report.json.gz"));
        serde_json::from_str(&text.expect("the kept report decompresses")).expect("the kept report reads")
    }

    #[test]
    fn one_report_merges_into_itself() {
        let report = kept();
        let merged = merge(vec![("a".into(), report.clone())]).expect("merges");
        assert_eq!(
            (merged.verdict, merged.summary, merged.case_summary),
            (report.verdict, report.summary, report.case_summary)
        );
        assert_eq!(merged.requirements, report.requirements);
        assert_eq!(merged.profiles, report.profiles);
    }

    #[test]
    fn reports_of_other_runs_are_refused_with_what_differs() {
        let report = kept();
        let mut other = report.clone();
        other.iut.level = crate::Level::Wire;
        other.requirements.clear();
        let error = merge(vec![("a".into(), report.clone()), ("b".into(), other)]).expect_err("another level");
        assert_eq!(error.to_string(), "b is not a shard of the same run as a: its level is wire, not tasks");
        assert_eq!(
            merge(Vec::new()).expect_err("nothing").to_string(),
            "no report to merge: name the directories the shards wrote"
        );
        let unreadable = read_reports(&["no/such/dir".into()]).expect_err("no file").to_string();
        assert!(unreadable.starts_with("no/such/dir: cannot read the report"), "{unreadable}");
    }
}
