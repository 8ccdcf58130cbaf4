//! Then, judged on Task results and the files they point to (the `tasks` level): the result's
//! fields, the report and what it names, the sub-session's events, the main turn's last word.

use std::path::{Path, PathBuf};

use cucumber::step::Context;
use futures_util::future::LocalBoxFuture;
use serde_json::Value;

use super::{arg, done, field_list, missing_fields, num, result_field_is, StepFn};
use crate::suite::conversation::all_outputs;
use crate::suite::verdict::Level;
use crate::suite::world::{CaseRun, SuiteWorld};

pub(super) const STEPS: &[(&str, StepFn)] = &[
    (r"^the task result has ok (true|false)$", task_ok),
    (r"^the task result has the fields (.+)$", task_fields),
    (r#"^the task result has stop_reason "([^"]+)"$"#, task_stop_reason),
    (r#"^the report is not empty and not "\(empty\)"$"#, report_not_empty),
    (r#"^the report contains "([^"]+)"$"#, report_contains),
    (r"^the report states the error of the task result$", report_states_error),
    (r"^the report points to the sources the sub-session collected$", report_sources),
    (r"^every path the report names exists$", report_paths_exist),
    (r"^the task's events file records the runtime.error$", events_record_error),
    (r"^the task events are under \.agents/sessions/<sub_session_id>/events\.jsonl$", task_events_path),
    (r"^the task summary is at most (\d+) bytes$", summary_bounded),
    (r"^the turn ends with a message that reports the failure and suggests a retry$", turn_ends_with_failure_message),
];

fn report_path(run: &CaseRun) -> Result<PathBuf, String> {
    let path = run.result()["report_path"].as_str().ok_or("the result has no report_path")?;
    Ok(run.iut.resolve(path))
}

fn report(run: &CaseRun) -> Result<String, String> {
    let path = report_path(run)?;
    std::fs::read_to_string(&path).map_err(|e| format!("cannot read the report {}: {e}", path.display()))
}

fn with_report(run: &CaseRun, judge: impl FnOnce(&str) -> (String, bool)) -> (String, bool) {
    match report(run) {
        Ok(text) => judge(&text),
        Err(problem) => (problem, false),
    }
}

fn task_ok(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let expected = Value::from(arg(&ctx, 1) == "true");
    result_field_is(world, &ctx, Level::Tasks, "ok", expected);
    done()
}

fn task_fields(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let fields = field_list(arg(&ctx, 1));
    world.check(Level::Tasks, &ctx.step.value, format!("non-empty {}", fields.join(", ")), |run| {
        missing_fields(run.result(), &fields)
    });
    done()
}

fn task_stop_reason(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let expected = Value::from(arg(&ctx, 1));
    result_field_is(world, &ctx, Level::Tasks, "stop_reason", expected);
    done()
}

fn report_not_empty(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(Level::Tasks, &ctx.step.value, "a report with content other than (empty)", |run| {
        with_report(run, |text| {
            let shown: String = text.chars().take(60).collect();
            (format!("{} bytes: {shown:?}", text.len()), !text.trim().is_empty() && text.trim() != "(empty)")
        })
    });
    done()
}

fn report_contains(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let needle = arg(&ctx, 1).to_owned();
    world.check(Level::Tasks, &ctx.step.value, format!("the report mentions {needle:?}"), |run| {
        with_report(run, |text| {
            let found = text.contains(&needle);
            (if found { "mentioned" } else { "not mentioned" }.to_owned(), found)
        })
    });
    done()
}

fn report_states_error(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(
        Level::Tasks,
        &ctx.step.value,
        "the report quotes the task result's error_type or error_message",
        |run| {
            let result = run.result();
            let facts: Vec<&str> = ["error_type", "error_message"]
                .iter()
                .filter_map(|f| result[*f].as_str())
                .filter(|t| !t.is_empty())
                .collect();
            with_report(run, |text| {
                let quoted: Vec<&&str> = facts.iter().filter(|f| text.contains(**f)).collect();
                (format!("quotes {quoted:?} of {facts:?}"), !quoted.is_empty())
            })
        },
    );
    done()
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
fn resolve_named(run: &CaseRun, report: &Path, named: &str) -> PathBuf {
    let path = Path::new(named);
    if path.is_absolute() {
        return path.to_owned();
    }
    let report_text = report.to_string_lossy();
    match (report_text.find(".agents/"), named.find(".agents/")) {
        (Some(root), Some(start)) => Path::new(&report_text[..root]).join(&named[start..]),
        _ => run.iut.resolve(named),
    }
}

fn report_sources(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let expected = "a URL the sub-session's tools returned (seen on the wire), or an existing tool-output file";
    world.check(Level::Tasks, &ctx.step.value, expected, |run| {
        let returned: String = all_outputs(run.attempts()).join("\n");
        let collected: Vec<String> = urls(&returned);
        let (Ok(text), Ok(path)) = (report(run), report_path(run)) else {
            return ("no readable report".to_owned(), false);
        };
        let cited: Vec<String> = urls(&text).into_iter().filter(|u| collected.contains(u)).collect();
        let events = run.result()["events_path"].as_str().map(|p| run.iut.resolve(p));
        let files: Vec<String> = named_paths(&text)
            .into_iter()
            .filter(|n| {
                let resolved = resolve_named(run, &path, n);
                resolved.is_file() && resolved != path && Some(&resolved) != events.as_ref()
            })
            .collect();
        let observed = format!(
            "{} of the {} URL(s) the tools returned are cited; {} tool-output file(s) named",
            cited.len(),
            collected.len(),
            files.len()
        );
        (observed, !cited.is_empty() || !files.is_empty())
    });
    done()
}

fn report_paths_exist(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(Level::Tasks, &ctx.step.value, "every path named in the report exists", |run| {
        let (Ok(text), Ok(path)) = (report(run), report_path(run)) else {
            return ("no readable report".to_owned(), false);
        };
        let named = named_paths(&text);
        let missing: Vec<&String> = named.iter().filter(|n| !resolve_named(run, &path, n).exists()).collect();
        (format!("{} path(s) named, missing: {missing:?}", named.len()), missing.is_empty())
    });
    done()
}

fn events_record_error(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(Level::Tasks, &ctx.step.value, "the file at events_path has a runtime.error line", |run| {
        let Some(path) = run.result()["events_path"].as_str().map(|p| run.iut.resolve(p)) else {
            return ("the result has no events_path".to_owned(), false);
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let errors = text
                    .lines()
                    .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                    .filter(|e| e["type"] == "runtime.error")
                    .count();
                (format!("{errors} runtime.error line(s)"), errors > 0)
            }
            Err(e) => (format!("cannot read {}: {e}", path.display()), false),
        }
    });
    done()
}

fn task_events_path(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let expected = "events_path ends in .agents/sessions/<sub_session_id>/events.jsonl and exists";
    world.check(Level::Tasks, &ctx.step.value, expected, |run| {
        let result = run.result();
        let id = result["sub_session_id"].as_str().unwrap_or("");
        let path = result["events_path"].as_str().unwrap_or("");
        let suffix = format!(".agents/sessions/{id}/events.jsonl");
        let ok = !id.is_empty() && path.ends_with(&suffix) && run.iut.resolve(path).is_file();
        (format!("events_path {path:?}"), ok)
    });
    done()
}

fn summary_bounded(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let limit: usize = num(&ctx, 1);
    world.check(Level::Tasks, &ctx.step.value, format!("a summary of 1..={limit} bytes"), |run| {
        let summary = run.result()["final_text"].as_str().or_else(|| run.result()["summary"].as_str()).unwrap_or("");
        (format!("{} bytes", summary.len()), !summary.is_empty() && summary.len() <= limit)
    });
    done()
}

/// Words that report a failure, and words that offer a retry, in the languages of the seeds.
const FAILURE_WORDS: [&str; 5] = ["fail", "error", "失败", "错误", "出错"];
const RETRY_WORDS: [&str; 6] = ["retry", "re-run", "rerun", "try again", "重试", "续跑"];

fn turn_ends_with_failure_message(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let expected = "the turn's final_text reports the failure and offers a retry to the user";
    world.check(Level::Tasks, &ctx.step.value, expected, |run| {
        let text = run.result()["final_text"].as_str().unwrap_or("").to_lowercase();
        let reports = FAILURE_WORDS.iter().any(|w| text.contains(w));
        let offers = RETRY_WORDS.iter().any(|w| text.contains(w));
        let shown: String = text.chars().take(160).collect();
        (format!("final_text {shown:?}"), reports && offers)
    });
    done()
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
