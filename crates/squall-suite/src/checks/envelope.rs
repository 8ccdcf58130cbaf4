//! Waits read as bounds on the client's backoff, retry by retry: from one run, or from several
//! runs of one case drawn anew. A client whose waits are random (a full or equal jitter: a random
//! share of its backoff) cannot be judged on growth or a cap from one run; the engine runs its
//! case again, each run with a seed of its own, and the longest wait seen at each retry bounds
//! the backoff it draws under. For a wait drawn uniformly in [0, θ] (a full jitter, the widest),
//! the longest of n draws lies below t·θ with probability tⁿ; for one drawn uniformly in any
//! narrower range, the gap above the longest is bounded by the spread of the draws. A check holds
//! when it holds for every schedule within the bounds, misses when it misses for all of them,
//! and is open otherwise: the engine draws again until its budget is spent. The rates this gives, family by
//! family, are in docs/requirements.md, held by the simulation in `tests/drawn.rs`.

use super::schedules::Bounds;

/// How much a wait may exceed the one before it once the waits have levelled off: room for a
/// jitter of ±20 % or so, none for doubling.
pub(super) const LEVEL_RATIO: f64 = 1.4;

/// How likely a bound is to miss the client's backoff at a retry, at each reading of growth (the
/// engine reads the runs after every one). The readings share their misses — the longest wait
/// only grows from run to run — so over 30 readings a bound misses at some reading 0.15 % of the
/// time for a full jitter (simulated, 3 million clients); `0.001 / n` at the n-th reading missed
/// twice as often (0.29 %) and bounded the 30th reading more widely (1/0.709 of the longest wait
/// where this gives 1/0.736): a spread that decides the AWS SDK for JavaScript's cap miss at 30
/// runs (docs/requirements.md).
pub(crate) const DOUBT: f64 = 0.0001;

/// The same for a cap that holds: its ratio of 1.4 between waits needs bounds
/// four times tighter than growth's 2× over two retries, and an uncapped backoff is far from it
/// (2× a retry), so a larger chance costs few wrong passes (the simulation's table); a miss is
/// read with [`DOUBT`].
pub(crate) const CAP_DOUBT: f64 = 0.01;

/// One run reads its waits as drawn from a jitter that takes no more than 40 % of the backoff off
/// or adds up to seed 002's 1 s: a wider one shows in the run (a wait shorter than the one
/// before) or is caught by the draws a miss asks for. Wider (an equal jitter's half) makes a
/// capped linear schedule fit most of seed 002's runs, so even they would be drawn again;
/// narrower (the OpenAI SDKs' quarter) passes linear backoffs with an equal jitter 5 % of the
/// time in the simulation's six-wait case.
const ONE_RUN_SHARE: f64 = 0.6;

/// What the runs so far say, retry by retry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Envelope {
    /// The longest wait seen at each retry, policy seconds.
    pub longest: Vec<f64>,
    /// The bounds on the client's backoff at each retry, but for a chance of [`DOUBT`].
    pub bounds: Bounds,
    /// The same, but for a chance of [`CAP_DOUBT`]: what a cap holds on.
    level_bounds: Bounds,
    /// Runs read.
    pub runs: usize,
}

/// What the runs so far decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decided {
    Holds,
    Misses,
    /// Not yet: another run may decide it.
    Open,
}

impl Envelope {
    /// One run's waits, within `noise`, read as drawn from a narrow jitter ([`ONE_RUN_SHARE`]).
    pub(crate) fn of_one_run(waits: &[f64], noise: f64) -> Envelope {
        let high = waits.iter().map(|w| (w / ONE_RUN_SHARE).max(w + 1.0) + noise).collect();
        let bounds = Bounds { low: waits.iter().map(|w| w - noise).collect(), high };
        Envelope { longest: waits.to_vec(), level_bounds: bounds.clone(), bounds, runs: 1 }
    }

    /// The envelope of `runs` (each run's waits in order, policy seconds) measured within
    /// `noise`, over the retries every run reached; `None` with fewer than three. Runs that agree
    /// within the noise at every retry come from a client that draws nothing: their waits are
    /// its backoff.
    pub(crate) fn of_draws(runs: &[Vec<f64>], noise: f64) -> Option<Envelope> {
        let retries = runs.iter().map(Vec::len).min()?;
        if retries < 3 {
            return None;
        }
        let at = |k: usize| runs.iter().map(move |run| run[k]);
        let longest: Vec<f64> = (0..retries).map(|k| at(k).fold(f64::MIN, f64::max)).collect();
        let shortest: Vec<f64> = (0..retries).map(|k| at(k).fold(f64::MAX, f64::min)).collect();
        let agree = longest.iter().zip(&shortest).all(|(l, s)| l - s <= 2.0 * noise);
        let low: Vec<f64> = longest.iter().map(|w| w.max(0.0) - noise).collect();
        let high = |chance: f64| -> Vec<f64> {
            match agree {
                true => longest.iter().map(|w| w + noise).collect(),
                false => longest
                    .iter()
                    .zip(&shortest)
                    .map(|(l, s)| drawn_under(l.max(0.0), *s, runs.len(), noise, chance))
                    .collect(),
            }
        };
        Some(Envelope {
            bounds: Bounds { low: low.clone(), high: high(DOUBT) },
            level_bounds: Bounds { low, high: high(CAP_DOUBT) },
            longest,
            runs: runs.len(),
        })
    }

    /// "Grow exponentially" ([`super::schedules`]): it misses when the longest waits cannot
    /// grow fourfold, or no exponential schedule (growing fourfold before its cap) fits; it holds
    /// when only exponential schedules fit.
    pub(crate) fn growth(&self, tolerance: f64) -> Decided {
        let Bounds { low, high } = &self.bounds;
        let may_grow_fourfold = high.iter().copied().fold(f64::MIN, f64::max) + tolerance >= 4.0 * low[0].min(low[1]);
        if !may_grow_fourfold || !self.bounds.exponential_fits() {
            return Decided::Misses;
        }
        match !self.bounds.slower_fits() {
            true => Decided::Holds,
            false => Decided::Open,
        }
    }

    /// "Level off at a cap", as one run reads it, at every backoff within the bounds: each of the
    /// last three at most [`LEVEL_RATIO`]× the one before (held within the [`CAP_DOUBT`] bounds,
    /// missed beyond the [`DOUBT`] ones).
    pub(crate) fn cap(&self, tolerance: f64) -> Decided {
        let (level, Bounds { low, high }) = (&self.level_bounds, &self.bounds);
        let last = low.len() - 1;
        let holds = (last - 2..last).all(|j| level.high[j + 1] <= LEVEL_RATIO * level.low[j] + tolerance);
        let may_hold = (last - 2..last).all(|j| low[j + 1] <= LEVEL_RATIO * high[j] + tolerance);
        match (holds, may_hold) {
            (true, _) => Decided::Holds,
            (false, false) => Decided::Misses,
            (false, true) => Decided::Open,
        }
    }

    /// The longest waits and how many runs they are of, for a check's observation.
    pub(crate) fn describe(&self) -> String {
        format!("the longest wait at each retry over {} runs: {}", self.runs, super::wire::seconds(&self.longest))
    }
}

/// The most a backoff can be whose `runs` draws, measured within `noise`, came out longest
/// `longest` and shortest `shortest`, but for a `chance`: the longest over tⁿ (any jitter that
/// takes a uniform share off), or for a jitter uniform in some range, the longest plus the gap
/// the spread of the draws allows.
fn drawn_under(longest: f64, shortest: f64, runs: usize, noise: f64, chance: f64) -> f64 {
    let n = runs as f64;
    let share = chance.powf(1.0 / n);
    let by_share = (longest + noise) / share;
    let gap = 1.0 - (chance / 2.0).powf(1.0 / n);
    let by_spread = match gap < 0.5 {
        true => longest + (longest - shortest) * gap / (1.0 - 2.0 * gap),
        false => f64::INFINITY,
    };
    by_share.min(by_spread) + noise
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_that_agree_are_a_backoff_and_runs_that_differ_are_draws_under_one() {
        let same = Envelope::of_draws(&[vec![1.0, 2.0, 4.0], vec![1.01, 2.0, 4.02]], 0.05).expect("three waits");
        let high: Vec<String> = same.bounds.high.iter().map(|w| format!("{w:.2}")).collect();
        assert_eq!(high, ["1.06", "2.05", "4.07"], "{same:?}");
        let drawn = Envelope::of_draws(&[vec![0.2, 2.0, 1.0], vec![1.0, 0.5, 4.0]], 0.05).expect("three waits");
        assert_eq!(drawn.longest, [1.0, 2.0, 4.0]);
        // Two draws: the backoff may be up to 1/√DOUBT = 100× the longest.
        assert!((drawn.bounds.high[0] - (1.05 / DOUBT.sqrt() + 0.05)).abs() < 1e-9, "{drawn:?}");
        assert_eq!(Envelope::of_draws(&[vec![1.0, 2.0, 4.0], vec![1.0, 2.0]], 0.05), None, "two retries in common");
    }

    #[test]
    fn a_doubling_envelope_holds_a_linear_one_misses_and_few_draws_leave_it_open() {
        let drawn = |runs: usize, backoff: &[f64]| {
            let draws: Vec<Vec<f64>> =
                (0..runs).map(|r| backoff.iter().map(|w| w * (0.9 + 0.1 * r as f64 / runs as f64)).collect()).collect();
            Envelope::of_draws(&draws, 0.05).expect("ten waits")
        };
        let doubling = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 20.0, 20.0, 20.0, 20.0];
        let linear: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(drawn(30, &doubling).growth(0.05), Decided::Holds);
        assert_eq!(drawn(30, &doubling).cap(0.05), Decided::Holds);
        assert_eq!(drawn(30, &linear).growth(0.05), Decided::Misses);
        assert_eq!(drawn(3, &doubling).growth(0.05), Decided::Open);
        assert_eq!(drawn(3, &doubling).cap(0.05), Decided::Open);
        let uncapped: Vec<f64> = (0..10).map(|k| 0.1 * 2f64.powi(k)).collect();
        assert_eq!(drawn(30, &uncapped).cap(0.05), Decided::Misses);
    }
}
