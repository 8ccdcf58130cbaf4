//! A time scale: the real time one second of a scenario's or a client's policy time takes.
//! 0.01 runs production values a hundred times faster, 1 is real time, above 1 is slow motion.
//! Checked once, where a number becomes a `TimeScale`; everything after reads it as valid.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Real seconds per policy second, in (0, [`TimeScale::MAX`]].
#[derive(Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct TimeScale(f64);

impl TimeScale {
    /// Real time: a policy second is a real second.
    pub const REAL: TimeScale = TimeScale(1.0);
    /// The slowest scale (every wait a hundred times longer): far beyond any test, and small
    /// enough that a week's scripted wait still fits a `Duration`.
    pub const MAX: TimeScale = TimeScale(100.0);
    /// The range every time scale squall reads must lie in, as its errors say it.
    pub const RANGE: &'static str = "a number in (0, 100]";

    /// A scale written in the code (a constant, a test's literal).
    ///
    /// # Panics
    /// When `scale` is out of range — at compile time where it is a constant's value.
    pub const fn of(scale: f64) -> TimeScale {
        assert!(scale.is_finite() && scale > 0.0 && scale <= Self::MAX.0, "a time scale is a number in (0, 100]");
        TimeScale(scale)
    }

    /// `scale` when it lies in (0, 100].
    pub fn new(scale: f64) -> Result<TimeScale, TimeScaleError> {
        if scale.is_finite() && scale > 0.0 && scale <= Self::MAX.0 {
            Ok(TimeScale(scale))
        } else {
            Err(TimeScaleError(readable(scale)))
        }
    }

    /// The number itself, for arithmetic with other real numbers.
    pub const fn get(self) -> f64 {
        self.0
    }

    /// How many times faster than real time the scale runs (1/scale): a sped-up clock's rate.
    pub fn rate(self) -> f64 {
        1.0 / self.0
    }

    /// Milliseconds of policy time as real milliseconds.
    pub fn real_ms(self, policy_ms: f64) -> f64 {
        policy_ms * self.0
    }

    /// Real milliseconds as milliseconds of policy time.
    pub fn policy_ms(self, real_ms: f64) -> f64 {
        real_ms / self.0
    }

    /// A span of policy time as real time (saturating at `Duration::MAX`).
    pub fn real(self, policy: Duration) -> Duration {
        Duration::try_from_secs_f64(policy.as_secs_f64() * self.0).unwrap_or(Duration::MAX)
    }

    /// The slower (larger) of two scales.
    pub fn max(self, other: TimeScale) -> TimeScale {
        if other > self {
            other
        } else {
            self
        }
    }

    /// The faster (smaller) of two scales.
    pub fn min(self, other: TimeScale) -> TimeScale {
        if other < self {
            other
        } else {
            self
        }
    }

    /// How many times slower this scale is than `other`.
    pub fn ratio_to(self, other: TimeScale) -> f64 {
        self.0 / other.0
    }
}

/// Real time, as a scale nobody chose reads.
impl Default for TimeScale {
    fn default() -> Self {
        TimeScale::REAL
    }
}

impl TryFrom<f64> for TimeScale {
    type Error = TimeScaleError;
    fn try_from(scale: f64) -> Result<Self, Self::Error> {
        TimeScale::new(scale)
    }
}

impl From<TimeScale> for f64 {
    fn from(scale: TimeScale) -> f64 {
        scale.0
    }
}

impl FromStr for TimeScale {
    type Err = TimeScaleError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.trim().parse::<f64>().map_err(|_| TimeScaleError(text.to_owned())).and_then(TimeScale::new)
    }
}

/// A time scale reads as its number, in debug output as in reports (`0.01`, `1.0`).
impl fmt::Debug for TimeScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for TimeScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// `1e300` as written, not as 301 digits; `0.5` and `100` as they are.
fn readable(number: f64) -> String {
    match number.abs() {
        big if big >= 1e9 => format!("{number:e}"),
        small if small > 0.0 && small < 1e-6 => format!("{number:e}"),
        _ => number.to_string(),
    }
}

/// A number (or text) that is not a time scale; it says the range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeScaleError(String);

impl fmt::Display for TimeScaleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "time scale {} is not {}", self.0, TimeScale::RANGE)
    }
}

impl std::error::Error for TimeScaleError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_scale_is_a_number_in_its_one_range() {
        for bad in [0.0, -1.0, 100.01, f64::NAN, f64::INFINITY, 1e300] {
            assert!(TimeScale::new(bad).is_err(), "{bad}");
        }
        for good in [1e-9, 0.01, 1.0, 100.0] {
            assert_eq!(TimeScale::new(good).map(TimeScale::get), Ok(good));
        }
        assert_eq!("0.05".parse::<TimeScale>().map(TimeScale::get), Ok(0.05));
        assert_eq!(
            "fast".parse::<TimeScale>().expect_err("no number").to_string(),
            "time scale fast is not a number in (0, 100]"
        );
    }

    #[test]
    fn it_reads_and_writes_as_a_bare_number() {
        let scale: TimeScale = serde_json::from_str("0.25").expect("a scale");
        assert_eq!(serde_json::to_string(&scale).expect("json"), "0.25");
        assert_eq!((format!("{scale:?}"), format!("{:?}", TimeScale::REAL)), ("0.25".to_owned(), "1.0".to_owned()));
        assert!(serde_json::from_str::<TimeScale>("0").is_err());
        let huge = TimeScale::new(1e300).expect_err("too slow").to_string();
        assert_eq!(huge, "time scale 1e300 is not a number in (0, 100]");
    }

    #[test]
    fn it_converts_between_policy_and_real_time() {
        let scale = TimeScale::new(0.01).expect("a scale");
        assert_eq!(scale.real(Duration::from_secs(10)), Duration::from_millis(100));
        assert!((scale.real_ms(1000.0) - 10.0).abs() < 1e-9);
        assert!((scale.policy_ms(10.0) - 1000.0).abs() < 1e-9);
        assert!((scale.rate() - 100.0).abs() < 1e-9);
        assert_eq!(scale.max(TimeScale::REAL), TimeScale::REAL);
        assert!((TimeScale::REAL.ratio_to(scale) - 100.0).abs() < 1e-9);
    }
}
