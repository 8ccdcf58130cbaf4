//! Sessions and Task(deep-research) against scripted squall runs over real HTTP:
//! REQ-0006-020, -021, -030, PRD-0003's sub-session contract, seed 004's degrade path.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use squall::clock::TimeScale;
use squall::journal::JournalEntry;
use squall_reference::clock::ScaledClock;
use squall_reference::provider::{Api, Delta, HttpProvider};
use squall_reference::session::{Fallback, Session, SessionConfig, TurnOutcome};
use squall_reference::task::research::FixtureBackend;
use squall_reference::task::{run_main_turn, TaskConfig, TaskTool};

use crate::kit::harness::Harness;

const SCALE: f64 = 0.005;

struct TaskRun {
    outcome: TurnOutcome,
    launched: u32,
    workspace: tempfile::TempDir,
    journal: Vec<JournalEntry>,
    main_events: Vec<Value>,
}

impl TaskRun {
    /// The Task results the main session received, parsed.
    fn task_results(&self) -> Vec<Value> {
        self.main_events
            .iter()
            .filter(|e| e["type"] == "tool.result" && e["name"] == "Task")
            .filter_map(|e| serde_json::from_str(e["output"].as_str().unwrap_or("")).ok())
            .collect()
    }

    fn track(&self, name: &str) -> Vec<&JournalEntry> {
        self.journal.iter().filter(|e| e.track.as_deref() == Some(name)).collect()
    }

    /// Distinct session ids the sub-sessions sent on the wire.
    fn sub_sessions_on_the_wire(&self) -> BTreeSet<String> {
        self.track("sub").iter().filter_map(|e| e.headers.get("x-session-id").cloned()).collect()
    }

    fn session_dirs(&self) -> BTreeSet<String> {
        std::fs::read_dir(self.workspace.path().join(".agents/sessions"))
            .map(|d| d.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default()
    }
}

fn events_of(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("events file")
        .lines()
        .map(|line| serde_json::from_str(line).expect("every line is one JSON object"))
        .collect()
}

async fn main_turns(scenario: &str, turns: usize, fallback: Option<Fallback>) -> TaskRun {
    let h = Harness::catalogue(scenario, TimeScale::of(SCALE)).await;
    let workspace = tempfile::tempdir().expect("tempdir");
    let provider = HttpProvider::new(&h.base_url, "sk-test", Api::Responses);
    let config = SessionConfig::new(workspace.path(), provider, Arc::new(ScaledClock::new(SCALE)));
    let mut session = Session::open(config.clone(), "main", "main").expect("session opens");
    if let Some(fallback) = fallback {
        session = session.with_fallback(fallback);
    }
    let mut tool = TaskTool::new(config, TaskConfig::default(), "main", Arc::new(FixtureBackend::default()));
    let display = |_: Delta<'_>| {};
    let mut outcome = None;
    for _ in 0..turns {
        outcome = Some(run_main_turn(&session, &mut tool, "Research provider retry strategies", &display).await);
    }
    let main_events = events_of(session.events_path());
    TaskRun {
        outcome: outcome.expect("a turn ran"),
        launched: tool.launched(),
        workspace,
        journal: h.settled_journal().await,
        main_events,
    }
}

#[tokio::test]
async fn req_0006_020_021_deep_research_failing_on_every_attempt_delivers_ok_false_and_a_failure_report() {
    let run = main_turns("deep-research-eof-every-attempt", 1, None).await;
    let results = run.task_results();
    assert_eq!(results.len(), 1);
    let result = &results[0];
    assert_eq!(result["ok"], false);
    assert_eq!(result["stop_reason"], "error");
    assert_eq!(result["error_type"], "ProviderTimeoutException");
    for field in ["error_message", "sub_session_id", "events_path", "report_path"] {
        assert!(result[field].as_str().is_some_and(|v| !v.is_empty()), "`{field}` missing from {result}");
    }
    let report = std::fs::read_to_string(result["report_path"].as_str().expect("path")).expect("report exists");
    assert!(!report.is_empty() && report.trim() != "(empty)");
    for needle in
        ["失败原因", "续跑建议", "ProviderTimeoutException", "https://fixtures.squall.invalid/opencode-session-retry"]
    {
        assert!(report.contains(needle), "report lacks {needle}:\n{report}");
    }
    assert!(report.contains(result["sub_session_id"].as_str().expect("id")), "report names the sub-session");
    // On the wire: the sub-session searched once, then its report stream broke on all 7 attempts.
    assert_eq!(run.track("sub").len(), 1 + 7);
    // The main session was told, and answered the user; it did not relaunch.
    assert!(matches!(run.outcome, TurnOutcome::Answered(_)));
    assert_eq!(run.launched, 1);
}

#[tokio::test]
async fn deep_research_that_recovers_from_a_reset_returns_ok_and_a_structured_report() {
    let run = main_turns("deep-research-reset-then-ok", 1, None).await;
    let result = &run.task_results()[0];
    assert_eq!(result["ok"], true, "{result}");
    let summary = result["summary"].as_str().expect("summary");
    assert!(!summary.is_empty() && summary.len() <= 600 + 120);
    let report = std::fs::read_to_string(result["report_path"].as_str().expect("path")).expect("report exists");
    for section in ["执行摘要", "关键发现", "详细分析", "参考来源"] {
        assert!(report.contains(section), "report lacks {section}:\n{report}");
    }
    assert_eq!(run.sub_sessions_on_the_wire().len(), 1, "one sub-session, retried in place");
    let sub = run.track("sub");
    assert_eq!(sub.len(), 3, "search, the reset attempt, the retry");
    assert!(
        sub.iter().all(|e| e.headers.get("x-session-id") == sub[0].headers.get("x-session-id")),
        "same-session retry"
    );
}

#[tokio::test]
async fn req_0006_030_a_stubborn_model_starts_exactly_one_deep_research() {
    let run = main_turns("stubborn-model-relaunches-deep-research", 1, None).await;
    assert_eq!(run.launched, 1);
    assert_eq!(run.sub_sessions_on_the_wire().len(), 1);
    assert_eq!(run.session_dirs(), BTreeSet::from(["main".to_owned(), "main-dr1".to_owned()]));
    let results = run.task_results();
    assert_eq!(results.len(), 2, "the second Task call got a refusal");
    assert_eq!(results[1]["error_type"], "TaskRefused");
    match &run.outcome {
        TurnOutcome::Answered(message) => assert!(message.contains("not restart"), "{message}"),
        other => panic!("the turn must end with a message to the user, got {other:?}"),
    }
}

#[tokio::test]
async fn req_0006_030_the_cooldown_holds_across_turns_and_the_rule_is_in_the_instructions() {
    let run = main_turns("stubborn-model-relaunches-deep-research", 3, None).await;
    assert_eq!(run.launched, 1, "no deep research within the cooldown, whatever the turn");
    let instructions = run.track("main")[0].body["instructions"].as_str().unwrap_or("").to_owned();
    assert!(instructions.contains("do not start it again"), "{instructions}");
}

#[tokio::test]
async fn events_of_main_and_sub_sessions_land_under_agents_sessions() {
    let run = main_turns("deep-research-eof-every-attempt", 1, None).await;
    let sessions = run.workspace.path().join(".agents/sessions");
    let sub_events = events_of(&sessions.join("main-dr1/events.jsonl"));
    let types: Vec<&str> = sub_events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(types.first(), Some(&"session.start"));
    assert!(types.contains(&"tool.call") && types.contains(&"provider.retry") && types.contains(&"runtime.error"));
    assert_eq!(types.last(), Some(&"result"));
    let main_types: Vec<&str> = run.main_events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert!(main_types.contains(&"tool.result") && main_types.last() == Some(&"result"));
    let result = &run.task_results()[0];
    assert_eq!(PathBuf::from(result["events_path"].as_str().expect("path")), sessions.join("main-dr1/events.jsonl"));
}

#[tokio::test]
async fn seed_004_an_unavailable_provider_degrades_through_the_fallback() {
    let fallback: Fallback = Arc::new(|failure| format!("Answered from the AST only ({})", failure.error.error_type()));
    let h = Harness::catalogue("always-503", TimeScale::of(SCALE)).await;
    let workspace = tempfile::tempdir().expect("tempdir");
    let provider = HttpProvider::new(&h.base_url, "sk-test", Api::Responses);
    let config = SessionConfig::new(workspace.path(), provider, Arc::new(ScaledClock::new(SCALE)));
    let session = Session::open(config.clone(), "main", "main").expect("opens").with_fallback(fallback);
    let mut tool = TaskTool::new(config, TaskConfig::default(), "main", Arc::new(FixtureBackend::default()));
    let outcome = run_main_turn(&session, &mut tool, "hi", &|_| {}).await;
    assert!(matches!(outcome, TurnOutcome::Degraded { .. }), "{outcome:?}");
    let last = events_of(session.events_path()).pop().expect("events");
    assert_eq!(last["stop_reason"], "degraded");
    assert_eq!(last["cause"]["error_type"], "ProviderHttpException");
    assert_eq!(h.settled_journal().await.len(), 7, "the fallback runs only after the retries");
}

#[tokio::test]
async fn a_bad_request_does_not_degrade() {
    let fallback: Fallback = Arc::new(|_| "fallback".to_owned());
    let run = main_turns("bad-request-400", 1, Some(fallback)).await;
    assert!(matches!(run.outcome, TurnOutcome::Failed(_)), "{:?}", run.outcome);
}

/// A backend whose search returns a megabyte of text.
#[derive(Debug)]
struct HugeBackend;

impl squall_reference::task::research::ResearchBackend for HugeBackend {
    fn search(&self, _query: &str) -> Vec<squall_reference::task::research::Source> {
        let snippet = format!("START{}END", "x".repeat(1024 * 1024));
        vec![squall_reference::task::research::Source {
            url: "https://fixtures.squall.invalid/huge".into(),
            title: "huge".into(),
            snippet,
        }]
    }

    fn fetch(&self, _url: &str) -> Option<String> {
        None
    }
}

#[tokio::test]
async fn req_0003_001_tool_output_is_budgeted_before_it_reaches_the_provider() {
    let toml = r#"
name = "t"
[[attempts]]
stream = { function_call = { name = "web_search", arguments = '{"query": "q"}' } }
[[attempts]]
stream = { text = "Findings: large outputs were cut head and tail." }
"#;
    let h = Harness::scaled(toml, TimeScale::of(SCALE)).await;
    let workspace = tempfile::tempdir().expect("tempdir");
    let config = SessionConfig::new(
        workspace.path(),
        HttpProvider::new(&h.base_url, "k", Api::Responses),
        Arc::new(ScaledClock::new(SCALE)),
    );
    let result =
        squall_reference::task::run_deep_research(&config, &TaskConfig::default(), "dr", "q", &HugeBackend).await;
    assert_eq!(result["ok"], true, "{result}");
    let journal = h.settled_journal().await;
    let outputs: Vec<&str> = journal[1].body["input"]
        .as_array()
        .expect("input items")
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .filter_map(|item| item["output"].as_str())
        .collect();
    assert_eq!(outputs.len(), 1);
    let output = outputs[0];
    assert!(
        output.len() < squall_reference::session::budget::DEFAULT_TOOL_OUTPUT_BYTES + 200,
        "{} bytes reached the provider",
        output.len()
    );
    assert!(
        output.contains("START") && output.contains("omitted") && output.trim_end().ends_with("]"),
        "head, marker and tail kept"
    );
}
