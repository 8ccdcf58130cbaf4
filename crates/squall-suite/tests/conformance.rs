//! The conformance suite under `cargo test` (cucumber-rs needs its own main: harness = false).
//!
//! Runs `features/` against the reference implementation in-process, or against an outside
//! implementation: `SQUALL_IUT="<command>" cargo test --test conformance`. Settings — the same
//! as `squall run`'s flags, with the same defaults (`squall_suite::settings`): `SQUALL_LEVEL`
//! (wire | events | tasks), `SQUALL_PROFILES` (profiles to judge, or `all`), `SQUALL_TAGS`,
//! `SQUALL_TIME_SCALE`, `SQUALL_MAX_TIME_SCALE`, `SQUALL_CASE_TIMEOUT`, `SQUALL_CONCURRENCY`,
//! `SQUALL_SEED`; and `SQUALL_CUCUMBER_JSON` (write Cucumber JSON there), `SQUALL_CONSOLE=1`,
//! `SQUALL_ALLOW_EMPTY=1`. Prints one line per requirement; exits 1 if a judged requirement
//! fails, and 2 when no case matched or every case was n/a (a green that proves nothing).

use std::path::Path;
use std::process::ExitCode;

use squall_suite::run_suite;
use squall_suite::settings::{Resolved, SettingsError, SuiteSettings};
use squall_suite::summary::{exit_code, findings, requirement_table};

/// The suite's settings from the environment, reading this repository's features and scenarios.
fn settings(root: &Path) -> Result<Resolved, SettingsError> {
    let mut settings = SuiteSettings::from_env()?;
    for deprecation in &settings.deprecations {
        eprintln!("conformance: {deprecation}");
    }
    settings.features = Some(root.join("features"));
    settings.scenarios = Some(root.join("scenarios"));
    settings.resolve()
}

fn main() -> ExitCode {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let Resolved { mut config, features: _features } = match settings(root) {
        Ok(resolved) => resolved,
        Err(e) => {
            eprintln!("conformance: {e}");
            return ExitCode::from(2);
        }
    };
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    config.cucumber_json = var("SQUALL_CUCUMBER_JSON").map(Into::into);
    config.console = var("SQUALL_CONSOLE").is_some();
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
            eprintln!("conformance: {message} (SQUALL_LEVEL, SQUALL_TAGS, SQUALL_PROFILES, SQUALL_ALLOW_EMPTY=1)");
            ExitCode::from(2)
        }
    }
}
