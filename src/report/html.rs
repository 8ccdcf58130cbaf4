//! `index.html`: one self-contained page (inline CSS, inline SVG, no scripts or external
//! assets): a requirement × case matrix, then every case with its checks, its attempt
//! timeline and its evidence.

use std::fmt::Write as _;

use serde_json::Value;

use super::escape;
use super::markdown::passed_of_judged;
use super::timeline;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}\
h1{font-size:22px}h2{font-size:18px;margin-top:28px}h3{font-size:15px;margin:18px 0 6px}\
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top;font-size:13px}\
.v{font-weight:bold;text-transform:uppercase;font-size:12px}.pass{color:#2e7d32}.fail{color:#c62828}.error{color:#6a1b9a}.na{color:#757575}\
.cell{display:inline-block;width:14px;height:14px;margin:1px;border-radius:2px}.cell.pass{background:#2e7d32}.cell.fail{background:#c62828}\
.cell.error{background:#6a1b9a}.cell.na{background:#bbb}.case{border-top:1px solid #eee;padding-top:6px}\
pre{background:#f6f6f6;padding:8px;overflow:auto;max-height:320px;font-size:12px}details{margin:4px 0}";

fn class(verdict: &str) -> &'static str {
    match verdict {
        "pass" => "pass",
        "fail" => "fail",
        "error" => "error",
        _ => "na",
    }
}

fn anchor(requirement: &str, index: usize) -> String {
    format!("{requirement}-{index}")
}

pub fn render(report: &Value) -> String {
    let requirements = report["requirements"].as_array().map(Vec::as_slice).unwrap_or_default();
    let time_scale = report["time_scale"].as_f64().unwrap_or(1.0);
    let mut out = String::new();
    let _ = write!(out, "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>squall — {}</title><style>{STYLE}</style></head><body>", escape(report["iut"]["name"].as_str().unwrap_or("")));
    let summary = &report["summary"];
    let _ = write!(
        out,
        "<h1>PRD-0006 acceptance — {}</h1><p><code>{}</code> · level {} · squall {} · {} · {:.1} s</p><p>Requirements: <span class=\"pass\">{} pass</span>, <span class=\"fail\">{} fail</span>, <span class=\"na\">{} n/a</span>, <span class=\"error\">{} error</span></p>",
        escape(report["iut"]["name"].as_str().unwrap_or("")),
        escape(report["iut"]["command"].as_str().unwrap_or("")),
        escape(report["iut"]["level"].as_str().unwrap_or("")),
        escape(report["squall_version"].as_str().unwrap_or("")),
        escape(report["started_at"].as_str().unwrap_or("")),
        report["duration_ms"].as_f64().unwrap_or(0.0) / 1000.0,
        summary["pass"],
        summary["fail"],
        summary["n/a"],
        summary["error"],
    );
    out.push_str("<h2>Requirements × cases</h2><table><tr><th>Requirement</th><th>Verdict</th><th>Passed</th><th>Cases</th></tr>");
    for requirement in requirements {
        let id = requirement["id"].as_str().unwrap_or("");
        let verdict = requirement["verdict"].as_str().unwrap_or("");
        let (passed, judged) = passed_of_judged(requirement);
        let _ = write!(
            out,
            "<tr data-requirement=\"{}\" data-verdict=\"{}\"><td><a href=\"#{}\">{}</a><br><small>{}</small></td><td class=\"v {}\">{}</td><td>{passed}/{judged}</td><td>",
            escape(id),
            escape(verdict),
            escape(id),
            escape(id),
            escape(requirement["title"].as_str().unwrap_or("")),
            class(verdict),
            escape(verdict)
        );
        for (i, case) in requirement["cases"].as_array().into_iter().flatten().enumerate() {
            let verdict = case["verdict"].as_str().unwrap_or("");
            let _ = write!(
                out,
                "<a class=\"cell {}\" href=\"#{}\" title=\"{} — {}\"></a>",
                class(verdict),
                escape(&anchor(id, i)),
                escape(case["name"].as_str().unwrap_or("")),
                escape(verdict)
            );
        }
        out.push_str("</td></tr>");
    }
    out.push_str("</table>");
    for requirement in requirements {
        let id = requirement["id"].as_str().unwrap_or("");
        let _ = write!(
            out,
            "<h2 id=\"{}\">{} — {}</h2>",
            escape(id),
            escape(id),
            escape(requirement["title"].as_str().unwrap_or(""))
        );
        for (i, case) in requirement["cases"].as_array().into_iter().flatten().enumerate() {
            render_case(&mut out, case, &anchor(id, i), time_scale);
        }
    }
    out.push_str("</body></html>\n");
    out
}

fn render_case(out: &mut String, case: &Value, anchor: &str, time_scale: f64) {
    let verdict = case["verdict"].as_str().unwrap_or("");
    let _ = write!(
        out,
        "<div class=\"case\" id=\"{}\" data-verdict=\"{}\"><h3><span class=\"v {}\">{}</span> {} <small>({})</small></h3>",
        escape(anchor),
        escape(verdict),
        class(verdict),
        escape(verdict),
        escape(case["name"].as_str().unwrap_or("")),
        escape(case["feature"].as_str().unwrap_or(""))
    );
    if let Some(error) = case["error"].as_str() {
        let _ = write!(out, "<p class=\"fail\">{}</p>", escape(error));
    }
    out.push_str("<table><tr><th>Check</th><th>Level</th><th>Verdict</th><th>Expected</th><th>Observed</th></tr>");
    for check in case["checks"].as_array().into_iter().flatten() {
        let verdict = check["verdict"].as_str().unwrap_or("");
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"v {}\">{}</td><td>{}</td><td>{}</td></tr>",
            escape(check["name"].as_str().unwrap_or("")),
            escape(check["level"].as_str().unwrap_or("")),
            class(verdict),
            escape(verdict),
            escape(check["expected"].as_str().unwrap_or("")),
            escape(check["observed"].as_str().unwrap_or(""))
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
    out.push_str(&timeline::svg(journal, &planned, time_scale));
    let pretty = |value: &Value| escape(&serde_json::to_string_pretty(value).unwrap_or_default());
    let _ = write!(
        out,
        "<details><summary>Wire journal ({} requests)</summary><pre>{}</pre></details>",
        journal.len(),
        pretty(&evidence["journal"])
    );
    let _ = write!(
        out,
        "<details><summary>Result and events</summary><pre>{}</pre><pre>{}</pre></details>",
        pretty(&evidence["result"]),
        pretty(&evidence["events"])
    );
    if let Some(stderr) = evidence["stderr"].as_str().filter(|s| !s.is_empty()) {
        let _ = write!(out, "<details><summary>stderr</summary><pre>{}</pre></details>", escape(stderr));
    }
    out.push_str("</div>");
}
