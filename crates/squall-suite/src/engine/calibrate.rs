//! The client's reaction measured: the calibration's plan ([`crate::timing::calibration`]) run
//! try after try until it has read enough.

use std::time::Duration;

use super::launch::Launcher;
use crate::timing::calibration::CalibrationPlan;
use crate::timing::{Calibration, CannotStart};

/// Measure the reaction of `launcher`'s implementation with `instances` instances at each of two
/// scales (the suite's `time_scale` and a second), all at once; again, more patiently, while
/// instances time out before anything is measured.
pub(crate) async fn calibrate(
    launcher: Launcher<'_>,
    time_scale: f64,
    instances: usize,
    case_timeout: Duration,
    seed: Option<u64>,
) -> Result<Calibration, CannotStart> {
    let sped_up = launcher.clock().is_sped_up();
    let mut plan = CalibrationPlan::new(launcher.implementation(), time_scale, instances, case_timeout, seed, sped_up);
    loop {
        let outcomes = launcher.run_all(plan.runs()).await;
        if let Some(calibration) = plan.read(outcomes)? {
            return Ok(calibration);
        }
    }
}
