//! The reference implementation behind squall's IUT contract (`docs/iut-contract.md`): read
//! the case from the environment ([`env`]), run it (`cases`), write
//! `$SQUALL_OUT/result.json` and `$SQUALL_OUT/events.jsonl`. The same function runs in-process
//! for `cargo test` and in the `squall-reference-iut` binary, so the contract itself is
//! exercised. A mutant (`SQUALL_REFERENCE_MUTANT`) bends the run at the points marked.

mod cases;
mod env;
mod error;

pub use env::{CaseEnv, CaseTask};
pub use error::CaseError;

use serde_json::json;

use crate::mutants;
use crate::task::research_report::write_atomically_async;

/// Run one case and write its outputs. Errors are harness errors (bad environment, unwritable
/// output directory); a failing *implementation* still writes its result.
pub async fn run_case(env: &CaseEnv) -> Result<(), CaseError> {
    std::fs::create_dir_all(&env.out).map_err(CaseError::file("create", &env.out))?;
    let policy = env.policy()?;
    let mut result = match env.task {
        CaseTask::Stream => cases::run_stream(env, policy).await?,
        CaseTask::Task | CaseTask::Main => cases::run_session_case(env, policy).await?,
    };
    result["time_scale"] = json!(env.time_scale);
    // What it says of itself (the IUT contract's optional `implementation`), for provenance.
    let name = env.mutant.map_or_else(|| "squall-reference".to_owned(), |m| format!("squall-reference:{}", m.name()));
    result["implementation"] = json!({"name": name, "version": env!("CARGO_PKG_VERSION"), "runtime": "Rust"});
    if let Some(mutant) = env.mutant {
        mutants::distort_events(mutant, &env.out.join("events.jsonl"))?;
        mutants::distort_outputs(mutant, env.task == CaseTask::Stream, &env.out, &mut result)?;
    }
    let result_path = env.out.join("result.json");
    let contents = serde_json::to_string_pretty(&result).unwrap_or_default();
    write_atomically_async(&result_path, contents, cases::clock(env).as_ref())
        .await
        .map_err(CaseError::file("write", &result_path))?;
    match env.mutant {
        Some(mutant) => Ok(mutants::finish_badly(mutant, &env.out).await?),
        None => Ok(()),
    }
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
