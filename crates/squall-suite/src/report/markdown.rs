//! `acceptance.md`: the sign-off document — which profiles were judged (and which not), a
//! table of requirements per judged profile with verdicts and case counts, expected vs
//! observed for every failed MUST, the SHOULD warnings in their own section, and a sign-off
//! block. Times are production seconds (each case's time scale undone).

use std::fmt::Write as _;

use super::{cell, Report};
use crate::results::{CaseRecord, CheckRecord, RequirementResult};
use crate::waivers::WAIVER_COLUMNS;
use crate::Verdict;

pub(super) fn render(report: &Report) -> String {
    let mut out = String::new();
    let iut = &report.iut;
    let ids = |ids: Vec<&str>| ids.join(", ");
    let _ = writeln!(out, "# Acceptance report — {}\n", iut.name);
    let _ = writeln!(out, "| | |\n|---|---|");
    let _ = writeln!(out, "| Implementation | `{}` |", cell(&iut.command));
    let _ = writeln!(out, "| Level | {} |", iut.level.as_str());
    let _ =
        writeln!(out, "| Profiles judged | {} |", ids(report.profiles.judged.iter().map(|p| p.id.as_str()).collect()));
    if !report.profiles.not_judged.is_empty() {
        let not_judged = ids(report.profiles.not_judged.iter().map(|p| p.id.as_str()).collect());
        let _ = writeln!(out, "| Not judged | {not_judged} (choose with `--profile`) |");
    }
    if let Some(tags) = &report.tags {
        let _ = writeln!(out, "| Cases | only those matching `{}` |", cell(tags));
    }
    let _ = writeln!(out, "| squall | {} |", report.squall_version);
    let _ = writeln!(out, "| Date | {} |", report.started_at);
    let _ = writeln!(
        out,
        "| Duration | {:.1} s, production values at time scale {:?} (precise cases slower); every figure below is in production seconds |",
        report.duration().as_secs_f64(),
        report.time_scale
    );
    let _ = writeln!(out, "| Timing | {} |", cell(&report.calibration.summary));
    let _ = writeln!(out, "| Requirements | {} |", report.summary.describe());
    let _ = writeln!(out, "| Result | **{}** |\n", report.verdict.as_str());
    let _ = writeln!(
        out,
        "A requirement fails when one of its MUST checks fails, whatever else could not be judged; it is `error` \
         when a case could not be judged (the implementation crashed, hung or left no usable result), and \
         `inconclusive` when a timing check's measurement could not support a verdict at any time scale allowed. \
         A missed SHOULD gives `warn`: it passes, with the warning listed below. \"Checks n/a\" counts the checks \
         above the declared level: a passing requirement with some was judged only in part."
    );
    for profile in &report.profiles.judged {
        let _ = writeln!(
            out,
            "\n## {} — {}: {}\n\n| Requirement | Title | Seed | Verdict | Cases passed | Checks n/a |\n|---|---|---|---|---|---|",
            profile.id,
            cell(&profile.title),
            profile.verdict.as_str()
        );
        for requirement in report.requirements_of(profile) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | **{}** | {} | {} |",
                requirement.id,
                cell(&requirement.title),
                requirement
                    .clauses
                    .iter()
                    .map(|c| format!("{}: \"{}\"", c.cite(), cell(&c.words)))
                    .collect::<Vec<_>>()
                    .join("; "),
                requirement.verdict.as_requirement(),
                requirement.cases_tally.passed_of_judged(),
                requirement.checks_tally.not_applicable,
            );
        }
    }
    super::traceability::render(&mut out, report);
    timing_section(&mut out, report);
    let requirements = &report.requirements;
    findings_section(&mut out, requirements, &[Verdict::Fail, Verdict::Error], "Failures: expected vs observed (MUST)");
    findings_section(
        &mut out,
        requirements,
        &[Verdict::Inconclusive],
        "Inconclusive: what the measurement could not decide",
    );
    findings_section(
        &mut out,
        requirements,
        &[Verdict::Waived],
        "Waived: failed MUSTs accepted on the record (never a pass)",
    );
    findings_section(
        &mut out,
        requirements,
        &[Verdict::Warn],
        "Warnings (SHOULD): advisory, they do not fail a requirement",
    );
    super::provenance_md::render(&mut out, report);
    let _ = writeln!(
        out,
        "\n## Sign-off\n\nThe requirements above were judged by squall against the implementation named at the top. \
         Evidence for every case (wire journal, events, stderr) is in `report.json` and `index.html` next to this file.\n\n\
         | Role | Name | Decision | Date | Signature |\n|---|---|---|---|---|\n| Engineering | | | | |\n| QA | | | | |\n| Product | | | | |"
    );
    waivers_block(&mut out, report);
    out
}

/// Every waiver given, in the sign-off block: what signing accepts.
fn waivers_block(out: &mut String, report: &Report) {
    if report.waivers.is_empty() {
        let _ = writeln!(out, "\nNo waiver was given: nothing failed is accepted by this sign-off.");
        return;
    }
    let _ = writeln!(
        out,
        "\nSigning accepts these waivers (an expired one is ignored: its checks stand as judged):\n\n\
         | {} |\n|{}",
        WAIVER_COLUMNS.join(" | "),
        "---|".repeat(WAIVER_COLUMNS.len())
    );
    for record in &report.waivers {
        let cells: Vec<String> = record.columns().iter().map(|c| cell(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
}

/// What was taken out of every wait, and the cases that ran at another time scale than they
/// asked for, with why.
fn timing_section(out: &mut String, report: &Report) {
    let _ = writeln!(
        out,
        "\n## Timing\n\n{}. Each wait is judged as the real gap less this reaction, divided by the case's time \
         scale; a timing check gives the benefit of the doubt within the noise that remains, and is `inconclusive` \
         when that noise reaches half of what the check must tell apart at every time scale allowed.",
        report.calibration.summary
    );
    let mut seen = std::collections::BTreeSet::new();
    let raised: Vec<(&CaseRecord, &String)> = report
        .cases()
        .filter_map(|c| Some((c, c.time_scale_note.as_ref()?)))
        .filter(|(c, _)| seen.insert(c.name.as_str()))
        .collect();
    if raised.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n| Case | Time scale | Why |\n|---|---|---|");
    for (case, note) in raised {
        let scale = case.time_scale.map_or_else(|| "null".to_owned(), |s| format!("{s:?}"));
        let _ = writeln!(out, "| {} | {scale} | {} |", cell(&case.name), cell(note));
    }
}

/// "MUST the server sees exactly 2 attempts: expected 2 attempts; observed 3 attempts".
pub(super) fn finding_line(check: &CheckRecord) -> String {
    format!(
        "{} {}: expected {}; observed {}",
        check.strength.as_str().to_uppercase(),
        check.name,
        check.expected,
        check.observed
    )
}

/// The cases with one of `verdicts`, each with its checks of those verdicts and its error.
fn findings_section(out: &mut String, requirements: &[RequirementResult], verdicts: &[Verdict], heading: &str) {
    let has = |verdict: Verdict| verdicts.contains(&verdict);
    let listed: Vec<&RequirementResult> =
        requirements.iter().filter(|r| r.cases.iter().any(|c| has(c.verdict))).collect();
    if listed.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## {heading}");
    for requirement in listed {
        let _ = writeln!(out, "\n### {} — {}\n", requirement.id, requirement.title);
        for case in requirement.cases.iter().filter(|c| has(c.verdict)) {
            let _ = writeln!(out, "- **{}** ({}) — {}", case.name, case.feature, case.verdict.as_str());
            for check in case.checks.iter().filter(|c| has(c.verdict)) {
                let _ = writeln!(out, "  - {}", finding_line(check));
            }
            if let Some(why) = case.error.as_ref().or(case.inconclusive.as_ref()) {
                let _ = writeln!(out, "  - {}", cell(why));
            }
        }
    }
}
