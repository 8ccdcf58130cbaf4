//! `squall run` end to end: exit codes, the four report files, and that they agree with each
//! other for a passing and a failing implementation.

use std::collections::BTreeMap;
use std::path::Path;

use regex::Regex;

use crate::kit::command::{squall, squall_run};
use serde_json::Value;

/// A subset that runs in about a second and has a requirement `give-up-after-3` breaks.
const TAGS: &str = "(@REQ-0006-002 and not @events) or @SEED-002-PROFILES or @REQ-0006-021";

/// `squall run` of the subset on `iut`, every profile judged.
fn run_subset(iut: &str, dir: &Path, extra: &[&str]) -> std::process::Output {
    let args: Vec<&str> =
        ["--iut", iut, "--profile", "all", "--tags", TAGS].into_iter().chain(extra.iter().copied()).collect();
    squall_run(&args, dir)
}

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

fn reports_agree(dir: &Path) -> Verdicts {
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

#[test]
fn the_reference_passes_and_all_four_reports_agree() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = run_subset("reference", dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let verdicts = reports_agree(dir.path());
    assert!(verdicts.values().all(|(v, ..)| v == "pass"), "{verdicts:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("REQ-0006-002") && stdout.contains("reports:"), "{stdout}");
}

#[test]
fn a_failing_implementation_exits_1_and_its_reports_agree_on_what_failed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = run_subset("reference:give-up-after-3", dir.path(), &[]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let verdicts = reports_agree(dir.path());
    assert_eq!(verdicts["REQ-0006-002"].0, "fail");
    assert_eq!(verdicts["SEED-002-PROFILES"].0, "pass");
    let acceptance = std::fs::read_to_string(dir.path().join("acceptance.md")).expect("read");
    assert!(acceptance.contains("expected 7 attempts; observed 4 attempts"), "{acceptance}");
}

#[test]
fn checks_above_the_level_are_reported_as_not_applicable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = run_subset("reference", dir.path(), &["--level", "wire"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let verdicts = reports_agree(dir.path());
    assert_eq!(verdicts["REQ-0006-021"].0, "n/a");
}

#[test]
fn usage_errors_exit_2_with_one_clear_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (args, needle) in [
        (vec!["--level", "deep"], "--level deep"),
        (vec!["--time-scale", "7"], "--time-scale 7"),
        (vec!["--features", "/no/such/features"], "/no/such/features"),
    ] {
        let output = run_subset("reference", dir.path(), &args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    let output = squall().args(["run", "--iut", "reference:no-such-mutant"]).output().expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(!dir.path().join("report.json").exists(), "no report is written for a usage error");
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
