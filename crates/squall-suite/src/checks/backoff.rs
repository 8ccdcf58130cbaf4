//! Judged on the waits between attempts as the server saw them: exponential growth, a
//! cap, and seed 002's schedule with its jitter. Waits are in policy seconds (the case's time
//! scale undone, the client's reaction taken out); every comparison tolerates the waits' noise,
//! and each check's margin says how much noise it can tolerate and still reject what it must.

use super::decorrelated::{Decorrelated, Dependence};
use super::envelope::{Decided, Envelope, LEVEL_RATIO};
use super::wire::{seconds, waits_and_noise};
use super::{number, Args, Check, Observation, Timed, Timing};
use crate::timing::Margin;
use crate::verdict::Level;

pub(super) const CHECKS: &[Check] = &[
    Check::timed(
        r"^the waits between attempts grow exponentially$",
        Level::Wire,
        |_| {
            "at least 3 waits; the longest ≥ 4× the first; below the cap each ≥ 2× the wait two retries before"
                .to_owned()
        },
        Timing { margin: |_| EXPONENTIAL, measure: measure_growth },
    ),
    Check::timed(
        r"^the waits level off at a cap$",
        Level::Wire,
        |_| format!("the last three waits each ≤ {LEVEL_RATIO}× the one before"),
        Timing { margin: |_| CAP, measure: measure_level_off },
    ),
    Check::timed(
        r"^the first (\d+) waits follow 1 s × 2\^n plus a jitter between 0 and 1 s$",
        Level::Wire,
        |args| {
            let windows: Vec<String> =
                (0..number::<u32>(args, 1)).map(|n| format!("{}-{}", 1u64 << n, (1u64 << n) + 1)).collect();
            format!("waits in [{}] s", windows.join(", "))
        },
        Timing { margin: |_| SCHEDULE, measure: seed_002_schedule },
    ),
    Check::timed(
        r"^the waits carry a random jitter$",
        Level::Wire,
        |_| format!("among the first 5 waits, two ≥ {SOME_JITTER_S} s above 2^n, and unequal jitters"),
        Timing { margin: |_| JITTER, measure: jitter_varies },
    ),
];

/// Growth rejects waits growing 1 s a retry and constant ones while the noise is under 0.25 s
/// (the unit tests below show both, and seed 002's schedule passing, at that noise).
pub(super) const EXPONENTIAL: Margin = Margin::of_waits(0.5);

/// A cap rejects waits that keep doubling; past 8 s they grow by 8 s a retry or more.
pub(super) const CAP: Margin = Margin::of_waits(4.0);

/// Seed 002's windows reject a 2 s base (every wait from the second one 1 s or more outside
/// its window) and a 1.5 s jitter (up to 0.5 s outside).
const SCHEDULE: Margin = Margin::of_waits(0.5);

/// Random jitter rejects a client without jitter: two waits must carry [`SOME_JITTER_S`]. Jitter
/// seen beyond the noise in two waits is certain; only its absence needs this margin.
const JITTER: Margin = Margin::of_waits(SOME_JITTER_S).for_evidence();

/// Below this share of the longest wait, a wait has not reached the cap yet (a capped wait
/// with −25 % jitter, as the OpenAI SDKs draw it, is still above it).
const BELOW_CAP: f64 = 0.7;

/// Seed 002's jitter is uniform in 0-1 s: at least two of five waits carry this much (fewer do
/// once in 2,000 runs, and the slower run that confirms a failed check draws again).
pub(super) const SOME_JITTER_S: f64 = 0.1;

/// A wait is judged against the one two retries later only when it is this many times the
/// measurement's tolerance: a busy machine adds milliseconds to every wait, which at 1/100 of
/// real time is tenths of a second on waits of one or two.
pub(super) const MEASURABLE: f64 = 10.0;

/// Seed 002's jitter is added to each wait and lies in 0-1 s ("base × 2^n + jitter(0..1 s)"): at
/// base 1 s the wait two retries after a fully jittered first one (1 + 1 s) may be 4 + 0 s, exactly
/// twice it, so one millisecond of scheduling delay would fail a correct client. Comparisons
/// two retries apart allow this much additive jitter.
pub(super) const ADDITIVE_JITTER_S: f64 = 1.0;

/// Exponential: the waits grow at least 4× overall, and until the first one nears the longest
/// wait (the cap; later ones may dip with jitter) each wait long enough to measure well is at
/// most half the one two retries later (less seed 002's additive jitter) — a factor of √2 or more
/// per retry.
/// Linear and constant waits fail.
///
/// `tolerance` is given once per comparison (to the longer wait): the verdict's reading, held to
/// the statistical test below. `each` more is given to every wait read — the first wait as short
/// as it may be, the longest as long: with `each` = the noise, a miss is one no value within each
/// wait's own noise escapes (certain).
///
/// A measured wait can only come out longer than the client's own, never shorter (a stalled
/// scheduler, a slow connect). Below the cap a growing schedule never has a wait longer than the
/// next one, so such a wait is taken for an outlier: it is not the base of a comparison, and
/// overall growth is counted from the shorter of the first two waits.
pub(super) fn grows_exponentially(waits: &[f64], tolerance: f64, each: f64) -> bool {
    let Some(top) = waits.iter().copied().reduce(f64::max) else { return false };
    let (low, high) = (|w: f64| w - each, |w: f64| w + each);
    grows_fourfold(waits, tolerance, each)
        && waits
            .windows(3)
            .take_while(|w| high(w[2]) < BELOW_CAP * low(top))
            .filter(|w| low(w[0]) >= MEASURABLE * tolerance && high(w[0]) <= low(w[1]) + tolerance)
            .all(|w| high(w[2]) + tolerance >= 2.0 * low(w[0]) - ADDITIVE_JITTER_S)
}

/// At least three waits, the longest at least 4× the shorter of the first two (a measured wait
/// can only come out longer: see [`grows_exponentially`]); `tolerance` and `each` as there.
fn grows_fourfold(waits: &[f64], tolerance: f64, each: f64) -> bool {
    let Some(top) = waits.iter().copied().reduce(f64::max) else { return false };
    let first = waits.iter().take(2).copied().fold(f64::INFINITY, f64::min);
    waits.len() >= 3 && top + each + tolerance >= 4.0 * (first - each)
}

/// A cap: the last three waits no longer grow (each at most [`LEVEL_RATIO`]× the one before);
/// `tolerance` and `each` as for [`grows_exponentially`].
pub(super) fn levels_off(waits: &[f64], tolerance: f64, each: f64) -> bool {
    waits.len() >= 3
        && waits[waits.len() - 3..].windows(2).all(|w| w[1] - each <= LEVEL_RATIO * (w[0] + each) + tolerance)
}

/// The first wait shorter than 1/[`LEVEL_RATIO`] of the one before it beyond `tolerance`, as
/// `(n, wait n − 1, wait n)`: a jitter wider than the ratio [`levels_off`] reads through (a full
/// jitter, a random share of the whole backoff). Such a client's consecutive waits differ by
/// its draws, capped or not, so one run cannot tell its cap: its last waits pass or fail by the
/// draw. Each wait is read anywhere within `tolerance` (a wait lost in it is no ratio), so the
/// drop is the client's own.
pub(super) fn jitter_wider_than_a_level(waits: &[f64], tolerance: f64) -> Option<(usize, f64, f64)> {
    let drops = |w: &[f64]| w[0] > tolerance && w[1] + tolerance < (w[0] - tolerance) / LEVEL_RATIO;
    waits.windows(2).position(drops).map(|at| (at + 1, waits[at], waits[at + 1]))
}

/// Seed 002: wait n (0-based) lies in [2^n, 2^n + 1] seconds, within `tolerance`.
pub(super) fn follows_seed_002(waits: &[f64], tolerance: f64) -> bool {
    waits.iter().enumerate().all(|(n, wait)| {
        let base = 2f64.powi(n as i32);
        *wait >= base - tolerance && *wait <= base + 1.0 + tolerance
    })
}

/// The jitter of each wait: wait n − 2^n.
pub(super) fn jitters(waits: &[f64]) -> Vec<f64> {
    waits.iter().enumerate().map(|(n, w)| w - 2f64.powi(n as i32)).collect()
}

/// Random jitter: two waits may carry at least [`SOME_JITTER_S`] within `tolerance`, and the
/// jitters differ by more than the measurement error. Zero jitter fails, and so does zero jitter
/// with one wait stretched by a stalled machine (a measured wait can only come out longer than
/// the client's, so one long wait is no evidence); a constant offset fails.
pub(super) fn carries_jitter(waits: &[f64], tolerance: f64) -> bool {
    let mut jitter = jitters(waits);
    jitter.sort_by(f64::total_cmp);
    let [low, .., second, high] = jitter[..] else { return false };
    second + tolerance >= SOME_JITTER_S && high - low > 2.0 * tolerance
}

/// Waits compared with each other need at least three: fewer is a miss by count.
fn compared((waits, noise): (Vec<f64>, f64), test: fn(&[f64], f64, f64) -> bool) -> Timed {
    if waits.len() < 3 {
        return Timed::decided(format!("{}: fewer than 3 waits", seconds(&waits)), false);
    }
    Timed::compared(seconds(&waits), test(&waits, noise, 0.0), !test(&waits, noise, noise), noise)
}

/// Growth, over this run's waits and the case's earlier draws' ([`growth_over`]).
fn measure_growth(observation: &Observation, _: &Args) -> Timed {
    let (runs, noise) = drawn_waits(observation);
    growth_over(&runs, noise)
}

/// A cap, over this run's waits and the case's earlier draws' ([`cap_over`]).
fn measure_level_off(observation: &Observation, _: &Args) -> Timed {
    let (runs, noise) = drawn_waits(observation);
    cap_over(&runs, noise)
}

/// Every run's waits (the earlier draws first, this run last), and the largest noise.
fn drawn_waits(observation: &Observation) -> (Vec<Vec<f64>>, f64) {
    let runs: Vec<(Vec<f64>, f64)> =
        observation.draws.iter().chain(std::iter::once(observation)).map(waits_and_noise).collect();
    let noise = runs.iter().map(|(_, noise)| *noise).fold(0.0, f64::max);
    (runs.into_iter().map(|(waits, _)| waits).collect(), noise)
}

/// Growth over `runs` (one or more runs' waits, policy seconds, measured within `noise`): over
/// their [`Envelope`] once the case has drawn more than one; else over the one run's waits.
/// One run cannot decide it for a client whose jitter is wider than it reads (a wait under
/// 1/[`LEVEL_RATIO`] of the one before, or shorter than the one before while below the cap):
/// such a jitter takes a capped wait below [`BELOW_CAP`] of the longest and a growing one below
/// the wait two retries before, so one run's waits double or not by its draws. One run's miss,
/// and a pass that a linear or slower schedule would also explain within a narrow jitter, stand
/// until runs drawing anew confirm them.
pub(super) fn growth_over(runs: &[Vec<f64>], noise: f64) -> Timed {
    let what = "its waits double below a cap or not";
    let readings = Readings { envelope: Envelope::growth, decorrelated: Decorrelated::growth, each: Some(growth_over) };
    let [waits] = runs else { return pooled(runs, noise, readings, what) };
    let one_run = compared((waits.clone(), noise), grows_exponentially);
    if let Some(why) = growth_undecidable(waits, noise) {
        return one_run.undecidable_if(Some(why));
    }
    let confirm = match one_run.measured.held {
        _ if waits.len() < 3 => None,
        false => Some(format!("one run's waits {} read as from a narrow jitter", seconds(waits))),
        true if Envelope::of_one_run(waits, noise).bounds.slower_fits() => Some(format!(
            "a linear or slower schedule also fits one run's waits {} within a narrow jitter",
            seconds(waits)
        )),
        true => None,
    };
    one_run.confirmed_by_draws_if(confirm)
}

/// A cap over `runs`, as [`growth_over`]: undecidable by one run for a jitter wider than
/// [`LEVEL_RATIO`]; one run's miss stands until runs drawing anew confirm it.
pub(super) fn cap_over(runs: &[Vec<f64>], noise: f64) -> Timed {
    let what = "its last waits level off or not";
    let readings = Readings { envelope: Envelope::cap, decorrelated: Decorrelated::cap, each: None };
    let [waits] = runs else { return pooled(runs, noise, readings, what) };
    let one_run = compared((waits.clone(), noise), levels_off);
    if let Some(why) = wider_jitter(waits, noise, what) {
        return one_run.undecidable_if(Some(why));
    }
    let confirm = (!one_run.measured.held && waits.len() >= 3)
        .then(|| format!("one run's waits {} read as from a narrow jitter", seconds(waits)));
    one_run.confirmed_by_draws_if(confirm)
}

/// Why these waits cannot decide growth (see [`growth_over`]), if they cannot.
fn growth_undecidable(waits: &[f64], noise: f64) -> Option<String> {
    if !grows_fourfold(waits, noise, 0.0) {
        return None;
    }
    wider_jitter(waits, noise, "its waits double below a cap or not").or_else(|| {
        dips_below_the_cap(waits, noise).map(|(n, before, after)| {
            format!(
                "wait {} is {after:.2} s after {before:.2} s, below the cap: a backoff does not shrink \
                 while it grows, so the client draws its waits, and they double below a cap or not by its draws",
                n + 1
            )
        })
    })
}

/// The first wait below [`BELOW_CAP`] of the longest that is shorter than the one before beyond
/// twice the noise, as `(n, wait n − 1, wait n)`.
fn dips_below_the_cap(waits: &[f64], noise: f64) -> Option<(usize, f64, f64)> {
    let top = waits.iter().copied().fold(0.0, f64::max);
    let dips = |w: &[f64]| w[1] < BELOW_CAP * top && w[1] + 2.0 * noise < w[0];
    waits.windows(2).position(dips).map(|at| (at + 1, waits[at], waits[at + 1]))
}

/// Runs that must each miss growth on their own to confirm the miss without the envelope (the
/// cap is not confirmed so: a linear backoff with an equal jitter misses it in most runs alone,
/// three in a row 6 % of the time in the simulation).
const MISSED_ALONE: usize = 3;

/// How a check reads several runs: over their envelope, as a decorrelated jitter, and (for
/// growth) each run alone.
struct Readings {
    envelope: fn(&Envelope, f64) -> Decided,
    decorrelated: fn(&Decorrelated) -> Decided,
    each: Option<OverRuns>,
}

/// A check over runs' waits measured within a noise.
type OverRuns = fn(&[Vec<f64>], f64) -> Timed;

/// A check read over several runs of the case: decided, or open with why (`what` is what the
/// draws decide). Runs whose waits depend on the ones before as a decorrelated jitter's do are
/// read by its parameters; while the runs do not yet tell whether they do, a verdict needs that
/// reading and the envelope's (which reads waits as drawn retry by retry) to agree. Otherwise
/// over their envelope: [`MISSED_ALONE`] runs or more that each miss growth on their own, none
/// showing a jitter wider than one run reads through, confirm the miss.
fn pooled(runs: &[Vec<f64>], noise: f64, readings: Readings, what: &str) -> Timed {
    let Some(envelope) = Envelope::of_draws(runs, noise) else {
        let counts: Vec<usize> = runs.iter().map(Vec::len).collect();
        return Timed::decided(format!("a run with fewer than 3 waits (waits per run: {counts:?})"), false);
    };
    let decided = |observed: String, decided: Decided| match decided {
        Decided::Holds => Timed::decided(observed, true),
        Decided::Misses => Timed::decided(observed, false),
        Decided::Open => {
            let why = format!(
                "the client's jitter is wider than one run reads through, and {} runs do not yet tell whether {what}",
                runs.len()
            );
            Timed::open(observed, why)
        }
    };
    match Dependence::of_draws(runs, noise) {
        Dependence::Decorrelated(fit) => {
            let fit = fit.bounds();
            return decided(fit.describe(), (readings.decorrelated)(&fit));
        }
        Dependence::Either(fit) => {
            let by_retry = (readings.envelope)(&envelope, noise);
            if by_retry == Decided::Open {
                return decided(envelope.describe(), Decided::Open);
            }
            let fit = fit.bounds();
            let both = if (readings.decorrelated)(&fit) == by_retry { by_retry } else { Decided::Open };
            return decided(format!("{}; or {}", envelope.describe(), fit.describe()), both);
        }
        Dependence::Independent => {}
    }
    let observed = envelope.describe();
    let missed_alone = |each: OverRuns| {
        runs.iter().all(|run| {
            let alone = each(std::slice::from_ref(run), noise);
            alone.undecidable.is_none() && !alone.measured.held
        })
    };
    if runs.len() >= MISSED_ALONE && readings.each.is_some_and(missed_alone) {
        return Timed::decided(format!("{observed}; each run missed on its own"), false);
    }
    decided(observed, (readings.envelope)(&envelope, noise))
}

/// Why one run cannot decide `what` ("… by its draws"), when the waits show a jitter wider
/// than the [`LEVEL_RATIO`] between waits the backoff checks read.
fn wider_jitter(waits: &[f64], noise: f64, what: &str) -> Option<String> {
    jitter_wider_than_a_level(waits, noise).map(|(n, before, after)| {
        format!(
            "the client's jitter is wider than the {LEVEL_RATIO}× between waits this check reads \
             (wait {} is {after:.2} s after {before:.2} s), so {what} by its draws",
            n + 1
        )
    })
}

fn seed_002_schedule(observation: &Observation, args: &Args) -> Timed {
    let count: usize = number(args, 1);
    let (waits, noise) = waits_and_noise(observation);
    if waits.len() < count {
        return Timed::decided(format!("{}: fewer than {count} waits", seconds(&waits)), false);
    }
    Timed::bound(seconds(&waits), follows_seed_002(&waits[..count], noise), noise)
}

fn jitter_varies(observation: &Observation, _: &Args) -> Timed {
    let (waits, noise) = waits_and_noise(observation);
    let first = &waits[..waits.len().min(5)];
    let shown: Vec<String> = jitters(first).iter().map(|j| format!("{j:.3}")).collect();
    let observed = format!("jitters [{}] s", shown.join(", "));
    if first.len() < 3 {
        return Timed::decided(format!("{observed}: fewer than 3 waits"), false);
    }
    Timed::evidence(observed, carries_jitter(first, noise), noise)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::uniform as draws;

    /// The verdict's reading: the noise given once per comparison.
    fn grows(waits: &[f64], noise: f64) -> bool {
        grows_exponentially(waits, noise, 0.0)
    }

    /// The certain reading: every wait also read anywhere within its own noise.
    fn may_grow(waits: &[f64], noise: f64) -> bool {
        grows_exponentially(waits, noise, noise)
    }

    #[test]
    fn exponential_waits_pass_and_linear_or_constant_ones_fail() {
        // Seed 002's schedule with a 30 s cap, openai-python's (0.5 s ×2, cap 8 s, −25 %).
        assert!(grows(&[1.9, 2.0, 4.1, 8.9, 16.2, 30.0], 0.05));
        assert!(grows(&[0.4, 0.8, 1.6, 3.1, 6.5, 8.0], 0.05));
        assert!(grows(&[1.2, 2.5, 4.4, 8.1, 16.9, 30.0, 30.0, 30.0, 30.0, 30.0], 0.05));
        // openai-python with 10 retries: capped at 8 s minus up to 25 % jitter.
        assert!(grows(&[0.60, 1.28, 2.07, 3.69, 8.08, 7.98, 7.91, 7.55, 7.01, 8.00], 0.05));
        // openai-node with 10 retries: the cap reached at the fifth wait, jittered down.
        assert!(grows(&[0.70, 0.82, 1.65, 3.82, 6.24, 6.26, 6.15, 6.27, 7.59, 7.46], 0.05));
        let linear: Vec<f64> = (1..=10).map(f64::from).collect();
        assert!(!grows(&linear, 0.05), "linear");
        assert!(!grows(&linear, 0.2), "linear, measured at 1/100 of real time");
        // Seed 002's schedule on a busy machine at 1/100: every wait 0.4 s long.
        assert!(grows(&[2.4, 2.6, 4.4, 8.8, 16.5, 30.4], 0.2));
        assert!(!grows(&[2.0, 2.0, 2.0, 2.0, 2.0, 2.0], 0.05), "constant");
        assert!(!grows(&[1.0, 2.0], 0.05), "too few to tell");
        // One wait stretched by a stalled machine at 1/100: still exponential.
        assert!(grows(&[6.60, 2.73, 6.92, 10.40, 18.08, 30.30, 30.26, 30.30, 30.32, 30.23], 0.2));
        // Seed 002 at base 1 s, a full jitter on the first wait and none two retries later, the
        // first wait stretched 4 ms at 1/100.
        assert!(grows(&[2.44, 2.87, 4.56, 8.75, 17.02, 20.23], 0.2));
        // An outlier does not hide a schedule that stops growing.
        assert!(!grows(&[9.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0], 0.05), "linear after one");
    }

    #[test]
    fn at_the_noise_its_margin_allows_growth_still_tells_doubling_from_linear_and_constant() {
        // The largest noise at which the margin still decides (it decides below its half).
        let noise = EXPONENTIAL.max_noise() - 1e-9;
        let (mut linear_passed, mut seed_002_failed) = (0, 0);
        for seed in 0..2000 {
            let jitter: Vec<f64> = draws(seed).take(10).collect();
            // The 11-attempt case: seed 002's schedule capped at 30 s, and 1 s more a retry.
            let doubling: Vec<f64> = (0..10).map(|n| (2f64.powi(n) + jitter[n as usize]).min(30.0)).collect();
            let linear: Vec<f64> = (0..10).map(|n| f64::from(n + 1) + jitter[n as usize]).collect();
            // Each measured wait lies anywhere within the noise of the true one.
            let errors: Vec<f64> = draws(seed + 10_000).take(10).map(|d| (2.0 * d - 1.0) * noise).collect();
            let measured = |waits: &[f64]| -> Vec<f64> { waits.iter().zip(&errors).map(|(w, e)| w + e).collect() };
            seed_002_failed += usize::from(!grows(&measured(&doubling), noise));
            linear_passed += usize::from(grows(&measured(&linear), noise));
        }
        assert_eq!(seed_002_failed, 0, "seed 002's schedule must pass");
        assert!(linear_passed <= 20, "linear waits passed {linear_passed} of 2000 measurements (1 %)");
        assert!(!grows(&[2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], noise), "constant");
    }

    #[test]
    fn beyond_the_margin_a_miss_is_certain_whatever_the_noise() {
        // crates/squall-cli/tests/iut/prd0006 (seed 002, capped at 20 s) spending 20-300 ms of its own per retry,
        // measured at 1/50 (±8.4 s): a miss only if the noise were given once for all the waits.
        let jittery = [8.00, 7.72, 1.53, 5.57, 11.09, 20.68];
        assert!(may_grow(&jittery, 8.4));
        // Growing schedules, each wait measured anywhere within the noise: never a miss.
        for noise in [0.3, 1.0, 4.0, 20.0] {
            for seed in 0..500 {
                let jitter: Vec<f64> = draws(seed).take(10).collect();
                let errors: Vec<f64> = draws(seed + 10_000).take(10).map(|d| (2.0 * d - 1.0) * noise).collect();
                for cap in [8.0, 20.0, 30.0] {
                    let schedule: Vec<f64> = (0..10).map(|n| (2f64.powi(n) + jitter[n as usize]).min(cap)).collect();
                    let measured: Vec<f64> = schedule.iter().zip(&errors).map(|(w, e)| w + e).collect();
                    assert!(may_grow(&measured, noise), "{measured:?} ±{noise}");
                    assert!(levels_off(&measured, noise, noise), "{measured:?} ±{noise}");
                }
            }
        }
        // What no noise explains is still a miss: constant 30 s waits measured ±1 s, and waits
        // doubling to 512 s measured ±20 s.
        assert!(!may_grow(&[30.0; 6], 1.0));
        let doubling: Vec<f64> = (0..10).map(|n| 2f64.powi(n)).collect();
        assert!(!levels_off(&doubling, 20.0, 20.0));
    }

    #[test]
    fn a_cap_is_three_level_waits_and_doubling_is_not_one() {
        assert!(levels_off(&[1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0], 0.05, 0.0));
        assert!(levels_off(&[6.0, 8.0, 6.2, 7.9], 0.05, 0.0), "a cap with −25 % jitter");
        assert!(!levels_off(&[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0], 0.05, 0.0));
    }

    #[test]
    fn a_jitter_wider_than_a_level_leaves_the_cap_undecided_and_a_narrow_one_is_judged() {
        // boto3's standard retries (full jitter: a random share of min(0.05 s × 2^n, 20 s)), as
        // its kept report measured them: wait 8 fell from 2.14 s to 1.14 s.
        let boto3 = [-0.16, -0.13, -0.18, -0.02, -0.11, 0.45, 2.14, 1.14, 12.08, 15.04];
        assert_eq!(jitter_wider_than_a_level(&boto3, 0.05), Some((7, 2.14, 1.14)));
        // openai-python's (−25 % jitter) and anthropic's, kept: their waits at the cap differ
        // by less than the level's ratio, so the check reads them.
        let openai = [0.42, 0.83, 1.63, 3.91, 7.44, 7.14, 6.22, 7.16, 7.68, 7.79];
        let anthropic = [0.38, 0.73, 1.72, 4.01, 7.58, 5.96, 6.64, 6.90, 6.08, 7.77];
        for waits in [&openai[..], &anthropic] {
            assert_eq!(jitter_wider_than_a_level(waits, 0.05), None, "{waits:?}");
            assert!(levels_off(waits, 0.05, 0.0), "{waits:?}");
        }
        // Waits lost in the noise show no drop; doubling waits none either (and fail the cap).
        assert_eq!(jitter_wider_than_a_level(&[-0.16, -0.13, -0.18, -0.02, -0.11], 0.05), None);
        let doubling: Vec<f64> = (0..10).map(|n| 2f64.powi(n)).collect();
        assert_eq!(jitter_wider_than_a_level(&doubling, 0.05), None);
        // Drawn: a full jitter under an 8 s cap is read as undecidable in most runs, and an
        // uncapped one too; a −25 % jitter never is, and always levels off under its cap.
        let full = |seed: u64, cap: f64| -> Vec<f64> {
            draws(seed).take(10).enumerate().map(|(n, u)| u * (0.5 * 2f64.powi(n as i32)).min(cap)).collect()
        };
        let undecided =
            |cap: f64| (0..2000).filter(|s| jitter_wider_than_a_level(&full(*s, cap), 0.05).is_some()).count();
        assert!(undecided(8.0) > 1800, "capped: {} of 2000", undecided(8.0));
        assert!(undecided(f64::INFINITY) > 1500, "uncapped: {} of 2000", undecided(f64::INFINITY));
        for seed in 0..2000 {
            let narrow: Vec<f64> = draws(seed)
                .take(10)
                .enumerate()
                .map(|(n, u)| (1.0 - 0.25 * u) * (0.5 * 2f64.powi(n as i32)).min(8.0))
                .collect();
            assert!(jitter_wider_than_a_level(&narrow, 0.05).is_none() && levels_off(&narrow, 0.05, 0.0), "{narrow:?}");
        }
    }

    #[test]
    fn a_jitter_wider_than_growth_reads_leaves_it_undecided_instead_of_judged_by_the_draw() {
        // Growth as the verdict reads it, `None` where it is undecidable; each wait measured
        // anywhere within the noise, as in the tests above.
        let noise = 0.05;
        let read = |waits: &[f64], seed: u64| -> (Option<bool>, bool) {
            let errors = draws(seed + 10_000).map(|d| (2.0 * d - 1.0) * noise);
            let measured: Vec<f64> = waits.iter().zip(errors).map(|(w, e)| w + e).collect();
            let verdict = growth_undecidable(&measured, noise).is_none().then(|| grows(&measured, noise));
            (verdict, grows(&measured, noise))
        };
        // 2,000 drawn clients: (judged true, judged false, the old reading true).
        let tally = |count: usize, wait: &dyn Fn(usize, f64) -> f64| {
            let mut tally = (0, 0, 0);
            for seed in 0..2000 {
                let waits: Vec<f64> = draws(seed).take(count).enumerate().map(|(n, u)| wait(n, u)).collect();
                let (verdict, old) = read(&waits, seed);
                tally.0 += usize::from(verdict == Some(true));
                tally.1 += usize::from(verdict == Some(false));
                tally.2 += usize::from(old);
            }
            tally
        };
        let envelope = |n: usize| (0.5 * 2f64.powi(n as i32)).min(8.0);
        // Exponential under an 8 s cap with a full jitter (boto3's kind) failed by the draw in a
        // fifth of runs, with an equal jitter (half fixed, half drawn) in one in twenty.
        let (_, failed, old) = tally(10, &|n, u| u * envelope(n));
        assert!(failed <= 20 && 2000 - old >= 300, "full jitter: {failed} failed, {} before", 2000 - old);
        let (_, failed, old) = tally(10, &|n, u| (0.5 + u / 2.0) * envelope(n));
        assert!(failed <= 100 && failed < 2000 - old, "equal jitter: {failed} failed, {} before", 2000 - old);
        // A −25 % jitter and seed 002's are always read, and pass.
        assert_eq!(tally(10, &|n, u| (1.0 - 0.25 * u) * envelope(n)).0, 2000);
        assert_eq!(tally(10, &|n, u| (2f64.powi(n as i32) + u).min(30.0)).0, 2000);
        // Constant and linear backoffs with a full jitter passed by the draw in a third of runs
        // (six waits) and more.
        let (passed, _, old) = tally(6, &|_, u| 4.0 * u);
        assert!(passed <= 60 && old >= 600, "constant: {passed} passed, {old} before");
        let (passed, _, old) = tally(10, &|n, u| u * (n + 1) as f64);
        assert!(passed <= 40 && old >= 600, "linear: {passed} passed, {old} before");
        // A constant backoff with seed 002's jitter never grows fourfold: it fails.
        assert_eq!(tally(6, &|_, u| 1.0 + u).1, 2000);
    }

    #[test]
    fn seed_002_rejects_no_jitter_a_wrong_base_and_jitter_out_of_range() {
        let good = [1.31, 2.87, 4.05, 8.62, 16.44];
        assert!(follows_seed_002(&good, 0.05) && carries_jitter(&good, 0.01));
        let no_jitter = [1.002, 2.021, 4.003, 8.0, 16.032];
        assert!(follows_seed_002(&no_jitter, 0.05) && !carries_jitter(&no_jitter, 0.01), "no jitter");
        let stalled_once = [1.002, 2.021, 4.35, 8.0, 16.032];
        assert!(!carries_jitter(&stalled_once, 0.01), "no jitter, one wait stretched by a stalled machine");
        assert!(carries_jitter(&[1.0, 2.0, 4.35, 8.2, 16.0], 0.01), "jitter in two waits");
        let constant = [1.5, 2.5, 4.5, 8.5, 16.5];
        assert!(follows_seed_002(&constant, 0.05) && !carries_jitter(&constant, 0.01), "a constant offset");
        assert!(!follows_seed_002(&[2.3, 4.9, 8.2, 16.5, 32.1], 0.05), "base 2 s");
        assert!(!follows_seed_002(&[1.2, 3.5, 4.1, 8.2, 16.9], 0.05), "jitter of 1.5 s");
    }
}
