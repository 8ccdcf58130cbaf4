//! Which backoff schedules fit waits known only within bounds. "Grow exponentially" is read as
//! a family of schedules: `min(cap, a·rⁿ) + d` with a ratio r of at least √2 a retry (2× over two
//! retries, the one-run check's demand), growing at least fourfold before its cap, with an
//! added jitter d of up to seed 002's 1 s. What must fail it is linear (`min(cap, a + b·n)`,
//! constant included) or slower than √2. A schedule fits when there is one of the family inside
//! every retry's bounds: an affine line in n (in log time for the exponential, a cap after it)
//! through intervals, decided exactly at the slopes where two bounds cross.

/// ln √2: the least growth a retry counts as exponential, in log time.
const LEAST_LOG_RATIO: f64 = std::f64::consts::LN_2 / 2.0;

/// ln 10: the greatest ratio a retry is fitted with (decorrelated jitter grows 3× at most).
const GREATEST_LOG_RATIO: f64 = std::f64::consts::LN_10;

/// Seed 002's added jitter, the most a schedule's offset d may be ("jitter(0..1 s)").
const MOST_ADDED_S: f64 = 1.0;

/// The offsets d tried, in seconds.
const OFFSET_STEPS: u32 = 4;

/// Each retry's wait lies within `low[n]..=high[n]`, policy seconds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bounds {
    pub low: Vec<f64>,
    pub high: Vec<f64>,
}

/// A family of schedules, each `min(cap, f(n))` with f affine in n in its space.
#[derive(Debug, Clone, Copy)]
struct Family {
    /// Fitted in log time (a ratio per retry) or in time (a step per retry).
    log: bool,
    /// The least and greatest slope (log ratio, or step in seconds).
    slopes: (f64, f64),
    /// Whether the schedule must grow at least fourfold before its cap.
    fourfold: bool,
    /// Whether an added offset d of up to [`MOST_ADDED_S`] is tried.
    offset: bool,
}

/// Exponential, as the one-run check demands it.
const EXPONENTIAL: Family =
    Family { log: true, slopes: (LEAST_LOG_RATIO, GREATEST_LOG_RATIO), fourfold: true, offset: true };

/// Growing too slowly to be exponential: a ratio under √2.
const SLOWER: Family = Family { log: true, slopes: (0.0, LEAST_LOG_RATIO - 1e-9), fourfold: false, offset: true };

/// Linear, constant included.
const LINEAR: Family = Family { log: false, slopes: (0.0, f64::INFINITY), fourfold: false, offset: false };

impl Bounds {
    /// Some exponential schedule fits.
    pub(crate) fn exponential_fits(&self) -> bool {
        self.fits(EXPONENTIAL)
    }

    /// Some schedule that is not exponential fits (linear, constant, or slower than √2).
    pub(crate) fn slower_fits(&self) -> bool {
        self.fits(LINEAR) || self.fits(SLOWER)
    }

    fn fits(&self, family: Family) -> bool {
        let offsets = if family.offset { OFFSET_STEPS } else { 0 };
        (0..=offsets).any(|step| {
            let d = MOST_ADDED_S * f64::from(step) / f64::from(OFFSET_STEPS.max(1));
            let space = |w: f64| match family.log {
                true if w - d <= 0.0 => f64::NEG_INFINITY,
                true => (w - d).ln(),
                false => w - d,
            };
            let low: Vec<f64> = self.low.iter().map(|w| space(*w)).collect();
            let high: Vec<f64> = self.high.iter().map(|w| space(*w)).collect();
            (1..=low.len()).any(|capped_from| capped_fits(&low, &high, family, capped_from))
        })
    }
}

/// `min(cap, a + s·n)` through every retry's bounds (already in the family's space), the cap
/// reached at retry `capped_from` (the number of retries: never within them).
fn capped_fits(low: &[f64], high: &[f64], family: Family, capped_from: usize) -> bool {
    let retries = low.len();
    let cap_low = low[capped_from..].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let cap_high = high[capped_from..].iter().copied().fold(f64::INFINITY, f64::min);
    if cap_low > cap_high {
        return false;
    }
    let mut lines: Vec<Line> = (0..capped_from).map(|k| Line { at: k as f64, low: low[k], high: high[k] }).collect();
    let (mut least, greatest) = family.slopes;
    if capped_from < retries {
        // Below the cap until it, at the cap from it: a + s·(c − 1) ≤ cap ≤ a + s·c.
        lines.push(Line { at: (capped_from - 1) as f64, low: f64::NEG_INFINITY, high: cap_high });
        lines.push(Line { at: capped_from as f64, low: cap_low, high: f64::INFINITY });
        if family.fourfold {
            // The cap at least 4× the first backoff: a ≤ cap − ln 4.
            lines.push(Line { at: 0.0, low: f64::NEG_INFINITY, high: cap_high - 4f64.ln() });
        }
    } else if family.fourfold {
        // No cap within the retries: the last at least 4× the first.
        least = least.max(4f64.ln() / (retries - 1).max(1) as f64);
    }
    line_fits(&lines, least, greatest)
}

/// A bound on `a + s·at`.
#[derive(Debug, Clone, Copy)]
struct Line {
    at: f64,
    low: f64,
    high: f64,
}

/// Whether some `a` and slope `s` in `least..=greatest` meet every line's bounds. The room
/// `min(high − s·at) − max(low − s·at)` is concave in s, so its greatest value is at an end of
/// the slopes or where two lows or two highs cross.
fn line_fits(lines: &[Line], least: f64, greatest: f64) -> bool {
    if least > greatest {
        return false;
    }
    let room = |s: f64| {
        let top = lines.iter().map(|l| l.high - s * l.at).fold(f64::INFINITY, f64::min);
        let bottom = lines.iter().map(|l| l.low - s * l.at).fold(f64::NEG_INFINITY, f64::max);
        top - bottom
    };
    let finite_ends = [least, greatest].into_iter().filter(|s| s.is_finite());
    let crossings = lines.iter().enumerate().flat_map(|(i, a)| {
        lines[i + 1..]
            .iter()
            .filter(move |b| b.at != a.at)
            .flat_map(move |b| [(a.low - b.low) / (a.at - b.at), (a.high - b.high) / (a.at - b.at)])
    });
    let within = |s: &f64| s.is_finite() && *s >= least && *s <= greatest;
    finite_ends.chain(crossings.filter(within)).any(|s| room(s) >= -1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn within(waits: &[f64], spread: f64) -> Bounds {
        Bounds { low: waits.iter().map(|w| w - spread).collect(), high: waits.iter().map(|w| w + spread).collect() }
    }

    #[test]
    fn doubling_fits_as_exponential_and_linear_or_constant_do_not() {
        let doubling = within(&[0.5, 1.0, 2.0, 4.0, 8.0, 8.0], 0.05);
        assert!(doubling.exponential_fits() && !doubling.slower_fits());
        // Seed 002: base 1 s, 2ⁿ plus up to 1 s, capped at 30 s.
        let seed_002 = within(&[1.5, 2.5, 4.5, 8.5, 16.5, 30.0], 0.05);
        assert!(seed_002.exponential_fits() && !seed_002.slower_fits());
        let linear = within(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 0.05);
        assert!(!linear.exponential_fits() && linear.slower_fits());
        let constant = within(&[2.0; 6], 0.05);
        assert!(!constant.exponential_fits() && constant.slower_fits());
        // 1.5× a retry is slower than √2 over two? No: 2.25× over two; it fits as exponential.
        let faster: Vec<f64> = (0..6).map(|n| 1.5f64.powi(n)).collect();
        assert!(within(&faster, 0.01).exponential_fits());
        // Wide bounds fit both.
        let wide = Bounds { low: vec![0.5, 1.0, 2.0, 3.0, 4.0, 5.0], high: vec![1.5, 3.0, 5.0, 9.0, 15.0, 20.0] };
        assert!(wide.exponential_fits() && wide.slower_fits());
    }
}
