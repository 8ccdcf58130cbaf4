//! What a soak's success rate must reach: the least share of runs a client that retries exactly
//! what PRD-0006 demands ends `ok`, given the scenario's chaos and the retry budget, and the
//! binomial allowance below it that a correct client falls under in at most [`ALPHA`] of soaks.

use serde::Serialize;

use squall::scenario::validate::output_deltas;
use squall::scenario::ChaosOutcome;
use squall::scenario::{FaultKind, Scenario};

/// The chance that a correct client's soak falls below the allowance by bad luck alone.
pub const ALPHA: f64 = 0.001;

/// The predicted success rate and the least number of successes a soak of `runs` may show.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    /// The share of attempts chaos takes (the scenario's `chaos.rate`).
    pub chaos_rate: f64,
    /// Of the attempts chaos takes, the share a client MUST retry: the error statuses (429, 5xx:
    /// REQ-0006-001) and stream breaks before any output delta (REQ-0006-010). Breaks after
    /// output must not be replayed (seed 001's gate) and garbage is retried only as a SHOULD:
    /// both count as final.
    pub must_retry_share: f64,
    /// Attempts a run may make: `maxRetries + 1`.
    pub attempts: u32,
    /// The least probability that a run ends `ok`:
    /// `(1 − rate) × Σ_{i < attempts} (rate × must_retry_share)^i`.
    pub success_probability: f64,
    /// The soak's runs.
    pub runs: usize,
    /// The expected number of successes, `runs × success_probability`.
    pub expected_successes: f64,
    /// The least number of successes judged a pass: the largest `k` with
    /// `P(Binomial(runs, success_probability) < k) ≤ ALPHA`.
    pub minimum_successes: usize,
    /// [`ALPHA`].
    pub alpha: f64,
}

/// Why a scenario's success rate cannot be predicted.
pub(super) fn unpredictable(scenario: &Scenario) -> Option<String> {
    if scenario.chaos.is_none() {
        return Some("the scenario has no chaos".to_owned());
    }
    let scripted_more = !scenario.tracks.is_empty()
        || !scenario.outage.is_empty()
        || scenario.quota.is_some()
        || scenario.attempts.is_empty()
        || scenario.attempts.iter().any(|a| a.is_status_reply() || a.fault.is_some() || a.content().text.is_none());
    scripted_more.then(|| {
        "the scenario scripts more than chaos over streamed answers (tracks, outages, a quota, or attempts that fail)"
            .to_owned()
    })
}

/// The prediction for `runs` runs of `scenario` with `max_retries` retries, or why there is none.
pub(super) fn predict(scenario: &Scenario, max_retries: u32, runs: usize) -> Result<Prediction, String> {
    if let Some(why) = unpredictable(scenario) {
        return Err(why);
    }
    let chaos = scenario.chaos.as_ref().expect("checked above");
    let weights: Vec<(ChaosOutcome, f64)> = if chaos.mix.is_empty() {
        ChaosOutcome::ALL.iter().map(|(_, outcome)| (*outcome, 1.0)).collect()
    } else {
        chaos.mix.iter().filter_map(|(name, w)| Some((ChaosOutcome::parse(name)?, f64::from(*w)))).collect()
    };
    let total: f64 = weights.iter().map(|(_, w)| w).sum();
    // The least share of a fault's draws that fire before any output delta, over the attempts'
    // answers: chaos fires after `floor(point × (deltas + 1))` deltas.
    let before_output =
        scenario.attempts.iter().map(|a| 1.0 / (output_deltas(&a.content()) + 1) as f64).fold(1.0, f64::min);
    let must_retry: f64 = weights
        .iter()
        .map(|(outcome, w)| match outcome {
            ChaosOutcome::Status(_) => *w,
            ChaosOutcome::Fault(FaultKind::Garbage) => 0.0,
            ChaosOutcome::Fault(_) => w * before_output,
        })
        .sum();
    let must_retry_share = if total > 0.0 { must_retry / total } else { 0.0 };
    let attempts = max_retries.saturating_add(1);
    let retried = chaos.rate * must_retry_share;
    let success_probability = (1.0 - chaos.rate) * (0..attempts).map(|i| retried.powi(i as i32)).sum::<f64>();
    let success_probability = success_probability.clamp(0.0, 1.0);
    Ok(Prediction {
        chaos_rate: chaos.rate,
        must_retry_share,
        attempts,
        success_probability,
        runs,
        expected_successes: runs as f64 * success_probability,
        minimum_successes: binomial_floor(runs, success_probability, ALPHA),
        alpha: ALPHA,
    })
}

/// The largest `k` such that `P(X < k) ≤ alpha` for `X ~ Binomial(n, p)`.
fn binomial_floor(n: usize, p: f64, alpha: f64) -> usize {
    if p <= 0.0 {
        return 0;
    }
    if p >= 1.0 {
        return n;
    }
    // P(X = k) in log space, from k = 0 upwards: ln C(n, k) + k ln p + (n − k) ln(1 − p).
    let (ln_p, ln_q) = (p.ln(), (1.0 - p).ln());
    let mut ln_choose = 0.0;
    let mut below = 0.0; // P(X < k)
    for k in 0..=n {
        if k > 0 {
            ln_choose += ((n - k + 1) as f64).ln() - (k as f64).ln();
        }
        let mass = (ln_choose + k as f64 * ln_p + (n - k) as f64 * ln_q).exp();
        if below + mass > alpha {
            return k;
        }
        below += mass;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use squall::scenario::Catalogue;

    fn chaos_30() -> Scenario {
        let catalogue = Catalogue::embedded().expect("the embedded catalogue");
        catalogue.get("chaos-30-percent").expect("the catalogue's chaos scenario").as_ref().clone()
    }

    #[test]
    fn the_least_success_rate_counts_only_what_must_be_retried() {
        // 30 % taken; of the nine outcomes five are statuses (retried), three are breaks that
        // fire before output in 1 of (9 words + 1) draws, one is garbage (a SHOULD): 0.5889.
        let prediction = predict(&chaos_30(), 6, 200).expect("predictable");
        let retried: f64 = 0.3 * (5.0 + 3.0 / 10.0) / 9.0;
        let expected = 0.7 * (0..7).map(|i| retried.powi(i)).sum::<f64>();
        assert!((prediction.must_retry_share - 5.3 / 9.0).abs() < 1e-12, "{prediction:?}");
        assert!((prediction.success_probability - expected).abs() < 1e-12, "{prediction:?}");
        assert!((0.84..0.86).contains(&prediction.success_probability), "{prediction:?}");
        // A client that never retries succeeds 70 % of the time: well under the allowance.
        // 170.0 expected, 5.0 standard deviations: 3.1 of them below.
        assert_eq!(prediction.minimum_successes, 154, "{prediction:?}");
        let no_retries = predict(&chaos_30(), 0, 200).expect("predictable");
        assert!((no_retries.success_probability - 0.7).abs() < 1e-12);
    }

    #[test]
    fn the_allowance_is_a_binomial_tail_of_alpha() {
        // Binomial(10, 0.5): P(X < 1) = 1/1024 ≤ 0.001 < P(X < 2) = 11/1024.
        assert_eq!(binomial_floor(10, 0.5, 0.001), 1);
        assert_eq!(binomial_floor(10, 0.5, 0.0009), 0);
        assert_eq!(binomial_floor(100, 1.0, ALPHA), 100);
        assert_eq!(binomial_floor(100, 0.0, ALPHA), 0);
        // Normal approximation for a large soak: about 3.09 standard deviations below.
        let k = binomial_floor(10_000, 0.85, ALPHA) as f64;
        let normal = 8_500.0 - 3.09 * (10_000.0_f64 * 0.85 * 0.15).sqrt();
        assert!((k - normal).abs() < 3.0, "{k} vs {normal}");
    }

    #[test]
    fn a_scenario_that_scripts_more_than_chaos_is_not_predicted() {
        let mut scenario = chaos_30();
        scenario.chaos = None;
        assert_eq!(predict(&scenario, 6, 10).expect_err("no chaos"), "the scenario has no chaos");
        let catalogue = Catalogue::embedded().expect("the embedded catalogue");
        let outage = catalogue.get("outage-40s-then-ok").expect("an outage scenario");
        let mut chaos_in_an_outage = chaos_30();
        chaos_in_an_outage.outage.clone_from(&outage.outage);
        assert!(predict(&chaos_in_an_outage, 6, 10).expect_err("an outage").contains("scripts more than chaos"));
    }
}
