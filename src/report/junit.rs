//! `junit.xml` (written with `junit-report`): one testsuite per requirement, one testcase per
//! case. A failed MUST is a `<failure>`, a case that could not be judged an `<error>`, an `n/a`
//! case `<skipped/>`, and a case that passed with SHOULD warnings passes with the warnings in
//! its `<system-out>`.

use junit_report::{Duration, OffsetDateTime, Report, TestCase, TestSuite};
use serde_json::Value;

use super::str_of;

pub(super) fn render(report: &Value) -> String {
    let started = report["started_at"]
        .as_str()
        .and_then(|t| humantime::parse_rfc3339(t).ok())
        .map_or_else(OffsetDateTime::now_utc, OffsetDateTime::from);
    let mut junit = Report::new();
    for requirement in report["requirements"].as_array().into_iter().flatten() {
        let id = str_of(&requirement["id"]);
        let mut suite = TestSuite::new(id);
        suite.set_timestamp(started);
        suite.package = str_of(&requirement["profile"]).to_owned();
        for case in requirement["cases"].as_array().into_iter().flatten() {
            suite.add_testcase(testcase(id, case));
        }
        junit.add_testsuite(suite);
    }
    let mut out = Vec::new();
    if let Err(e) = junit.write_xml(&mut out) {
        return format!("<!-- junit.xml could not be written: {e} -->\n");
    }
    let mut text = String::from_utf8_lossy(&out).into_owned();
    text.push('\n');
    text
}

fn testcase(requirement: &str, case: &Value) -> TestCase {
    let name = format!("{} — {}", str_of(&case["feature"]), str_of(&case["name"]));
    let time = Duration::seconds_f64(case["evidence"]["duration_ms"].as_f64().unwrap_or(0.0) / 1000.0);
    let lines = |verdict: &str| -> Vec<String> {
        case["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["verdict"] == verdict)
            .map(|c| {
                format!(
                    "{} {}: expected {}; observed {}",
                    str_of(&c["strength"]).to_uppercase(),
                    str_of(&c["name"]),
                    str_of(&c["expected"]),
                    str_of(&c["observed"])
                )
            })
            .collect()
    };
    let mut testcase = match str_of(&case["verdict"]) {
        "fail" => {
            let failed = lines("fail");
            let mut testcase = TestCase::failure(&name, time, "MUST", failed.first().map_or("", String::as_str));
            testcase.set_system_out(&failed.join("\n"));
            testcase
        }
        "error" => {
            let mut testcase = TestCase::error(&name, time, "not judged", str_of(&case["error"]));
            let stderr = str_of(&case["evidence"]["stderr"]);
            if !stderr.is_empty() {
                testcase.set_system_err(tail(stderr, 4096));
            }
            testcase
        }
        "n/a" => TestCase::skipped(&name),
        verdict => {
            let mut testcase = TestCase::success(&name, time);
            let warnings = lines("warn");
            if verdict == "warn" && !warnings.is_empty() {
                testcase.set_system_out(&format!("passed with warnings (SHOULD):\n{}", warnings.join("\n")));
            }
            testcase
        }
    };
    testcase.set_classname(requirement);
    testcase
}

/// The last `bytes` of `text` (on a character boundary).
fn tail(text: &str, bytes: usize) -> &str {
    let mut start = text.len().saturating_sub(bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}
