//! Then: every Then step is answered by the checks it names ([`crate::suite::checks`]), judged
//! on what the case observed and recorded in the world.

use cucumber::step::Context;
use futures_util::future::LocalBoxFuture;

use crate::suite::checks::StepChecks;
use crate::suite::world::SuiteWorld;

/// The step every check answers to.
pub(super) fn step(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let checks = StepChecks::for_step(&ctx.step.value).unwrap_or_else(|| {
        panic!("no check answers `{}` (its pattern matched a step squall registered)", ctx.step.value)
    });
    world.judge(&checks);
    Box::pin(std::future::ready(()))
}
