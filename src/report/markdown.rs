//! `acceptance.md`: the sign-off document — which profiles were judged (and which not), a
//! table of requirements per judged profile with verdicts and case counts, expected vs
//! observed for every failed MUST, the SHOULD warnings in their own section, and a sign-off
//! block. Times are production seconds (each case's time scale undone).

use std::fmt::Write as _;

use serde_json::Value;

use super::{str_of, tally_of};

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

pub(super) fn render(report: &Value) -> String {
    let mut out = String::new();
    let iut = &report["iut"];
    let requirements = report["requirements"].as_array().map(Vec::as_slice).unwrap_or_default();
    let judged = report["profiles"]["judged"].as_array().map(Vec::as_slice).unwrap_or_default();
    let not_judged = report["profiles"]["not_judged"].as_array().map(Vec::as_slice).unwrap_or_default();
    let ids = |profiles: &[Value]| profiles.iter().map(|p| str_of(&p["id"]).to_owned()).collect::<Vec<_>>().join(", ");
    let _ = writeln!(out, "# Acceptance report — {}\n", str_of(&iut["name"]));
    let _ = writeln!(out, "| | |\n|---|---|");
    let _ = writeln!(out, "| Implementation | `{}` |", cell(str_of(&iut["command"])));
    let _ = writeln!(out, "| Level | {} |", str_of(&iut["level"]));
    let _ = writeln!(out, "| Profiles judged | {} |", ids(judged));
    if !not_judged.is_empty() {
        let _ = writeln!(out, "| Not judged | {} (choose with `--profile`) |", ids(not_judged));
    }
    if let Some(tags) = report["tags"].as_str() {
        let _ = writeln!(out, "| Cases | only those matching `{}` |", cell(tags));
    }
    let _ = writeln!(out, "| squall | {} |", str_of(&report["squall_version"]));
    let _ = writeln!(out, "| Date | {} |", str_of(&report["started_at"]));
    let _ = writeln!(
        out,
        "| Duration | {:.1} s, production values at time scale {} (precise cases slower); every figure below is in production seconds |",
        report["duration_ms"].as_f64().unwrap_or(0.0) / 1000.0,
        report["time_scale"]
    );
    let _ = writeln!(out, "| Timing | {} |", cell(str_of(&report["calibration"]["summary"])));
    let _ = writeln!(out, "| Requirements | {} |", tally_of(&report["summary"]).describe());
    let _ = writeln!(out, "| Result | **{}** |\n", str_of(&report["verdict"]));
    let _ = writeln!(
        out,
        "A requirement fails when one of its MUST checks fails, and is `error` when a case could not be judged \
         (the implementation crashed, hung or left no usable result). A missed SHOULD gives `warn`: it passes, \
         with the warning listed below. \"Checks n/a\" counts the checks above the declared level: a passing \
         requirement with some was judged only in part."
    );
    for profile in judged {
        let _ = writeln!(
            out,
            "\n## {} — {}: {}\n\n| Requirement | Title | Verdict | Cases passed | Checks n/a |\n|---|---|---|---|---|",
            str_of(&profile["id"]),
            cell(str_of(&profile["title"])),
            str_of(&profile["verdict"])
        );
        for requirement in requirements.iter().filter(|r| r["profile"] == profile["id"]) {
            let _ = writeln!(
                out,
                "| {} | {} | **{}** | {} | {} |",
                str_of(&requirement["id"]),
                cell(str_of(&requirement["title"])),
                str_of(&requirement["verdict"]),
                tally_of(&requirement["cases_tally"]).passed_of_judged(),
                tally_of(&requirement["checks_tally"]).not_applicable,
            );
        }
    }
    timing_section(&mut out, report, requirements);
    findings_section(&mut out, requirements, &["fail", "error"], "Failures: expected vs observed (MUST)");
    findings_section(&mut out, requirements, &["warn"], "Warnings (SHOULD): advisory, they do not fail a requirement");
    let _ = writeln!(
        out,
        "\n## Sign-off\n\nThe requirements above were judged by squall against the implementation named at the top. \
         Evidence for every case (wire journal, events, stderr) is in `report.json` and `index.html` next to this file.\n\n\
         | Role | Name | Decision | Date | Signature |\n|---|---|---|---|---|\n| Engineering | | | | |\n| QA | | | | |\n| Product | | | | |"
    );
    out
}

/// What was taken out of every wait, and the cases that ran at another time scale than they
/// asked for, with why.
fn timing_section(out: &mut String, report: &Value, requirements: &[Value]) {
    let _ = writeln!(
        out,
        "\n## Timing\n\n{}. Each wait is judged as the real gap less this reaction, divided by the case's time \
         scale; a timing check gives the benefit of the doubt within the noise that remains, and refuses to judge \
         (`error`) when that noise reaches half of what the check must tell apart.",
        str_of(&report["calibration"]["summary"])
    );
    let mut seen = std::collections::BTreeSet::new();
    let raised: Vec<&Value> = requirements
        .iter()
        .flat_map(|r| r["cases"].as_array().into_iter().flatten())
        .filter(|c| !c["time_scale_note"].is_null() && seen.insert(str_of(&c["name"]).to_owned()))
        .collect();
    if raised.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n| Case | Time scale | Why |\n|---|---|---|");
    for case in raised {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            cell(str_of(&case["name"])),
            case["time_scale"],
            cell(str_of(&case["time_scale_note"]))
        );
    }
}

/// The cases with one of `verdicts`, each with its checks of those verdicts and its error.
fn findings_section(out: &mut String, requirements: &[Value], verdicts: &[&str], heading: &str) {
    let has = |v: &Value| verdicts.contains(&str_of(&v["verdict"]));
    let listed: Vec<&Value> =
        requirements.iter().filter(|r| r["cases"].as_array().into_iter().flatten().any(has)).collect();
    if listed.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## {heading}");
    for requirement in listed {
        let _ = writeln!(out, "\n### {} — {}\n", str_of(&requirement["id"]), str_of(&requirement["title"]));
        for case in requirement["cases"].as_array().into_iter().flatten().filter(|c| has(c)) {
            let _ = writeln!(
                out,
                "- **{}** ({}) — {}",
                str_of(&case["name"]),
                str_of(&case["feature"]),
                str_of(&case["verdict"])
            );
            for check in case["checks"].as_array().into_iter().flatten().filter(|c| has(c)) {
                let _ = writeln!(
                    out,
                    "  - {} {}: expected {}; observed {}",
                    str_of(&check["strength"]).to_uppercase(),
                    str_of(&check["name"]),
                    str_of(&check["expected"]),
                    str_of(&check["observed"])
                );
            }
            if let Some(error) = case["error"].as_str() {
                let _ = writeln!(out, "  - {}", cell(error));
            }
        }
    }
}
