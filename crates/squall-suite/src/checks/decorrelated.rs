//! Waits drawn as a decorrelated jitter: each wait drawn uniformly between a floor and a multiple
//! of the wait before, then capped (`min(cap, rand(floor, multiple × last))`, AWS's "decorrelated
//! jitter"). Its waits depend on each other, so the longest wait at each retry reaches the
//! schedule it draws under (floor × multipleⁿ) only along unlikely paths: read retry by retry
//! ([`super::envelope`]) it grows too slowly and fails growth by its draws. Read here instead by
//! its parameters, each bounded from several runs at once: the floor by the shortest wait, the
//! multiple by the largest ratio of a wait to the one before (every ratio lies under it), the
//! first wait's ceiling by the longest first wait, the cap by waits piling at one top value.
//!
//! What the seed demands is read from the client's mean wait, as for any jitter (a full jitter's
//! mean is half its backoff and grows with it): below the cap it grows by about multiple ÷ 2 a
//! retry, so "grow exponentially" asks a multiple of at least 2√2 (√2 a retry, as
//! [`super::schedules`] asks of any backoff) and a cap at least four times the first wait's
//! ceiling; "level off at a cap" asks the mean of each of the last three waits at most
//! [`LEVEL_RATIO`]× the one before. The rates are in docs/requirements.md, held by the
//! simulation in `tests/drawn.rs`.

use super::envelope::{Decided, DOUBT, LEVEL_RATIO};

/// The least multiple whose mean wait grows √2 a retry (multiple ÷ 2 once above the floor).
const LEAST_MULTIPLE: f64 = 2.0 * std::f64::consts::SQRT_2;

/// How much likelier the runs must be as a decorrelated jitter's than as waits drawn retry by
/// retry, each in its own range, for its reading to judge them alone: 1/[`DOUBT`] (ln).
const DECORRELATED_LOG: f64 = 9.21;

/// The same the other way round, for the envelope's reading to judge them alone: 100 (ln). With
/// 10,000, constant backoffs with a jitter, which both readings describe alike (waits drawn in
/// one range, the multiple's ceiling above it), took 5.6–10.1 runs (means) to be failed over six
/// waits instead of 3.2–6.2; with 100, no simulated decorrelated jitter was read retry by retry
/// and judged wrongly (the simulation's table).
const INDEPENDENT_LOG: f64 = 4.61;

/// Kolmogorov–Smirnov's critical distance at 0.1 %, times √n: where a decorrelated jitter's
/// draws (each a uniform share of its range) are not uniform, the waits are something else.
const KS_CRITICAL: f64 = 1.95;

/// The Kolmogorov–Smirnov distance beyond which shares are a gross misfit. The multiple and
/// floor read from the same waits bend a decorrelated jitter's shares: the 0.1 % test alone
/// took the simulation's multiple of 2.5 from 0.5 s for another dependence.
const FAR_FROM_UNIFORM: f64 = 0.25;

/// The shares of a first wait the noise may be, for the pairs the multiple's most is read over.
const NOISE_SHARES: [f64; 4] = [0.1, 0.05, 0.025, 0.0125];

/// Runs needed before the waits are read as dependent at all.
const LEAST_RUNS: usize = 3;

/// Cells of the grid a capped mean schedule is computed on (each 16 % wider than the one before:
/// the mean waits of AWS's multiple of 3 from 0.5 s under 8 s or 20 s within 0.8 % of 400,000
/// paths drawn).
const CELLS: usize = 64;

/// What the runs say of how each wait depends on the one before.
pub(crate) enum Dependence<'a> {
    /// Drawn retry by retry, as far as the runs tell: read by their envelope.
    Independent,
    /// Not yet told apart: a verdict needs both readings to give it.
    Either(Fit<'a>),
    /// A decorrelated jitter's, read by its parameters.
    Decorrelated(Fit<'a>),
}

/// A quantity known within bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Within {
    pub low: f64,
    pub high: f64,
}

/// A decorrelated jitter's parameters, each within bounds (but for a chance of [`DOUBT`]), in
/// policy seconds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decorrelated {
    floor: Within,
    multiple: Within,
    /// The ceiling the first wait is drawn under (multiple × the client's starting wait).
    first_ceiling: Within,
    /// Infinite above when no wait shows one.
    cap: Within,
    retries: usize,
    runs: usize,
}

impl Dependence<'_> {
    /// How `runs` (each run's waits, policy seconds, measured within `noise`) depend, over the
    /// retries every run reached.
    pub(crate) fn of_draws(runs: &[Vec<f64>], noise: f64) -> Dependence<'_> {
        let Some(fit) = Fit::of(runs, noise) else { return Dependence::Independent };
        let evidence = fit.log_likelihood_ratio();
        if evidence <= -INDEPENDENT_LOG || !fit.uniform_shares() {
            return Dependence::Independent;
        }
        match evidence >= DECORRELATED_LOG {
            true => Dependence::Decorrelated(fit),
            false => Dependence::Either(fit),
        }
    }
}

/// The runs, and the parameters that fit them best.
pub(crate) struct Fit<'a> {
    runs: Vec<&'a [f64]>,
    /// Every wait with the one before it, run by run.
    pairs: Vec<(f64, f64)>,
    noise: f64,
    floor: f64,
    top: f64,
    multiple: f64,
}

impl<'a> Fit<'a> {
    fn of(runs: &'a [Vec<f64>], noise: f64) -> Option<Fit<'a>> {
        let retries = runs.iter().map(Vec::len).min()?;
        if runs.len() < LEAST_RUNS || retries < 3 {
            return None;
        }
        let runs: Vec<&[f64]> = runs.iter().map(|run| &run[..retries]).collect();
        // Plain loops: this runs at every reading of every case drawn again.
        let (mut floor, mut top) = (f64::MAX, f64::MIN);
        let (mut lowest, mut highest) = (vec![f64::MAX; retries], vec![f64::MIN; retries]);
        let mut pairs = Vec::with_capacity(runs.len() * (retries - 1));
        let mut multiple: f64 = 0.0;
        for run in &runs {
            for (k, &wait) in run.iter().enumerate() {
                (floor, top) = (floor.min(wait), top.max(wait));
                (lowest[k], highest[k]) = (lowest[k].min(wait), highest[k].max(wait));
                if k > 0 {
                    let before = run[k - 1];
                    pairs.push((before, wait));
                    // The least multiple every pair fits under within the noise (a ratio taken
                    // as measured is widest at the shortest waits, where the noise weighs most).
                    multiple = multiple.max((wait - noise) / (before + noise));
                }
            }
        }
        let drawn = (0..retries).any(|k| highest[k] - lowest[k] > 2.0 * noise);
        drawn.then_some(Fit { runs, pairs, noise, floor, top, multiple })
    }

    fn retries(&self) -> usize {
        self.runs[0].len()
    }

    fn pairs(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.pairs.iter().copied()
    }

    /// A wait at the top value, where a cap piles them.
    fn at_top(&self, wait: f64) -> bool {
        wait >= self.top - 2.0 * self.noise
    }

    /// The range a wait after `before` is drawn from, below the top, within the noise.
    fn range_after(&self, before: f64) -> f64 {
        let ceiling = self.multiple * (before + self.noise) + self.noise;
        (self.top.min(ceiling) - self.floor).max(0.0) + 2.0 * self.noise
    }

    /// ln of how much likelier the waits below the top are as this decorrelated jitter's draws
    /// than as draws retry by retry, each uniform in the range its runs span.
    fn log_likelihood_ratio(&self) -> f64 {
        let decorrelated: f64 = self
            .pairs()
            .filter(|(_, after)| !self.at_top(*after))
            .map(|(before, _)| -self.range_after(before).ln())
            .sum();
        let mut by_retry = 0.0;
        for k in 1..self.retries() {
            let (mut low, mut high, mut n) = (f64::MAX, f64::MIN, 0.0);
            for wait in self.runs.iter().map(|run| run[k]).filter(|w| !self.at_top(*w)) {
                (low, high, n) = (low.min(wait), high.max(wait), n + 1.0);
            }
            // The spread of n uniform draws is (n − 1)/(n + 1) of their range on average: the
            // range read from a few runs is widened so, or it fits them too closely.
            let range = (high - low).max(0.0) * (n + 1.0) / (n - 1.0f64).max(1.0) + 2.0 * self.noise;
            by_retry -= n * range.ln();
        }
        decorrelated - by_retry
    }

    /// Whether each wait's share of its range (below the top) is near enough uniform, as a
    /// decorrelated jitter draws it: not so far from it as [`FAR_FROM_UNIFORM`] and, by
    /// Kolmogorov–Smirnov, at a 0.1 % chance. Over ranges ten times the noise or wider (the noise
    /// scatters a share by a tenth at most); the multiple and floor, read from the same waits,
    /// bend the shares a little, so only a gross misfit (a run scaled by one draw: every share
    /// at the top) tells another dependence.
    fn uniform_shares(&self) -> bool {
        let mut shares: Vec<f64> = self
            .pairs()
            .filter(|(_, after)| !self.at_top(*after))
            .map(|(before, after)| (after - self.floor, self.top.min(self.multiple * before) - self.floor))
            .filter(|(_, range)| *range >= 10.0 * self.noise)
            .map(|(above_floor, range)| (above_floor / range).clamp(0.0, 1.0))
            .collect();
        if shares.len() < 10 {
            return true;
        }
        shares.sort_by(f64::total_cmp);
        let n = shares.len() as f64;
        let distance = shares
            .iter()
            .enumerate()
            .map(|(i, u)| (u - i as f64 / n).abs().max(((i + 1) as f64 / n - u).abs()))
            .fold(0.0, f64::max);
        distance * n.sqrt() <= KS_CRITICAL || distance <= FAR_FROM_UNIFORM
    }

    /// Each parameter's bounds.
    pub(crate) fn bounds(&self) -> Decorrelated {
        let noise = self.noise;
        let floor = Within { low: self.floor - noise, high: self.floor + noise };
        let least = self.multiple;
        let most =
            NOISE_SHARES.iter().map(|share| self.multiple_under(noise / share, least)).fold(f64::INFINITY, f64::min);
        let multiple = Within { low: least, high: most };
        let first = self.runs.iter().map(|run| run[0]).fold(f64::MIN, f64::max);
        let first_ceiling = Within {
            low: first - noise,
            high: match self.at_top(first) {
                true => f64::INFINITY,
                false => floor.low + (first + noise - floor.low) * DOUBT.powf(-1.0 / self.runs.len() as f64),
            },
        };
        Decorrelated {
            floor,
            multiple,
            cap: Within { low: self.top - noise, high: self.cap_high(floor.low, least, first_ceiling.low) },
            first_ceiling,
            retries: self.retries(),
            runs: self.runs.len(),
        }
    }

    /// The most the multiple can be (never under `least`) but for a chance of [`DOUBT`] ÷
    /// [`NOISE_SHARES`]' count, read over the pairs whose first wait is `shortest` or longer and
    /// whose ceiling lies below the top. Every ratio lies under the multiple; one drawn below its
    /// ceiling lies under t × multiple with a chance of t at most, so the largest of n under t ×
    /// multiple with tⁿ at most (each ratio taken as long as the noise allows). Longer first
    /// waits leave fewer pairs, and ratios the noise moves less: [`Fit::bounds`] keeps the
    /// tightest of the shortest waits it tries.
    fn multiple_under(&self, shortest: f64, least: f64) -> f64 {
        let noise = self.noise;
        let ratios: Vec<f64> = self
            .pairs()
            .filter(|(before, _)| *before >= shortest && self.multiple * before < self.top - 2.0 * noise)
            .map(|(before, after)| (after + noise) / (before - noise).max(noise))
            .collect();
        let chance = DOUBT / NOISE_SHARES.len() as f64;
        match ratios.len() {
            0 => f64::INFINITY,
            n => ratios.iter().copied().fold(least, f64::max) * chance.powf(-1.0 / n as f64),
        }
    }

    /// The most the cap can be: the top (within the noise) when waits whose ceilings passed it
    /// would, without a cap there, have gone beyond it but for a chance of [`DOUBT`]; else
    /// unbounded. Each such wait stays under the top with a chance of (top − floor) ÷ (ceiling −
    /// floor), whatever a cap above the top.
    fn cap_high(&self, floor: f64, multiple: f64, first_ceiling: f64) -> f64 {
        let top = self.top + self.noise;
        let ceilings = self.runs.iter().flat_map(|run| {
            std::iter::once(first_ceiling).chain(run.windows(2).map(|w| multiple * (w[0] - self.noise)))
        });
        let log_chance: f64 = ceilings.filter(|c| *c > top).map(|c| ((top - floor) / (c - floor)).ln()).sum();
        match log_chance < DOUBT.ln() {
            true => top,
            false => f64::INFINITY,
        }
    }
}

impl Decorrelated {
    /// "Grow exponentially": a multiple of at least [`LEAST_MULTIPLE`] and a cap at least four
    /// times the first wait's ceiling.
    pub(crate) fn growth(&self) -> Decided {
        let (multiple, cap, first) = (self.multiple, self.cap, self.first_ceiling);
        if multiple.high < LEAST_MULTIPLE || cap.high < 4.0 * first.low {
            return Decided::Misses;
        }
        match multiple.low >= LEAST_MULTIPLE && cap.low >= 4.0 * first.high {
            true => Decided::Holds,
            false => Decided::Open,
        }
    }

    /// "Level off at a cap": each of the last three mean waits at most [`LEVEL_RATIO`]× the one
    /// before, at every corner of the parameters' bounds (held at all, missed at none).
    pub(crate) fn cap(&self) -> Decided {
        let last = self.retries - 1;
        let ratios = |corner: Parameters| {
            let mean = corner.mean_waits(self.retries);
            [mean[last - 1] / mean[last - 2], mean[last] / mean[last - 1]]
        };
        // Corners are read until they disagree: most clients are decided at the first few.
        let (mut all_held, mut missed_at_all) = (true, [true, true]);
        for corner in self.corners() {
            let [before, after] = ratios(corner);
            all_held &= before <= LEVEL_RATIO && after <= LEVEL_RATIO;
            missed_at_all[0] &= before > LEVEL_RATIO;
            missed_at_all[1] &= after > LEVEL_RATIO;
            if !all_held && missed_at_all == [false, false] {
                return Decided::Open;
            }
        }
        match (all_held, missed_at_all.contains(&true)) {
            (true, _) => Decided::Holds,
            (false, true) => Decided::Misses,
            (false, false) => Decided::Open,
        }
    }

    /// The parameters at every corner of their bounds: first the one whose mean waits grow
    /// fastest (the multiple and cap high, the floor and first ceiling low), then the slowest,
    /// which decide most readings that stay open between them.
    fn corners(&self) -> impl Iterator<Item = Parameters> + '_ {
        let (fastest, slowest) = (2 | 8, 1 | 4);
        let rest = (0..16u8).filter(move |bits| *bits != fastest && *bits != slowest);
        [fastest, slowest].into_iter().chain(rest).map(move |bits| {
            let pick = |within: Within, bit: u8| if bits & bit == 0 { within.low } else { within.high };
            Parameters {
                floor: pick(self.floor, 1).max(0.0),
                multiple: pick(self.multiple, 2),
                first_ceiling: pick(self.first_ceiling, 4),
                cap: pick(self.cap, 8),
            }
        })
    }

    /// For a check's observation.
    pub(crate) fn describe(&self) -> String {
        let bound = |w: Within| match w.high.is_finite() {
            true => format!("{:.2}–{:.2}", w.low, w.high),
            false => format!("{:.2} or more", w.low),
        };
        format!(
            "read over {} runs as a decorrelated jitter: each wait drawn from {} s to {}× the one before, \
             the first under {} s, capped at {} s",
            self.runs,
            bound(self.floor),
            bound(self.multiple),
            bound(self.first_ceiling),
            bound(self.cap)
        )
    }
}

/// One decorrelated jitter.
#[derive(Debug, Clone, Copy)]
struct Parameters {
    floor: f64,
    multiple: f64,
    first_ceiling: f64,
    cap: f64,
}

impl Parameters {
    /// The mean of each of `retries` waits: exactly without a cap (each mean is the floor's and
    /// multiple × the last mean's midpoint); with one, over a grid of the waits below it.
    fn mean_waits(&self, retries: usize) -> Vec<f64> {
        let Parameters { floor, multiple, first_ceiling, cap } = *self;
        if !cap.is_finite() {
            let mut mean = (floor + first_ceiling) / 2.0;
            return (0..retries)
                .map(|_| {
                    let this = mean;
                    mean = (floor + multiple * mean) / 2.0;
                    this
                })
                .collect();
        }
        let grid = Grid::new(floor, cap);
        let mut waits = grid.drawn_under(&[(first_ceiling, 1.0)]);
        let mut means = vec![grid.mean(&waits)];
        for _ in 1..retries {
            let ceilings: Vec<(f64, f64)> = grid.middles.iter().map(|wait| multiple * wait).zip(waits).collect();
            waits = grid.drawn_under(&ceilings);
            means.push(grid.mean(&waits));
        }
        means
    }
}

/// Cells from the floor to the cap, each a fixed ratio wider than the one before from a
/// [`SMALLEST_CELL`] share of the span (as fine near the floor, where the first waits are, as
/// at the cap), and the cap itself as the last: a wait's distribution is a mass in each.
struct Grid {
    /// The cells' edges, from the floor to the cap.
    edges: Vec<f64>,
    /// Each cell's middle, the cap's last.
    middles: Vec<f64>,
}

/// The first cell's share of the span from the floor to the cap.
const SMALLEST_CELL: f64 = 1e-4;

impl Grid {
    fn new(floor: f64, cap: f64) -> Grid {
        let span = (cap - floor).max(1e-9);
        let edge = |i: usize| match i {
            0 => floor,
            i => floor + span * SMALLEST_CELL.powf((CELLS - i) as f64 / (CELLS - 1) as f64),
        };
        let edges: Vec<f64> = (0..=CELLS).map(edge).collect();
        let mut middles: Vec<f64> = edges.windows(2).map(|e| (e[0] + e[1]) / 2.0).collect();
        middles.push(cap);
        Grid { edges, middles }
    }

    /// The masses of a wait drawn uniformly from the floor to each ceiling with its mass (the
    /// ceilings ascending), what lies above the cap at it. Each range adds its density to every
    /// cell it covers whole (kept as differences: added where it starts, taken back where it
    /// ends) and a part to the cell where it ends.
    fn drawn_under(&self, ceilings: &[(f64, f64)]) -> Vec<f64> {
        let (floor, cap) = (self.edges[0], self.edges[CELLS]);
        let mut densities = vec![0.0; CELLS + 1];
        let mut masses = vec![0.0; CELLS + 1];
        let mut ending = 0;
        for &(ceiling, mass) in ceilings {
            let span = ceiling - floor;
            if span <= 0.0 {
                masses[0] += mass;
                continue;
            }
            let end = ceiling.min(cap);
            while ending < CELLS - 1 && self.edges[ending + 1] < end {
                ending += 1;
            }
            let density = mass / span;
            densities[0] += density;
            densities[ending] -= density;
            masses[ending] += density * (end - self.edges[ending]);
            masses[CELLS] += mass * (ceiling - cap).max(0.0) / span;
        }
        let mut density = 0.0;
        for i in 0..CELLS {
            density += densities[i];
            masses[i] += density * (self.edges[i + 1] - self.edges[i]);
        }
        masses
    }

    fn mean(&self, masses: &[f64]) -> f64 {
        self.middles.iter().zip(masses).map(|(wait, mass)| wait * mass).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::uniform;

    /// `runs` runs of `retries` waits of `min(cap, rand(floor, multiple × last))`, the first
    /// under multiple × floor, each within 0.05 s.
    fn decorrelated(multiple: f64, cap: f64, runs: usize, retries: usize, seed: u64) -> Vec<Vec<f64>> {
        let mut random = uniform(seed);
        let mut next = || random.next().expect("endless");
        (0..runs)
            .map(|_| {
                let mut last = 0.5;
                (0..retries)
                    .map(|_| {
                        last = (0.5 + (multiple * last - 0.5) * next()).min(cap);
                        last + 0.05 * (2.0 * next() - 1.0)
                    })
                    .collect()
            })
            .collect()
    }

    fn read(runs: &[Vec<f64>]) -> Decorrelated {
        match Dependence::of_draws(runs, 0.05) {
            Dependence::Decorrelated(fit) => fit.bounds(),
            Dependence::Either(fit) => panic!("not yet told apart: {:?}", fit.bounds()),
            Dependence::Independent => panic!("read as drawn retry by retry"),
        }
    }

    fn independent(runs: &[Vec<f64>]) -> bool {
        matches!(Dependence::of_draws(runs, 0.05), Dependence::Independent)
    }

    #[test]
    fn a_decorrelated_jitter_is_read_by_its_parameters_and_one_drawn_retry_by_retry_is_not() {
        let fit = read(&decorrelated(3.0, 20.0, 60, 10, 7));
        assert!(fit.multiple.low <= 3.0 && fit.multiple.high >= 3.0, "{fit:?}");
        assert!(fit.cap.low <= 20.0 && fit.cap.high < 21.0, "{fit:?}");
        assert!(fit.floor.low <= 0.5 && fit.floor.high >= 0.5, "{fit:?}");
        // A linear backoff with a full jitter: each wait drawn in its own range.
        let mut random = uniform(11);
        let linear: Vec<Vec<f64>> =
            (0..60).map(|_| (1..=10).map(|n| 0.5 * f64::from(n) * random.next().expect("endless")).collect()).collect();
        assert!(independent(&linear));
        // A doubling backoff whose one draw scales a whole run: dependent, but not uniformly drawn.
        let scaled: Vec<Vec<f64>> = (0..60)
            .map(|_| {
                let share = 0.2 + 0.8 * random.next().expect("endless");
                (0..10).map(|n| share * 0.5 * 2f64.powi(n)).collect()
            })
            .collect();
        assert!(independent(&scaled));
    }

    #[test]
    fn a_multiple_of_three_grows_and_one_of_two_does_not() {
        assert_eq!(read(&decorrelated(3.0, 20.0, 60, 6, 3)).growth(), Decided::Holds);
        assert_eq!(read(&decorrelated(3.0, f64::INFINITY, 60, 6, 3)).growth(), Decided::Holds);
        // A mean growing 1.25× a retry at most.
        assert_eq!(read(&decorrelated(2.5, 20.0, 100, 6, 3)).growth(), Decided::Misses);
        // A cap reached from a 1.5 s ceiling at 4 s: under fourfold.
        assert_eq!(read(&decorrelated(3.0, 4.0, 60, 6, 3)).growth(), Decided::Misses);
    }

    #[test]
    fn a_capped_decorrelated_jitter_levels_off_and_an_uncapped_one_does_not() {
        assert_eq!(read(&decorrelated(3.0, 8.0, 60, 10, 5)).cap(), Decided::Holds);
        assert_eq!(read(&decorrelated(3.0, f64::INFINITY, 60, 10, 5)).cap(), Decided::Misses);
    }

    #[test]
    fn the_mean_waits_match_the_closed_form_without_a_cap_and_level_at_one() {
        let free = Parameters { floor: 0.5, multiple: 3.0, first_ceiling: 1.5, cap: f64::INFINITY }.mean_waits(4);
        assert_eq!(free, [1.0, 1.75, 2.875, 4.5625]);
        // Against 200,000 paths drawn: 1.00 1.75 2.84 3.84 4.48 4.88 5.11 5.25 5.34 5.39.
        let capped = Parameters { floor: 0.5, multiple: 3.0, first_ceiling: 1.5, cap: 8.0 }.mean_waits(10);
        let drawn = [1.00, 1.75, 2.84, 3.84, 4.48, 4.88, 5.11, 5.25, 5.34, 5.39];
        for (grid, drawn) in capped.iter().zip(drawn) {
            assert!((grid - drawn).abs() < 0.05 * drawn, "{capped:?}");
        }
    }
}
