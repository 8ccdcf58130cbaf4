//! `junit.xml`: one testsuite per requirement, one testcase per case; failures carry the
//! expected and observed values, `n/a` cases are skipped.

use std::fmt::Write as _;

use serde_json::Value;

use super::escape;

fn count(cases: &[Value], verdict: &str) -> usize {
    cases.iter().filter(|c| c["verdict"] == verdict).count()
}

pub fn render(report: &Value) -> String {
    let requirements = report["requirements"].as_array().map(Vec::as_slice).unwrap_or_default();
    let all: Vec<Value> =
        requirements.iter().flat_map(|r| r["cases"].as_array().cloned().unwrap_or_default()).collect();
    let seconds = report["duration_ms"].as_f64().unwrap_or(0.0) / 1000.0;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"squall {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{seconds:.3}\">",
        escape(report["iut"]["name"].as_str().unwrap_or("")),
        all.len(),
        count(&all, "fail"),
        count(&all, "error"),
        count(&all, "n/a"),
    );
    for requirement in requirements {
        let cases = requirement["cases"].as_array().map(Vec::as_slice).unwrap_or_default();
        let id = escape(requirement["id"].as_str().unwrap_or(""));
        let _ = writeln!(
            out,
            "  <testsuite name=\"{id}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">",
            cases.len(),
            count(cases, "fail"),
            count(cases, "error"),
            count(cases, "n/a")
        );
        for case in cases {
            let name = escape(&format!(
                "{} — {}",
                case["feature"].as_str().unwrap_or(""),
                case["name"].as_str().unwrap_or("")
            ));
            let _ = write!(out, "    <testcase classname=\"{id}\" name=\"{name}\"");
            let details: Vec<String> = case["checks"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| c["verdict"] == "fail" || c["verdict"] == "error")
                .map(|c| {
                    format!(
                        "{}: expected {}; observed {}",
                        c["name"].as_str().unwrap_or(""),
                        c["expected"].as_str().unwrap_or(""),
                        c["observed"].as_str().unwrap_or("")
                    )
                })
                .chain(case["error"].as_str().map(str::to_owned))
                .collect();
            let message = escape(details.first().map_or("", String::as_str));
            let body = escape(&details.join("\n"));
            match case["verdict"].as_str().unwrap_or("") {
                "fail" => {
                    let _ = writeln!(out, ">\n      <failure message=\"{message}\">{body}</failure>\n    </testcase>");
                }
                "error" => {
                    let _ = writeln!(out, ">\n      <error message=\"{message}\">{body}</error>\n    </testcase>");
                }
                "n/a" => {
                    let _ =
                        writeln!(out, ">\n      <skipped message=\"not applicable at this level\"/>\n    </testcase>");
                }
                _ => {
                    let _ = writeln!(out, "/>");
                }
            }
        }
        let _ = writeln!(out, "  </testsuite>");
    }
    out.push_str("</testsuites>\n");
    out
}
