//! The clock an outside implementation's process runs on. Scaled: real time, the contract's
//! `SQUALL_TIME_SCALE` telling the client how to scale its own waits (today's adapters). Sped
//! up: the process runs under libfaketime (the `faketime` program, so that one frame holds for
//! the whole process tree) at `1 / time scale` times real time, with squall's own preload
//! beside it for what the packaged libfaketime gets wrong (`clock/squall_clock.c`); the client
//! reads `SQUALL_TIME_SCALE=1` and waits production values, untouched.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use super::cache::cached_file;
use crate::iut::{ClockMode, Iut};
use squall::clock::ClientFrame;
use squall::clock::TimeScale;
use squall::embedded::ScriptedRun;

/// The preload, built with the crate (empty where no C compiler was found).
const PRELOAD: &[u8] = include_bytes!(env!("SQUALL_CLOCK_PRELOAD"));

/// The clock the implementation's processes run on, resolved once for a run of the suite.
#[derive(Debug, Clone, Default)]
pub(crate) enum ProcessClock {
    /// Real time; the client scales its own waits by `SQUALL_TIME_SCALE`.
    #[default]
    Scaled,
    /// Sped up by `1 / time scale` with libfaketime.
    Accelerated(Accelerator),
}

/// What a sped-up process is started with: the `faketime` program and squall's preload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Accelerator {
    faketime: PathBuf,
    preload: PathBuf,
    /// `libfaketime 0.9.10 + squall-clock 1`, for reports' provenance.
    pub(crate) version: String,
}

/// How a process is started: the program with its arguments, and what the contract's
/// environment gains.
#[derive(Debug, Clone)]
pub(crate) struct Started {
    pub(crate) argv: Vec<String>,
    pub(crate) env: Vec<(&'static str, String)>,
    /// The `SQUALL_TIME_SCALE` the client is told, when it is not the case's.
    pub(crate) told_time_scale: Option<TimeScale>,
}

impl ProcessClock {
    /// The clock `mode` asks for `implementation`'s processes (the reference has none: it
    /// shares squall's), with why `auto` settled for the scaled clock when it did; an error,
    /// naming the flag, what is missing and the ways out, when `accelerated` cannot be had here.
    pub(crate) fn of(implementation: &Iut, mode: ClockMode) -> Result<(ProcessClock, Option<String>), String> {
        match (implementation, mode) {
            (Iut::Reference { .. }, _) | (_, ClockMode::Scaled) => Ok((ProcessClock::Scaled, None)),
            (Iut::Command(_), ClockMode::Accelerated) => Accelerator::find()
                .map(|found| (ProcessClock::Accelerated(found), None))
                .map_err(|why| format!("--clock accelerated: {why}")),
            (Iut::Command(_), ClockMode::Auto) => Ok(match Accelerator::find() {
                Ok(found) => (ProcessClock::Accelerated(found), None),
                Err(why) => (ProcessClock::Scaled, Some(format!("scaled, not sped up: {why}"))),
            }),
        }
    }

    /// Whether processes run on a sped-up clock.
    pub(crate) fn is_sped_up(&self) -> bool {
        matches!(self, ProcessClock::Accelerated(_))
    }

    /// The mode it runs processes on: `scaled` or `accelerated`.
    pub(crate) fn mode(&self) -> ClockMode {
        match self {
            ProcessClock::Scaled => ClockMode::Scaled,
            ProcessClock::Accelerated(_) => ClockMode::Accelerated,
        }
    }

    /// What reports record of a sped-up clock: `accelerated (libfaketime 0.9.10 + squall-clock
    /// 1), …`; `None` for the scaled clock.
    pub(crate) fn describe(&self) -> Option<String> {
        let ProcessClock::Accelerated(accelerator) = self else { return None };
        Some(format!(
            "accelerated ({}), sped up by one over each case's time scale (the client read SQUALL_TIME_SCALE=1)",
            accelerator.version
        ))
    }

    /// How to start `command` at `time_scale` with the contract's `env` (changed here where the
    /// clock changes what the client reads), its sped-up clock's origin written to
    /// `origin_file`.
    pub(crate) fn start(
        &self,
        command: &str,
        time_scale: TimeScale,
        env: &mut [(&'static str, String)],
        origin_file: &Path,
    ) -> Started {
        let shell = vec!["sh".to_owned(), "-c".to_owned(), command.to_owned()];
        let ProcessClock::Accelerated(accelerator) = self else {
            return Started { argv: shell, env: vec![("SQUALL_CLOCK", "scaled".to_owned())], told_time_scale: None };
        };
        let rate = time_scale.rate();
        for (name, value) in env.iter_mut() {
            if *name == "SQUALL_TIME_SCALE" {
                *value = "1".to_owned();
            }
        }
        let preload = accelerator.preload_with_theirs();
        let mut argv = vec![accelerator.faketime.display().to_string(), "-f".to_owned(), format!("+0 x{rate}")];
        argv.extend(shell);
        Started {
            argv,
            env: vec![
                ("SQUALL_CLOCK", "accelerated".to_owned()),
                ("SQUALL_CLOCK_RATE", rate.to_string()),
                ("SQUALL_CLOCK_ORIGIN", origin_file.display().to_string()),
                ("LD_PRELOAD", preload),
                // glibc 2.30 and later time a monotonic condition variable in the kernel: the
                // deadline libfaketime hands it must be real (libfaketime guesses so from the
                // version; said here so that no guess is needed).
                ("FAKETIME_FORCE_MONOTONIC_FIX", "1".to_owned()),
            ],
            told_time_scale: Some(TimeScale::REAL),
        }
    }

    /// How to start a warm server (`argv`, `super::warm`) on this clock, and what its
    /// environment gains: on the sped-up clock under `faketime` at a rate of 1, libfaketime
    /// re-reading `FAKETIME` at every call so that each forked child runs at its case's rate.
    pub(crate) fn warm_server(&self, argv: Vec<String>) -> (Vec<String>, Vec<(&'static str, String)>) {
        let ProcessClock::Accelerated(accelerator) = self else { return (argv, Vec::new()) };
        let mut wrapped = vec![accelerator.faketime.display().to_string(), "-f".to_owned(), "+0 x1".to_owned()];
        wrapped.extend(argv);
        let env = vec![
            ("LD_PRELOAD", accelerator.preload_with_theirs()),
            ("FAKETIME_NO_CACHE", "1".to_owned()),
            ("FAKETIME_FORCE_MONOTONIC_FIX", "1".to_owned()),
        ];
        (wrapped, env)
    }

    /// What a warm server's child (`super::warm`) at `time_scale` sets in its environment besides
    /// what [`Self::start`] gives: the rate `faketime -f` would give a fresh process (only the
    /// child: in `faketime`'s own environment it would be read by squall's preload there, and
    /// `faketime` warns of it).
    pub(crate) fn warm_child_env(&self, time_scale: TimeScale) -> Vec<(&'static str, String)> {
        match self {
            ProcessClock::Accelerated(_) => vec![("FAKETIME", format!("+0 x{}", time_scale.rate()))],
            ProcessClock::Scaled => Vec::new(),
        }
    }

    /// Dates sent to the client of `run` are in its frame: at once the frame of a clock that
    /// started now, then — once the client's first process wrote it — the exact origin.
    pub(crate) fn follow_frame(&self, run: &ScriptedRun, time_scale: TimeScale, origin_file: PathBuf) {
        if !matches!(self, ProcessClock::Accelerated(_)) {
            return;
        }
        let rate = time_scale.rate();
        run.set_client_frame(ClientFrame::new(SystemTime::now(), rate));
        let run = run.clone();
        tokio::spawn(async move {
            for _ in 0..2_500 {
                if let Some(origin) = read_origin(&origin_file) {
                    run.set_client_frame(ClientFrame::new(origin, rate));
                    return;
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        });
    }
}

/// The real time a sped-up clock started at, as the preload wrote it (seconds since the epoch).
fn read_origin(file: &Path) -> Option<SystemTime> {
    let text = std::fs::read_to_string(file).ok()?;
    let seconds: f64 = text.trim().parse().ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::try_from_secs_f64(seconds).ok()?)
}

impl Accelerator {
    /// `LD_PRELOAD` with squall's preload first, and whatever squall's own environment has.
    fn preload_with_theirs(&self) -> String {
        match std::env::var("LD_PRELOAD") {
            Ok(theirs) if !theirs.is_empty() => format!("{}:{theirs}", self.preload.display()),
            _ => self.preload.display().to_string(),
        }
    }

    /// The `faketime` program (`SQUALL_FAKETIME`, else on `PATH`) and squall's preload, written
    /// once to a cache of its own; found once per process.
    fn find() -> Result<Accelerator, String> {
        static FOUND: OnceLock<Result<Accelerator, String>> = OnceLock::new();
        FOUND.get_or_init(find_accelerator).clone()
    }
}

fn find_accelerator() -> Result<Accelerator, String> {
    const WAYS_OUT: &str = "install libfaketime (Debian and Ubuntu: `apt-get install faketime`; macOS strips DYLD_* variables through /bin/sh, so it cannot work there), or run with `--clock scaled` and scale the client's waits by SQUALL_TIME_SCALE in its adapter";
    if !cfg!(target_os = "linux") {
        return Err(format!("the sped-up clock needs Linux (LD_PRELOAD): {WAYS_OUT}"));
    }
    if PRELOAD.is_empty() {
        return Err(format!(
            "this squall was built without its clock preload (no C compiler when it was built): {WAYS_OUT}"
        ));
    }
    let faketime = match std::env::var_os("SQUALL_FAKETIME") {
        Some(path) => PathBuf::from(path),
        None => on_path("faketime").ok_or_else(|| format!("no `faketime` program on PATH: {WAYS_OUT}"))?,
    };
    let output = std::process::Command::new(&faketime)
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot run {}: {e}: {WAYS_OUT}", faketime.display()))?;
    let said = String::from_utf8_lossy(&output.stdout).to_string() + &String::from_utf8_lossy(&output.stderr);
    let version = said
        .split_whitespace()
        .skip_while(|word| *word != "Version")
        .nth(1)
        .map_or_else(|| "libfaketime (version unknown)".to_owned(), |v| format!("libfaketime {v}"));
    // Found once per run of squall: what a killed squall's `faketime` left goes first.
    super::faketime_objects::remove_stale();
    let preload = cached_file("libsquall_clock", "so", PRELOAD)
        .map_err(|e| format!("cannot write squall's clock preload: {e}"))?;
    Ok(Accelerator { faketime, preload, version: format!("{version} + squall-clock 1") })
}

/// `name` in one of `PATH`'s directories.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| candidate.is_file())
}
