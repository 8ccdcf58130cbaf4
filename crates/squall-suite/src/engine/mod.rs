//! The case engine: a case planned, run, judged and — when its evidence cannot decide — run
//! again slower, in one place. [`judge`] decides (a pure function of the evidence, which may ask
//! for a slower run); [`run_case`] acts on it. `squall run` and `cargo test --test conformance`
//! reach `run_case` through cucumber's glue (`super::steps`); the judge as a service calls
//! `judge` on what a client posts and returns its request for a slower run as `confirm`.
//!
//! - `launch` — the one place an implementation is started: plans in, executions out
//! - `calibrate` — the client's clock chosen and its reaction measured, the calibration's plan
//!   run until it is read
//! - `first_look` — a case's own scale tried before a long raised run, for a miss it shows
//! - `judge` — the verdict of one run of a case, and whether a slower run could change it
//! - `liveness` — implementations that died, hung or left no result, and clients that never
//!   gave up on a silent provider
//! - `run` — what every case of a suite run shares, and the loop that runs a case
//! - `turns` — the machine as cases share it: a herd case has it alone

mod calibrate;
mod first_look;
pub(crate) mod judge;
mod launch;
pub(crate) mod liveness;
mod machine_turns;
mod run;

pub(crate) use calibrate::{calibrate_clock, Measure};
pub(crate) use judge::{judge, Judging, Stage};
pub(crate) use launch::{Launcher, ProcessClock, WarmPool};
#[cfg(test)]
pub(crate) use run::MAX_DRAWS;
pub(crate) use run::{run_case, SuiteContext};
