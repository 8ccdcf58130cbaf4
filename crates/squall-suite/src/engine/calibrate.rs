//! The client's clock and reaction, before any case: the clock its processes run on chosen,
//! and the calibration's plan ([`crate::timing::calibration`]) run try after try until it has
//! read enough — on the sped-up clock, with the probe of whether that clock reached the client.

use std::time::Duration;

use super::launch::{Launcher, ProcessClock, WarmPool};
use crate::iut::{ClockMode, Iut};
use crate::timing::calibration::CalibrationPlan;
use crate::timing::{Calibration, CannotStart};
use crate::SuiteError;
use squall::clock::TimeScale;
use squall::server::Server;

/// What a suite run measures before its cases.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Measure {
    pub(crate) time_scale: TimeScale,
    /// Instances at each of the calibration's two scales.
    pub(crate) instances: usize,
    pub(crate) case_timeout: Duration,
    pub(crate) seed: Option<u64>,
}

/// The clock `mode` asks for `implementation`'s processes, and its calibration on it. Where
/// `auto` chose the sped-up clock and it did not reach the client, the scaled clock instead; the
/// calibration records the clock (or why `auto` settled for the scaled one).
pub(crate) async fn calibrate_clock(
    server: &Server,
    implementation: &Iut,
    mode: ClockMode,
    measure: Measure,
    warm: Option<&WarmPool>,
) -> Result<(ProcessClock, Calibration), SuiteError> {
    let (mut clock, mut note) = ProcessClock::of(implementation, mode).map_err(SuiteError::Harness)?;
    let calibration = match calibrate(Launcher::new(server, implementation, &clock).warm(warm), measure, None).await {
        Err(CannotStart { why, unreached: Some(seen), .. }) if mode == ClockMode::Auto => {
            clock = ProcessClock::Scaled;
            note = Some(format!("scaled, not sped up: it {why}"));
            let launcher = Launcher::new(server, implementation, &clock).warm(warm);
            calibrate(launcher, measure, Some(seen)).await?
        }
        measured => measured?,
    };
    let described = match (warm, clock.describe().or(note)) {
        (Some(_), Some(clock)) => Some(format!("{clock}; {STARTED_WARM}")),
        (Some(_), None) => Some(STARTED_WARM.to_owned()),
        (None, described) => described,
    };
    Ok((clock.clone(), Calibration { clock: described, ..calibration }))
}

/// What reports record of a run started warm (`--warm`).
const STARTED_WARM: &str =
    "started warm (one process imported what the script imports; each case's process was forked from it)";

/// Measure the reaction of `launcher`'s implementation with `measure.instances` instances at
/// each of two scales (the suite's and a second), all at once; again, more patiently, while
/// instances time out before anything is measured. `unreached`: why squall's clock did not
/// reach it, when that is why it runs scaled.
pub(crate) async fn calibrate(
    launcher: Launcher<'_>,
    measure: Measure,
    unreached: Option<String>,
) -> Result<Calibration, CannotStart> {
    let Measure { time_scale, instances, case_timeout, seed } = measure;
    let sped_up = launcher.clock().is_sped_up();
    let mut plan = CalibrationPlan::new(launcher.implementation(), time_scale, instances, case_timeout, seed, sped_up)
        .unreached(unreached);
    loop {
        let outcomes = launcher.run_all(plan.runs()).await;
        if let Some(calibration) = plan.read(outcomes)? {
            return Ok(calibration);
        }
    }
}
