//! Judged on the wire in session cases: which track each request went to (`main` offers the
//! Task tool, `sub` is the deep-research sub-session), the Task result the main session sent
//! back to its model, and the tool output the sub-session sent after its search.

use serde_json::Value;

use super::{arg, field_list, missing_fields, number, Args, Check, Found, Observation};
use crate::conversation::{instructions, outputs_of};
use crate::verdict::Level;
use squall::journal::JournalEntry;

pub(super) const CHECKS: &[Check] = &[
    Check::plain(
        r"^the deep-research sub-session is started exactly once$",
        Level::Wire,
        |_| "1 sub-session request (its 400 is final, so each one is a new session)".to_owned(),
        started_once,
    ),
    Check::plain(
        r"^the main session makes fewer than (\d+) requests$",
        Level::Wire,
        |args| format!("< {} main-session requests", args[1]),
        |observation, args| main_requests(observation, |seen| seen < number(args, 1)),
    ),
    Check::plain(
        r"^the main session makes at most (\d+) requests$",
        Level::Wire,
        |args| format!("≤ {} main-session requests", args[1]),
        |observation, args| main_requests(observation, |seen| seen <= number(args, 1)),
    ),
    Check::plain(
        r"^the Task result the main session sent its model has ok (true|false)$",
        Level::Tasks,
        |args| format!("ok: {} in the Task result on the wire", args[1]),
        sent_task_ok,
    ),
    Check::plain(
        r"^the Task result the main session sent its model has the fields (.+)$",
        Level::Tasks,
        |args| format!("non-empty {}", field_list(&args[1]).join(", ")),
        sent_task_fields,
    ),
    Check::plain(
        r"^the main session's instructions forbid relaunching deep research$",
        Level::Wire,
        |_| "the first main-session request states the no-relaunch rule".to_owned(),
        instructions_forbid_relaunch,
    ),
    Check::plain(
        r"^the request after the tool call carries the tool output cut head and tail around a marker$",
        Level::Wire,
        |_| {
            format!(
                "the search output < {} KB, with ≥ {KEPT_END_BYTES} B of its head and of its tail, in order, a marker between",
                CUT_BELOW_BYTES / 1024
            )
        },
        head_and_tail,
    ),
    Check::plain(
        r"^the request after the tool call carries at most (\d+) KB of tool output$",
        Level::Wire,
        |args| format!("the web_search output ≤ {} KB", args[1]),
        tool_output_bounded,
    ),
];

/// The fixture text a `squall:huge-output` search returns (IUT contract): `BEGIN `, about
/// 1 MB of this unit, ` END`.
const HUGE_UNIT: &str = "retry ";
const HUGE_HEAD: &str = "BEGIN ";
const HUGE_TAIL: &str = " END";

fn on_track<'a>(observation: &'a Observation, track: &'a str) -> impl Iterator<Item = &'a JournalEntry> {
    observation.attempts().into_iter().filter(move |e| e.track.as_deref() == Some(track))
}

fn started_once(observation: &Observation, _: &Args) -> Found {
    let seen = on_track(observation, "sub").count();
    Found::new(format!("{seen} sub-session request(s)"), seen == 1)
}

fn main_requests(observation: &Observation, within: impl Fn(usize) -> bool) -> Found {
    let seen = on_track(observation, "main").count();
    Found::new(format!("{seen} main-session request(s)"), within(seen))
}

/// The first Task result the main session sent to its model, parsed.
fn sent_task_result(observation: &Observation) -> Result<Value, String> {
    let outputs = outputs_of(on_track(observation, "main"), "Task");
    let first = outputs.first().ok_or("no main-session request carried a Task result")?;
    serde_json::from_str::<Value>(first)
        .ok()
        .filter(Value::is_object)
        .ok_or_else(|| format!("the Task result is not a JSON object: {}", first.chars().take(120).collect::<String>()))
}

fn sent_task_ok(observation: &Observation, args: &Args) -> Found {
    match sent_task_result(observation) {
        Ok(result) => Found::new(format!("ok: {}", result["ok"]), result["ok"] == (arg(args, 1) == "true")),
        Err(problem) => Found::new(problem, false),
    }
}

fn sent_task_fields(observation: &Observation, args: &Args) -> Found {
    match sent_task_result(observation) {
        Ok(result) => missing_fields(&result, &field_list(arg(args, 1))),
        Err(problem) => Found::new(problem, false),
    }
}

fn instructions_forbid_relaunch(observation: &Observation, _: &Args) -> Found {
    let text = on_track(observation, "main").next().map(|e| instructions(e).to_lowercase()).unwrap_or_default();
    let names_task = text.contains("deep-research") || text.contains("deep research");
    let forbids = ["do not start it again", "not start it again", "do not relaunch", "不得", "不要再次", "not restart"]
        .iter()
        .any(|p| text.contains(p));
    let held = names_task && forbids;
    Found::new(if held { "the rule is stated" } else { "no no-relaunch rule found in the instructions" }, held)
}

/// The first web_search output the sub-session sent to its model.
fn search_output(observation: &Observation) -> Option<String> {
    outputs_of(on_track(observation, "sub"), "web_search").into_iter().next()
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

fn head_and_tail(observation: &Observation, _: &Args) -> Found {
    let Some(output) = search_output(observation) else {
        return Found::new("no sub-session request carried a web_search output", false);
    };
    match head_and_tail_of(&output) {
        Some(cut) => {
            let held = output.len() < CUT_BELOW_BYTES
                && cut.head >= KEPT_END_BYTES
                && cut.tail >= KEPT_END_BYTES
                && cut.marker;
            let observed = format!(
                "{} B output: head {} B, tail {} B, marker {}",
                output.len(),
                cut.head,
                cut.tail,
                if cut.marker { "present" } else { "absent" }
            );
            Found::new(observed, held)
        }
        None => Found::new(
            format!("{} B output without both the fixture's head and its tail, in order", output.len()),
            false,
        ),
    }
}

fn tool_output_bounded(observation: &Observation, args: &Args) -> Found {
    let limit_kb: usize = number(args, 1);
    match search_output(observation) {
        Some(output) => Found::new(format!("{} KB", output.len() / 1024), output.len() <= limit_kb * 1024),
        None => Found::new("no sub-session request carried a web_search output", false),
    }
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
