//! Then, judged on Task results and reports (the `tasks` level).

use cucumber::step::Context;
use futures_util::future::LocalBoxFuture;
use serde_json::Value;

use super::{arg, done, num, result_field_is, StepFn};
use crate::suite::results::Level;
use crate::suite::world::{CaseRun, SuiteWorld};

pub const STEPS: &[(&str, StepFn)] = &[
    (r"^the task result has ok (true|false)$", task_ok),
    (r"^the task result has the fields (.+)$", task_fields),
    (r#"^the task result has stop_reason "([^"]+)"$"#, task_stop_reason),
    (r#"^the report is not empty and not "\(empty\)"$"#, report_not_empty),
    (r#"^the report contains "([^"]+)"$"#, report_contains),
    (r"^the report lists the collected sources$", report_sources),
    (r"^the report names the sub-session$", report_names_sub_session),
    (r"^the task events are under \.agents/sessions/<sub_session_id>/events\.jsonl$", task_events_path),
    (r"^the task summary is at most (\d+) bytes$", summary_bounded),
    (r"^the main session receives a Task result with ok false$", main_sees_failure),
];

fn report(run: &CaseRun) -> Result<String, String> {
    let path = run.result()["report_path"].as_str().ok_or("the result has no report_path")?;
    std::fs::read_to_string(run.iut.resolve(path)).map_err(|e| format!("cannot read the report {path}: {e}"))
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
    let fields: Vec<String> =
        arg(&ctx, 1).split(',').map(|f| f.trim().trim_matches('"').to_owned()).filter(|f| !f.is_empty()).collect();
    world.check(Level::Tasks, &ctx.step.value, format!("non-empty {}", fields.join(", ")), |run| {
        let result = run.result();
        let missing: Vec<&String> =
            fields.iter().filter(|f| result[f.as_str()].as_str().is_none_or(str::is_empty)).collect();
        (
            if missing.is_empty() { "all present".to_owned() } else { format!("missing or empty: {missing:?}") },
            missing.is_empty(),
        )
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
            (
                format!("{} bytes: {:?}", text.len(), text.chars().take(60).collect::<String>()),
                !text.trim().is_empty() && text.trim() != "(empty)",
            )
        })
    });
    done()
}

fn report_contains(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let needle = arg(&ctx, 1).to_owned();
    world.check(Level::Tasks, &ctx.step.value, format!("the report mentions {needle:?}"), |run| {
        with_report(run, |text| {
            (
                if text.contains(&needle) { "mentioned".to_owned() } else { "not mentioned".to_owned() },
                text.contains(&needle),
            )
        })
    });
    done()
}

fn report_sources(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(Level::Tasks, &ctx.step.value, "at least one URL or tool-output path", |run| {
        with_report(run, |text| {
            let urls = text.matches("http://").count() + text.matches("https://").count();
            let paths = text.matches(".agents/").count();
            (format!("{urls} URL(s), {paths} path(s)"), urls + paths > 0)
        })
    });
    done()
}

fn report_names_sub_session(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(Level::Tasks, &ctx.step.value, "the report names sub_session_id", |run| {
        let id = run.result()["sub_session_id"].as_str().unwrap_or("").to_owned();
        with_report(run, |text| {
            (
                format!("sub_session_id {id:?} {}", if text.contains(&id) { "named" } else { "not named" }),
                !id.is_empty() && text.contains(&id),
            )
        })
    });
    done()
}

fn task_events_path(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(
        Level::Tasks,
        &ctx.step.value,
        "events_path ends in .agents/sessions/<sub_session_id>/events.jsonl and exists",
        |run| {
            let result = run.result();
            let id = result["sub_session_id"].as_str().unwrap_or("");
            let path = result["events_path"].as_str().unwrap_or("");
            let suffix = format!(".agents/sessions/{id}/events.jsonl");
            let ok = !id.is_empty() && path.ends_with(&suffix) && run.iut.resolve(path).is_file();
            (format!("events_path {path:?}"), ok)
        },
    );
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

fn main_sees_failure(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(Level::Tasks, &ctx.step.value, "task_results[0].ok = false", |run| {
        let first = &run.result()["task_results"][0];
        (format!("task_results[0].ok = {}", first["ok"]), first["ok"] == false)
    });
    done()
}
