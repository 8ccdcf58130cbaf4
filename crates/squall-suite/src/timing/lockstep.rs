//! A herd's own spread: a herd of the implementation's instances, all asked at once for the same
//! waits — in lockstep by construction — still retries spread over whatever the machine adds
//! (processes waking on too few cores, a scheduler's turns). A herd case counts the spread of its
//! clients' waits only beyond this: seeing jitter where a lockstep herd would show the same is
//! no evidence.
//!
//! Measured once per suite run, before the first herd case, with the run's herd size and the
//! calibration's shape (six 429s, then a success), each round of retries a sample. The 429s ask
//! for a ladder of real waits, [`ASKED_REAL_MS`], from 12.5 ms to 400 ms: a herd case's clients
//! retry somewhere in that range after their first failure, many while the last of them are
//! still starting — the busiest moment of a herd, which asks of 1 ms (answered at once) would
//! not meet, and an ask of one length would meet at one point only. A client that waits anyway when asked for 1 ms
//! (the calibration found its unasked waits) spreads by its own jitter: its herd's spread cannot
//! be told from the machine's.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::wait_asks::{self, gaps_after_asks};
use crate::iut::{Execution, RunPlan};
use squall::clock::TimeScale;
use squall::journal::JournalEntry;
use squall::scenario::Scenario;

/// What a lockstep herd's spread says, as reports show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lockstep {
    /// The most a lockstep herd's waits are taken to spread, in real ms: the widest round seen,
    /// widened by a quarter of itself for rounds not seen (0 on the virtual clock).
    pub spread_ms: Option<f64>,
    /// The spread of each round of retries, in real ms.
    pub rounds_ms: Vec<f64>,
    /// Instances of the herd.
    pub clients: usize,
    /// Why it was not measured, when it was not.
    pub missing: Option<String>,
}

impl Lockstep {
    /// On the virtual clock: no machine stands between a client's timer and its request.
    pub fn exact() -> Lockstep {
        Lockstep { spread_ms: Some(0.0), rounds_ms: Vec::new(), clients: 0, missing: None }
    }

    /// Not measured, for `why`.
    pub fn unknown(why: impl Into<String>) -> Lockstep {
        Lockstep { spread_ms: None, rounds_ms: Vec::new(), clients: 0, missing: Some(why.into()) }
    }

    /// From the journal of a herd of `clients` that ran the calibration scenario at once.
    pub fn of_herd(journal: &[JournalEntry], clients: usize) -> Lockstep {
        let rounds_ms = round_spreads(journal, clients);
        let Some(widest) = rounds_ms.iter().copied().reduce(f64::max) else {
            return Lockstep::unknown(
                "the herd calibration saw no two clients retry after a 429 that asked for a wait",
            );
        };
        Lockstep { spread_ms: Some(widest * 1.25), rounds_ms, clients, missing: None }
    }

    /// What the run of [`plan`] for a herd of `clients` showed.
    pub(crate) fn of_run(outcome: Result<Execution, String>, clients: u32) -> Lockstep {
        match outcome {
            Ok(run) => Lockstep::of_herd(&run.journal, clients as usize),
            Err(why) => Lockstep::unknown(why),
        }
    }

    /// One line for people.
    pub fn summary(&self) -> String {
        match (&self.missing, self.spread_ms) {
            (Some(why), _) => format!("a lockstep herd's spread: not measured — {why}"),
            (None, Some(spread)) if self.rounds_ms.is_empty() => format!("a lockstep herd's spread: {spread:.1} ms"),
            (None, Some(spread)) => format!(
                "a lockstep herd of {} spread its retries over up to {:.1} ms real ({} rounds); herd cases count spread beyond {spread:.1} ms",
                self.clients,
                self.rounds_ms.iter().copied().fold(0.0, f64::max),
                self.rounds_ms.len()
            ),
            (None, None) => "a lockstep herd's spread: not measured".to_owned(),
        }
    }
}

/// The real time each of the lockstep herd's 429s asks for, in order: a herd case's first retry
/// comes 5-20 ms after its failure at 1/100 and 100-400 ms at 1/5 (seed 002's first wait,
/// "第 1 次 | 1-2 秒"; 0.5 s in the OpenAI and Anthropic SDKs), in the middle of the herd's start.
pub(crate) const ASKED_REAL_MS: [f64; wait_asks::RETRIES] = [12.5, 25.0, 50.0, 100.0, 200.0, 400.0];

/// What a lockstep herd runs at `time_scale`: the calibration with [`ASKED_REAL_MS`] as policy
/// time, each ask never over the 30 s a quota asks and clients honour.
pub(crate) fn scenario(time_scale: TimeScale) -> Scenario {
    let asked_ms = ASKED_REAL_MS.map(|real| time_scale.policy_ms(real).min(30_000.0).round() as u64);
    wait_asks::asking_each(&asked_ms)
}

/// The run that measures a lockstep herd of `herd` instances at `time_scale`, each given `timeout`
/// (and its jitter seed plus its number); [`Lockstep::of_run`] reads it.
pub(crate) fn plan(time_scale: TimeScale, herd: u32, timeout: Duration, seed: Option<u64>) -> RunPlan {
    RunPlan {
        scenario: scenario(time_scale),
        spec: wait_asks::spec(format!("squall herd calibration at {time_scale}"), time_scale, timeout, seed),
        herd: Some(herd),
    }
}

/// Real ms by which the herd's `k`-th waits after an ask spread, for every round at least two
/// clients retried.
fn round_spreads(journal: &[JournalEntry], clients: usize) -> Vec<f64> {
    let waits: Vec<Vec<f64>> = (0..clients)
        .map(|k| {
            let own: Vec<JournalEntry> =
                journal.iter().filter(|e| e.client.and_then(|c| usize::try_from(c).ok()) == Some(k)).cloned().collect();
            gaps_after_asks(&own)
        })
        .collect();
    let rounds = waits.iter().map(Vec::len).max().unwrap_or(0);
    (0..rounds)
        .filter_map(|round| {
            let seen: Vec<f64> = waits.iter().filter_map(|w| w.get(round).copied()).collect();
            let low = seen.iter().copied().reduce(f64::min)?;
            let high = seen.iter().copied().reduce(f64::max)?;
            (seen.len() >= 2).then_some(high - low)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(client: u32, index: usize, received: f64, status: u16) -> JournalEntry {
        let mut entry: JournalEntry = serde_json::from_value(json!({
            "index": index, "track": "default", "attempt": 0, "method": "POST", "path": "/responses", "headers": {},
            "body": null, "stream": true, "received_at_ms": received, "finished_at_ms": received + 1.0, "status": status,
            "fault": null, "end": if status == 429 { "error_status" } else { "completed" }, "events_sent": 0,
            "bytes_sent": 0, "terminal_sent": false
        }))
        .expect("an entry");
        entry.client = Some(client);
        entry
    }

    #[test]
    fn each_round_of_retries_is_a_sample_of_the_spread() {
        // Two clients: waits after their 1 ms asks of [3, 50] and [40, 5] ms.
        let journal = [
            entry(0, 0, 0.0, 429),
            entry(1, 1, 0.0, 429),
            entry(0, 2, 4.0, 429),
            entry(1, 3, 41.0, 429),
            entry(0, 4, 55.0, 200),
            entry(1, 5, 47.0, 200),
        ];
        let lockstep = Lockstep::of_herd(&journal, 2);
        assert_eq!(lockstep.rounds_ms, [37.0, 45.0]);
        assert_eq!(lockstep.spread_ms, Some(45.0 * 1.25));
        assert!(Lockstep::of_herd(&journal[..2], 2).spread_ms.is_none(), "no retry: nothing measured");
    }

    #[test]
    fn the_herd_is_asked_the_ladder_of_real_waits_as_policy_time_at_the_runs_scale() {
        let asked = |time_scale: TimeScale| -> Vec<Option<String>> {
            scenario(time_scale).attempts.iter().map(|a| a.headers.get("retry-after-ms").cloned()).collect()
        };
        let at = |ms: &[&str]| ms.iter().map(|m| Some((*m).to_owned())).chain([None]).collect::<Vec<_>>();
        // 400 ms real at 1/100 would be 40 s: no ask goes over the 30 s clients honour.
        assert_eq!(asked(TimeScale::of(0.01)), at(&["1250", "2500", "5000", "10000", "20000", "30000"]));
        assert_eq!(asked(TimeScale::of(0.5)), at(&["25", "50", "100", "200", "400", "800"]));
    }
}
