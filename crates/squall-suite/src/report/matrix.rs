//! The resilience matrix: several clients' reports side by side (`squall report matrix DIR…`):
//! each requirement's verdict per client, and each fault kind's outcome per client — the cases
//! of REQ-0006-001 (statuses, timeouts, Retry-After), REQ-0006-002 (what never recovers) and
//! REQ-0006-010 (stream breaks). Made from `report.json` files only, so the committed matrix is
//! what the kept reports say, and a test holds it to them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::schema::Report;
use crate::requirements::requirement_title;
use crate::Verdict;

/// The requirements whose cases are one fault kind each.
const FAULT_REQUIREMENTS: [&str; 3] = ["REQ-0006-001", "REQ-0006-002", "REQ-0006-010"];

/// The matrix of `reports` (each a client's report, named by its directory), as Markdown;
/// `command` is how it was made, written at its top so that it can be made again.
pub fn render(reports: &[(PathBuf, Report)], command: &str) -> String {
    let clients: Vec<String> = reports.iter().map(|(_, r)| r.iut.name.clone()).collect();
    let mut out = format!(
        "# The resilience matrix\n\n<!-- made by: {command} -->\n\nEach client with its default retry settings, judged by squall \
         (its report in `reports/<client>/`, its adapter and what its source predicts in `adapters/<client>/README.md`). \
         `fail` is a MUST missed, `warn` a SHOULD, `n/a` a check above the client's level.\n\n"
    );
    out.push_str("| client | command | level | verdict |\n|---|---|---|---|\n");
    for (_, report) in reports {
        out.push_str(&format!(
            "| {} | `{}` | {} | {} |\n",
            report.iut.name,
            report.iut.command,
            report.iut.level.as_str(),
            report.verdict.as_str()
        ));
    }
    out.push_str("\n## Requirements\n\n");
    // In the reports' order (profile, then id), each once.
    let mut seen = BTreeSet::new();
    let requirements: Vec<&String> =
        reports.iter().flat_map(|(_, r)| r.requirements.iter().map(|q| &q.id)).filter(|id| seen.insert(*id)).collect();
    header(&mut out, "requirement", &clients);
    for id in requirements {
        let cells = reports.iter().map(|(_, r)| r.requirements.iter().find(|q| &q.id == id).map(|q| q.verdict));
        row(&mut out, &format!("{id} {}", requirement_title(id)), cells);
    }
    out.push_str("\n## Fault kinds\n\nEach case of REQ-0006-001, -002 and -010 injects one kind of failure.\n");
    for requirement in FAULT_REQUIREMENTS {
        out.push_str(&format!("\n### {requirement} {}\n\n", requirement_title(requirement)));
        header(&mut out, "case", &clients);
        let mut cases: BTreeMap<String, Vec<Option<Verdict>>> = BTreeMap::new();
        for (k, (_, report)) in reports.iter().enumerate() {
            let of_requirement = report.requirements.iter().filter(|q| q.id == requirement);
            for case in of_requirement.flat_map(|q| q.cases.iter()) {
                cases.entry(case.name.clone()).or_insert_with(|| vec![None; reports.len()])[k] = Some(case.verdict);
            }
        }
        for (name, verdicts) in cases {
            row(&mut out, &name, verdicts.into_iter());
        }
    }
    out
}

fn header(out: &mut String, first: &str, clients: &[String]) {
    out.push_str(&format!("| {first} | {} |\n", clients.join(" | ")));
    out.push_str(&format!("|---|{}\n", "---|".repeat(clients.len())));
}

fn row(out: &mut String, name: &str, cells: impl Iterator<Item = Option<Verdict>>) {
    let cells: Vec<String> = cells
        .map(|verdict| match verdict {
            Some(Verdict::Fail) => "**fail**".to_owned(),
            Some(verdict) => verdict.as_str().to_owned(),
            None => "–".to_owned(),
        })
        .collect();
    out.push_str(&format!("| {} | {} |\n", name.replace('|', "\\|"), cells.join(" | ")));
}
