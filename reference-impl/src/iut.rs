//! The reference implementation behind squall's IUT contract (`docs/iut-contract.md`): read
//! the case from the environment, run it, write `$SQUALL_OUT/result.json` and
//! `$SQUALL_OUT/events.jsonl`. The same function runs in-process for `cargo test` and in the
//! `squall-reference-iut` binary, so the contract itself is exercised.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::clock::{Clock, ScaledClock};
use crate::engine::{AttemptFailure, RetryEngine};
use crate::events::{degraded_event, result_event, EventSink, JsonlEvents};
use crate::mutants::Mutant;
use crate::policy::{AgentProfile, RetryPolicy};
use crate::provider::{Api, Delta, HttpProvider, ModelRequest, OutputMode};
use crate::report::{write_atomically, write_atomically_async};
use crate::research::FixtureBackend;
use crate::session::{Fallback, Session, SessionConfig, TurnOutcome};
use crate::task::{run_deep_research, run_main_turn, TaskConfig, TaskTool};

/// What kind of case to run (`SQUALL_TASK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseTask {
    /// One streamed model call through the provider and retry pipeline.
    Stream,
    /// A Task(deep-research) sub-session.
    Task,
    /// A main-session turn that may call Task.
    Main,
}

/// One case, as the contract's environment describes it.
#[derive(Debug, Clone)]
pub struct CaseEnv {
    pub base_url: String,
    pub api_key: String,
    pub case: String,
    pub task: CaseTask,
    pub prompt: String,
    pub out: PathBuf,
    pub time_scale: f64,
    /// `SQUALL_PROFILE`: default | fast-fail | writer | read-only | reasoning.
    pub profile: String,
    /// `SQUALL_FALLBACK`: attach a fallback answering with this text (seed 004 degrade).
    pub fallback: Option<String>,
    /// `SQUALL_REFERENCE_MUTANT`: run a deliberately broken variant.
    pub mutant: Option<Mutant>,
}

impl CaseEnv {
    /// Read the case from `SQUALL_*` / `OPENAI_*` variables; the error names the variable.
    pub fn from_env() -> Result<CaseEnv, String> {
        let var = |name: &str| std::env::var(name).map_err(|_| format!("{name} is not set"));
        let task = match var("SQUALL_TASK")?.as_str() {
            "stream" => CaseTask::Stream,
            "task" => CaseTask::Task,
            "main" => CaseTask::Main,
            other => return Err(format!("SQUALL_TASK={other}: expected stream, task or main")),
        };
        let time_scale = match std::env::var("SQUALL_TIME_SCALE") {
            Ok(text) => text.parse::<f64>().map_err(|_| format!("SQUALL_TIME_SCALE={text}: not a number"))?,
            Err(_) => 1.0,
        };
        let mutant = match std::env::var("SQUALL_REFERENCE_MUTANT") {
            Ok(name) if !name.is_empty() => {
                Some(Mutant::parse(&name).ok_or_else(|| format!("SQUALL_REFERENCE_MUTANT={name}: no such mutant"))?)
            }
            _ => None,
        };
        Ok(CaseEnv {
            base_url: var("OPENAI_BASE_URL")?,
            api_key: std::env::var("OPENAI_API_KEY").unwrap_or_default(),
            case: std::env::var("SQUALL_CASE").unwrap_or_default(),
            task,
            prompt: std::env::var("SQUALL_PROMPT").unwrap_or_else(|_| "hello".to_owned()),
            out: PathBuf::from(var("SQUALL_OUT")?),
            time_scale,
            profile: std::env::var("SQUALL_PROFILE").unwrap_or_else(|_| "default".to_owned()),
            fallback: std::env::var("SQUALL_FALLBACK").ok().filter(|f| !f.is_empty()),
            mutant,
        })
    }

    fn policy(&self) -> Result<RetryPolicy, String> {
        let mut policy = match self.profile.as_str() {
            "default" | "" => RetryPolicy::default(),
            "fast-fail" => RetryPolicy::fast_fail(),
            "writer" => RetryPolicy::for_agent(AgentProfile::Writer),
            "read-only" => RetryPolicy::for_agent(AgentProfile::ReadOnly),
            "reasoning" => RetryPolicy::reasoning_ladder(),
            other => {
                return Err(format!(
                    "SQUALL_PROFILE={other}: expected default, fast-fail, writer, read-only or reasoning"
                ))
            }
        };
        if let Some(mutant) = self.mutant {
            mutant.adjust_policy(&mut policy);
        }
        Ok(policy)
    }
}

/// Run one case and write its outputs. Errors are harness errors (bad environment, unwritable
/// output directory); a failing *implementation* still writes its result.
pub async fn run_case(env: &CaseEnv) -> Result<(), String> {
    std::fs::create_dir_all(&env.out).map_err(|e| format!("SQUALL_OUT={}: {e}", env.out.display()))?;
    let policy = env.policy()?;
    let clock: Arc<dyn Clock> = Arc::new(ScaledClock::new(env.time_scale));
    let provider = HttpProvider::new(&env.base_url, &env.api_key, Api::Responses);
    let mut result = match env.task {
        CaseTask::Stream => run_stream(env, policy, clock, &provider).await?,
        CaseTask::Task | CaseTask::Main => run_session_case(env, policy, clock, provider).await?,
    };
    result["time_scale"] = json!(env.time_scale);
    if let Some(mutant) = env.mutant {
        distort_outputs(mutant, env, &mut result)?;
    }
    write_atomically_async(&env.out.join("result.json"), serde_json::to_string_pretty(&result).unwrap_or_default())
        .await
        .map_err(|e| format!("cannot write result.json: {e}"))
}

async fn run_stream(
    env: &CaseEnv,
    policy: RetryPolicy,
    clock: Arc<dyn Clock>,
    provider: &HttpProvider,
) -> Result<Value, String> {
    let events: Arc<dyn EventSink> =
        Arc::new(JsonlEvents::create(&env.out.join("events.jsonl")).map_err(|e| e.to_string())?);
    let engine = RetryEngine::new(policy, clock, events.clone());
    let request = ModelRequest {
        session_id: Some(format!("case-{}", sanitize(&env.case))),
        ..ModelRequest::prompt("gpt-squall", &env.prompt)
    };
    let display = |_: Delta<'_>| {};
    let mutant = env.mutant;
    let (request, display) = (&request, &display);
    let outcome = engine
        .run(|context| async move {
            let mut attempt = provider.attempt(request, context, OutputMode::Visible, display).await;
            if let (Some(mutant), Err(failure)) = (mutant, attempt.as_mut()) {
                mutant.adjust_failure(failure as &mut AttemptFailure);
            }
            attempt
        })
        .await;
    Ok(match outcome {
        Ok(output) => {
            events.emit(result_event("end_turn", Some(&output.text)));
            json!({"ok": true, "stop_reason": "end_turn", "final_text": output.text, "error_type": null, "error_message": null})
        }
        Err(failure) => match &env.fallback {
            Some(fallback) => {
                events.emit(degraded_event(fallback, &failure));
                json!({"ok": true, "stop_reason": "degraded", "final_text": fallback, "error_type": failure.error.error_type(), "error_message": failure.error.message, "degraded": failure.cause()})
            }
            None => {
                events.emit(result_event("error", None));
                json!({"ok": false, "stop_reason": "error", "final_text": null, "error_type": failure.error.error_type(), "error_message": failure.error.message})
            }
        },
    })
}

async fn run_session_case(
    env: &CaseEnv,
    policy: RetryPolicy,
    clock: Arc<dyn Clock>,
    provider: HttpProvider,
) -> Result<Value, String> {
    let workspace = env.out.join("workspace");
    let mut config = SessionConfig::new(&workspace, provider, clock);
    config.policy = policy.clone();
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
            let mut session = Session::open(config.clone(), "main", "main").map_err(|e| e.to_string())?;
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

fn copy_events(from: &Path, out: &Path) -> Result<(), String> {
    if from.as_os_str().is_empty() {
        return Ok(());
    }
    std::fs::copy(from, out.join("events.jsonl"))
        .map(|_| ())
        .map_err(|e| format!("cannot copy {}: {e}", from.display()))
}

/// The output-level bugs of the mutants that have them.
fn distort_outputs(mutant: Mutant, env: &CaseEnv, result: &mut Value) -> Result<(), String> {
    match mutant {
        Mutant::OkAfterExhaustion if env.task == CaseTask::Stream && result["ok"] == json!(false) => {
            result["ok"] = json!(true);
            result["stop_reason"] = json!("end_turn");
        }
        Mutant::OkTrueTaskFailure if env.task == CaseTask::Task => result["ok"] = json!(true),
        Mutant::EmptyReport => {
            if let Some(path) = result["report_path"].as_str() {
                write_atomically(Path::new(path), "(empty)").map_err(|e| e.to_string())?;
            }
        }
        Mutant::RawEofError => {
            let events = env.out.join("events.jsonl");
            let text = std::fs::read_to_string(&events).unwrap_or_default();
            std::fs::write(&events, text.replace("ProviderTimeoutException", "EOFException"))
                .map_err(|e| e.to_string())?;
            *result = serde_json::from_str(&result.to_string().replace("ProviderTimeoutException", "EOFException"))
                .unwrap_or_default();
        }
        _ => {}
    }
    Ok(())
}

fn sanitize(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).take(64).collect()
}

/// The adapter binary's `main`: run the case from the environment; exit 2 on harness errors.
pub fn main_from_env() -> std::process::ExitCode {
    let env = match CaseEnv::from_env() {
        Ok(env) => env,
        Err(e) => {
            eprintln!("squall-reference-iut: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("squall-reference-iut: cannot start a runtime: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    match runtime.block_on(run_case(&env)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("squall-reference-iut: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
