//! The conformance suite under `cargo test` (cucumber-rs needs its own main: harness = false).
//!
//! Runs `features/` against the reference implementation in-process, or against an outside
//! implementation: `SQUALL_IUT="<command>" cargo test --test conformance`. Settings:
//! `SQUALL_LEVEL` (wire | events | tasks), `SQUALL_PROFILE` (profiles to judge, or `all`),
//! `SQUALL_TIME_SCALE`, `SQUALL_TAGS`, `SQUALL_CUCUMBER_JSON` (write Cucumber JSON there),
//! `SQUALL_ALLOW_EMPTY=1`. Prints one line per requirement; exits 1 if a judged requirement
//! fails, and 2 when no case matched or every case was n/a (a green that proves nothing).

use std::path::Path;
use std::process::ExitCode;

use squall::suite::run_suite;
use squall::suite::summary::{exit_code, findings, requirement_table};

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = match squall::suite::env::config_from_env(root) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("conformance: {e}");
            return ExitCode::from(2);
        }
    };
    // More workers than cores: the server, the suite and in-process implementations share the
    // runtime, and one worker stuck in a slow syscall must not delay the others' timers.
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(8).enable_all().build().expect("a tokio runtime");
    let outcome = match runtime.block_on(run_suite(&config)) {
        Ok(outcome) => outcome,
        Err(e) => {
            eprintln!("conformance: {e:#}");
            return ExitCode::from(2);
        }
    };
    println!(
        "squall conformance: {} against {} (level {}, profile {})",
        config.features.display(),
        config.iut.describe(),
        config.level.as_str(),
        config.profiles.describe()
    );
    print!("{}", requirement_table(&outcome));
    print!("{}", findings(&outcome));
    let cases = outcome.cases_tally();
    println!("\n{} passed, {} failed, {} skipped", cases.passed(), cases.fail + cases.error, cases.not_applicable);
    match exit_code(&outcome, std::env::var_os("SQUALL_ALLOW_EMPTY").is_some()) {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("conformance: {message} (SQUALL_LEVEL, SQUALL_TAGS, SQUALL_PROFILE, SQUALL_ALLOW_EMPTY=1)");
            ExitCode::from(2)
        }
    }
}
