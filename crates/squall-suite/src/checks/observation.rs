//! What one case left behind, as the checks read it: the server journal, the implementation's
//! outputs, and the clock that reads the journal's real times as policy time.

use std::time::Duration;

use crate::iut::IutRun;
use crate::results::{CaseRecord, ClientOutputs, Evidence, PairedEvidence};
use crate::timing::CaseClock;
#[cfg(test)]
use crate::timing::{Allowance, Reaction, MOMENT};
use squall::journal::JournalEntry;

/// What a case produced.
#[derive(Debug)]
pub(crate) struct Observation {
    /// Every request the server saw during the case, in arrival order.
    pub journal: Vec<JournalEntry>,
    /// The implementation's outputs: `result.json`, `events.jsonl`, where its files are (a
    /// herd's client 0).
    pub iut: IutRun,
    /// A herd's other clients' outputs, client 1 first; empty when one instance ran.
    pub others: Vec<IutRun>,
    /// The case's time scale and the client's reaction: real time as policy time.
    pub clock: CaseClock,
    /// Why the case ran at another scale than it asked for, if it did.
    pub scale_note: Option<String>,
    /// Real time from starting the implementation to collecting its outputs.
    pub real_duration: Duration,
    /// The case's earlier runs at the same time scale, each with a seed of its own, when a check
    /// asked for more draws of a client's random waits (first run first); empty otherwise.
    pub draws: Vec<Observation>,
    /// The case's run just before, at another time scale, when a lower bound's pass asked for it:
    /// its waits and this run's are read together ([`PairedRun`]).
    pub paired: Option<PairedRun>,
}

/// The same case run at another time scale. A client's own work on a path the calibration did
/// not take is real time, the same at every scale, and a lower bound's pass could be that work
/// read as waiting: the part of a gap that grows with the scale is the wait.
#[derive(Debug, Clone)]
pub(crate) struct PairedRun {
    pub journal: Vec<JournalEntry>,
    pub clock: CaseClock,
}

impl PairedRun {
    /// What a run left that later runs read their waits against.
    pub(crate) fn of(observation: &Observation) -> PairedRun {
        PairedRun { journal: observation.journal.clone(), clock: observation.clock.clone() }
    }
}

/// An instance's run as a report recorded it (its files are not in the report).
#[cfg(test)]
fn recorded(outputs: &ClientOutputs) -> std::io::Result<IutRun> {
    Ok(IutRun {
        out_dir: tempfile::tempdir()?.into(),
        result: outputs.result.clone(),
        events: outputs.events.clone(),
        output_errors: Vec::new(),
        stderr: outputs.stderr.clone(),
        exit_code: outputs.exit_code,
        timed_out: outputs.timed_out,
        timeout: Duration::ZERO,
        told_time_scale: None,
    })
}

impl Observation {
    /// `record` with what this run observed: its time scale, the reaction and allowances its
    /// timing was read with, and the evidence a person looks at.
    pub(crate) fn recorded_in(&self, record: CaseRecord) -> CaseRecord {
        let evidence = Evidence {
            journal: self.journal.clone(),
            outputs: ClientOutputs::of(&self.iut),
            duration_ms: Some(self.real_duration.as_secs_f64() * 1000.0),
            others: self.others.iter().map(ClientOutputs::of).collect(),
            paired: self.paired.as_ref().map(|paired| PairedEvidence {
                time_scale: paired.clock.time_scale,
                reaction_ms: (&paired.clock.reaction).into(),
                journal: paired.journal.clone(),
            }),
        };
        CaseRecord {
            time_scale: Some(self.time_scale()),
            time_scale_note: self.scale_note.clone(),
            reaction_ms: Some((&self.clock.reaction).into()),
            machine_allowance_ms: Some(self.clock.machine.held_back_ms),
            lockstep_ms: self.clock.lockstep_ms,
            evidence,
            ..record
        }
    }

    /// What a reported case observed, from its evidence, time scale and reaction; `None` when
    /// the case was not run. The files the implementation wrote are not in a report: checks
    /// that read them (`tasks` level) find nothing. The kept reports' evidence is judged again
    /// with it in tests.
    #[cfg(test)]
    pub(crate) fn of_record(case: &CaseRecord) -> std::io::Result<Option<Observation>> {
        let (Some(time_scale), Some(reaction)) = (case.time_scale, case.reaction_ms.as_ref()) else { return Ok(None) };
        let evidence = &case.evidence;
        Ok(Some(Observation {
            journal: evidence.journal.clone(),
            iut: recorded(&evidence.outputs)?,
            others: evidence.others.iter().map(recorded).collect::<std::io::Result<Vec<IutRun>>>()?,
            clock: CaseClock::new(time_scale, Reaction::as_reported(reaction))
                .with_lockstep(case.lockstep_ms)
                .with_machine(case.machine_allowance_ms.map_or(MOMENT, |held_back_ms| Allowance { held_back_ms })),
            scale_note: case.time_scale_note.clone(),
            real_duration: Duration::from_secs_f64(evidence.duration_ms.unwrap_or(0.0).max(0.0) / 1000.0),
            draws: Vec::new(),
            paired: evidence.paired.as_ref().map(|paired| PairedRun {
                journal: paired.journal.clone(),
                clock: CaseClock::new(paired.time_scale, Reaction::as_reported(&paired.reaction_ms))
                    .with_machine(case.machine_allowance_ms.map_or(MOMENT, |held_back_ms| Allowance { held_back_ms })),
            }),
        }))
    }

    /// Model calls only (`/responses`, `/chat/completions`, `/v1/messages`), in arrival order.
    pub(crate) fn attempts(&self) -> Vec<&JournalEntry> {
        self.journal.iter().filter(|e| e.attempt.is_some()).collect()
    }

    /// Every instance's outputs, by client number (one when the case is not a herd's).
    pub(crate) fn clients(&self) -> impl Iterator<Item = &IutRun> {
        std::iter::once(&self.iut).chain(&self.others)
    }

    /// Whether a herd ran.
    pub(crate) fn is_herd(&self) -> bool {
        !self.others.is_empty()
    }

    /// Every instance's own view of the case, as if it had run alone: its requests (of a herd,
    /// those at its client base URL) and its outputs, on the case's clock.
    pub(crate) fn each_client(&self) -> Vec<Observation> {
        let herd = self.is_herd();
        self.clients()
            .enumerate()
            .map(|(k, run)| Observation {
                journal: self
                    .journal
                    .iter()
                    .filter(|e| !herd || e.client.and_then(|c| usize::try_from(c).ok()) == Some(k))
                    .cloned()
                    .collect(),
                iut: run.clone(),
                others: Vec::new(),
                clock: self.clock.clone(),
                scale_note: self.scale_note.clone(),
                real_duration: self.real_duration,
                draws: Vec::new(),
                paired: None,
            })
            .collect()
    }

    /// The same observation, read with another clock (its earlier draws too: they ran at the
    /// same time scale).
    pub(crate) fn with_clock(&self, clock: CaseClock) -> Observation {
        Observation {
            journal: self.journal.clone(),
            iut: self.iut.clone(),
            others: self.others.clone(),
            draws: self.draws.iter().map(|draw| draw.with_clock(clock.clone())).collect(),
            clock,
            scale_note: self.scale_note.clone(),
            real_duration: self.real_duration,
            paired: self.paired.clone(),
        }
    }

    /// The implementation's `result.json` (the Task result in `task` cases), or null.
    pub(crate) fn result(&self) -> &serde_json::Value {
        static NULL: serde_json::Value = serde_json::Value::Null;
        self.iut.result.as_ref().unwrap_or(&NULL)
    }

    /// The events of `events.jsonl` of one `type`.
    pub(crate) fn events_of(&self, kind: &str) -> Vec<&serde_json::Value> {
        self.iut.events.iter().filter(|e| e["type"] == kind).collect()
    }

    /// The case's time scale.
    pub(crate) fn time_scale(&self) -> squall::clock::TimeScale {
        self.clock.time_scale
    }
}
