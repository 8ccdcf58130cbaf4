//! The traceability table of `acceptance.md`: each seed clause the run's cases answer → the
//! cases that answer it → their checks → the verdict → links to each case's evidence in
//! `index.html`. A clause is quoted as the scenario names it (verified against the seeds by
//! squall's tests), with its file and line.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::cell;
use super::html::anchor;
use super::Report;
use crate::clauses::Clause;
use crate::{Strength, Verdict};

/// One row: a clause, and where in the report its cases are.
struct Row<'a> {
    requirements: Vec<&'a str>,
    cases: Vec<(&'a str, String)>,
    must: usize,
    should: usize,
    verdicts: Vec<Verdict>,
}

pub(super) fn render(out: &mut String, report: &Report) {
    let mut rows: BTreeMap<&Clause, Row<'_>> = BTreeMap::new();
    let mut untraced = Vec::new();
    for requirement in &report.requirements {
        for (index, case) in requirement.cases.iter().enumerate() {
            if case.clauses.is_empty() {
                untraced.push(case.name.as_str());
            }
            for clause in &case.clauses {
                let row = rows.entry(clause).or_insert_with(|| Row {
                    requirements: Vec::new(),
                    cases: Vec::new(),
                    must: 0,
                    should: 0,
                    verdicts: Vec::new(),
                });
                if !row.requirements.contains(&requirement.id.as_str()) {
                    row.requirements.push(&requirement.id);
                }
                row.cases.push((&case.name, anchor(&requirement.id, index)));
                row.must += case.checks.iter().filter(|c| c.strength == Strength::Must).count();
                row.should += case.checks.iter().filter(|c| c.strength == Strength::Should).count();
                row.verdicts.push(case.verdict);
            }
        }
    }
    let _ = writeln!(
        out,
        "\n## Traceability: seed clause → cases → checks → verdict\n\nEach clause is the seed's own words \
         (`…` marks an elision), at the file and line given; squall's tests hold every one to the seeds verbatim. \
         A case's evidence (wire journal, events, result) is behind its link into `index.html`.\n\n\
         | Seed clause | Requirement | Cases (evidence) | Checks | Verdict |\n|---|---|---|---|---|"
    );
    for (clause, row) in &rows {
        let cases: Vec<String> =
            row.cases.iter().map(|(name, anchor)| format!("[{}](index.html#{anchor})", cell(name))).collect();
        let _ = writeln!(
            out,
            "| {} `{}:{}`: \"{}\" | {} | {} | {} MUST, {} SHOULD | **{}** |",
            clause.cite(),
            clause.file,
            clause.line,
            cell(&clause.words),
            row.requirements.join(", "),
            cases.join("; "),
            row.must,
            row.should,
            Verdict::worst(row.verdicts.iter().copied()).as_str()
        );
    }
    untraced.sort_unstable();
    untraced.dedup();
    if !untraced.is_empty() {
        let _ = writeln!(
            out,
            "\nCases that name no seed clause (features of your own, or a report written before clauses were \
             recorded): {}.",
            untraced.iter().map(|n| cell(n)).collect::<Vec<_>>().join("; ")
        );
    }
}
