//! When: what the implementation is asked to do — one call, a task or a turn, by one instance
//! or a herd of them at once against one run (`--herd`). The case engine runs it
//! ([`crate::engine`]); the step's glue is in [`super`].

use std::sync::OnceLock;

use regex::Regex;

use crate::iut::TaskKind;
use crate::verdict::Level;

/// What a When step has the implementation do: one call, a task or a turn (the IUT contract's
/// `SQUALL_TASK`), the contract level that needs, and whether a herd does it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Action {
    pub task: TaskKind,
    pub needs: Level,
    pub herd: bool,
}

const fn action(task: TaskKind, needs: Level, herd: bool) -> Action {
    Action { task, needs, herd }
}

pub(super) const STEPS: &[(&str, Action)] = &[
    (r"^the implementation streams one model call$", action(TaskKind::Stream, Level::Wire, false)),
    (r"^the implementation runs a deep-research task$", action(TaskKind::Task, Level::Tasks, false)),
    (r"^the implementation runs a main-session turn$", action(TaskKind::Main, Level::Tasks, false)),
    (r"^a herd of clients each streams one model call$", action(TaskKind::Stream, Level::Wire, true)),
    (r"^a herd of clients each runs a deep-research task$", action(TaskKind::Task, Level::Tasks, true)),
    (r"^a herd of clients each runs a main-session turn$", action(TaskKind::Main, Level::Tasks, true)),
];

/// The action a When step names; `None` when no When step reads so.
pub(crate) fn find(step: &str) -> Option<Action> {
    static COMPILED: OnceLock<Vec<(Regex, Action)>> = OnceLock::new();
    let compiled = COMPILED.get_or_init(|| STEPS.iter().map(|(pattern, a)| (super::regex(pattern), *a)).collect());
    compiled.iter().find(|(regex, _)| regex.is_match(step)).map(|(_, action)| *action)
}

/// The prompt every case gives the implementation (`SQUALL_PROMPT`).
pub(crate) const PROMPT: &str = "Survey how LLM clients retry provider failures";
