//! Then, judged on the wire in session cases: which track each request went to (`main` offers
//! the Task tool, `sub` is the deep-research sub-session), the Task result the main session sent
//! back to its model, and the tool output the sub-session sent after its search.

use cucumber::step::Context;
use futures_util::future::LocalBoxFuture;
use serde_json::Value;

use super::{arg, done, num, StepFn};
use crate::journal::JournalEntry;
use crate::suite::conversation::{instructions, outputs_of};
use crate::suite::verdict::Level;
use crate::suite::world::{CaseRun, SuiteWorld};

pub(super) const STEPS: &[(&str, StepFn)] = &[
    (r"^the deep-research sub-session is started exactly once$", started_once),
    (r"^the main session makes fewer than (\d+) requests$", main_fewer_than),
    (r"^the main session makes at most (\d+) requests$", main_at_most),
    (r"^the Task result the main session sent its model has ok (true|false)$", sent_task_ok),
    (r"^the Task result the main session sent its model has the fields (.+)$", sent_task_fields),
    (r"^the main session's instructions forbid relaunching deep research$", instructions_forbid_relaunch),
    (r"^the request after the tool call carries the tool output cut head and tail around a marker$", head_and_tail),
    (r"^the request after the tool call carries at most (\d+) KB of tool output$", tool_output_bounded),
];

/// The fixture text a `squall:huge-output` search returns (IUT contract): `BEGIN `, about
/// 1 MB of this unit, ` END`.
const HUGE_UNIT: &str = "retry ";
const HUGE_HEAD: &str = "BEGIN ";
const HUGE_TAIL: &str = " END";

fn on_track<'a>(run: &'a CaseRun, track: &'a str) -> impl Iterator<Item = &'a JournalEntry> {
    run.attempts().into_iter().filter(move |e| e.track.as_deref() == Some(track))
}

fn started_once(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(
        Level::Wire,
        &ctx.step.value,
        "1 sub-session request (its 400 is final, so each one is a new session)",
        |run| {
            let seen = on_track(run, "sub").count();
            (format!("{seen} sub-session request(s)"), seen == 1)
        },
    );
    done()
}

fn main_requests(world: &mut SuiteWorld, ctx: &Context, limit: usize, inclusive: bool) {
    let expected = if inclusive {
        format!("≤ {limit} main-session requests")
    } else {
        format!("< {limit} main-session requests")
    };
    world.check(Level::Wire, &ctx.step.value, expected, |run| {
        let seen = on_track(run, "main").count();
        (format!("{seen} main-session request(s)"), if inclusive { seen <= limit } else { seen < limit })
    });
}

fn main_fewer_than(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    main_requests(world, &ctx, num(&ctx, 1), false);
    done()
}

fn main_at_most(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    main_requests(world, &ctx, num(&ctx, 1), true);
    done()
}

/// The first Task result the main session sent to its model, parsed.
fn sent_task_result(run: &CaseRun) -> Result<Value, String> {
    let outputs = outputs_of(on_track(run, "main"), "Task");
    let first = outputs.first().ok_or("no main-session request carried a Task result")?;
    serde_json::from_str::<Value>(first)
        .ok()
        .filter(Value::is_object)
        .ok_or_else(|| format!("the Task result is not a JSON object: {}", first.chars().take(120).collect::<String>()))
}

fn sent_task_ok(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let expected = arg(&ctx, 1) == "true";
    world.check(Level::Tasks, &ctx.step.value, format!("ok: {expected} in the Task result on the wire"), |run| {
        match sent_task_result(run) {
            Ok(result) => (format!("ok: {}", result["ok"]), result["ok"] == expected),
            Err(problem) => (problem, false),
        }
    });
    done()
}

fn sent_task_fields(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let fields = super::field_list(arg(&ctx, 1));
    world.check(
        Level::Tasks,
        &ctx.step.value,
        format!("non-empty {}", fields.join(", ")),
        |run| match sent_task_result(run) {
            Ok(result) => super::missing_fields(&result, &fields),
            Err(problem) => (problem, false),
        },
    );
    done()
}

fn instructions_forbid_relaunch(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(Level::Wire, &ctx.step.value, "the first main-session request states the no-relaunch rule", |run| {
        let text = on_track(run, "main").next().map(|e| instructions(e).to_lowercase()).unwrap_or_default();
        let names_task = text.contains("deep-research") || text.contains("deep research");
        let forbids =
            ["do not start it again", "not start it again", "do not relaunch", "不得", "不要再次", "not restart"]
                .iter()
                .any(|p| text.contains(p));
        let ok = names_task && forbids;
        (if ok { "the rule is stated" } else { "no no-relaunch rule found in the instructions" }.to_owned(), ok)
    });
    done()
}

/// The first web_search output the sub-session sent to its model.
fn search_output(run: &CaseRun) -> Option<String> {
    outputs_of(on_track(run, "sub"), "web_search").into_iter().next()
}

/// How the huge fixture output arrived: bytes of its head and its tail that were kept, and
/// whether something else (a marker) stands between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct HeadTail {
    pub head: usize,
    pub tail: usize,
    pub marker: bool,
}

/// Find the fixture's head (`BEGIN retry retry …`) and tail (`… retry  END`) in `text`.
pub(super) fn head_and_tail_of(text: &str) -> Option<HeadTail> {
    let head_start = text.find(HUGE_HEAD)?;
    let tail_end = text.rfind(HUGE_TAIL)? + HUGE_TAIL.len();
    let mut head_end = head_start + HUGE_HEAD.len();
    while text[head_end..].starts_with(HUGE_UNIT) {
        head_end += HUGE_UNIT.len();
    }
    let mut tail_start = tail_end - HUGE_TAIL.len();
    while text[..tail_start].ends_with(HUGE_UNIT) && tail_start > head_end {
        tail_start -= HUGE_UNIT.len();
    }
    if tail_start < head_end {
        return None;
    }
    let between = &text[head_end..tail_start];
    Some(HeadTail { head: head_end - head_start, tail: tail_end - tail_start, marker: !between.trim().is_empty() })
}

/// At least this much of each end must survive the cut.
const KEPT_END_BYTES: usize = 1024;
/// The fixture is about 1 MB; a cut output is less than half of it.
const CUT_BELOW_BYTES: usize = 512 * 1024;

fn head_and_tail(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let expected = format!(
        "the search output < {} KB, with ≥ {KEPT_END_BYTES} B of its head and of its tail, in order, a marker between",
        CUT_BELOW_BYTES / 1024
    );
    world.check(Level::Wire, &ctx.step.value, expected, |run| {
        let Some(output) = search_output(run) else {
            return ("no sub-session request carried a web_search output".to_owned(), false);
        };
        match head_and_tail_of(&output) {
            Some(cut) => {
                let ok = output.len() < CUT_BELOW_BYTES
                    && cut.head >= KEPT_END_BYTES
                    && cut.tail >= KEPT_END_BYTES
                    && cut.marker;
                (
                    format!(
                        "{} B output: head {} B, tail {} B, marker {}",
                        output.len(),
                        cut.head,
                        cut.tail,
                        if cut.marker { "present" } else { "absent" }
                    ),
                    ok,
                )
            }
            None => {
                (format!("{} B output without both the fixture's head and its tail, in order", output.len()), false)
            }
        }
    });
    done()
}

fn tool_output_bounded(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let limit_kb: usize = num(&ctx, 1);
    world.check(Level::Wire, &ctx.step.value, format!("the web_search output ≤ {limit_kb} KB"), |run| {
        match search_output(run) {
            Some(output) => (format!("{} KB", output.len() / 1024), output.len() <= limit_kb * 1024),
            None => ("no sub-session request carried a web_search output".to_owned(), false),
        }
    });
    done()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn huge() -> String {
        format!("BEGIN {} END", "retry ".repeat(10_000))
    }

    #[test]
    fn a_head_and_tail_cut_is_found_and_a_head_only_or_dropped_output_is_not() {
        let text = huge();
        let cut = format!("{}\n…[omitted]…\n{}", &text[..4000], &text[text.len() - 4000..]);
        let found = head_and_tail_of(&cut).expect("both ends");
        assert!(found.head >= 3990 && found.tail >= 3990 && found.marker, "{found:?}");
        assert_eq!(head_and_tail_of(&text[..8000]), None, "head only");
        assert_eq!(head_and_tail_of("[]"), None, "dropped");
        let no_marker = format!("{}{}", &text[..4002], &text[text.len() - 4000..]);
        assert!(!head_and_tail_of(&no_marker).expect("ends").marker, "a splice without a marker");
    }
}
