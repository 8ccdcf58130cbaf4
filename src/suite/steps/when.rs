//! When: run the implementation on the scripted case.

use std::time::{Duration, Instant};

use cucumber::step::Context;
use futures_util::future::LocalBoxFuture;

use super::StepFn;
use crate::iut::{self, CaseSpec, TaskKind};
use crate::suite::verdict::{unjudgeable_run, Level};
use crate::suite::world::{CaseRun, SuiteWorld};

pub(super) const STEPS: &[(&str, StepFn)] = &[
    (r"^the implementation streams one model call$", stream),
    (r"^the implementation runs a deep-research task$", task),
    (r"^the implementation runs a main-session turn$", main_turn),
];

const PROMPT: &str = "Survey how LLM clients retry provider failures";

fn stream(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    Box::pin(run(world, ctx, TaskKind::Stream, Level::Wire))
}

fn task(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    Box::pin(run(world, ctx, TaskKind::Task, Level::Tasks))
}

fn main_turn(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    Box::pin(run(world, ctx, TaskKind::Main, Level::Tasks))
}

async fn run(world: &mut SuiteWorld, ctx: Context, task: TaskKind, needs: Level) {
    let suite = world.ctx().clone();
    if suite.level < needs {
        world.not_applicable = Some(format!(
            "the case needs level `{}`; the implementation declares `{}`",
            needs.as_str(),
            suite.level.as_str()
        ));
        return;
    }
    let case_name = ctx.step.value.clone();
    let scenario = world
        .script
        .build("case", &suite.catalogue)
        .unwrap_or_else(|e| panic!("cannot build the case's scenario: {e}"));
    let time_scale = world.time_scale.unwrap_or(suite.time_scale);
    let run =
        suite.server.create_run(scenario, time_scale).unwrap_or_else(|e| panic!("the case's scenario is invalid: {e}"));
    let spec = CaseSpec {
        case: format!("{}#{}", case_name, run.id),
        task,
        prompt: PROMPT.to_owned(),
        base_url: suite.server.base_url(&run),
        time_scale,
        profile: world.profile.clone(),
        fallback: world.fallback.clone(),
        max_retries: world.max_retries,
        seed: suite.seed,
        timeout: suite.case_timeout,
    };
    let started = Instant::now();
    let outcome = iut::run(&suite.iut, &spec).await.unwrap_or_else(|e| panic!("cannot start the implementation: {e}"));
    let real_duration = started.elapsed();
    // The server finishes an entry just after the client sees the end of a reply.
    let mut journal = run.journal.snapshot();
    for _ in 0..200 {
        if journal.iter().all(|e| e.end.is_some()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        journal = run.journal.snapshot();
    }
    suite.server.state().runs.remove(&run.id);
    let dead = unjudgeable_run(&outcome);
    world.run = Some(CaseRun { journal, iut: outcome, time_scale, real_duration });
    if let Some(reason) = dead {
        // The step fails without a failed check: the case is `error`, whatever it would have
        // judged — a dead implementation never passes.
        panic!("{reason}");
    }
}
