//! The conformance suite under `cargo test` (cucumber-rs needs its own main: harness = false).
//!
//! Runs `features/` against the reference implementation in-process, or against an outside
//! implementation: `SQUALL_IUT="<command>" cargo test --test conformance`. Settings:
//! `SQUALL_LEVEL` (wire | events | tasks), `SQUALL_TIME_SCALE`, `SQUALL_TAGS`,
//! `SQUALL_CUCUMBER_JSON` (write Cucumber JSON there). Prints one line per requirement and
//! exits non-zero if any judged requirement fails.

use std::path::Path;
use std::process::ExitCode;

use squall::suite::run_suite;

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
        "squall conformance: {} against {} (level {})",
        config.features.display(),
        config.iut.describe(),
        config.level.as_str()
    );
    print!("{}", squall::suite::summary::requirement_table(&outcome));
    for case in outcome
        .cases
        .iter()
        .filter(|c| matches!(c.verdict, squall::suite::Verdict::Fail | squall::suite::Verdict::Error))
    {
        println!("\n{} — {} [{}]", case.feature, case.name, case.verdict.as_str());
        for check in case.checks.iter().filter(|c| c.verdict != squall::suite::Verdict::Pass) {
            println!("  {}: expected {}; observed {}", check.name, check.expected, check.observed);
        }
        if let Some(error) = &case.error {
            println!("  {error}");
        }
    }
    let (pass, fail, na, error) = outcome.counts();
    println!("\n{pass} passed, {} failed, {na} skipped", fail + error);
    if outcome.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
