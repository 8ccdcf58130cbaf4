//! `squall run` end to end: exit codes, the four report files, and that they agree with each
//! other for a passing and a failing implementation.

use std::collections::BTreeMap;
use std::path::Path;

use regex::Regex;

use crate::kit::command::squall;
use serde_json::Value;

/// Requirement id → (verdict, cases passed, cases judged), as each format states it. JUnit has
/// no warnings (a warned case passes there), so it is compared with warn read as pass.
type Verdicts = BTreeMap<String, (String, usize, usize)>;

fn from_json(report: &Value) -> Verdicts {
    report["requirements"]
        .as_array()
        .expect("requirements")
        .iter()
        .map(|r| {
            let cases = r["cases"].as_array().expect("cases");
            let judged = cases.iter().filter(|c| c["verdict"] != "n/a").count();
            let passed = cases.iter().filter(|c| c["verdict"] == "pass" || c["verdict"] == "warn").count();
            let tally = &r["cases_tally"];
            assert_eq!(tally["n/a"].as_u64(), Some((cases.len() - judged) as u64), "cases_tally agrees with the cases");
            let id = r["id"].as_str().expect("id").to_owned();
            (id, (r["verdict"].as_str().expect("verdict").to_owned(), passed, judged))
        })
        .collect()
}

/// "12/14" or "12/14 (2 warn)".
const PASSED_OF_JUDGED: &str = r"(\d+)/(\d+)(?: \(\d+ warn\))?";

fn from_markdown(text: &str) -> Verdicts {
    let row = Regex::new(&format!(
        r"(?m)^\| ((?:REQ|SEED)-[\w-]+) \| .* \| \*\*([a-z/]+)\*\* \| {PASSED_OF_JUDGED} \| \d+ \|$"
    ))
    .expect("regex");
    row.captures_iter(text)
        .map(|c| (c[1].to_owned(), (c[2].to_owned(), c[3].parse().expect("n"), c[4].parse().expect("n"))))
        .collect()
}

fn from_junit(text: &str) -> Verdicts {
    let suite = Regex::new(r#"(?s)<testsuite [^>]*?name="([^"]+)"[^>]*?tests="(\d+)" errors="(\d+)" failures="(\d+)"[^>]*>(.*?)</testsuite>"#)
        .expect("regex");
    suite
        .captures_iter(text)
        .map(|c| {
            let n = |i: usize| c[i].parse::<usize>().expect("n");
            let (tests, errors, failures) = (n(2), n(3), n(4));
            let skipped = c[5].matches("<skipped").count();
            let verdict = match () {
                _ if errors > 0 => "error",
                _ if failures > 0 => "fail",
                _ if tests == skipped => "n/a",
                _ => "pass",
            };
            (c[1].to_owned(), (verdict.to_owned(), tests - failures - errors - skipped, tests - skipped))
        })
        .collect()
}

fn from_html(text: &str) -> Verdicts {
    let row =
        Regex::new(&format!(r#"<tr data-requirement="([^"]+)" data-verdict="([^"]+)">.*?<td>{PASSED_OF_JUDGED}</td>"#))
            .expect("regex");
    row.captures_iter(text)
        .map(|c| (c[1].to_owned(), (c[2].to_owned(), c[3].parse().expect("n"), c[4].parse().expect("n"))))
        .collect()
}

/// The verdicts as JUnit can state them: a warned requirement passes there.
fn as_junit(verdicts: &Verdicts) -> Verdicts {
    let pass = |v: &String| if v == "warn" { "pass".to_owned() } else { v.clone() };
    verdicts.iter().map(|(id, (v, p, j))| (id.clone(), (pass(v), *p, *j))).collect()
}

pub(crate) fn reports_agree(dir: &Path) -> Verdicts {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let report: Value = serde_json::from_str(&read("report.json")).expect("report.json is JSON");
    serde_json::from_value::<squall_suite::report::schema::Report>(report.clone())
        .expect("report.json reads as the report type");
    let json = from_json(&report);
    assert!(!json.is_empty());
    assert_eq!(from_markdown(&read("acceptance.md")), json, "acceptance.md disagrees with report.json");
    assert_eq!(from_junit(&read("junit.xml")), as_junit(&json), "junit.xml disagrees with report.json");
    let html = read("index.html");
    assert_eq!(from_html(&html), json, "index.html disagrees with report.json");
    // Every case shown with a timeline, and nothing fetched from elsewhere.
    let cases: usize = report["requirements"]
        .as_array()
        .expect("reqs")
        .iter()
        .map(|r| r["cases"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(html.matches("<div class=\"case\"").count(), cases);
    assert_eq!(html.matches("<svg class=\"timeline\"").count(), cases);
    for external in ["<script", "<link", "src=\"http", "url(http", "@import"] {
        assert!(!html.contains(external), "index.html must be self-contained: found {external}");
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    // Readable by another user (CI artifact hosts, web servers): 0666 less the umask, which the
    // test processes inherit as 022 unless the machine says otherwise.
    for file in squall_suite::report::FILES {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(dir.join(file)).expect("written").permissions().mode() & 0o777;
        assert_eq!(mode & 0o044, 0o044 & !umask(), "{file} has mode {mode:o}");
    }
    json
}

/// This process's umask, read from /proc (setting it to read it would race other tests).
fn umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find_map(|l| l.strip_prefix("Umask:")).expect("a Umask line");
    u32::from_str_radix(line.trim(), 8).expect("octal")
}

/// A kept report (`reports/*/report.json.gz`) renders again into the four formats, which agree
/// with each other and hold the kept data unchanged; a report that is not one is named.
#[test]
fn a_kept_report_renders_again_into_all_four_formats() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kept = crate::kit::suites::root().join("reports/python-openai");
    let output =
        squall().args(["report", "render"]).arg(&kept).arg("--out").arg(dir.path()).output().expect("squall runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let verdicts = reports_agree(dir.path());
    assert!(verdicts.values().any(|(verdict, _, _)| verdict == "fail"), "the kept verdicts: {verdicts:?}");
    let (_, data) = squall_suite::report::read::read_report(&kept).expect("the kept report");
    let (_, rendered) = squall_suite::report::read::read_report(dir.path()).expect("the rendered report");
    assert_eq!(rendered, data, "the rendered report.json holds the kept data");
    let broken = dir.path().join("broken.json.gz");
    std::fs::write(&broken, b"{}").expect("written");
    let output = squall().args(["report", "render"]).arg(&broken).output().expect("squall runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.code() == Some(2) && stderr.contains(&broken.display().to_string()), "{stderr}");
}
