//! The clock an outside implementation's process runs on. Scaled: real time, the contract's
//! `SQUALL_TIME_SCALE` telling the client how to scale its own waits. Sped up: squall's preload
//! (`clock/*.c`) in every process of the tree, reading its time from a frame file squall writes
//! at the case's rate (`squall::clock::Frame`, docs/clock.md); the client reads
//! `SQUALL_TIME_SCALE=1` and waits production values, untouched.

use std::path::PathBuf;

use crate::clock::{frame_from_now, preload, preload_first, PRELOAD_VERSION, WAYS_OUT};
use crate::iut::{ClockMode, Iut};
use squall::clock::{ClientFrame, Frame, TimeScale};
use squall::embedded::ScriptedRun;

/// The clock the implementation's processes run on, resolved once for a run of the suite.
#[derive(Debug, Clone, Default)]
pub(crate) enum ProcessClock {
    /// Real time; the client scales its own waits by `SQUALL_TIME_SCALE`.
    #[default]
    Scaled,
    /// Sped up by `1 / time scale` with squall's preload.
    Accelerated(Accelerator),
}

/// What a sped-up process is started with: squall's preload, written to squall's cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Accelerator {
    preload: PathBuf,
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

    /// What reports record of a sped-up clock: `accelerated (squall-clock 2), …`; `None` for the
    /// scaled clock.
    pub(crate) fn describe(&self) -> Option<String> {
        self.is_sped_up().then(|| {
            format!("accelerated ({PRELOAD_VERSION}), sped up by one over each case's time scale (the client read SQUALL_TIME_SCALE=1)")
        })
    }

    /// The frame a run's processes read their time from, at `time_scale`'s rate from now on, in
    /// a directory of its own that goes with it; `None` on the scaled clock.
    pub(crate) fn frame_for_run(&self, time_scale: TimeScale) -> std::io::Result<Option<RunFrame>> {
        if !self.is_sped_up() {
            return Ok(None);
        }
        let dir = tempfile::Builder::new().prefix("squall-clock-").tempdir()?;
        let path = dir.path().join("frame");
        let frame = frame_from_now(time_scale.rate());
        frame.create(&path).map_err(std::io::Error::other)?;
        Ok(Some(RunFrame { _dir: dir, path, frame }))
    }

    /// How to start `command` with the contract's `env` (changed here where the clock changes
    /// what the client reads), on its run's `frame` when sped up.
    pub(crate) fn start(
        &self,
        command: &str,
        time_scale: TimeScale,
        env: &mut [(&'static str, String)],
        frame: Option<&RunFrame>,
    ) -> Started {
        let argv = vec!["sh".to_owned(), "-c".to_owned(), command.to_owned()];
        let (ProcessClock::Accelerated(accelerator), Some(frame)) = (self, frame) else {
            return Started { argv, env: vec![("SQUALL_CLOCK", "scaled".to_owned())], told_time_scale: None };
        };
        for (name, value) in env.iter_mut() {
            if *name == "SQUALL_TIME_SCALE" {
                *value = "1".to_owned();
            }
        }
        Started {
            argv,
            env: vec![
                ("SQUALL_CLOCK", "accelerated".to_owned()),
                ("SQUALL_CLOCK_RATE", time_scale.rate().to_string()),
                ("SQUALL_CLOCK_FRAME", frame.path.display().to_string()),
                ("LD_PRELOAD", accelerator.preload_with_theirs()),
            ],
            told_time_scale: Some(TimeScale::REAL),
        }
    }

    /// What a warm server (`super::warm`) gains in its environment on this clock: the preload,
    /// and no frame (real time); each forked child attaches to its case's frame
    /// (`squall_clock_restart`).
    pub(crate) fn warm_server_env(&self) -> Vec<(&'static str, String)> {
        let ProcessClock::Accelerated(accelerator) = self else { return Vec::new() };
        vec![("LD_PRELOAD", accelerator.preload_with_theirs())]
    }
}

/// A run's frame file, removed with it.
#[derive(Debug)]
pub(crate) struct RunFrame {
    _dir: tempfile::TempDir,
    pub(crate) path: PathBuf,
    frame: Frame,
}

impl RunFrame {
    /// Dates sent to the client of `run` are in this frame.
    pub(crate) fn follow(&self, run: &ScriptedRun) {
        run.set_client_frame(ClientFrame::known(self.frame.clone()));
    }
}

impl Accelerator {
    /// `LD_PRELOAD` with squall's preload first, and whatever squall's own environment has.
    fn preload_with_theirs(&self) -> String {
        preload_first(&self.preload)
    }

    /// Squall's preload, or why it cannot be had here and the ways out.
    fn find() -> Result<Accelerator, String> {
        preload().map(|preload| Accelerator { preload }).map_err(|why| format!("{why}: {WAYS_OUT}"))
    }
}
