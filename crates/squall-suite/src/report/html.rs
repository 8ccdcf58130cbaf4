//! `index.html`: one self-contained page (inline CSS, inline SVG, no scripts or external
//! assets): a requirement × case matrix, then every case with its checks, its attempt
//! timeline and its evidence.

use std::fmt::Write as _;

use serde::Serialize;

use super::{escape, herd_timeline, timeline, Report};
use crate::results::{CaseRecord, ClientOutputs, RequirementResult};
use crate::waivers::WAIVER_COLUMNS;
use crate::Verdict;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}\
h1{font-size:22px}h2{font-size:18px;margin-top:28px}h3{font-size:15px;margin:18px 0 6px}\
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top;font-size:13px}\
.v{font-weight:bold;text-transform:uppercase;font-size:12px}.pass{color:#2e7d32}.warn{color:#b26a00}.fail{color:#c62828}.error{color:#6a1b9a}.inconclusive{color:#00838f}.na{color:#757575}.waived{color:#ad1457}\
.cell{display:inline-block;width:14px;height:14px;margin:1px;border-radius:2px}.cell.pass{background:#2e7d32}.cell.warn{background:#f9a825}.cell.fail{background:#c62828}\
.cell.error{background:#6a1b9a}.cell.inconclusive{background:#00838f}.cell.na{background:#bbb}.cell.waived{background:#ad1457}.case{border-top:1px solid #eee;padding-top:6px}.should{color:#757575}\
pre{background:#f6f6f6;padding:8px;overflow:auto;max-height:320px;font-size:12px}details{margin:4px 0}";

/// The waivers given, with what became of each.
fn waivers(out: &mut String, report: &Report) {
    if report.waivers.is_empty() {
        return;
    }
    out.push_str("<h2>Waivers</h2><table><tr>");
    WAIVER_COLUMNS.iter().for_each(|c| out.push_str(&format!("<th>{c}</th>")));
    out.push_str("</tr>");
    for record in &report.waivers {
        out.push_str("<tr class=\"waived\">");
        record.columns().iter().for_each(|c| out.push_str(&format!("<td>{}</td>", escape(c))));
        out.push_str("</tr>");
    }
    out.push_str("</table>");
}

fn class(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "pass",
        Verdict::Warn => "warn",
        Verdict::Fail => "fail",
        Verdict::Error => "error",
        Verdict::Inconclusive => "inconclusive",
        Verdict::NotApplicable => "na",
        Verdict::Waived => "waived",
    }
}

pub(super) fn anchor(requirement: &str, index: usize) -> String {
    format!("{requirement}-{index}")
}

pub(super) fn render(report: &Report) -> String {
    let name = escape(&report.iut.name);
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>squall — {name}</title><style>{STYLE}</style></head><body>"
    );
    let summary = report.summary;
    let _ = write!(
        out,
        "<h1>Acceptance — {name}: <span class=\"{}\">{}</span></h1><p><code>{}</code> · level {} · squall {} · {} · {:.1} s · \
         figures in production seconds</p><p>Requirements: <span class=\"pass\">{} pass</span>, <span class=\"warn\">{} warn</span>, \
         <span class=\"fail\">{} fail</span>, <span class=\"na\">{} n/a</span>, <span class=\"error\">{} error</span></p>",
        if report.verdict == crate::RunVerdict::Passed { "pass" } else { "fail" },
        report.verdict.as_str(),
        escape(&report.iut.command),
        report.iut.level.as_str(),
        escape(&report.squall_version),
        report.started_at,
        report.duration().as_secs_f64(),
        summary.pass,
        summary.warn,
        summary.fail,
        summary.not_applicable,
        summary.error,
    );
    let _ = write!(out, "<p>{}</p>", escape(&report.calibration.summary));
    waivers(&mut out, report);
    if !report.profiles.not_judged.is_empty() {
        let ids: Vec<String> = report.profiles.not_judged.iter().map(|p| escape(&p.id)).collect();
        let _ = write!(out, "<p class=\"na\">Not judged: {} (choose with <code>--profile</code>)</p>", ids.join(", "));
    }
    for profile in &report.profiles.judged {
        let _ = write!(
            out,
            "<h2>{} — {}: <span class=\"v {}\">{}</span></h2><table><tr><th>Requirement</th><th>Verdict</th><th>Passed</th><th>Checks n/a</th><th>Cases</th></tr>",
            escape(&profile.id),
            escape(&profile.title),
            class(profile.verdict),
            profile.verdict.as_str()
        );
        for requirement in report.requirements_of(profile) {
            matrix_row(&mut out, requirement);
        }
        out.push_str("</table>");
    }
    for requirement in &report.requirements {
        let id = &requirement.id;
        let _ = write!(out, "<h2 id=\"{}\">{} — {}</h2>", escape(id), escape(id), escape(&requirement.title));
        for (i, case) in requirement.cases.iter().enumerate() {
            render_case(&mut out, case, &anchor(id, i));
        }
    }
    out.push_str("</body></html>\n");
    out
}

/// A requirement's row: verdict, passed of judged, a cell per case linking to it.
fn matrix_row(out: &mut String, requirement: &RequirementResult) {
    let id = &requirement.id;
    let verdict = requirement.verdict;
    let _ = write!(
        out,
        "<tr data-requirement=\"{}\" data-verdict=\"{}\"><td><a href=\"#{}\">{}</a><br><small>{}</small></td><td class=\"v {}\">{}</td><td>{}</td><td>{}</td><td>",
        escape(id),
        verdict.as_str(),
        escape(id),
        escape(id),
        escape(&requirement.title),
        class(verdict),
        verdict.as_str(),
        escape(&requirement.cases_tally.passed_of_judged()),
        requirement.checks_tally.not_applicable
    );
    for (i, case) in requirement.cases.iter().enumerate() {
        let _ = write!(
            out,
            "<a class=\"cell {}\" href=\"#{}\" title=\"{} — {}\"></a>",
            class(case.verdict),
            escape(&anchor(id, i)),
            escape(&case.name),
            case.verdict.as_str()
        );
    }
    out.push_str("</td></tr>");
}

fn render_case(out: &mut String, case: &CaseRecord, anchor: &str) {
    let verdict = case.verdict;
    // The case's own scale: precise cases run slower than the suite's default.
    let scale_note = case.time_scale.map(|s| format!(" · ran at time scale {s:?}")).unwrap_or_default();
    let scale_note = match &case.time_scale_note {
        Some(why) => format!("{scale_note}: {why}"),
        None => scale_note,
    };
    let _ = write!(
        out,
        "<div class=\"case\" id=\"{}\" data-verdict=\"{}\"><h3><span class=\"v {}\">{}</span> {} <small>({}{})</small></h3>",
        escape(anchor),
        verdict.as_str(),
        class(verdict),
        verdict.as_str(),
        escape(&case.name),
        escape(&case.feature),
        escape(&scale_note)
    );
    for clause in &case.clauses {
        let _ = write!(
            out,
            "<p class=\"clause\">Answers {} (<code>{}:{}</code>): <q>{}</q></p>",
            escape(&clause.cite()),
            escape(&clause.file),
            clause.line,
            escape(&clause.words)
        );
    }
    if let Some(error) = &case.error {
        let _ = write!(out, "<p class=\"error\">{}</p>", escape(error));
    }
    out.push_str("<table><tr><th>Check</th><th>Level</th><th>Verdict</th><th>Expected</th><th>Observed</th></tr>");
    for check in &case.checks {
        let should =
            if check.strength == crate::Strength::Should { " <small class=\"should\">(SHOULD)</small>" } else { "" };
        let _ = write!(
            out,
            "<tr><td>{}{should}</td><td>{}</td><td class=\"v {}\">{}</td><td>{}</td><td>{}</td></tr>",
            escape(&check.name),
            check.level.as_str(),
            class(check.verdict),
            check.verdict.as_str(),
            escape(&check.expected),
            escape(&check.observed)
        );
    }
    out.push_str("</table>");
    let evidence = &case.evidence;
    let planned: Vec<f64> = evidence
        .outputs
        .events
        .iter()
        .filter(|e| e["type"] == "provider.retry")
        .filter_map(|e| e["delay_ms"].as_f64())
        .map(|ms| ms / 1000.0)
        .collect();
    let reaction_ms = case.reaction_ms.map_or(0.0, |r| r.center);
    let time_scale = case.time_scale.unwrap_or(squall::clock::TimeScale::REAL);
    if evidence.others.is_empty() {
        out.push_str(&timeline::svg(&evidence.journal, &planned, time_scale, reaction_ms));
    } else {
        out.push_str(&herd_timeline::svg(&evidence.journal, time_scale));
    }
    let _ = write!(
        out,
        "<details><summary>Wire journal ({} requests; times in real ms)</summary><pre>{}</pre></details>",
        evidence.journal.len(),
        pretty(&evidence.journal)
    );
    let clients = std::iter::once(&evidence.outputs).chain(&evidence.others);
    for (k, outputs) in clients.enumerate() {
        let whose = if evidence.others.is_empty() { String::new() } else { format!("Client {k}: ") };
        write_outputs(out, &whose, outputs);
    }
    out.push_str("</div>");
}

/// One instance's result, events and how its process ended, each folded.
fn write_outputs(out: &mut String, whose: &str, outputs: &ClientOutputs) {
    let _ = write!(
        out,
        "<details><summary>{}Result and events</summary><pre>{}</pre><pre>{}</pre></details>",
        escape(whose),
        pretty(&outputs.result),
        pretty(&outputs.events)
    );
    let ended = match (outputs.timed_out, outputs.exit_code) {
        (true, _) => "killed by squall: at the case timeout, or awaiting a withheld reply forever".to_owned(),
        (_, Some(code)) => format!("exit code {code}"),
        _ => "ended by a signal, or not run".to_owned(),
    };
    let stderr = &outputs.stderr;
    let _ = write!(
        out,
        "<details><summary>{}Process: {} · stderr ({} bytes)</summary><pre>{}</pre></details>",
        escape(whose),
        escape(&ended),
        stderr.len(),
        escape(stderr)
    );
}

/// `value` as indented JSON, escaped for HTML.
fn pretty(value: &impl Serialize) -> String {
    escape(&serde_json::to_string_pretty(value).unwrap_or_default())
}
