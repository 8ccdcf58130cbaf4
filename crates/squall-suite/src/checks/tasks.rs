//! Judged on Task results and the files they point to (the `tasks` level): the result's
//! fields, the report and what it names, the sub-session's events, the main turn's last word.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{arg, field_list, missing_fields, number, result_field_is, Args, Check, Found, Observation};
use crate::conversation::all_outputs;
use crate::verdict::Level;

pub(super) const CHECKS: &[Check] = &[
    Check::plain(
        r"^the task result has ok (true|false)$",
        Level::Tasks,
        |args| format!("ok: {}", args[1]),
        |observation, args| result_field_is(observation, "ok", args),
    ),
    Check::plain(
        r"^the task result has the fields (.+)$",
        Level::Tasks,
        |args| format!("non-empty {}", field_list(&args[1]).join(", ")),
        |observation, args| missing_fields(observation.result(), &field_list(arg(args, 1))),
    ),
    Check::plain(
        r#"^the task result has stop_reason "([^"]+)"$"#,
        Level::Tasks,
        |args| format!("stop_reason: {:?}", args[1]),
        |observation, args| result_field_is(observation, "stop_reason", args),
    ),
    Check::plain(
        r#"^the report is not empty and not "\(empty\)"$"#,
        Level::Tasks,
        |_| "a report with content other than (empty)".to_owned(),
        report_not_empty,
    ),
    Check::plain(
        r#"^the report contains "([^"]+)"$"#,
        Level::Tasks,
        |args| format!("the report mentions {:?}", args[1]),
        report_contains,
    ),
    Check::plain(
        r"^the report states the error of the task result$",
        Level::Tasks,
        |_| "the report quotes the task result's error_type or error_message".to_owned(),
        report_states_error,
    ),
    Check::plain(
        r"^the report points to the sources the sub-session collected$",
        Level::Tasks,
        |_| "a URL the sub-session's tools returned (seen on the wire), or an existing tool-output file".to_owned(),
        report_sources,
    ),
    Check::plain(
        r"^every path the report names exists$",
        Level::Tasks,
        |_| "every path named in the report exists".to_owned(),
        report_paths_exist,
    ),
    Check::plain(
        r"^the task\'s events file records the runtime.error$",
        Level::Tasks,
        |_| "the file at events_path has a runtime.error line".to_owned(),
        events_record_error,
    ),
    Check::plain(
        r"^the task events are under \.agents/sessions/<sub_session_id>/events\.jsonl$",
        Level::Tasks,
        |_| "events_path ends in .agents/sessions/<sub_session_id>/events.jsonl and exists".to_owned(),
        task_events_path,
    ),
    Check::plain(
        r"^the task summary is at most (\d+) bytes$",
        Level::Tasks,
        |args| format!("a summary of 1..={} bytes", args[1]),
        summary_bounded,
    ),
    Check::plain(
        r"^the turn ends with a message that reports the failure and suggests a retry$",
        Level::Tasks,
        |_| "the turn's final_text reports the failure and offers a retry to the user".to_owned(),
        turn_ends_with_failure_message,
    ),
];

fn report_path(observation: &Observation) -> Result<PathBuf, String> {
    let path = observation.result()["report_path"].as_str().ok_or("the result has no report_path")?;
    Ok(observation.iut.resolve(path))
}

fn report(observation: &Observation) -> Result<String, String> {
    let path = report_path(observation)?;
    std::fs::read_to_string(&path).map_err(|e| format!("cannot read the report {}: {e}", path.display()))
}

fn with_report(observation: &Observation, judge: impl FnOnce(&str) -> Found) -> Found {
    match report(observation) {
        Ok(text) => judge(&text),
        Err(problem) => Found::new(problem, false),
    }
}

fn report_not_empty(observation: &Observation, _: &Args) -> Found {
    with_report(observation, |text| {
        let shown: String = text.chars().take(60).collect();
        Found::new(format!("{} bytes: {shown:?}", text.len()), !text.trim().is_empty() && text.trim() != "(empty)")
    })
}

fn report_contains(observation: &Observation, args: &Args) -> Found {
    with_report(observation, |text| {
        let found = text.contains(arg(args, 1));
        Found::new(if found { "mentioned" } else { "not mentioned" }, found)
    })
}

fn report_states_error(observation: &Observation, _: &Args) -> Found {
    let result = observation.result();
    let facts: Vec<&str> =
        ["error_type", "error_message"].iter().filter_map(|f| result[*f].as_str()).filter(|t| !t.is_empty()).collect();
    with_report(observation, |text| {
        let quoted: Vec<&&str> = facts.iter().filter(|f| text.contains(**f)).collect();
        Found::new(format!("quotes {quoted:?} of {facts:?}"), !quoted.is_empty())
    })
}

/// URLs in a text: `http://` or `https://` up to whitespace or a closing delimiter.
fn urls(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for scheme in ["https://", "http://"] {
        let mut rest = text;
        while let Some(at) = rest.find(scheme) {
            let url: String =
                rest[at..].chars().take_while(|c| !c.is_whitespace() && !"()[]<>\"'`,".contains(*c)).collect();
            rest = &rest[at + url.len().max(scheme.len())..];
            found.push(url.trim_end_matches(['.', ';', ':']).to_owned());
        }
    }
    found
}

/// Paths a report names: absolute paths, and relative ones under `.agents/`.
fn named_paths(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || "()[]<>\"'`,".contains(c))
        .map(|t| t.trim_end_matches(['.', ';', ':']))
        .filter(|t| {
            !t.contains("://")
                && ((t.starts_with('/') && t.len() > 1 && t[1..].contains('/')) || t.contains(".agents/"))
        })
        .map(str::to_owned)
        .collect()
}

/// A path the report names, resolved: absolute as is; `.agents/…` from the workspace that holds
/// the report's `.agents` directory, else from `SQUALL_OUT`.
fn resolve_named(observation: &Observation, report: &Path, named: &str) -> PathBuf {
    let path = Path::new(named);
    if path.is_absolute() {
        return path.to_owned();
    }
    let report_text = report.to_string_lossy();
    match (report_text.find(".agents/"), named.find(".agents/")) {
        (Some(root), Some(start)) => Path::new(&report_text[..root]).join(&named[start..]),
        _ => observation.iut.resolve(named),
    }
}

fn report_sources(observation: &Observation, _: &Args) -> Found {
    let returned: String = all_outputs(observation.attempts()).join("\n");
    let collected: Vec<String> = urls(&returned);
    let (Ok(text), Ok(path)) = (report(observation), report_path(observation)) else {
        return Found::new("no readable report", false);
    };
    let cited: Vec<String> = urls(&text).into_iter().filter(|u| collected.contains(u)).collect();
    let events = observation.result()["events_path"].as_str().map(|p| observation.iut.resolve(p));
    let files: Vec<String> = named_paths(&text)
        .into_iter()
        .filter(|n| {
            let resolved = resolve_named(observation, &path, n);
            resolved.is_file() && resolved != path && Some(&resolved) != events.as_ref()
        })
        .collect();
    let observed = format!(
        "{} of the {} URL(s) the tools returned are cited; {} tool-output file(s) named",
        cited.len(),
        collected.len(),
        files.len()
    );
    Found::new(observed, !cited.is_empty() || !files.is_empty())
}

fn report_paths_exist(observation: &Observation, _: &Args) -> Found {
    let (Ok(text), Ok(path)) = (report(observation), report_path(observation)) else {
        return Found::new("no readable report", false);
    };
    let named = named_paths(&text);
    let missing: Vec<&String> = named.iter().filter(|n| !resolve_named(observation, &path, n).exists()).collect();
    Found::new(format!("{} path(s) named, missing: {missing:?}", named.len()), missing.is_empty())
}

fn events_record_error(observation: &Observation, _: &Args) -> Found {
    let Some(path) = observation.result()["events_path"].as_str().map(|p| observation.iut.resolve(p)) else {
        return Found::new("the result has no events_path", false);
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let errors = text
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|e| e["type"] == "runtime.error")
                .count();
            Found::new(format!("{errors} runtime.error line(s)"), errors > 0)
        }
        Err(e) => Found::new(format!("cannot read {}: {e}", path.display()), false),
    }
}

fn task_events_path(observation: &Observation, _: &Args) -> Found {
    let result = observation.result();
    let id = result["sub_session_id"].as_str().unwrap_or("");
    let path = result["events_path"].as_str().unwrap_or("");
    let suffix = format!(".agents/sessions/{id}/events.jsonl");
    let held = !id.is_empty() && path.ends_with(&suffix) && observation.iut.resolve(path).is_file();
    Found::new(format!("events_path {path:?}"), held)
}

fn summary_bounded(observation: &Observation, args: &Args) -> Found {
    let limit: usize = number(args, 1);
    let result = observation.result();
    let summary = result["final_text"].as_str().or_else(|| result["summary"].as_str()).unwrap_or("");
    Found::new(format!("{} bytes", summary.len()), !summary.is_empty() && summary.len() <= limit)
}

/// Words that report a failure, and words that offer a retry, in the languages of the seeds.
const FAILURE_WORDS: [&str; 5] = ["fail", "error", "失败", "错误", "出错"];
const RETRY_WORDS: [&str; 6] = ["retry", "re-run", "rerun", "try again", "重试", "续跑"];

fn turn_ends_with_failure_message(observation: &Observation, _: &Args) -> Found {
    let text = observation.result()["final_text"].as_str().unwrap_or("").to_lowercase();
    let reports = FAILURE_WORDS.iter().any(|w| text.contains(w));
    let offers = RETRY_WORDS.iter().any(|w| text.contains(w));
    let shown: String = text.chars().take(160).collect();
    Found::new(format!("final_text {shown:?}"), reports && offers)
}

#[cfg(test)]
mod tests {
    use super::{named_paths, urls};

    #[test]
    fn urls_and_paths_are_read_out_of_markdown() {
        let text = "- [RFC](https://example.invalid/rfc9110). See `/tmp/x/.agents/sessions/a/events.jsonl` and .agents/artifacts/s1.txt, or (https://b.invalid/x)";
        assert_eq!(urls(text), ["https://example.invalid/rfc9110", "https://b.invalid/x"]);
        assert_eq!(named_paths(text), ["/tmp/x/.agents/sessions/a/events.jsonl", ".agents/artifacts/s1.txt"]);
    }
}
