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
