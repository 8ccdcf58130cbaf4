//! The reference implementation, in-process: the same code as the `squall-reference-iut`
//! binary, fed the same environment values — and, on squall's virtual clock, that clock, which
//! it then shares with the server.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use squall_reference::clock::{Clock as ReferenceClock, Hold, SleepFuture};
use squall_reference::contract::{run_case, CaseEnv, CaseError};
use squall_reference::mutants::Mutant;

use super::ProcessEnd;
use squall::clock::{Clock, VirtualClock};

/// Run the reference on a case; it ends like a process would: exit 0, 2 on an error it
/// reports, 101 on a panic, or killed at the timeout (of `clock`'s time).
pub(super) async fn run(
    env: &[(&'static str, String)],
    mutant: Option<&str>,
    timeout: Duration,
    clock: &Clock,
) -> ProcessEnd {
    let end = |stderr: String, exit_code: Option<i32>, timed_out: bool| ProcessEnd { stderr, exit_code, timed_out };
    let mut case = match case_env(env, mutant) {
        Ok(case) => case,
        Err(e) => return end(e.to_string(), Some(2), false),
    };
    if let Clock::Virtual(virtual_clock) = clock {
        case.clock = Some(Arc::new(Shared { start: virtual_clock.now(), clock: virtual_clock.clone() }));
    }
    // Its own task, like its own process: its timers must not wait on the suite's scheduling.
    let timer = clock.clone();
    let task = tokio::spawn(async move { timer.timeout(timeout, run_case(&case)).await });
    match task.await {
        Ok(Some(Ok(()))) => end(String::new(), Some(0), false),
        Ok(Some(Err(e))) => end(e.to_string(), Some(2), false),
        Ok(None) => end(String::new(), None, true),
        Err(e) => end(format!("the reference implementation panicked: {e}"), Some(101), false),
    }
}

/// squall's virtual clock as the reference reads time: from when its case started.
#[derive(Debug)]
struct Shared {
    clock: VirtualClock,
    start: tokio::time::Instant,
}

impl ReferenceClock for Shared {
    fn now(&self) -> Duration {
        self.clock.now().saturating_duration_since(self.start)
    }

    fn sleep(&self, duration: Duration) -> SleepFuture {
        Box::pin(self.clock.sleep(duration))
    }

    fn wall_now(&self) -> SystemTime {
        self.clock.wall_now()
    }

    fn hold(&self) -> Option<Hold> {
        Some(Box::new(self.clock.hold()))
    }
}

/// The case from the contract's variables; the reference's own `SQUALL_REFERENCE_PROVIDER`
/// (which API it speaks) and `SQUALL_REFERENCE_HTTP` (which HTTP) come from squall's
/// environment, as they would for its binary.
fn case_env(env: &[(&'static str, String)], mutant: Option<&str>) -> Result<CaseEnv, CaseError> {
    let mut case = CaseEnv::from_lookup(|name| match env.iter().find(|(k, _)| *k == name) {
        Some((_, value)) => Some(value.clone()),
        None if matches!(name, "SQUALL_REFERENCE_PROVIDER" | "SQUALL_REFERENCE_HTTP") => std::env::var(name).ok(),
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
