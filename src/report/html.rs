//! `index.html`: one self-contained page (inline CSS, inline SVG, no scripts or external
//! assets): a requirement × case matrix, then every case with its checks, its attempt
//! timeline and its evidence.

use std::fmt::Write as _;

use serde_json::Value;

use super::timeline;
use super::{escape, str_of, tally_of};

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}\
h1{font-size:22px}h2{font-size:18px;margin-top:28px}h3{font-size:15px;margin:18px 0 6px}\
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top;font-size:13px}\
.v{font-weight:bold;text-transform:uppercase;font-size:12px}.pass{color:#2e7d32}.warn{color:#b26a00}.fail{color:#c62828}.error{color:#6a1b9a}.na{color:#757575}\
.cell{display:inline-block;width:14px;height:14px;margin:1px;border-radius:2px}.cell.pass{background:#2e7d32}.cell.warn{background:#f9a825}.cell.fail{background:#c62828}\
.cell.error{background:#6a1b9a}.cell.na{background:#bbb}.case{border-top:1px solid #eee;padding-top:6px}.should{color:#757575}\
pre{background:#f6f6f6;padding:8px;overflow:auto;max-height:320px;font-size:12px}details{margin:4px 0}";

fn class(verdict: &str) -> &'static str {
    match verdict {
        "pass" => "pass",
        "warn" => "warn",
        "fail" => "fail",
        "error" => "error",
        _ => "na",
    }
}

fn anchor(requirement: &str, index: usize) -> String {
    format!("{requirement}-{index}")
}

pub(super) fn render(report: &Value) -> String {
    let requirements = report["requirements"].as_array().map(Vec::as_slice).unwrap_or_default();
    let judged = report["profiles"]["judged"].as_array().map(Vec::as_slice).unwrap_or_default();
    let not_judged = report["profiles"]["not_judged"].as_array().map(Vec::as_slice).unwrap_or_default();
    let name = escape(str_of(&report["iut"]["name"]));
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>squall — {name}</title><style>{STYLE}</style></head><body>"
    );
    let summary = tally_of(&report["summary"]);
    let _ = write!(
        out,
        "<h1>Acceptance — {name}: <span class=\"{}\">{}</span></h1><p><code>{}</code> · level {} · squall {} · {} · {:.1} s · \
         figures in production seconds</p><p>Requirements: <span class=\"pass\">{} pass</span>, <span class=\"warn\">{} warn</span>, \
         <span class=\"fail\">{} fail</span>, <span class=\"na\">{} n/a</span>, <span class=\"error\">{} error</span></p>",
        if report["verdict"] == "passed" { "pass" } else { "fail" },
        escape(str_of(&report["verdict"])),
        escape(str_of(&report["iut"]["command"])),
        escape(str_of(&report["iut"]["level"])),
        escape(str_of(&report["squall_version"])),
        escape(str_of(&report["started_at"])),
        report["duration_ms"].as_f64().unwrap_or(0.0) / 1000.0,
        summary.pass,
        summary.warn,
        summary.fail,
        summary.not_applicable,
        summary.error,
    );
    let _ = write!(out, "<p>{}</p>", escape(str_of(&report["calibration"]["summary"])));
    if !not_judged.is_empty() {
        let ids: Vec<String> = not_judged.iter().map(|p| escape(str_of(&p["id"]))).collect();
        let _ = write!(out, "<p class=\"na\">Not judged: {} (choose with <code>--profile</code>)</p>", ids.join(", "));
    }
    for profile in judged {
        let verdict = str_of(&profile["verdict"]);
        let _ = write!(
            out,
            "<h2>{} — {}: <span class=\"v {}\">{}</span></h2><table><tr><th>Requirement</th><th>Verdict</th><th>Passed</th><th>Checks n/a</th><th>Cases</th></tr>",
            escape(str_of(&profile["id"])),
            escape(str_of(&profile["title"])),
            class(verdict),
            escape(verdict)
        );
        for requirement in requirements.iter().filter(|r| r["profile"] == profile["id"]) {
            matrix_row(&mut out, requirement);
        }
        out.push_str("</table>");
    }
    for requirement in requirements {
        let id = str_of(&requirement["id"]);
        let _ =
            write!(out, "<h2 id=\"{}\">{} — {}</h2>", escape(id), escape(id), escape(str_of(&requirement["title"])));
        for (i, case) in requirement["cases"].as_array().into_iter().flatten().enumerate() {
            render_case(&mut out, case, &anchor(id, i));
        }
    }
    out.push_str("</body></html>\n");
    out
}

/// A requirement's row: verdict, passed of judged, a cell per case linking to it.
fn matrix_row(out: &mut String, requirement: &Value) {
    let id = str_of(&requirement["id"]);
    let verdict = str_of(&requirement["verdict"]);
    let _ = write!(
        out,
        "<tr data-requirement=\"{}\" data-verdict=\"{}\"><td><a href=\"#{}\">{}</a><br><small>{}</small></td><td class=\"v {}\">{}</td><td>{}</td><td>{}</td><td>",
        escape(id),
        escape(verdict),
        escape(id),
        escape(id),
        escape(str_of(&requirement["title"])),
        class(verdict),
        escape(verdict),
        escape(&tally_of(&requirement["cases_tally"]).passed_of_judged()),
        tally_of(&requirement["checks_tally"]).not_applicable
    );
    for (i, case) in requirement["cases"].as_array().into_iter().flatten().enumerate() {
        let verdict = str_of(&case["verdict"]);
        let _ = write!(
            out,
            "<a class=\"cell {}\" href=\"#{}\" title=\"{} — {}\"></a>",
            class(verdict),
            escape(&anchor(id, i)),
            escape(str_of(&case["name"])),
            escape(verdict)
        );
    }
    out.push_str("</td></tr>");
}

fn render_case(out: &mut String, case: &Value, anchor: &str) {
    let verdict = str_of(&case["verdict"]);
    // The case's own scale: precise cases run slower than the suite's default.
    let time_scale = case["time_scale"].as_f64();
    let scale_note = time_scale.map(|s| format!(" · ran at time scale {s}")).unwrap_or_default();
    let scale_note = match case["time_scale_note"].as_str() {
        Some(why) => format!("{scale_note}: {why}"),
        None => scale_note,
    };
    let _ = write!(
        out,
        "<div class=\"case\" id=\"{}\" data-verdict=\"{}\"><h3><span class=\"v {}\">{}</span> {} <small>({}{})</small></h3>",
        escape(anchor),
        escape(verdict),
        class(verdict),
        escape(verdict),
        escape(str_of(&case["name"])),
        escape(str_of(&case["feature"])),
        escape(&scale_note)
    );
    if let Some(error) = case["error"].as_str() {
        let _ = write!(out, "<p class=\"error\">{}</p>", escape(error));
    }
    out.push_str("<table><tr><th>Check</th><th>Level</th><th>Verdict</th><th>Expected</th><th>Observed</th></tr>");
    for check in case["checks"].as_array().into_iter().flatten() {
        let verdict = str_of(&check["verdict"]);
        let should = if check["strength"] == "should" { " <small class=\"should\">(SHOULD)</small>" } else { "" };
        let _ = write!(
            out,
            "<tr><td>{}{should}</td><td>{}</td><td class=\"v {}\">{}</td><td>{}</td><td>{}</td></tr>",
            escape(str_of(&check["name"])),
            escape(str_of(&check["level"])),
            class(verdict),
            escape(verdict),
            escape(str_of(&check["expected"])),
            escape(str_of(&check["observed"]))
        );
    }
    out.push_str("</table>");
    let evidence = &case["evidence"];
    let journal = evidence["journal"].as_array().map(Vec::as_slice).unwrap_or_default();
    let planned: Vec<f64> = evidence["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["type"] == "provider.retry")
        .filter_map(|e| e["delay_ms"].as_f64())
        .map(|ms| ms / 1000.0)
        .collect();
    let reaction_ms = case["reaction_ms"]["center"].as_f64().unwrap_or(0.0);
    out.push_str(&timeline::svg(journal, &planned, time_scale.unwrap_or(1.0), reaction_ms));
    let pretty = |value: &Value| escape(&serde_json::to_string_pretty(value).unwrap_or_default());
    let _ = write!(
        out,
        "<details><summary>Wire journal ({} requests; times in real ms)</summary><pre>{}</pre></details>",
        journal.len(),
        pretty(&evidence["journal"])
    );
    let _ = write!(
        out,
        "<details><summary>Result and events</summary><pre>{}</pre><pre>{}</pre></details>",
        pretty(&evidence["result"]),
        pretty(&evidence["events"])
    );
    let ended = match (evidence["timed_out"].as_bool(), evidence["exit_code"].as_i64()) {
        (Some(true), _) => "killed at the case timeout".to_owned(),
        (_, Some(code)) => format!("exit code {code}"),
        _ => "ended by a signal, or not run".to_owned(),
    };
    let stderr = str_of(&evidence["stderr"]);
    let _ = write!(
        out,
        "<details><summary>Process: {} · stderr ({} bytes)</summary><pre>{}</pre></details>",
        escape(&ended),
        stderr.len(),
        escape(stderr)
    );
    out.push_str("</div>");
}
