//! The reference implementation, in-process: the same code as the `squall-reference-iut`
//! binary, fed the same environment values.

use std::time::Duration;

use squall_reference::iut::{run_case, CaseEnv, CaseTask};
use squall_reference::mutants::Mutant;

/// Run the reference on a case; returns (stderr, exit code, timed out) like a process would.
pub async fn run(
    env: &[(&'static str, String)],
    mutant: Option<&str>,
    timeout: Duration,
) -> (String, Option<i32>, bool) {
    let case = match case_env(env, mutant) {
        Ok(case) => case,
        Err(e) => return (e, Some(2), false),
    };
    // Its own task, like its own process: its timers must not wait on the suite's scheduling.
    let task = tokio::spawn(async move { tokio::time::timeout(timeout, run_case(&case)).await });
    match task.await {
        Ok(Ok(Ok(()))) => (String::new(), Some(0), false),
        Ok(Ok(Err(e))) => (e, Some(2), false),
        Ok(Err(_)) => (String::new(), None, true),
        Err(e) => (format!("the reference implementation panicked: {e}"), Some(101), false),
    }
}

fn case_env(env: &[(&'static str, String)], mutant: Option<&str>) -> Result<CaseEnv, String> {
    let get = |name: &str| env.iter().find(|(k, _)| *k == name).map(|(_, v)| v.clone()).unwrap_or_default();
    let task = match get("SQUALL_TASK").as_str() {
        "task" => CaseTask::Task,
        "main" => CaseTask::Main,
        _ => CaseTask::Stream,
    };
    let mutant = match mutant {
        Some(name) => Some(Mutant::parse(name).ok_or_else(|| format!("no reference mutant named `{name}`"))?),
        None => None,
    };
    Ok(CaseEnv {
        base_url: get("OPENAI_BASE_URL"),
        api_key: get("OPENAI_API_KEY"),
        case: get("SQUALL_CASE"),
        task,
        prompt: get("SQUALL_PROMPT"),
        out: get("SQUALL_OUT").into(),
        time_scale: get("SQUALL_TIME_SCALE").parse().unwrap_or(1.0),
        profile: get("SQUALL_PROFILE"),
        fallback: Some(get("SQUALL_FALLBACK")).filter(|f| !f.is_empty()),
        mutant,
    })
}
