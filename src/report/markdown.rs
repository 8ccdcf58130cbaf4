//! `acceptance.md`: the PRD sign-off document — a table of requirements with verdicts and
//! case counts, expected vs observed for every failure, and a sign-off block.

use std::fmt::Write as _;

use serde_json::Value;

/// Cases of a requirement that count (not n/a), and how many of them passed.
pub fn passed_of_judged(requirement: &Value) -> (usize, usize) {
    let cases = requirement["cases"].as_array().map(Vec::as_slice).unwrap_or_default();
    let judged = cases.iter().filter(|c| c["verdict"] != "n/a").count();
    let passed = cases.iter().filter(|c| c["verdict"] == "pass").count();
    (passed, judged)
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

pub fn render(report: &Value) -> String {
    let mut out = String::new();
    let iut = &report["iut"];
    let summary = &report["summary"];
    let _ = writeln!(out, "# PRD-0006 acceptance report — {}\n", iut["name"].as_str().unwrap_or(""));
    let _ = writeln!(out, "| | |\n|---|---|");
    let _ = writeln!(out, "| Implementation | `{}` |", cell(iut["command"].as_str().unwrap_or("")));
    let _ = writeln!(out, "| Level | {} |", iut["level"].as_str().unwrap_or(""));
    let _ = writeln!(out, "| squall | {} |", report["squall_version"].as_str().unwrap_or(""));
    let _ = writeln!(out, "| Date | {} |", report["started_at"].as_str().unwrap_or(""));
    let _ = writeln!(
        out,
        "| Duration | {:.1} s (time scale {}) |",
        report["duration_ms"].as_f64().unwrap_or(0.0) / 1000.0,
        report["time_scale"]
    );
    let _ = writeln!(
        out,
        "| Requirements | {} pass, {} fail, {} n/a, {} error |\n",
        summary["pass"], summary["fail"], summary["n/a"], summary["error"]
    );
    let _ = writeln!(out, "## Requirements\n\n| Requirement | Title | Verdict | Cases passed |\n|---|---|---|---|");
    let requirements = report["requirements"].as_array().map(Vec::as_slice).unwrap_or_default();
    for requirement in requirements {
        let (passed, judged) = passed_of_judged(requirement);
        let _ = writeln!(
            out,
            "| {} | {} | **{}** | {passed}/{judged} |",
            requirement["id"].as_str().unwrap_or(""),
            cell(requirement["title"].as_str().unwrap_or("")),
            requirement["verdict"].as_str().unwrap_or(""),
        );
    }
    let failing: Vec<&Value> =
        requirements.iter().filter(|r| r["verdict"] == "fail" || r["verdict"] == "error").collect();
    if !failing.is_empty() {
        let _ = writeln!(out, "\n## Failures: expected vs observed");
        for requirement in failing {
            let _ = writeln!(
                out,
                "\n### {} — {}\n",
                requirement["id"].as_str().unwrap_or(""),
                requirement["title"].as_str().unwrap_or("")
            );
            for case in requirement["cases"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| c["verdict"] == "fail" || c["verdict"] == "error")
            {
                let _ = writeln!(
                    out,
                    "- **{}** ({}) — {}",
                    case["name"].as_str().unwrap_or(""),
                    case["feature"].as_str().unwrap_or(""),
                    case["verdict"].as_str().unwrap_or("")
                );
                for check in case["checks"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|c| c["verdict"] == "fail" || c["verdict"] == "error")
                {
                    let _ = writeln!(
                        out,
                        "  - {}: expected {}; observed {}",
                        check["name"].as_str().unwrap_or(""),
                        check["expected"].as_str().unwrap_or(""),
                        check["observed"].as_str().unwrap_or("")
                    );
                }
                if let Some(error) = case["error"].as_str() {
                    let _ = writeln!(out, "  - {}", cell(error));
                }
            }
        }
    }
    let _ = writeln!(
        out,
        "\n## Sign-off\n\nThe requirements above were judged by squall against the implementation named at the top. \
         Evidence for every case (wire journal, events, stderr) is in `report.json` and `index.html` next to this file.\n\n\
         | Role | Name | Decision | Date | Signature |\n|---|---|---|---|---|\n| Engineering | | | | |\n| QA | | | | |\n| Product | | | | |"
    );
    out
}
