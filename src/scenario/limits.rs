//! The ranges a scenario's numbers must lie in, checked where a scenario is read (file, inline
//! JSON or builder) so that nothing the server later computes from them can overflow. Each
//! limit is far beyond any real test; `docs/hardening.md` lists them.

use super::error::{FieldPath, ScenarioError};

/// The longest scripted wait — `delay_ms`, `event_delay_ms`, a stall's `ms` — at real time: a week.
pub const MAX_DELAY_MS: u64 = 7 * 24 * 3600 * 1000;

/// The furthest an `@now+Ns` HTTP-date may point: a year.
pub const MAX_HEADER_DATE_S: f64 = 365.0 * 24.0 * 3600.0;

/// The largest time scale a run may have (it multiplies every wait; 100 is slow motion).
pub const MAX_TIME_SCALE: f64 = 100.0;

/// A scripted wait in milliseconds.
pub fn check_delay_ms(ms: u64, field: &FieldPath) -> Result<(), ScenarioError> {
    if ms > MAX_DELAY_MS {
        return Err(ScenarioError::new(
            field.clone(),
            format!("{ms} ms is out of range: 0 to {MAX_DELAY_MS} ms (a week)"),
        ));
    }
    Ok(())
}

/// A run's time scale.
pub fn check_time_scale(scale: f64) -> Result<(), String> {
    if scale.is_finite() && scale > 0.0 && scale <= MAX_TIME_SCALE {
        Ok(())
    } else {
        Err(format!("time scale {scale} is out of range: a number in (0, {MAX_TIME_SCALE}]"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_and_scales_have_a_range() {
        let field = FieldPath::root().key("delay_ms");
        assert!(check_delay_ms(MAX_DELAY_MS, &field).is_ok());
        let error = check_delay_ms(u64::MAX, &field).expect_err("too long");
        assert!(error.to_string().contains("out of range: 0 to 604800000 ms"), "{error}");
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 101.0] {
            assert!(check_time_scale(bad).is_err(), "{bad}");
        }
        assert!(check_time_scale(0.01).is_ok());
    }
}
