//! The one place an implementation is started. Cases, the calibration of a client's reaction,
//! the lockstep herd, the soak and every run again hand the [`Launcher`] a [`RunPlan`] (a
//! scenario, what the case asks of the implementation, one instance or a herd) and get back an
//! [`Execution`] (the run's journal and what each instance left). How a process is started —
//! its environment, its clock, its process group, its timeout — is decided here and nowhere else.
//!
//! - `clock` — the clock an outside implementation's process runs on: scaled, or sped up
//! - `command` — an outside implementation's process
//! - `warm` — a Python implementation's process forked from one that imported its SDK once
//! - `reference` — the reference implementation in squall's process, on its clock

use std::time::Duration;

pub(crate) use self::clock::ProcessClock;
use self::clock::RunFrame;
pub(crate) use self::warm::WarmPool;
use super::liveness::awaited_forever;
use crate::iut::{contract_env, read_outputs, trust_env, CaseSpec, Iut, IutRun};
pub(crate) use crate::iut::{Execution, RunPlan};
use squall::clock::Clock;
use squall::embedded::ScriptedRun;
use squall::server::Server;
use tokio::time::Instant;

mod clock;
mod command;
#[cfg(feature = "reference")]
mod reference;
mod warm;

/// Starts one implementation on one server, plan after plan.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Launcher<'a> {
    server: &'a Server,
    implementation: &'a Iut,
    clock: &'a ProcessClock,
    /// Where an outside implementation's processes are forked from, when started warm.
    warm: Option<&'a WarmPool>,
}

/// How an implementation's process ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct ProcessEnd {
    /// The tail of its standard error.
    stderr: String,
    /// Its exit code; `None` when a signal ended it.
    exit_code: Option<i32>,
    /// Killed at the case timeout.
    timed_out: bool,
}

impl<'a> Launcher<'a> {
    /// Runs of `implementation` on `server`, an outside one's processes on `clock`.
    pub(crate) fn new(server: &'a Server, implementation: &'a Iut, clock: &'a ProcessClock) -> Launcher<'a> {
        Launcher { server, implementation, clock, warm: None }
    }

    /// The same, its outside implementation's processes forked from `warm` when given.
    pub(crate) fn warm(self, warm: Option<&'a WarmPool>) -> Launcher<'a> {
        Launcher { warm, ..self }
    }

    /// The clock an outside implementation's processes run on.
    pub(crate) fn clock(&self) -> &'a ProcessClock {
        self.clock
    }

    /// The implementation it starts.
    pub(crate) fn implementation(&self) -> &'a Iut {
        self.implementation
    }

    /// Every plan at once; each outcome in its plan's place.
    pub(crate) async fn run_all(&self, plans: Vec<RunPlan>) -> Vec<Result<Execution, String>> {
        futures_util::future::join_all(plans.into_iter().map(|plan| self.run(plan))).await
    }

    /// Run `plan` on a run of its scenario at its spec's time scale. Errors are a scenario the
    /// server refuses or an implementation that cannot be started.
    pub(crate) async fn run(&self, plan: RunPlan) -> Result<Execution, String> {
        let RunPlan { scenario, mut spec, herd } = plan;
        let run = ScriptedRun::on(self.server, scenario, spec.time_scale)
            .map_err(|e| format!("the case's scenario is invalid: {e}"))?;
        let clock = self.server.clock();
        let created = clock.now();
        spec.case = format!("{}#{}", spec.case, run.id());
        // One frame for every instance (a herd's too): the run's dates are in it.
        let frame = match self.implementation {
            Iut::Command(_) => {
                self.clock.frame_for_run(spec.time_scale).map_err(|e| format!("cannot write the clock's frame: {e}"))?
            }
            Iut::Reference { .. } => None,
        };
        if let Some(frame) = &frame {
            frame.follow(&run);
        }
        let specs: Vec<CaseSpec> = match herd {
            None => vec![CaseSpec { base_url: run.base_url().to_owned(), ..spec }],
            Some(size) => (0..size).map(|k| spec.for_client(k, run.client_base_url(k))).collect(),
        };
        let started = clock.now();
        let outcomes = futures_util::future::join_all(
            specs.iter().map(|spec| self.start(spec, &run, clock, created, frame.as_ref())),
        )
        .await;
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
        self.server.remove_run(run.id());
        let mut runs = outcomes
            .into_iter()
            .collect::<std::io::Result<Vec<IutRun>>>()
            .map_err(|e| format!("cannot start the implementation: {e}"))?;
        let iut = runs.remove(0);
        Ok(Execution { journal, iut, others: runs, real_duration, ended_at_ms })
    }

    /// Start one instance on `spec` on `run` (created at `created`), timed by `clock` (the
    /// server's: an outside process always runs in real time), and read what it left.
    async fn start(
        &self,
        spec: &CaseSpec,
        run: &ScriptedRun,
        clock: &Clock,
        created: Instant,
        frame: Option<&RunFrame>,
    ) -> std::io::Result<IutRun> {
        let out_dir = tempfile::Builder::new().prefix("squall-case-").tempdir()?;
        let mut env = contract_env(spec, out_dir.path());
        if let Some(ca) = self.server.ca_pem() {
            // The test CA beside the contract's outputs, under a name no client writes.
            let ca_file = out_dir.path().join(".squall-ca.pem");
            std::fs::write(&ca_file, ca)?;
            env.extend(trust_env(&ca_file));
        }
        let mut told_time_scale = None;
        let end = match self.implementation {
            Iut::Reference { mutant } => run_reference(&env, mutant.as_deref(), spec.timeout, clock).await,
            Iut::Command(command) => {
                let started = self.clock.start(command, spec.time_scale, &mut env, frame);
                env.extend(started.env);
                told_time_scale = started.told_time_scale;
                let forever = awaiting_forever(spec, run, clock, created);
                match self.warm {
                    Some(warm) => warm.run(command, self.clock, &env, out_dir.path(), spec.timeout, forever).await?,
                    None => command::run(&started.argv, &env, spec.timeout, forever).await?,
                }
            }
        };
        let (result, events, output_errors) = read_outputs(out_dir.path());
        Ok(IutRun {
            out_dir: out_dir.into(),
            result,
            events,
            output_errors,
            stderr: end.stderr,
            exit_code: end.exit_code,
            timed_out: end.timed_out,
            timeout: spec.timeout,
            told_time_scale,
        })
    }
}

/// How often a lone instance's journal is read for a reply it awaits forever.
const FOREVER_WATCH: Duration = Duration::from_millis(100);

/// Resolves once a lone instance (not a herd's client: its herd shares one journal) is waiting on
/// a reply squall withholds past what is ever awaited ([`awaited_forever`]): its case is decided,
/// and it is killed then instead of at the case timeout.
async fn awaiting_forever(spec: &CaseSpec, run: &ScriptedRun, clock: &Clock, created: Instant) {
    if spec.client.is_some() {
        return std::future::pending().await;
    }
    loop {
        clock.sleep(FOREVER_WATCH).await;
        let now_ms = clock.now().saturating_duration_since(created).as_secs_f64() * 1000.0;
        if awaited_forever(&run.journal(), now_ms, spec.time_scale) {
            return;
        }
    }
}

#[cfg(feature = "reference")]
async fn run_reference(
    env: &[(&'static str, String)],
    mutant: Option<&str>,
    timeout: Duration,
    clock: &Clock,
) -> ProcessEnd {
    reference::run(env, mutant, timeout, clock).await
}

/// Without the `reference` feature the reference cannot run: every case of it is `error`.
#[cfg(not(feature = "reference"))]
async fn run_reference(_: &[(&'static str, String)], _: Option<&str>, _: Duration, _: &Clock) -> ProcessEnd {
    let stderr = "squall was built without the reference implementation (cargo feature `reference`)".to_owned();
    ProcessEnd { stderr, exit_code: Some(2), timed_out: false }
}
