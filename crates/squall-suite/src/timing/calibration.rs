//! Calibration: measuring how long the implementation under test takes of its own per retry,
//! once per suite run, before any case is judged. This module plans its runs and reads them;
//! the engine runs them.
//!
//! Several instances run at once (so the machine is as busy as while cases run) on a scenario
//! of 429 replies that each ask for `retry-after-ms: 1` — a wait PRD-0006 makes the client
//! honour ("优先遵循 retryAfterMs") and that is nothing at any time scale — then a success. Half
//! of them run at the suite's time scale and half at a second one, so that a client that waits
//! anyway is told apart from a slow one ([`super::reaction`]).

use std::time::Duration;

use serde::Serialize;

use super::allowance::{Allowance, MOMENT};
use super::lockstep::Lockstep;
use super::reach;
use super::reaction::{Reaction, ScaleSamples};
use super::reported_scale_mismatch;
use super::wait_asks::{self, gaps_after_asks, scenario};
use crate::iut::Iut;
use crate::iut::{Execution, RunPlan};
use squall::clock::TimeScale;

/// Instances at each of the two scales (fewer when the suite runs fewer cases at once).
pub(crate) const INSTANCES_PER_SCALE: usize = 4;

/// The most real time one calibration instance gets at the first try (a quarter of the case
/// timeout when that is less, but not under [`FIRST_TRY_FLOOR`]).
const INSTANCE_TIMEOUT: Duration = Duration::from_secs(20);

/// The least real time one calibration instance gets at the first try (the whole case timeout
/// when that is less: a short case timeout is not tried again).
const FIRST_TRY_FLOOR: Duration = Duration::from_secs(5);

/// What the calibration measured, as reports show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    /// The samples at the suite's time scale and at the second scale.
    pub samples: [ScaleSamples; 2],
    /// The reaction the suite takes out of every wait.
    pub reaction: Reaction,
    /// Instances run at once.
    pub instances: usize,
    /// Real milliseconds the calibration took.
    pub duration_ms: f64,
    /// Times it was taken (more than once when instances timed out before they retried; 0 on
    /// the virtual clock, where nothing is measured).
    pub tries: usize,
    /// How far a lockstep herd spread, when a herd case ran.
    pub lockstep: Option<Lockstep>,
    /// The sped-up clock the implementation's processes ran on (its preloads' versions; each
    /// case's rate is one over its time scale), or why `--clock auto` ran them scaled; `None`
    /// for a run that asked for the scaled clock.
    pub clock: Option<String>,
}

impl Calibration {
    /// A calibration that measured `reaction` without samples (tests, recorded evidence).
    pub fn assumed(reaction: Reaction) -> Calibration {
        Calibration {
            samples: Default::default(),
            reaction,
            instances: 0,
            duration_ms: 0.0,
            tries: 1,
            lockstep: None,
            clock: None,
        }
    }

    /// No calibration: the implementation shares squall's virtual clock, so it spends no time
    /// of its own between attempts and every span is exact.
    pub fn virtual_clock() -> Calibration {
        Calibration { tries: 0, ..Calibration::assumed(Reaction::exactly(0.0)) }
    }

    /// What a busy machine may hold the client back at each wait: nothing on the virtual clock.
    pub fn machine(&self) -> Allowance {
        if self.is_virtual_clock() {
            Allowance::NONE
        } else {
            MOMENT
        }
    }

    /// Whether the run was on squall's virtual clock.
    pub fn is_virtual_clock(&self) -> bool {
        self.tries == 0
    }

    /// One line for people: "client reaction: median 118 ms real (112–131 ms), 48 retries at 1/100 and 1/25".
    pub fn summary(&self) -> String {
        if self.is_virtual_clock() {
            return "client reaction: none — it ran in squall's process on squall's virtual clock, every span exact"
                .to_owned();
        }
        let r = &self.reaction;
        if let Some(missing) = &r.missing {
            return format!("client reaction: not measured — {missing}");
        }
        let scales: Vec<String> = self.samples.iter().map(|s| super::scale_name(s.time_scale)).collect();
        let mut line = format!(
            "client reaction: median {:.1} ms real ({:.1}–{:.1} ms), from {} retries at {}",
            r.median_ms,
            r.low_ms,
            r.high_ms,
            r.samples,
            scales.join(" and ")
        );
        if !r.unasked_wait_ms.is_empty() {
            let waits: Vec<String> = r.unasked_wait_ms.iter().map(|w| format!("{:.2}", w / 1000.0)).collect();
            line.push_str(&format!(
                "; asked to wait 1 ms, it waited [{}] s of policy time (taken out, not counted as reaction)",
                waits.join(", ")
            ));
        }
        if !r.unscaled_wait_ms.is_empty() {
            let waits: Vec<String> = r.unscaled_wait_ms.iter().map(|w| format!("{:.2}", w / 1000.0)).collect();
            line.push_str(&format!(
                "; asked to wait 1 ms, it waited [{}] s of real time at every time scale (a backoff of its own it does not scale: not counted as reaction, which is taken as at most its fastest gap)",
                waits.join(", ")
            ));
        }
        if let Some(lockstep) = &self.lockstep {
            line.push_str(&format!("; {}", lockstep.summary()));
        }
        if let Some(clock) = &self.clock {
            line.push_str(&format!("; the client's clock: {clock}"));
        }
        if self.tries > 1 {
            line.push_str(&format!(
                "; measured at the {} try (the earlier ones' instances timed out before they retried)",
                ordinal(self.tries)
            ));
        }
        line
    }
}

/// The second time scale: four times the suite's, or a quarter of it when that would pass 1.
pub(crate) fn second_scale(time_scale: TimeScale) -> TimeScale {
    let (slower, faster) = (time_scale.get() * 4.0, time_scale.get() / 4.0);
    TimeScale::new(if slower <= 1.0 { slower } else { faster }).expect("a quarter of a time scale is one")
}

/// Times a calibration is taken before the run gives up measuring.
pub(crate) const TRIES: usize = 3;

/// A calibration under way: the runs of its next try, and what its tries showed. The engine
/// runs them (`engine::calibrate`); a try whose instances timed out before they retried (a
/// machine busy with other work) is followed by another, each with twice the instance timeout,
/// up to the case timeout.
#[derive(Debug)]
pub(crate) struct CalibrationPlan {
    /// The implementation, as reports name it.
    implementation: String,
    /// The suite's time scale and the second one.
    scales: [TimeScale; 2],
    instances: usize,
    /// Real time each instance of the next try gets.
    timeout: Duration,
    case_timeout: Duration,
    seed: Option<u64>,
    /// Tries read so far.
    tries: usize,
    /// Whether the first try also asks whether the client's clock was sped up ([`super::reach`]).
    probe_reach: bool,
    /// What showed that squall's clock did not reach the client, when that is why it runs scaled.
    unreached: Option<String>,
    started: std::time::Instant,
}

impl CalibrationPlan {
    /// Measure `implementation`'s reaction with `instances` instances at each of two scales,
    /// all at once.
    pub(crate) fn new(
        implementation: &Iut,
        time_scale: TimeScale,
        instances: usize,
        case_timeout: Duration,
        seed: Option<u64>,
        probe_reach: bool,
    ) -> CalibrationPlan {
        CalibrationPlan {
            implementation: implementation.describe(),
            scales: [time_scale, second_scale(time_scale)],
            instances,
            timeout: (case_timeout / 4).max(FIRST_TRY_FLOOR).min(INSTANCE_TIMEOUT).min(case_timeout),
            case_timeout,
            seed,
            tries: 0,
            probe_reach,
            unreached: None,
            started: std::time::Instant::now(),
        }
    }

    /// The same, for a client squall's clock did not reach (`why`): it runs scaled.
    pub(crate) fn unreached(self, why: Option<String>) -> CalibrationPlan {
        CalibrationPlan { unreached: why, ..self }
    }

    /// The next try's runs: `instances` at each scale, all at once (and, at the first try of a
    /// sped-up clock, the probe of whether it reached the client, last). The scales alternate:
    /// instances start in this order, each meeting a machine busy with the starts before it, and
    /// a moment of load that fell on one scale's instances only would differ between the scales
    /// as a wait of the client's own does.
    pub(crate) fn runs(&self) -> Vec<RunPlan> {
        let runs = (0..self.instances).flat_map(|n| self.scales.iter().map(move |scale| (n, *scale)));
        let mut runs: Vec<RunPlan> = runs
            .map(|(n, time_scale)| RunPlan {
                scenario: scenario(),
                spec: wait_asks::spec(
                    format!("squall calibration {n} at {time_scale}"),
                    time_scale,
                    self.timeout,
                    self.seed,
                ),
                herd: None,
            })
            .collect();
        if self.probes_reach() {
            runs.push(reach::plan(self.scales[0], self.timeout, self.seed));
        }
        runs
    }

    /// Whether the next try probes the clock's reach.
    fn probes_reach(&self) -> bool {
        self.probe_reach && self.tries == 0 && self.scales[0] < TimeScale::REAL
    }

    /// What the try whose runs were [`Self::runs`] showed: the calibration, or `None` when
    /// another, more patient try is needed; an error when the implementation did nothing at all.
    pub(crate) fn read(
        &mut self,
        outcomes: Vec<Result<Execution, String>>,
    ) -> Result<Option<Calibration>, CannotStart> {
        let mut plans = self.runs();
        let mut outcomes = outcomes;
        if self.probes_reach() && outcomes.len() == plans.len() {
            plans.pop();
            let probe = outcomes.pop().unwrap_or_else(|| Err("no probe ran".to_owned()));
            if let Some(unreached) = reach::not_reached(&probe, self.scales[0]) {
                return Err(CannotStart {
                    implementation: self.implementation.clone(),
                    why: unreached.why(),
                    advice: None,
                    unreached: Some(unreached.seen()),
                });
            }
        }
        self.tries += 1;
        let measured: Vec<InstanceRun> =
            plans.iter().zip(outcomes).map(|(plan, outcome)| InstanceRun::of(plan.spec.time_scale, outcome)).collect();
        if let Some(why) = cannot_start(&measured) {
            return Err(CannotStart {
                implementation: self.implementation.clone(),
                why,
                advice: None,
                unreached: None,
            });
        }
        if let Some(why) = every_scale_misreported(&measured, self.unreached.as_deref()) {
            let advice = Some(SCALE_WAYS_OUT.to_owned());
            return Err(CannotStart { implementation: self.implementation.clone(), why, advice, unreached: None });
        }
        let samples = self.scales.map(|scale| ScaleSamples {
            time_scale: scale,
            gaps_ms: measured.iter().filter(|run| run.time_scale == scale).map(|run| run.gaps_ms.clone()).collect(),
        });
        let mut reaction = Reaction::from_samples(&samples[0], &samples[1]);
        let timed_out = measured.iter().filter(|run| run.timed_out).count();
        let patient_enough = self.timeout >= self.case_timeout || self.tries >= TRIES;
        if reaction.missing.is_some() && timed_out > 0 {
            if !patient_enough {
                self.timeout = (self.timeout * 2).min(self.case_timeout);
                return Ok(None);
            }
            reaction = Reaction::unknown(format!(
                "{timed_out} of {} calibration instances timed out (after {:.0} s real, in the last of {} tries) before the implementation retried a 429 that asked for retry-after-ms: 1 — the machine may be too busy, or the implementation too slow to start",
                measured.len(),
                self.timeout.as_secs_f64(),
                self.tries
            ));
        }
        Ok(Some(Calibration {
            samples,
            reaction,
            instances: 2 * self.instances,
            duration_ms: self.started.elapsed().as_secs_f64() * 1000.0,
            tries: self.tries,
            lockstep: None,
            clock: None,
        }))
    }
}

/// "second", "third".
fn ordinal(n: usize) -> String {
    match n {
        1 => "first".to_owned(),
        2 => "second".to_owned(),
        3 => "third".to_owned(),
        n => format!("{n}th"),
    }
}

/// Why no case could be judged when every instance that wrote a result reported a time scale
/// other than the one it was told: it does not scale its own waits, and every case would be
/// `error`. `unreached`: what showed that squall's clock did not reach it, when that is why it
/// runs scaled.
fn every_scale_misreported(measured: &[InstanceRun], unreached: Option<&str>) -> Option<String> {
    let reported: Vec<&InstanceRun> = measured.iter().filter(|run| run.wrote_result).collect();
    let (told, said) = reported.first()?.misreported_scale?;
    if !reported.iter().all(|run| run.misreported_scale.is_some()) {
        return None;
    }
    let clock = unreached.map(|seen| format!("squall's clock did not reach it ({seen}), and ")).unwrap_or_default();
    Some(format!(
        "does not scale its own waits: {clock}on the scaled clock every calibration run's result.json says time_scale {said} where it was told {told}"
    ))
}

/// What a client that does not scale its waits can do instead.
const SCALE_WAYS_OUT: &str = "run it at real time with `--time-scale 1` (each case then takes its production time), or multiply its waits by SQUALL_TIME_SCALE in its adapter";

/// What one calibration instance showed.
struct InstanceRun {
    time_scale: TimeScale,
    /// It wrote a `result.json`.
    wrote_result: bool,
    /// The time scale it was told and the one its `result.json` says, when they differ.
    misreported_scale: Option<(TimeScale, f64)>,
    /// Real ms from the end of each 429 to the next request.
    gaps_ms: Vec<f64>,
    /// Why it did nothing at all, if it did nothing (see [`did_nothing`]).
    did_nothing: Option<String>,
    /// Killed at its timeout.
    timed_out: bool,
}

impl InstanceRun {
    /// What one instance at `time_scale` showed.
    fn of(time_scale: TimeScale, outcome: Result<Execution, String>) -> InstanceRun {
        match outcome {
            Ok(execution) => InstanceRun {
                time_scale,
                wrote_result: execution.iut.result.is_some(),
                misreported_scale: misreported(
                    execution.iut.result.as_ref(),
                    execution.iut.told_time_scale.unwrap_or(time_scale),
                ),
                gaps_ms: gaps_after_asks(&execution.journal),
                did_nothing: did_nothing(&execution),
                timed_out: execution.iut.timed_out,
            },
            Err(why) => InstanceRun {
                time_scale,
                wrote_result: false,
                misreported_scale: None,
                gaps_ms: Vec::new(),
                did_nothing: Some(why),
                timed_out: false,
            },
        }
    }
}

/// An implementation that did nothing in any calibration run: no case can be judged, so the run
/// stops before its cases with this, and `squall run` exits 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the implementation cannot run a case: `{implementation}` {why}; {}", advice.as_deref().unwrap_or(CHECK_THE_COMMAND))]
pub struct CannotStart {
    /// The implementation, as reports name it.
    pub implementation: String,
    /// What every calibration run showed: the exit status, result.json missing, the stderr tail.
    pub why: String,
    /// What to do, where it is not to check the command.
    pub advice: Option<String>,
    /// What showed that squall's sped-up clock did not reach it, when that is why: it may run
    /// on the scaled clock instead.
    pub unreached: Option<String>,
}

/// What to do about an implementation that cannot run a case, unless said otherwise.
const CHECK_THE_COMMAND: &str =
    "check the command (try it by hand with the IUT contract's variables, docs/iut-contract.md)";

/// Why the implementation did nothing, when it sent no request: it could not be started, it
/// exited 126 or 127 (the shell found no such command, or could not execute it), or it exited
/// 0 without writing `result.json`. `None` when it did something.
fn did_nothing(execution: &Execution) -> Option<String> {
    if execution.journal.iter().any(|e| e.attempt.is_some()) || execution.iut.timed_out {
        return None;
    }
    let stderr = execution.iut.stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned();
    let said = if stderr.is_empty() { String::new() } else { format!(" (its stderr ends: {stderr})") };
    match (execution.iut.exit_code, execution.iut.result.is_some()) {
        (Some(code @ (126 | 127)), _) => Some(format!("exited {code} without sending a request{said}")),
        (Some(0), false) => {
            Some(format!("exited 0 without sending a request or writing $SQUALL_OUT/result.json{said}"))
        }
        _ => None,
    }
}

/// The time scale told and the one `result` says, when it says another.
fn misreported(result: Option<&serde_json::Value>, told: TimeScale) -> Option<(TimeScale, f64)> {
    reported_scale_mismatch(result, told)?;
    Some((told, result.and_then(|r| r["time_scale"].as_f64()).unwrap_or(f64::NAN)))
}

/// What every calibration run says about an implementation that did nothing in all of them.
fn cannot_start(measured: &[InstanceRun]) -> Option<String> {
    let reasons: Vec<&String> = measured.iter().map(|run| run.did_nothing.as_ref()).collect::<Option<_>>()?;
    let first = reasons.first()?;
    let runs = reasons.len();
    Some(if reasons.iter().all(|r| r == first) {
        format!("{first} in all {runs} calibration runs")
    } else {
        format!("did nothing in any of the {runs} calibration runs; the first {first}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(wrote: Option<f64>) -> InstanceRun {
        let result = wrote.map(|scale| serde_json::json!({"ok": true, "time_scale": scale}));
        InstanceRun {
            time_scale: TimeScale::of(0.01),
            wrote_result: result.is_some(),
            misreported_scale: misreported(result.as_ref(), TimeScale::of(0.01)),
            gaps_ms: vec![5.0],
            did_nothing: None,
            timed_out: false,
        }
    }

    #[test]
    fn a_client_that_reports_real_time_in_every_run_stops_the_run_saying_why() {
        let every = [instance(Some(1.0)), instance(None), instance(Some(1.0))];
        let why = every_scale_misreported(&every, Some("it waited 10.00 s real")).expect("stops");
        assert_eq!(
            why,
            "does not scale its own waits: squall's clock did not reach it (it waited 10.00 s real), and on the scaled clock every calibration run's result.json says time_scale 1 where it was told 0.01"
        );
        assert_eq!(every_scale_misreported(&[instance(Some(1.0)), instance(Some(0.01))], None), None, "one run scaled");
        assert_eq!(every_scale_misreported(&[instance(None)], None), None, "no result said anything");
    }

    #[test]
    fn the_second_scale_stays_within_real_time() {
        assert_eq!(second_scale(TimeScale::of(0.01)), TimeScale::of(0.04));
        assert_eq!(second_scale(TimeScale::of(0.5)), TimeScale::of(0.125));
        assert_eq!(second_scale(TimeScale::REAL), TimeScale::of(0.25));
    }
}
