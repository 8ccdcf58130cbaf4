//! Running the implementation once on a scenario: a run on the suite's server, the
//! implementation through the IUT contract, and the run's journal collected once every entry
//! has ended. Cases and the calibration of a client's reaction both run this way.

use std::time::{Duration, Instant};

use crate::iut::{self, CaseSpec, IutRun};
use crate::journal::JournalEntry;
use crate::scenario::Scenario;
use crate::server::Server;

/// What one run of the implementation left.
#[derive(Debug)]
pub(super) struct Execution {
    pub journal: Vec<JournalEntry>,
    pub iut: IutRun,
    /// Real time from starting the implementation to collecting its outputs.
    pub real_duration: Duration,
    /// When the implementation ended (exited or was killed), in the journal's time: ms since
    /// the run was created.
    pub ended_at_ms: f64,
}

/// Run `spec` (its `base_url` is filled in here) on a run of `scenario` at the spec's time
/// scale. Errors are a scenario the server refuses or an implementation that cannot be started.
pub(super) async fn execute(
    server: &Server,
    implementation: &iut::Iut,
    scenario: Scenario,
    mut spec: CaseSpec,
) -> Result<Execution, String> {
    let run =
        server.create_run(scenario, spec.time_scale).map_err(|e| format!("the case's scenario is invalid: {e}"))?;
    let created = Instant::now();
    spec.base_url = server.base_url(&run);
    spec.case = format!("{}#{}", spec.case, run.id);
    let started = Instant::now();
    let outcome = iut::run(implementation, &spec).await;
    let real_duration = started.elapsed();
    let ended_at_ms = created.elapsed().as_secs_f64() * 1000.0;
    // The server finishes an entry just after the client sees the end of a reply.
    let mut journal = run.journal.snapshot();
    for _ in 0..200 {
        if journal.iter().all(|e| e.end.is_some()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        journal = run.journal.snapshot();
    }
    server.state().runs.remove(&run.id);
    let iut = outcome.map_err(|e| format!("cannot start the implementation: {e}"))?;
    Ok(Execution { journal, iut, real_duration, ended_at_ms })
}
