//! The reference implementation, in-process: the same code as the `squall-reference-iut`
//! binary, fed the same environment values.

use std::time::Duration;

use squall_reference::contract::{run_case, CaseEnv, CaseError};
use squall_reference::mutants::Mutant;

use super::ProcessEnd;

/// Run the reference on a case; it ends like a process would: exit 0, 2 on an error it
/// reports, 101 on a panic, or killed at the timeout.
pub(super) async fn run(env: &[(&'static str, String)], mutant: Option<&str>, timeout: Duration) -> ProcessEnd {
    let end = |stderr: String, exit_code: Option<i32>, timed_out: bool| ProcessEnd { stderr, exit_code, timed_out };
    let case = match case_env(env, mutant) {
        Ok(case) => case,
        Err(e) => return end(e.to_string(), Some(2), false),
    };
    // Its own task, like its own process: its timers must not wait on the suite's scheduling.
    let task = tokio::spawn(async move { tokio::time::timeout(timeout, run_case(&case)).await });
    match task.await {
        Ok(Ok(Ok(()))) => end(String::new(), Some(0), false),
        Ok(Ok(Err(e))) => end(e.to_string(), Some(2), false),
        Ok(Err(_)) => end(String::new(), None, true),
        Err(e) => end(format!("the reference implementation panicked: {e}"), Some(101), false),
    }
}

/// The case from the contract's variables; the reference's own `SQUALL_REFERENCE_PROVIDER`
/// (which API it speaks) comes from squall's environment, as it would for its binary.
fn case_env(env: &[(&'static str, String)], mutant: Option<&str>) -> Result<CaseEnv, CaseError> {
    let mut case = CaseEnv::from_lookup(|name| match env.iter().find(|(k, _)| *k == name) {
        Some((_, value)) => Some(value.clone()),
        None if name == "SQUALL_REFERENCE_PROVIDER" => std::env::var(name).ok(),
        None => None,
    })?;
    if let Some(name) = mutant {
        case.mutant = Some(
            Mutant::parse(name)
                .ok_or_else(|| CaseError::bad("SQUALL_REFERENCE_MUTANT", name, "no reference mutant of that name"))?,
        );
    }
    Ok(case)
}
