//! `Task(agent, prompt)` and the deep-research sub-session (PRD-0006 C and D, PRD-0003 C).
//!
//! - A deep-research sub-session has its own id and events file, collects sources through a
//!   pluggable backend, and buffers its output (nobody sees it before the report, so the gate
//!   lets the provider retry replay it).
//! - It always delivers: `{"ok": true, sub_session_id, events_path, report_path, summary}` with
//!   a structured report, or `{"ok": false, error_type, error_message, stop_reason: "error",
//!   sub_session_id, events_path, report_path}` with a failure report. Never `ok: true` on an
//!   error path, never an empty report.
//! - No retry storms (REQ-0006-030): the main session's instructions say not to relaunch a
//!   failed deep research, and the [`StormGuard`] enforces it — after a failure, further
//!   deep-research calls in the turn (and within a cooldown) are refused and the turn ends
//!   with a message to the user.

pub mod research;
pub mod research_report;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::decide::policy::RetryPolicy;
use crate::provider::{Delta, FunctionCall, OutputMode, ToolSpec};
use crate::session::budget::head_tail;
use crate::session::{Session, SessionConfig, ToolFuture, ToolResult, Toolbox, TurnError, TurnOutcome};
use crate::task::research_report::{failure_report, success_report, write_atomically_async};
use research::{ResearchBackend, Source};

/// The sub-agent type the Task tool launches.
pub const DEEP_RESEARCH: &str = "deep-research";
/// The Task tool's name.
pub const TASK_TOOL: &str = "Task";

/// The main session's instructions, stating the no-relaunch rule (REQ-0006-030).
pub const MAIN_INSTRUCTIONS: &str =
    "You are the main session. Use the Task tool with agent \"deep-research\" for research. \
When Task(deep-research) returns ok=false or stop_reason=\"error\", do not start it again: \
report the failure to the user, point to the failure report, and suggest that they retry.";

/// The deep-research sub-session's instructions.
pub const DEEP_RESEARCH_INSTRUCTIONS: &str =
    "You are a deep-research sub-agent. Collect sources with web_search and web_fetch, \
then answer with your findings. Your answer becomes the report.";

/// How the task runner is configured.
#[derive(Debug, Clone)]
pub struct TaskConfig {
    /// Largest `summary` returned to the main session, in bytes.
    pub summary_bytes: usize,
    /// After a failed deep research, further ones are refused for this long (policy time).
    pub cooldown: Duration,
    /// The sub-session's retry policy.
    pub sub_policy: RetryPolicy,
    /// Enforce REQ-0006-030 in code. Turning it off reproduces the retry storm the PRD fixes
    /// (the suite's `relaunch-deep-research` mutant); no real configuration should.
    pub relaunch_guard: bool,
}

impl Default for TaskConfig {
    fn default() -> Self {
        TaskConfig {
            summary_bytes: 600,
            cooldown: Duration::from_secs(600),
            sub_policy: RetryPolicy::default(),
            relaunch_guard: true,
        }
    }
}

/// Refuses to relaunch deep research after a failure: for the rest of the turn and within
/// the cooldown.
#[derive(Debug, Default)]
pub struct StormGuard {
    failed_at: Option<Duration>,
    failed_this_turn: bool,
    last_failure: Option<Value>,
}

impl StormGuard {
    /// A new turn: what failed in the last one no longer counts.
    pub fn start_turn(&mut self) {
        self.failed_this_turn = false;
    }

    fn refuses(&self, now: Duration, cooldown: Duration) -> bool {
        self.failed_this_turn || self.failed_at.is_some_and(|at| now.saturating_sub(at) < cooldown)
    }

    fn record_failure(&mut self, now: Duration, result: &Value) {
        self.failed_at = Some(now);
        self.failed_this_turn = true;
        self.last_failure = Some(result.clone());
    }
}

/// The main session's toolbox: the Task tool.
#[derive(Debug)]
pub struct TaskTool {
    config: SessionConfig,
    task: TaskConfig,
    parent_id: String,
    backend: Arc<dyn ResearchBackend>,
    guard: StormGuard,
    launched: u32,
}

impl TaskTool {
    /// The Task tool of session `parent_id`, running sub-sessions on `backend`.
    pub fn new(config: SessionConfig, task: TaskConfig, parent_id: &str, backend: Arc<dyn ResearchBackend>) -> Self {
        TaskTool { config, task, parent_id: parent_id.to_owned(), backend, guard: StormGuard::default(), launched: 0 }
    }

    /// How many deep-research sub-sessions this tool started.
    pub fn launched(&self) -> u32 {
        self.launched
    }

    /// A new turn of the parent session.
    pub fn start_turn(&mut self) {
        self.guard.start_turn();
    }

    async fn call_task(&mut self, call: &FunctionCall) -> ToolResult {
        let arguments: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let agent = arguments["agent"].as_str().unwrap_or("");
        let prompt = arguments["prompt"].as_str().unwrap_or("");
        if agent != DEEP_RESEARCH {
            let output = json!({"ok": false, "error_type": "UnknownAgent", "error_message": format!("no agent `{agent}`; available: {DEEP_RESEARCH}"), "stop_reason": "error"});
            return ToolResult { output: output.to_string(), end_turn: None };
        }
        let now = self.config.clock.now();
        if self.task.relaunch_guard && self.guard.refuses(now, self.task.cooldown) {
            return self.refuse();
        }
        self.launched += 1;
        let sub_id = format!("{}-dr{}", self.parent_id, self.launched);
        let result = run_deep_research(&self.config, &self.task, &sub_id, prompt, self.backend.as_ref()).await;
        if result["ok"] != json!(true) {
            self.guard.record_failure(self.config.clock.now(), &result);
        }
        ToolResult { output: result.to_string(), end_turn: None }
    }

    fn refuse(&self) -> ToolResult {
        let failure = self.guard.last_failure.clone().unwrap_or(Value::Null);
        let report = failure["report_path"].as_str().unwrap_or("(no report)");
        let output = json!({
            "ok": false,
            "stop_reason": "error",
            "error_type": "TaskRefused",
            "error_message": "deep research already failed in this turn (or within the cooldown) and is not relaunched automatically (REQ-0006-030)",
            "previous_failure": failure,
        });
        let message = format!(
            "Deep research failed ({}: {}). I will not restart it automatically. The failure report is at {report}; ask me to retry when you are ready.",
            failure["error_type"].as_str().unwrap_or("error"),
            failure["error_message"].as_str().unwrap_or("unknown cause"),
        );
        ToolResult { output: output.to_string(), end_turn: Some(message) }
    }
}

impl Toolbox for TaskTool {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: TASK_TOOL.to_owned(),
            description:
                "Run a sub-agent in its own sub-session; returns small JSON with ok, sub_session_id, report_path."
                    .to_owned(),
            parameters: json!({"type": "object", "properties": {"agent": {"type": "string", "enum": [DEEP_RESEARCH]}, "prompt": {"type": "string"}}, "required": ["agent", "prompt"]}),
        }]
    }

    fn call<'a>(&'a mut self, call: &'a FunctionCall) -> ToolFuture<'a> {
        Box::pin(async move {
            if call.name == TASK_TOOL {
                self.call_task(call).await
            } else {
                ToolResult {
                    output: json!({"error": format!("unknown tool `{}`", call.name)}).to_string(),
                    end_turn: None,
                }
            }
        })
    }
}

/// The sub-session's toolbox: search and fetch, recording sources.
#[derive(Debug)]
struct ResearchTools<'a> {
    backend: &'a dyn ResearchBackend,
    collected: Vec<Source>,
}

impl Toolbox for ResearchTools<'_> {
    fn specs(&self) -> Vec<ToolSpec> {
        research::tool_specs()
    }

    fn call<'a>(&'a mut self, call: &'a FunctionCall) -> ToolFuture<'a> {
        let arguments: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let output = research::run_tool(self.backend, &call.name, &arguments, &mut self.collected);
        Box::pin(std::future::ready(ToolResult { output, end_turn: None }))
    }
}

/// Run one deep-research sub-session and return the Task result JSON. Always writes a report.
pub async fn run_deep_research(
    config: &SessionConfig,
    task: &TaskConfig,
    sub_id: &str,
    prompt: &str,
    backend: &dyn ResearchBackend,
) -> Value {
    let sub_config = SessionConfig { policy: task.sub_policy.clone(), ..config.clone() };
    let session = match Session::open(sub_config, sub_id, DEEP_RESEARCH) {
        Ok(session) => session,
        Err(e) => {
            return json!({"ok": false, "error_type": "SessionError", "error_message": e.to_string(), "stop_reason": "error", "sub_session_id": sub_id})
        }
    };
    let report_path = session.dir().join("report.md");
    let events_path = session.events_path().to_owned();
    let mut tools = ResearchTools { backend, collected: Vec::new() };
    let ignore = |_: Delta<'_>| {};
    let outcome = session.run_turn(DEEP_RESEARCH_INSTRUCTIONS, prompt, &mut tools, OutputMode::Buffered, &ignore).await;
    let failure = match outcome {
        TurnOutcome::Answered(text) if !text.trim().is_empty() => {
            let report = success_report(prompt, &text, &tools.collected);
            if let Err(e) = write_atomically_async(&report_path, report, config.clock.as_ref()).await {
                TurnError { error_type: "ReportWriteError".to_owned(), message: e.to_string(), attempts: 0 }
            } else {
                return json!({
                    "ok": true,
                    "sub_session_id": sub_id,
                    "events_path": events_path,
                    "report_path": report_path,
                    "summary": head_tail(text.trim(), task.summary_bytes),
                });
            }
        }
        TurnOutcome::Answered(_) => TurnError {
            error_type: "EmptyReport".to_owned(),
            message: "the sub-session answered with no text".to_owned(),
            attempts: 0,
        },
        TurnOutcome::Degraded { cause, .. } => TurnError::from(&cause),
        TurnOutcome::Failed(error) => error,
    };
    let report = failure_report(prompt, &failure, &tools.collected, sub_id, &events_path);
    // The report is the delivery; if even it cannot be written, say so in the result.
    let report_error =
        write_atomically_async(&report_path, report, config.clock.as_ref()).await.err().map(|e| e.to_string());
    json!({
        "ok": false,
        "error_type": failure.error_type,
        "error_message": failure.message,
        "stop_reason": "error",
        "sub_session_id": sub_id,
        "events_path": events_path,
        "report_path": report_path,
        "report_error": report_error,
        "sources": tools.collected.iter().map(|s| s.url.clone()).collect::<Vec<_>>(),
    })
}

/// One main-session turn that may call `Task(deep-research)`.
pub async fn run_main_turn(
    session: &Session,
    tool: &mut TaskTool,
    prompt: &str,
    display: &(dyn Fn(Delta<'_>) + Send + Sync),
) -> TurnOutcome {
    tool.start_turn();
    session.run_turn(MAIN_INSTRUCTIONS, prompt, tool, OutputMode::Visible, display).await
}
