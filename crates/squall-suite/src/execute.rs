//! Running the implementation once on a scenario: a run on the suite's server, the
//! implementation through the IUT contract — one instance, or a herd of them at once, each at
//! its own client base URL under the run — and the run's journal collected once every entry has
//! ended. Cases and the calibration of a client's reaction both run this way.

use std::time::Duration;

use crate::iut::{self, CaseSpec, IutRun};
use squall::embedded::ScriptedRun;
use squall::journal::JournalEntry;
use squall::scenario::Scenario;
use squall::server::Server;

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

/// Run `spec` (its `base_url` is filled in here) on a run of `scenario` at the spec's time
/// scale: one instance, or `herd` instances started at once (client `k` at the run's client base
/// URL `k`, with `SQUALL_CLIENT=k`). Errors are a scenario the server refuses or an
/// implementation that cannot be started.
pub(crate) async fn execute(
    server: &Server,
    implementation: &iut::Iut,
    scenario: Scenario,
    mut spec: CaseSpec,
    herd: Option<u32>,
) -> Result<Execution, String> {
    let run = ScriptedRun::on(server, scenario, spec.time_scale)
        .map_err(|e| format!("the case's scenario is invalid: {e}"))?;
    let clock = server.clock();
    let created = clock.now();
    spec.case = format!("{}#{}", spec.case, run.id());
    let specs: Vec<CaseSpec> = match herd {
        None => vec![CaseSpec { base_url: run.base_url().to_owned(), ..spec }],
        Some(size) => (0..size).map(|k| spec.for_client(k, run.client_base_url(k))).collect(),
    };
    let started = clock.now();
    let outcomes = futures_util::future::join_all(specs.iter().map(|spec| iut::run(implementation, spec, clock))).await;
    let real_duration = clock.now().saturating_duration_since(started);
    let ended_at_ms = clock.now().saturating_duration_since(created).as_secs_f64() * 1000.0;
    // The server finishes an entry just after the client sees the end of a reply.
    let mut journal = run.journal();
    for _ in 0..200 {
        if journal.iter().all(|e| e.end.is_some()) {
            break;
        }
        clock.sleep(Duration::from_millis(5)).await;
        journal = run.journal();
    }
    server.remove_run(run.id());
    let mut runs = outcomes
        .into_iter()
        .collect::<std::io::Result<Vec<IutRun>>>()
        .map_err(|e| format!("cannot start the implementation: {e}"))?;
    let iut = runs.remove(0);
    Ok(Execution { journal, iut, others: runs, real_duration, ended_at_ms })
}
