//! Run-wide conditions: what a model request gets because of when it arrives or where it stands,
//! before its track's script is asked — outages (a window of run time, all or a ramping share of
//! the requests in it) and seeded chaos (a share of all requests, each drawn an error status or a
//! fault). Each decision is a pure function of the scenario, the request's run time and its
//! [`Place`] (client, track and attempt), so a run replays the same way.

use crate::scenario_model::{Chaos, ChaosOutcome, Outage};

/// Where a request stands in a run: which client of a herd sent it (`None` on the run's own
/// base URL), on which track, as which attempt (0-based) of that client on that track.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place<'a> {
    /// The herd client, or `None` on the run's own base URL.
    pub client: Option<u32>,
    /// The track's name.
    pub track: &'a str,
    /// The attempt on that track, 0-based, counted per client.
    pub attempt: u32,
}

impl<'a> Place<'a> {
    /// Attempt `attempt` of `track` on the run's own base URL.
    pub fn new(track: &'a str, attempt: u32) -> Place<'a> {
        Place { client: None, track, attempt }
    }

    /// The same place for herd client `client`.
    pub fn of_client(self, client: Option<u32>) -> Place<'a> {
        Place { client, ..self }
    }
}

/// The outage that takes a model request at `place` arriving `policy_ms` into the run: the first
/// whose window holds the moment and whose draw for the request falls under its rate then.
pub fn outage_taking(outages: &[Outage], policy_ms: f64, place: Place<'_>) -> Option<usize> {
    outages.iter().position(|outage| {
        let open = outage.from_ms as f64 <= policy_ms && policy_ms < outage.until_ms as f64;
        open && draw(outage.seed, place) < outage.rate_at(policy_ms)
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

/// A request chaos took: what it gets, and where in the stream a fault fires (a share of the
/// reply's output deltas, in [0, 1)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChaosDraw {
    /// What the request gets.
    pub outcome: ChaosOutcome,
    /// Where a fault fires: a share of the reply's output deltas, in [0, 1).
    pub point: f64,
}

/// Salts that make the draws for whether, what and where independent of one another.
const WHAT: u64 = 0x5851_f42d_4c95_7f2d;
const WHERE: u64 = 0x1405_7b7e_f767_814f;

/// Whether chaos, drawing from `seed`, takes the request at `place`, and with what.
pub fn chaos_taking(chaos: &Chaos, seed: u64, place: Place<'_>) -> Option<ChaosDraw> {
    if draw(seed, place) >= chaos.rate {
        return None;
    }
    let weighted: Vec<(ChaosOutcome, u32)> = if chaos.mix.is_empty() {
        ChaosOutcome::ALL.iter().map(|(_, outcome)| (*outcome, 1)).collect()
    } else {
        chaos.mix.iter().filter_map(|(name, weight)| Some((ChaosOutcome::parse(name)?, *weight))).collect()
    };
    let total: u64 = weighted.iter().map(|(_, w)| u64::from(*w)).sum();
    let mut pick = (draw(seed ^ WHAT, place) * total as f64) as u64;
    let outcome = weighted.iter().find_map(|(outcome, weight)| match pick.checked_sub(u64::from(*weight)) {
        Some(rest) => {
            pick = rest;
            None
        }
        None => Some(*outcome),
    })?;
    Some(ChaosDraw { outcome, point: draw(seed ^ WHERE, place) })
}

/// A uniform draw in [0, 1) from a seed and a request's place: the same seed, client, track and
/// attempt draw the same number in every run, and neighbouring places draw unrelated ones.
pub fn draw(seed: u64, place: Place<'_>) -> f64 {
    // FNV-1a over the track's name, then SplitMix64's finaliser over everything. A herd client
    // moves the draw; the run's own base URL draws as before herds existed.
    let name =
        place.track.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let client = place.client.map_or(0, |k| (u64::from(k) + 1).wrapping_mul(0xd6e8_feb8_6659_fd93));
    let mut x = seed ^ name.rotate_left(17) ^ u64::from(place.attempt).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ client;
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Attempt, FaultKind};

    #[test]
    fn a_full_outage_takes_every_request_in_its_window_and_none_outside() {
        let outages = [Outage::between(1_000, 41_000, Attempt::status(503))];
        assert_eq!(outage_taking(&outages, 999.0, Place::new("default", 0)), None);
        assert_eq!(outage_taking(&outages, 1_000.0, Place::new("default", 0)), Some(0));
        assert_eq!(outage_taking(&outages, 40_999.0, Place::new("main", 7)), Some(0));
        assert_eq!(outage_taking(&outages, 41_000.0, Place::new("default", 0)), None, "the window closes at until_ms");
    }

    #[test]
    fn a_ramp_takes_its_rate_of_requests_and_the_same_ones_in_every_run() {
        let outage = Outage::between(0, 10_000, Attempt::status(503)).ramp(1.0, 0.0, 7);
        assert_eq!((outage.rate_at(0.0), outage.rate_at(5_000.0), outage.rate_at(10_000.0)), (1.0, 0.5, 0.0));
        let outages = [outage];
        let taken =
            |at: f64| (0..10_000).filter(|n| outage_taking(&outages, at, Place::new("default", *n)).is_some()).count();
        let at_middle = taken(5_000.0);
        assert!((4_800..=5_200).contains(&at_middle), "{at_middle} of 10,000 at rate 0.5");
        assert!(taken(1_000.0) > 8_800 && taken(9_000.0) < 1_200);
        let replay: Vec<bool> =
            (0..100).map(|n| outage_taking(&outages, 5_000.0, Place::new("default", n)).is_some()).collect();
        let again: Vec<bool> =
            (0..100).map(|n| outage_taking(&outages, 5_000.0, Place::new("default", n)).is_some()).collect();
        assert_eq!(replay, again);
    }

    #[test]
    fn chaos_takes_its_rate_and_draws_outcomes_by_weight_the_same_way_for_one_seed() {
        let chaos = Chaos { seed: None, rate: 0.3, mix: [("503".to_owned(), 1), ("reset".to_owned(), 3)].into() };
        let draws: Vec<Option<ChaosDraw>> =
            (0..10_000).map(|n| chaos_taking(&chaos, 42, Place::new("default", n))).collect();
        let taken: Vec<&ChaosDraw> = draws.iter().flatten().collect();
        assert!((2_800..=3_200).contains(&taken.len()), "{} of 10,000 at rate 0.3", taken.len());
        let resets = taken.iter().filter(|d| d.outcome == ChaosOutcome::Fault(FaultKind::Reset)).count();
        let share = resets as f64 / taken.len() as f64;
        assert!((0.72..=0.78).contains(&share), "resets weigh 3 of 4: {share}");
        assert!(taken
            .iter()
            .all(|d| matches!(d.outcome, ChaosOutcome::Status(503) | ChaosOutcome::Fault(FaultKind::Reset))));
        let again: Vec<Option<ChaosDraw>> =
            (0..10_000).map(|n| chaos_taking(&chaos, 42, Place::new("default", n))).collect();
        assert_eq!(draws, again);
        let all_kinds = Chaos { mix: Default::default(), ..chaos };
        let seen: std::collections::BTreeSet<String> = (0..10_000)
            .filter_map(|n| chaos_taking(&all_kinds, 1, Place::new("default", n)))
            .map(|d| format!("{:?}", d.outcome))
            .collect();
        assert_eq!(seen.len(), ChaosOutcome::ALL.len(), "an empty mix draws every outcome: {seen:?}");
    }

    #[test]
    fn draws_are_uniform_and_depend_on_seed_track_and_attempt() {
        let draws: Vec<f64> = (0..20_000).map(|n| draw(1, Place::new("default", n))).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((mean - 0.5).abs() < 0.01, "mean {mean}");
        assert!(draws.iter().all(|d| (0.0..1.0).contains(d)));
        assert_ne!(draw(1, Place::new("default", 3)), draw(2, Place::new("default", 3)));
        assert_ne!(draw(1, Place::new("main", 3)), draw(1, Place::new("sub", 3)));
        // Herd clients draw apart from one another and from the run's own base URL.
        let of = |client| draw(1, Place::new("default", 3).of_client(client));
        assert!(of(None) != of(Some(0)) && of(Some(0)) != of(Some(1)));
        assert_eq!(of(Some(7)), of(Some(7)));
    }
}
