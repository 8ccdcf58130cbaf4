//! Calibration sessions of the judge as a service: a test runner names a session when it creates
//! runs; the runs of the calibration case it posts in that session measure its client's own time
//! per retry, which the session's timing checks take out of every wait, and — run as a herd — how
//! far a herd in lockstep spreads, which herd cases count spread beyond: the method `squall run`
//! uses, with the client run by someone else ([`crate::timing`]).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use crate::checks::PairedRun;
use crate::timing::reaction::ScaleSamples;
use crate::timing::{Calibration, Lockstep, Reaction};
use squall::clock::TimeScale;

/// Sessions kept; one more forgets the oldest.
const MAX_SESSIONS: usize = 1_000;

/// Every session's calibration samples.
#[derive(Debug, Default)]
pub(crate) struct Sessions {
    inner: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    samples: HashMap<String, Vec<ScaleSamples>>,
    /// The widest lockstep spread each session's herd calibrations measured.
    lockstep: HashMap<String, Lockstep>,
    /// Each session's last run of a case whose lower bound asked for a run at another scale,
    /// by case: the confirming run is read with it.
    paired: HashMap<(String, String), PairedRun>,
    order: VecDeque<String>,
}

impl Sessions {
    /// Record one calibration run's gaps (real ms after each 429) at `time_scale`.
    pub(crate) fn record(&self, session: &str, time_scale: TimeScale, gaps_ms: Vec<f64>) {
        let mut kept = self.kept(session);
        let scales = kept.samples.entry(session.to_owned()).or_default();
        match scales.iter_mut().find(|s| (s.time_scale.get() - time_scale.get()).abs() <= 1e-9 * time_scale.get()) {
            Some(set) => set.gaps_ms.push(gaps_ms),
            None => scales.push(ScaleSamples { time_scale, gaps_ms: vec![gaps_ms] }),
        }
    }

    /// Record what a herd calibration run measured; the widest spread is kept.
    pub(crate) fn record_lockstep(&self, session: &str, lockstep: Lockstep) {
        let mut kept = self.kept(session);
        let wider = |old: &Lockstep| old.spread_ms.unwrap_or(0.0) >= lockstep.spread_ms.unwrap_or(0.0);
        if !kept.lockstep.get(session).is_some_and(wider) {
            kept.lockstep.insert(session.to_owned(), lockstep);
        }
    }

    /// How far the session's lockstep herd spread, real ms; `None` before a herd calibration.
    pub(crate) fn lockstep_ms(&self, session: &str) -> Option<f64> {
        let kept = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.lockstep.get(session).and_then(|l| l.spread_ms)
    }

    /// The kept sessions, with `session` among them (the oldest forgotten past [`MAX_SESSIONS`]).
    fn kept(&self, session: &str) -> std::sync::MutexGuard<'_, Kept> {
        let mut kept = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !kept.order.iter().any(|s| s == session) {
            kept.order.push_back(session.to_owned());
            while kept.order.len() > MAX_SESSIONS {
                if let Some(oldest) = kept.order.pop_front() {
                    kept.samples.remove(&oldest);
                    kept.lockstep.remove(&oldest);
                    kept.paired.retain(|(session, _), _| *session != oldest);
                }
            }
        }
        kept
    }

    /// Keep `run` of `case`: the session's next run of it, at another scale, is read with it.
    pub(crate) fn keep_for_pair(&self, session: &str, case: &str, run: PairedRun) {
        self.kept(session).paired.insert((session.to_owned(), case.to_owned()), run);
    }

    /// The run of `case` kept for a run at another scale than `time_scale`, taken.
    pub(crate) fn take_paired(&self, session: &str, case: &str, time_scale: TimeScale) -> Option<PairedRun> {
        let mut kept = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let run = kept.paired.remove(&(session.to_owned(), case.to_owned()))?;
        (run.clock.time_scale != time_scale).then_some(run)
    }

    /// The session's calibration so far, as `squall run` states it in one line ("client
    /// reaction: median … ms real …, from N retries at 1/100 and 1/25; asked to wait 1 ms, …").
    pub(crate) fn summary(&self, session: &str) -> String {
        let reaction = self.reaction(session);
        let kept = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut scales: Vec<ScaleSamples> = kept.samples.get(session).cloned().unwrap_or_default();
        scales.sort_by_key(|s| std::cmp::Reverse(s.gaps_ms.len()));
        scales.truncate(2);
        scales.sort_by(|a, b| a.time_scale.get().total_cmp(&b.time_scale.get()));
        let mut samples = [ScaleSamples::default(), ScaleSamples::default()];
        for (slot, scale) in samples.iter_mut().zip(scales) {
            *slot = scale;
        }
        Calibration { samples, ..Calibration::assumed(reaction) }.summary()
    }

    /// The session's reaction, from the two scales it has most samples at.
    pub(crate) fn reaction(&self, session: &str) -> Reaction {
        let kept = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(scales) = kept.samples.get(session) else {
            return Reaction::unknown(format!(
                "session `{session}` has no calibration: run the `calibration` case in it first (GET /__squall/cases says how)"
            ));
        };
        let mut by_count: Vec<&ScaleSamples> = scales.iter().collect();
        by_count.sort_by_key(|s| std::cmp::Reverse(s.gaps_ms.len()));
        let empty = ScaleSamples::default();
        Reaction::from_samples(by_count[0], by_count.get(1).copied().unwrap_or(&empty))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_measures_the_reaction_of_its_calibration_runs_only() {
        let sessions = Sessions::default();
        assert!(sessions.reaction("a").missing.is_some_and(|m| m.contains("session `a` has no calibration")));
        for _ in 0..4 {
            sessions.record("a", TimeScale::of(0.01), vec![40.0, 42.0, 41.0]);
            sessions.record("a", TimeScale::of(0.04), vec![41.0, 43.0, 40.0]);
        }
        sessions.record("b", TimeScale::of(0.01), vec![400.0]);
        let a = sessions.reaction("a");
        assert!(a.missing.is_none() && a.samples == 24, "{a:?}");
        assert!(a.low_ms < 40.0 && a.high_ms > 43.0 && a.high_ms < 45.0, "{a:?}");
        assert!(sessions.reaction("b").low_ms > 300.0);
    }
}
