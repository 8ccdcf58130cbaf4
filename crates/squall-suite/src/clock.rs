//! squall's clock for a process tree (docs/clock.md): the preload that speeds up every clock and
//! wait in a process, and a frame that says how fast. `squall run --clock accelerated` starts
//! implementations on it; [`preload`] and [`frame_from_now`] serve what starts a tree itself
//! (`squall clock -- COMMAND`, the test-runner integrations).

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::SystemTime;

use squall::clock::Frame;

/// The preload, built with the crate (empty where no C compiler was found).
const PRELOAD: &[u8] = include_bytes!(env!("SQUALL_CLOCK_PRELOAD"));

/// The preload's version, as reports record it (`squall_clock_version` in `clock/control.c`).
pub const PRELOAD_VERSION: &str = "squall-clock 2";

/// The environment variable that names a tree's frame file.
pub const FRAME_VARIABLE: &str = "SQUALL_CLOCK_FRAME";

/// What a client on the scaled clock does instead, for errors that say the sped-up one is not here.
pub const WAYS_OUT: &str = "run with `--clock scaled` and scale the client's waits by SQUALL_TIME_SCALE in its adapter, or in real time with `--clock scaled --time-scale 1`";

/// The preload's file in squall's cache, written once per build; why not, where it cannot be had
/// (not Linux, or built without a C compiler).
pub fn preload() -> Result<PathBuf, String> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    FOUND.get_or_init(write_preload).clone()
}

fn write_preload() -> Result<PathBuf, String> {
    if !cfg!(target_os = "linux") {
        return Err("squall's clock needs Linux (LD_PRELOAD; docs/clock.md says what macOS would need)".to_owned());
    }
    if PRELOAD.is_empty() {
        return Err("this squall was built without its clock preload (no C compiler when it was built)".to_owned());
    }
    crate::cache::cached_file("libsquall_clock", "so", PRELOAD)
        .map_err(|e| format!("cannot write squall's clock preload: {e}"))
}

/// `LD_PRELOAD` with the preload `preload` first, and whatever this process's has.
pub fn preload_first(preload: &std::path::Path) -> String {
    match std::env::var("LD_PRELOAD") {
        Ok(theirs) if !theirs.is_empty() => format!("{}:{theirs}", preload.display()),
        _ => preload.display().to_string(),
    }
}

/// A frame that starts now at `rate`: real wall and monotonic time read together.
pub fn frame_from_now(rate: f64) -> Frame {
    let monotonic = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    let wall = SystemTime::now();
    let monotonic_ns = monotonic.tv_sec.saturating_mul(1_000_000_000).saturating_add(monotonic.tv_nsec);
    Frame::starting(wall, monotonic_ns, rate)
}

/// Real monotonic time now, in ns: where a rate change is dated.
pub fn monotonic_now_ns() -> i64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    now.tv_sec.saturating_mul(1_000_000_000).saturating_add(now.tv_nsec)
}
