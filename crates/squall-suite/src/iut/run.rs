//! One run of an implementation as data: the plan whoever wants it hands the engine (a case,
//! the calibration, the lockstep herd, the clock's probe, a soak's run), and what it left.

use std::time::Duration;

use super::{CaseSpec, IutRun};
use squall::journal::JournalEntry;
use squall::scenario::Scenario;

/// One run of the implementation, as whoever wants it planned it.
#[derive(Debug, Clone)]
pub(crate) struct RunPlan {
    /// What the server plays.
    pub scenario: Scenario,
    /// What the implementation is asked (its `base_url` is filled in when it runs).
    pub spec: CaseSpec,
    /// `Some(n)`: `n` instances at once, client `k` at the run's client base URL `k`, with
    /// `SQUALL_CLIENT=k`; `None`: one instance.
    pub herd: Option<u32>,
}

/// What one run of the implementation left.
#[derive(Debug)]
pub(crate) struct Execution {
    pub journal: Vec<JournalEntry>,
    /// The implementation's outputs (a herd's client 0).
    pub iut: IutRun,
    /// A herd's other clients' outputs, client 1 first; empty for one instance.
    pub others: Vec<IutRun>,
    /// Time from starting the implementation to collecting its outputs, on the server's clock
    /// (virtual time for an implementation on squall's virtual clock).
    pub real_duration: Duration,
    /// When the implementation ended (exited or was killed), in the journal's time: ms since
    /// the run was created.
    pub ended_at_ms: f64,
}
