//! `squall report diff OLD NEW`: what changed since the last sign-off — requirements and cases
//! that regressed (acceptable before, not now), were fixed, changed otherwise, appeared or
//! disappeared; checks whose observed values moved; provenance that differs. Markdown for a
//! pull-request comment, JSON for tools.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::cell;
use super::schema::Report;
use crate::results::CaseRecord;
use crate::Verdict;

/// The diff's JSON schema id.
pub const DIFF_SCHEMA: &str = "squall-report-diff/1";

/// A decimal in an observed value that moved less than this many seconds is noise: the
/// smallest margin of any of squall's timing checks (docs/requirements.md, margins).
const NOISE_S: f64 = 0.5;

/// Two reports compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportDiff {
    /// `squall-report-diff/1`.
    pub schema: &'static str,
    /// Acceptable before, not now (pass, warn, waived or n/a → fail, error or inconclusive).
    pub regressions: Vec<Change>,
    /// Not acceptable before, acceptable now.
    pub fixes: Vec<Change>,
    /// Other verdict changes (pass → warn, fail → error, …).
    pub changes: Vec<Change>,
    /// Requirements and cases only the new report has.
    pub appeared: Vec<Change>,
    /// Requirements and cases only the old report has.
    pub disappeared: Vec<Change>,
    /// Checks of cases in both whose observed value moved (a count at all, a time by more
    /// than 0.5 s).
    pub moved: Vec<Moved>,
    /// Provenance that differs: squall, the features, the implementation.
    pub provenance: Vec<ProvenanceChange>,
}

/// A requirement or a case, and its verdict in each report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// `requirement` or `case`.
    pub kind: &'static str,
    /// Its id.
    pub id: String,
    /// Its name (a case's scenario, a requirement's title).
    pub name: String,
    /// Its verdict in the old report (absent when it appeared).
    pub old: Option<Verdict>,
    /// Its verdict in the new one (absent when it disappeared).
    pub new: Option<Verdict>,
}

/// A check whose observed value moved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Moved {
    /// The case.
    pub case: String,
    /// The check.
    pub check: String,
    /// What the old report observed.
    pub old: String,
    /// What the new one observed.
    pub new: String,
}

/// A provenance field that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProvenanceChange {
    /// What (`squall commit`, `feature REQ-0006-001.feature`, `implementation version`).
    pub field: String,
    /// Before.
    pub old: String,
    /// After.
    pub new: String,
}

/// Reports that cannot be compared.
#[derive(Debug, thiserror::Error)]
#[error("cannot compare {old} ({old_schema}) with {new} ({new_schema}): the reports have different schemas; render both with one squall (`squall report render`) first")]
pub struct SchemaMismatch {
    old: String,
    old_schema: String,
    new: String,
    new_schema: String,
}

impl ReportDiff {
    /// Whether something regressed.
    pub fn has_regressions(&self) -> bool {
        !self.regressions.is_empty()
    }
}

/// `new` compared with `old` (`old_name` and `new_name` name them in errors).
pub fn diff(old_name: &str, old: &Report, new_name: &str, new: &Report) -> Result<ReportDiff, SchemaMismatch> {
    if old.schema != new.schema {
        return Err(SchemaMismatch {
            old: old_name.to_owned(),
            old_schema: old.schema.clone(),
            new: new_name.to_owned(),
            new_schema: new.schema.clone(),
        });
    }
    let mut diff = ReportDiff {
        schema: DIFF_SCHEMA,
        regressions: Vec::new(),
        fixes: Vec::new(),
        changes: Vec::new(),
        appeared: Vec::new(),
        disappeared: Vec::new(),
        moved: Vec::new(),
        provenance: provenance_changes(old, new),
    };
    let requirements = |r: &Report| -> BTreeMap<String, (String, Verdict)> {
        r.requirements.iter().map(|q| (q.id.clone(), (q.title.clone(), q.verdict))).collect()
    };
    compare("requirement", requirements(old), requirements(new), &mut diff);
    let cases = |r: &Report| -> BTreeMap<String, (String, Verdict)> {
        r.cases().map(|c| (case_key(c), (c.name.clone(), c.verdict))).collect()
    };
    compare("case", cases(old), cases(new), &mut diff);
    let old_cases: BTreeMap<String, &CaseRecord> = old.cases().map(|c| (case_key(c), c)).collect();
    for case in super::merge::unique_cases(new) {
        let Some(before) = old_cases.get(&case_key(case)) else { continue };
        for check in &case.checks {
            let Some(was) = before.checks.iter().find(|c| c.name == check.name) else { continue };
            if moved(&was.observed, &check.observed) {
                diff.moved.push(Moved {
                    case: case_key(case),
                    check: check.name.clone(),
                    old: was.observed.clone(),
                    new: check.observed.clone(),
                });
            }
        }
    }
    Ok(diff)
}

/// A case's id, or its feature and name in reports written before ids were recorded.
fn case_key(case: &CaseRecord) -> String {
    if case.id.is_empty() {
        format!("{}: {}", case.feature, case.name)
    } else {
        case.id.clone()
    }
}

fn compare(
    kind: &'static str,
    old: BTreeMap<String, (String, Verdict)>,
    new: BTreeMap<String, (String, Verdict)>,
    diff: &mut ReportDiff,
) {
    for (id, (name, verdict)) in &new {
        let change =
            |old: Option<Verdict>| Change { kind, id: id.clone(), name: name.clone(), old, new: Some(*verdict) };
        match old.get(id) {
            None => diff.appeared.push(change(None)),
            Some((_, was)) if was == verdict => {}
            Some((_, was)) if was.is_acceptable() && !verdict.is_acceptable() => {
                diff.regressions.push(change(Some(*was)))
            }
            Some((_, was)) if !was.is_acceptable() && verdict.is_acceptable() => diff.fixes.push(change(Some(*was))),
            Some((_, was)) => diff.changes.push(change(Some(*was))),
        }
    }
    for (id, (name, verdict)) in old.iter().filter(|(id, _)| !new.contains_key(*id)) {
        diff.disappeared.push(Change { kind, id: id.clone(), name: name.clone(), old: Some(*verdict), new: None });
    }
}

/// Whether an observed value moved: a different text whose numbers differ — a count at all, a
/// time (in s or ms) by more than [`NOISE_S`].
fn moved(old: &str, new: &str) -> bool {
    static NUMBER: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let number =
        NUMBER.get_or_init(|| regex::Regex::new(r"(\d+(?:\.\d+)?)(\s*ms\b|\s*s\b)?").expect("a valid pattern"));
    if old == new {
        return false;
    }
    // Each number as (seconds, is a time) and the text around the numbers.
    let read = |text: &str| -> (Vec<(f64, bool)>, String) {
        let values = number
            .captures_iter(text)
            .map(|c| {
                let value: f64 = c[1].parse().unwrap_or(f64::NAN);
                match c.get(2).map(|u| u.as_str().trim()) {
                    Some("ms") => (value / 1000.0, true),
                    Some("s") => (value, true),
                    _ => (value, false),
                }
            })
            .collect();
        (values, number.replace_all(text, "#").into_owned())
    };
    let ((a, words_a), (b, words_b)) = (read(old), read(new));
    if a.len() != b.len() || words_a != words_b {
        return true;
    }
    a.iter().zip(&b).any(|((x, time), (y, _))| if *time { (x - y).abs() > NOISE_S } else { x != y })
}

fn provenance_changes(old: &Report, new: &Report) -> Vec<ProvenanceChange> {
    let mut fields: Vec<(String, String, String)> = vec![
        ("squall version".into(), old.squall_version.clone(), new.squall_version.clone()),
        ("implementation".into(), old.iut.command.clone(), new.iut.command.clone()),
        ("level".into(), old.iut.level.as_str().into(), new.iut.level.as_str().into()),
    ];
    let commit =
        |r: &Report| r.provenance.as_ref().and_then(|p| p.squall.commit.clone()).unwrap_or_else(|| "unknown".into());
    fields.push(("squall commit".into(), commit(old), commit(new)));
    let reported = |r: &Report| {
        r.provenance.as_ref().and_then(|p| p.implementation.reported.as_ref()).map_or_else(
            || "not said".into(),
            |s| format!("{} {}", s.name, s.version.as_deref().unwrap_or("")).trim().to_owned(),
        )
    };
    fields.push(("implementation says".into(), reported(old), reported(new)));
    let features = |r: &Report| -> BTreeMap<String, String> {
        r.provenance.iter().flat_map(|p| p.features.iter().map(|f| (f.file.clone(), f.sha256.clone()))).collect()
    };
    let (before, after) = (features(old), features(new));
    for file in before.keys().chain(after.keys()).collect::<std::collections::BTreeSet<_>>() {
        let digest = |m: &BTreeMap<String, String>| m.get(file).cloned().unwrap_or_else(|| "absent".into());
        fields.push((format!("feature {file}"), digest(&before), digest(&after)));
    }
    fields
        .into_iter()
        .filter(|(_, a, b)| a != b)
        .map(|(field, old, new)| ProvenanceChange { field, old, new })
        .collect()
}

/// The diff as Markdown, for a pull-request comment.
pub fn markdown(diff: &ReportDiff, old_name: &str, new_name: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## squall: {new_name} against {old_name}\n\n**{} regressed**, {} fixed, {} changed otherwise, {} appeared, {} disappeared, {} observed values moved.",
        diff.regressions.len(),
        diff.fixes.len(),
        diff.changes.len(),
        diff.appeared.len(),
        diff.disappeared.len(),
        diff.moved.len()
    );
    let verdict = |v: Option<Verdict>| v.map_or("—", Verdict::as_str);
    for (title, changes) in [
        ("Regressed", &diff.regressions),
        ("Fixed", &diff.fixes),
        ("Changed", &diff.changes),
        ("Appeared", &diff.appeared),
        ("Disappeared", &diff.disappeared),
    ] {
        if changes.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n### {title}\n\n| | Id | Name | Was | Now |\n|---|---|---|---|---|");
        for c in changes {
            let _ = writeln!(
                out,
                "| {} | `{}` | {} | {} | {} |",
                c.kind,
                cell(&c.id),
                cell(&c.name),
                verdict(c.old),
                verdict(c.new)
            );
        }
    }
    if !diff.moved.is_empty() {
        let _ = writeln!(out, "\n### Observed values that moved\n\n| Case | Check | Was | Now |\n|---|---|---|---|");
        for m in &diff.moved {
            let _ = writeln!(out, "| `{}` | {} | {} | {} |", cell(&m.case), cell(&m.check), cell(&m.old), cell(&m.new));
        }
    }
    if !diff.provenance.is_empty() {
        let _ = writeln!(out, "\n### Provenance that differs\n\n| What | Was | Now |\n|---|---|---|");
        for p in &diff.provenance {
            let _ = writeln!(out, "| {} | {} | {} |", cell(&p.field), cell(&p.old), cell(&p.new));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::moved;

    #[test]
    fn counts_move_at_all_and_times_beyond_half_a_second() {
        assert!(moved("7 attempts", "6 attempts"));
        assert!(!moved("waited 4.51 s", "waited 4.62 s"));
        assert!(moved("waited 4.51 s", "waited 5.2 s"));
        assert!(!moved("waited 4.32 s (4317.0 ms real)", "waited 4.65 s (4653.4 ms real)"));
        assert!(moved("ok: true", "ok: false"));
        assert!(!moved("same", "same"));
    }
}
