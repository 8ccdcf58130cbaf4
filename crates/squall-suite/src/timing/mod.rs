//! Time in the suite. Cases run production values at a fraction of real time; squall converts
//! what the wire shows back to policy time. A verdict is a claim about the client's policy, not
//! its machine, so what a client spends of its own per retry is measured and taken out:
//!
//! - `calibration` — runs the implementation on retries that ask for no wait, at two scales;
//!   `wait_asks` — that scenario: 429s asking for a wait, and the gaps that follow them
//! - `allowance` — what a busy machine may add to a client's spans, and which outcome it fakes
//! - `reaction` — the statistics: the client's reaction interval from those samples
//! - `reach` — whether a sped-up clock reached the client, told before anything is judged
//! - `lockstep` — how far a herd asked for the same wait spreads anyway on this machine
//! - `estimate` — real spans as policy time with their noise, for one case
//! - `margin` — what each timing check must tell apart, and the scale that lets it
//!
//! The method and its guarantees are in `docs/requirements.md` ("Timing").

pub(crate) mod allowance;
pub(crate) mod calibration;
pub(crate) mod estimate;
pub(crate) mod lockstep;
pub(crate) mod margin;
pub(crate) mod reach;
pub(crate) mod reaction;
pub(crate) mod wait_asks;

pub use allowance::{Allowance, Lengthened, MOMENT, STALL};
pub use calibration::{Calibration, CannotStart};
pub use estimate::{CaseClock, Estimate, SpanShape};
pub use lockstep::Lockstep;
pub use margin::{choose_scale, Doubt, Margin, Measured, Reading, ScaleChoice};
pub use reaction::{Reaction, ReactionMs};
use squall::clock::TimeScale;

/// A time scale as people read it: "1/100", "1/4", "real time".
pub fn scale_name(time_scale: TimeScale) -> String {
    let inverse = time_scale.rate();
    if time_scale == TimeScale::REAL {
        "real time".to_owned()
    } else if time_scale > TimeScale::REAL {
        format!("{time_scale}× slower than real time")
    } else if (inverse - inverse.round()).abs() < 1e-6 * inverse {
        format!("1/{}", inverse.round())
    } else {
        format!("{time_scale}× real time")
    }
}

/// Why the case cannot be judged when the implementation reports a time scale other than the
/// one it was given (`time_scale` in `result.json` is optional).
pub(crate) fn reported_scale_mismatch(result: Option<&serde_json::Value>, time_scale: TimeScale) -> Option<String> {
    let reported = result.map(|r| &r["time_scale"]).filter(|v| !v.is_null())?;
    let fix = "honour SQUALL_TIME_SCALE (multiply every wait and timeout by it); or, if the client cannot scale its \
               waits, run it on the sped-up clock (`squall run --clock accelerated`: it is then told 1), or run every \
               case at time scale 1 (`squall run --time-scale 1`; pytest `--squall-time-scale 1`; \
               squall-judge `squall({ timeScale: 1 })`; `\"time_scale\": 1` when creating a run) — each case then \
               takes its production time";
    match reported.as_f64() {
        Some(seen) if (seen - time_scale.get()).abs() <= 1e-6 * time_scale.get() => None,
        Some(seen) => Some(format!(
            "result.json says time_scale {seen}, but the case ran at {time_scale} ({}): squall would misread every wait; {fix}",
            scale_name(time_scale)
        )),
        None => Some(format!("result.json's time_scale is not a number ({reported}); {fix}")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn scales_read_as_fractions_of_real_time() {
        let name = |scale: f64| super::scale_name(squall::clock::TimeScale::of(scale));
        assert_eq!(name(0.01), "1/100");
        assert_eq!(name(0.04), "1/25");
        assert_eq!(name(1.0), "real time");
        assert_eq!(name(0.3), "0.3× real time");
        assert_eq!(name(2.0), "2× slower than real time");
    }
}
