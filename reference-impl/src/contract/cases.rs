//! The case runners of the reference's IUT adapter: one streamed call, a deep-research task,
//! a main-session turn. Each returns the `result.json` value and writes `events.jsonl`.

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};

use super::env::{CaseEnv, CaseTask};
use super::CaseError;
use crate::clock::{Clock, ScaledClock};
use crate::decide::policy::RetryPolicy;
use crate::mutants::{self, Mutant};
use crate::provider::{Delta, HttpProvider, ModelRequest, OutputMode, Transport};
use crate::run::engine::{AttemptFailure, RetryEngine};
use crate::run::events::{degraded_event, result_event, EventSink, JsonlEvents};
use crate::session::{Fallback, Session, SessionConfig, TurnOutcome};
use crate::task::research::FixtureBackend;
use crate::task::{run_deep_research, run_main_turn, TaskConfig, TaskTool};

/// The case's clock: the caller's, or real time at the case's scale.
pub(super) fn clock(env: &CaseEnv) -> Arc<dyn Clock> {
    env.clock.clone().unwrap_or_else(|| Arc::new(ScaledClock::new(env.time_scale)))
}

fn provider(env: &CaseEnv) -> Result<HttpProvider, CaseError> {
    let ca_pem = match &env.ca_file {
        Some(path) => Some(std::fs::read(path).map_err(CaseError::file("read", path))?),
        None => None,
    };
    let transport = Transport { http: env.http, ca_pem };
    HttpProvider::new(&env.base_url, &env.api_key, env.provider)
        .over(&transport)
        .map_err(|why| CaseError::bad("SQUALL_CA_FILE", &format!("{:?}", env.ca_file), &why))
}

/// One streamed model call through the retry pipeline (`SQUALL_TASK=stream`).
pub(super) async fn run_stream(env: &CaseEnv, policy: RetryPolicy) -> Result<Value, CaseError> {
    let (clock, provider) = (clock(env), provider(env)?);
    let provider = &provider;
    let events_path = env.out.join("events.jsonl");
    let events: Arc<dyn EventSink> =
        Arc::new(JsonlEvents::create(&events_path).map_err(CaseError::file("create", &events_path))?);
    let engine = RetryEngine::new(policy, clock, events.clone());
    let request = ModelRequest {
        session_id: Some(format!("case-{}", sanitize(&env.case))).filter(|_| env.mutant != Some(Mutant::NoSessionId)),
        ..ModelRequest::prompt("gpt-squall", &env.prompt)
    };
    let display = |_: Delta<'_>| {};
    let mutant = env.mutant;
    let (request, display) = (&request, &display);
    let outcome = engine
        .run(|context| async move {
            let mut attempt = provider.attempt(request, context, OutputMode::Visible, display).await;
            if let (Some(mutant), Err(failure)) = (mutant, attempt.as_mut()) {
                mutants::adjust_failure(mutant, failure as &mut AttemptFailure);
            }
            attempt
        })
        .await;
    Ok(match outcome {
        Ok(output) => {
            events.emit(&result_event("end_turn", Some(&output.text)));
            json!({"ok": true, "stop_reason": "end_turn", "final_text": output.text, "error_type": null, "error_message": null})
        }
        Err(failure) => match env.fallback.as_ref().filter(|_| env.mutant != Some(Mutant::NoDegrade)) {
            Some(fallback) => {
                events.emit(&degraded_event(fallback, failure.cause()));
                json!({"ok": true, "stop_reason": "degraded", "final_text": fallback, "error_type": failure.error.error_type(), "error_message": failure.error.message, "degraded": failure.cause()})
            }
            None => {
                events.emit(&result_event("error", None));
                json!({"ok": false, "stop_reason": "error", "final_text": null, "error_type": failure.error.error_type(), "error_message": failure.error.message})
            }
        },
    })
}

/// A deep-research task (`task`) or a main-session turn that may call Task (`main`).
pub(super) async fn run_session_case(env: &CaseEnv, policy: RetryPolicy) -> Result<Value, CaseError> {
    let workspace = env.out.join("workspace");
    let mut config = SessionConfig::new(&workspace, provider(env)?, clock(env));
    config.policy = policy.clone();
    if env.mutant == Some(Mutant::NoToolOutputBudget) {
        config.tool_output_bytes = usize::MAX;
    }
    let task_config = TaskConfig {
        sub_policy: policy,
        relaunch_guard: env.mutant != Some(Mutant::RelaunchDeepResearch),
        ..TaskConfig::default()
    };
    let backend = Arc::new(FixtureBackend::default());
    let result = match env.task {
        CaseTask::Task => {
            let result = run_deep_research(&config, &task_config, "task-dr1", &env.prompt, backend.as_ref()).await;
            copy_events(Path::new(result["events_path"].as_str().unwrap_or("")), &env.out)?;
            let ok = result["ok"] == json!(true);
            let mut out = json!({
                "ok": ok,
                "stop_reason": if ok { "end_turn" } else { "error" },
                "final_text": result.get("summary").cloned().unwrap_or(Value::Null),
                "error_type": result.get("error_type").cloned().unwrap_or(Value::Null),
                "error_message": result.get("error_message").cloned().unwrap_or(Value::Null),
            });
            for field in ["sub_session_id", "events_path", "report_path"] {
                out[field] = result.get(field).cloned().unwrap_or(Value::Null);
            }
            out["task_result"] = result;
            out
        }
        _ => {
            let mut session = Session::open(config.clone(), "main", "main")
                .map_err(CaseError::file("create", config.sessions_dir().join("main")))?;
            if let Some(text) = env.fallback.clone() {
                let fallback: Fallback = Arc::new(move |_| text.clone());
                session = session.with_fallback(fallback);
            }
            let mut tool = TaskTool::new(config, task_config, "main", backend);
            let outcome = run_main_turn(&session, &mut tool, &env.prompt, &|_| {}).await;
            copy_events(session.events_path(), &env.out)?;
            let task_results = task_results(session.events_path());
            let (ok, stop_reason, text, error) = match outcome {
                TurnOutcome::Answered(text) => (true, "end_turn", Some(text), None),
                TurnOutcome::Degraded { text, cause } => {
                    (true, "degraded", Some(text), Some((cause.error.error_type().to_owned(), cause.error.message)))
                }
                TurnOutcome::Failed(error) => (false, "error", None, Some((error.error_type, error.message))),
            };
            json!({
                "ok": ok,
                "stop_reason": stop_reason,
                "final_text": text,
                "error_type": error.as_ref().map(|e| e.0.clone()),
                "error_message": error.map(|e| e.1),
                "task_results": task_results,
            })
        }
    };
    Ok(result)
}

/// The Task results a main session received, from its events.
fn task_results(events_path: &Path) -> Vec<Value> {
    std::fs::read_to_string(events_path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|e| e["type"] == "tool.result" && e["name"] == crate::task::TASK_TOOL)
        .filter_map(|e| serde_json::from_str(e["output"].as_str().unwrap_or("")).ok())
        .collect()
}

fn copy_events(from: &Path, out: &Path) -> Result<(), CaseError> {
    if from.as_os_str().is_empty() {
        return Ok(());
    }
    std::fs::copy(from, out.join("events.jsonl")).map(|_| ()).map_err(CaseError::file("copy", from))
}

fn sanitize(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).take(64).collect()
}
