//! The machine's turns: which of this binary's suite-wide tests run at once, and the turn log
//! (`target/test-turns.log`) that says where the time went.
//!
//! Tests that run suites or measure precise timing take turns: within one such test, suites may
//! run side by side (`suites::run_side_by_side`), so a verdict must not depend on what else the
//! machine is doing, and those tests show it does not. The turn keeps a 2-core machine from
//! being so busy that every timed case is raised to a slower time scale. The tests that mostly
//! wait (a client that hangs, crashes or runs at real time; an integration whose runner waits on
//! one case at a time) take a light turn: every light test waiting when the machine comes free
//! goes at once, and others join them while they run, so they wait out their hangs together
//! instead of in as many turns as the order the tests started in would make.

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// The most light tests at once: each is light alone, not twelve together (all twelve at once
/// slowed the service's reference comparison from 28 s to 80 s and a hanging client's cases past
/// their bound); six together have run without trouble.
const LIGHT_AT_ONCE: usize = 6;

/// Who holds the machine, and how many light tests wait for it.
struct Holders {
    alone: bool,
    light: usize,
    light_waiting: usize,
}

struct Machine {
    holders: Mutex<Holders>,
    /// Told whenever a turn ends.
    freed: Notify,
}

static THE_MACHINE: Machine =
    Machine { holders: Mutex::new(Holders { alone: false, light: 0, light_waiting: 0 }), freed: Notify::const_new() };

/// How a turn holds the machine.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// No other suite-wide test runs meanwhile.
    Alone,
    /// Only other light tests run meanwhile.
    Light,
}

impl Holders {
    /// A light test goes whenever no test holds the machine alone and fewer than
    /// [`LIGHT_AT_ONCE`] light ones do; one that wants it alone waits until no light test holds
    /// it or waits for it (there are a dozen, so they cannot starve it).
    fn admits(&self, kind: Kind) -> bool {
        match kind {
            Kind::Light => !self.alone && self.light < LIGHT_AT_ONCE,
            Kind::Alone => !self.alone && self.light == 0 && self.light_waiting == 0,
        }
    }
}

fn holders() -> std::sync::MutexGuard<'static, Holders> {
    // A test that panicked while holding the lock left the counts whole: each change is one line.
    THE_MACHINE.holders.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A light test's place among the waiting ones, given up if its wait is dropped.
struct Waiting;

impl Waiting {
    fn new() -> Self {
        holders().light_waiting += 1;
        Waiting
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        holders().light_waiting -= 1;
        THE_MACHINE.freed.notify_waiters();
    }
}

async fn acquire(kind: Kind) {
    let _waiting = (kind == Kind::Light).then(Waiting::new);
    loop {
        let freed = THE_MACHINE.freed.notified();
        tokio::pin!(freed);
        freed.as_mut().enable();
        {
            let mut holders = holders();
            if holders.admits(kind) {
                match kind {
                    Kind::Alone => holders.alone = true,
                    Kind::Light => holders.light += 1,
                }
                return;
            }
        }
        freed.await;
    }
}

fn release(kind: Kind) {
    {
        let mut holders = holders();
        match kind {
            Kind::Alone => holders.alone = false,
            Kind::Light => holders.light -= 1,
        }
    }
    THE_MACHINE.freed.notify_waiters();
}

/// The running test's name: libtest names a test's thread after it.
fn this_test() -> String {
    std::thread::current().name().unwrap_or("unnamed").to_owned()
}

/// Where the tests that take a light turn live: named first, they start first.
const LIGHT_TESTS: &str = "mostly_waiting::";

/// Waits for a turn of `kind`, timed for the log.
async fn take(kind: Kind) -> Turn {
    if kind == Kind::Light {
        let test = this_test();
        // With one test thread libtest runs every test on "main": nothing runs beside it then.
        assert!(
            test.starts_with(LIGHT_TESTS) || test == "main",
            "{test} takes a light turn: it belongs in {LIGHT_TESTS} (crates/squall-cli/tests/mostly_waiting/), whose tests start first and wait out their hangs together"
        );
    }
    let asked = Instant::now();
    acquire(kind).await;
    Turn::new(kind, asked)
}

/// [`take`], in a test that runs no runtime of its own (on its own thread: the log names it).
fn take_blocking(kind: Kind) -> Turn {
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime to wait in");
    runtime.block_on(take(kind))
}

/// A test's turn at the machine: while it is held no other suite-wide test runs (besides, in a
/// light turn, other light ones). When it ends, how long the test waited for it and held it is
/// appended to `target/test-turns.log`, so a contributor sees where the test command's time goes
/// (`sort -k5 -n -r target/test-turns.log`: the held time is the fifth field), with the CPU the
/// whole machine was busy meanwhile (Linux: the ninth), which says whether a turn waits or
/// computes, and when it began (seconds since the binary's first turn: the next to last field),
/// which shows the time no turn was held.
pub(crate) struct Turn {
    kind: Kind,
    test: String,
    waited: Duration,
    since: Instant,
    busy_since: Option<f64>,
}

/// When the binary's first turn was asked for: the turn log's clock.
static FIRST_ASKED: OnceLock<Instant> = OnceLock::new();

/// The CPU-seconds the machine's cores have been busy since boot (`/proc/stat`'s first line
/// less idle and I/O wait), where the system says.
fn machine_busy_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks: Vec<f64> = stat.lines().next()?.split_whitespace().skip(1).filter_map(|t| t.parse().ok()).collect();
    let (total, idle) = (ticks.iter().sum::<f64>(), ticks.get(3)? + ticks.get(4).unwrap_or(&0.0));
    // USER_HZ is 100 on every Linux a test runs on.
    Some((total - idle) / 100.0)
}

/// Waits for this test's turn (in an async test).
pub(crate) async fn take_turn() -> Turn {
    take(Kind::Alone).await
}

/// Waits for this test's turn (in a test that runs no runtime of its own).
pub(crate) fn take_turn_blocking() -> Turn {
    take_blocking(Kind::Alone)
}

/// Waits for a turn shared with the other tests that mostly wait (in an async test): for a test
/// that keeps less than 0.4 of a core busy while it runs (the ninth field of
/// `target/test-turns.log` over the fifth), so that together they stay near one core.
pub(crate) async fn take_light_turn() -> Turn {
    take(Kind::Light).await
}

/// [`take_light_turn`], in a test that runs no runtime of its own.
pub(crate) fn take_light_turn_blocking() -> Turn {
    take_blocking(Kind::Light)
}

impl Turn {
    fn new(kind: Kind, asked: Instant) -> Self {
        FIRST_ASKED.get_or_init(|| asked);
        let test = this_test();
        Turn { kind, test, waited: asked.elapsed(), since: Instant::now(), busy_since: machine_busy_cpu_seconds() }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        release(self.kind);
        let busy = match (self.busy_since, machine_busy_cpu_seconds()) {
            (Some(then), Some(now)) => format!("{:>6.1}", now - then),
            _ => "     ?".to_owned(),
        };
        let line = format!(
            "waited {:>6.1} s  held {:>6.1} s  busy {busy} CPU-s  {}{}  from {:.1} s\n",
            self.waited.as_secs_f64(),
            self.since.elapsed().as_secs_f64(),
            self.test,
            if self.kind == Kind::Light { " (shared)" } else { "" },
            FIRST_ASKED.get().map_or(0.0, |first| self.since.duration_since(*first).as_secs_f64()),
        );
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(super::suites::target_dir().join("test-turns.log"));
        // The log is a contributor's aid: a test does not fail because it cannot be written.
        if let Ok(mut log) = log {
            let _ = std::io::Write::write_all(&mut log, line.as_bytes());
        }
    }
}
