//! Run-wide conditions: what a model request gets because of when it arrives, before its
//! track's script is asked. Today, outages (a window of run time, all or a ramping share of the
//! requests in it); each decision is a pure function of the scenario, the request's run time and
//! its place (track and attempt), so a run replays the same way.

use super::model::Outage;

/// The outage that takes a model request arriving `policy_ms` into the run as attempt `attempt`
/// (0-based) of `track`: the first whose window holds the moment and whose draw for the request
/// falls under its rate then.
pub(crate) fn outage_taking(outages: &[Outage], policy_ms: f64, track: &str, attempt: u32) -> Option<usize> {
    outages.iter().position(|outage| {
        let open = outage.from_ms as f64 <= policy_ms && policy_ms < outage.until_ms as f64;
        open && draw(outage.seed, track, attempt) < outage.rate_at(policy_ms)
    })
}

impl Outage {
    /// The share of requests it takes `policy_ms` into the run (inside its window): `rate`
    /// where it opens, moving linearly to `rate_until` where it closes.
    pub fn rate_at(&self, policy_ms: f64) -> f64 {
        let start = self.rate.unwrap_or(1.0);
        let end = self.rate_until.unwrap_or(start);
        let span = (self.until_ms.saturating_sub(self.from_ms)) as f64;
        let along = if span > 0.0 { ((policy_ms - self.from_ms as f64) / span).clamp(0.0, 1.0) } else { 0.0 };
        start + (end - start) * along
    }
}

/// A uniform draw in [0, 1) from a seed and a request's place: the same seed, track and attempt
/// draw the same number in every run, and neighbouring places draw unrelated ones.
pub(crate) fn draw(seed: u64, track: &str, attempt: u32) -> f64 {
    // FNV-1a over the track's name, then SplitMix64's finaliser over everything.
    let name = track.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let mut x = seed ^ name.rotate_left(17) ^ u64::from(attempt).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Attempt;

    #[test]
    fn a_full_outage_takes_every_request_in_its_window_and_none_outside() {
        let outages = [Outage::between(1_000, 41_000, Attempt::status(503))];
        assert_eq!(outage_taking(&outages, 999.0, "default", 0), None);
        assert_eq!(outage_taking(&outages, 1_000.0, "default", 0), Some(0));
        assert_eq!(outage_taking(&outages, 40_999.0, "main", 7), Some(0));
        assert_eq!(outage_taking(&outages, 41_000.0, "default", 0), None, "the window closes at until_ms");
    }

    #[test]
    fn a_ramp_takes_its_rate_of_requests_and_the_same_ones_in_every_run() {
        let outage = Outage::between(0, 10_000, Attempt::status(503)).ramp(1.0, 0.0, 7);
        assert_eq!((outage.rate_at(0.0), outage.rate_at(5_000.0), outage.rate_at(10_000.0)), (1.0, 0.5, 0.0));
        let outages = [outage];
        let taken = |at: f64| (0..10_000).filter(|n| outage_taking(&outages, at, "default", *n).is_some()).count();
        let at_middle = taken(5_000.0);
        assert!((4_800..=5_200).contains(&at_middle), "{at_middle} of 10,000 at rate 0.5");
        assert!(taken(1_000.0) > 8_800 && taken(9_000.0) < 1_200);
        let replay: Vec<bool> = (0..100).map(|n| outage_taking(&outages, 5_000.0, "default", n).is_some()).collect();
        let again: Vec<bool> = (0..100).map(|n| outage_taking(&outages, 5_000.0, "default", n).is_some()).collect();
        assert_eq!(replay, again);
    }

    #[test]
    fn draws_are_uniform_and_depend_on_seed_track_and_attempt() {
        let draws: Vec<f64> = (0..20_000).map(|n| draw(1, "default", n)).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((mean - 0.5).abs() < 0.01, "mean {mean}");
        assert!(draws.iter().all(|d| (0.0..1.0).contains(d)));
        assert_ne!(draw(1, "default", 3), draw(2, "default", 3));
        assert_ne!(draw(1, "main", 3), draw(1, "sub", 3));
    }
}
