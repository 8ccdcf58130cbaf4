//! Given: how the provider behaves on each attempt, and how the implementation is set up.

use cucumber::step::Context;
use futures_util::future::LocalBoxFuture;

use super::{arg, done, num, StepFn};
use crate::scenario::{Attempt, ErrorSpec, Fault, FaultKind, FunctionCallSpec, StreamFailure, StreamSpec};
use crate::suite::world::SuiteWorld;

pub(super) const STEPS: &[(&str, StepFn)] = &[
    (r#"^attempt (\d+) answers with status (\d+)$"#, status),
    (r#"^attempt (\d+) answers with status (\d+) and header "([^"]+)" set to "([^"]*)"$"#, status_with_header),
    (r#"^attempt (\d+) answers with status (\d+) and error code "([^"]+)"$"#, status_with_code),
    (r#"^every attempt answers with status (\d+)$"#, every_status),
    (r#"^attempt (\d+) sends no headers for (\d+) seconds$"#, no_headers),
    (r#"^every attempt sends no headers for (\d+) seconds$"#, every_no_headers),
    (r#"^attempt (\d+) succeeds(?: with "([^"]*)")?$"#, succeeds),
    (
        r#"^the provider breaks the stream with "(eof|reset|truncate|stall|garbage)" after (\d+) events? on (?:attempt (\d+)|(every) attempt)$"#,
        breaks,
    ),
    (r#"^the provider resets the stream after (\d+) events? on attempt (\d+)$"#, resets),
    (r#"^attempt (\d+) streams "([^"]*)" and breaks with "(eof|reset)" after (\d+) events$"#, text_then_break),
    (
        r#"^attempt (\d+) streams a call to tool "([^"]+)" and breaks with "(eof|reset)" after (\d+) events$"#,
        call_then_break,
    ),
    (r#"^attempt (\d+) fails in the stream with "([^"]+)"(?: and message "([^"]*)")?$"#, stream_failure),
    (r#"^the scenario "([^"]+)"$"#, catalogue),
    (r#"^the implementation runs with the "([^"]+)" profile$"#, profile),
    (r#"^a fallback answering "([^"]*)" is attached$"#, fallback),
    (r"^the implementation is configured with maxRetries = (\d+)$", max_retries),
    (r"^timing is measured at 1/(\d+) of real time$", time_scale),
];

/// The text streamed by scripted successes and broken streams.
const TEXT: &str = "The quick brown fox jumps over the lazy dog";

fn status_reply(status: u16) -> Attempt {
    Attempt { status: Some(status), ..Attempt::default() }
}

fn broken(kind: FaultKind, after_events: u32) -> Attempt {
    Attempt {
        stream: Some(StreamSpec { text: Some(TEXT.to_owned()), ..StreamSpec::default() }),
        fault: Some(Fault { kind, after_events: Some(after_events), after_bytes: None, ms: None }),
        ..Attempt::default()
    }
}

fn fault_kind(text: &str) -> FaultKind {
    FaultKind::ALL.into_iter().find(|k| k.as_str() == text).unwrap_or_else(|| panic!("unknown fault `{text}`"))
}

fn status(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    *world.script.attempt(num(&ctx, 1)) = status_reply(num(&ctx, 2));
    done()
}

fn status_with_header(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let mut reply = status_reply(num(&ctx, 2));
    reply.headers.insert(arg(&ctx, 3).to_owned(), arg(&ctx, 4).to_owned());
    *world.script.attempt(num(&ctx, 1)) = reply;
    done()
}

fn status_with_code(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let mut reply = status_reply(num(&ctx, 2));
    reply.error = Some(ErrorSpec { code: Some(arg(&ctx, 3).to_owned()), ..ErrorSpec::default() });
    *world.script.attempt(num(&ctx, 1)) = reply;
    done()
}

fn every_status(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.script.every = Some(status_reply(num(&ctx, 1)));
    done()
}

fn silent(seconds: u64) -> Attempt {
    Attempt { delay_ms: Some(seconds.saturating_mul(1000)), ..Attempt::default() }
}

fn no_headers(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    *world.script.attempt(num(&ctx, 1)) = silent(num(&ctx, 2));
    done()
}

fn every_no_headers(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.script.every = Some(silent(num(&ctx, 1)));
    done()
}

fn succeeds(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let text = Some(arg(&ctx, 2)).filter(|t| !t.is_empty()).unwrap_or(TEXT);
    *world.script.attempt(num(&ctx, 1)) = Attempt {
        stream: Some(StreamSpec { text: Some(text.to_owned()), ..StreamSpec::default() }),
        ..Attempt::default()
    };
    done()
}

fn breaks(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let reply = broken(fault_kind(arg(&ctx, 1)), num(&ctx, 2));
    if arg(&ctx, 4) == "every" {
        world.script.every = Some(reply);
    } else {
        *world.script.attempt(num(&ctx, 3)) = reply;
    }
    done()
}

fn resets(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    *world.script.attempt(num(&ctx, 2)) = broken(FaultKind::Reset, num(&ctx, 1));
    done()
}

fn text_then_break(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let mut reply = broken(fault_kind(arg(&ctx, 3)), num(&ctx, 4));
    reply.stream = Some(StreamSpec { text: Some(arg(&ctx, 2).to_owned()), ..StreamSpec::default() });
    *world.script.attempt(num(&ctx, 1)) = reply;
    done()
}

fn call_then_break(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let mut reply = broken(fault_kind(arg(&ctx, 3)), num(&ctx, 4));
    let call = FunctionCallSpec {
        name: arg(&ctx, 2).to_owned(),
        arguments: r#"{"path": "notes.md", "content": "draft"}"#.to_owned(),
        call_id: None,
    };
    reply.stream = Some(StreamSpec { function_call: Some(call), ..StreamSpec::default() });
    *world.script.attempt(num(&ctx, 1)) = reply;
    done()
}

fn stream_failure(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let fail = StreamFailure {
        code: arg(&ctx, 2).to_owned(),
        message: Some(arg(&ctx, 3).to_owned()).filter(|m| !m.is_empty()),
        ..StreamFailure::default()
    };
    *world.script.attempt(num(&ctx, 1)) =
        Attempt { stream: Some(StreamSpec { fail: Some(fail), ..StreamSpec::default() }), ..Attempt::default() };
    done()
}

fn catalogue(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.script.catalogue = Some(arg(&ctx, 1).to_owned());
    done()
}

fn profile(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.profile = Some(arg(&ctx, 1).to_owned());
    done()
}

fn fallback(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.fallback = Some(arg(&ctx, 1).to_owned());
    done()
}

/// `providerRetry.maxRetries`, passed to the implementation as `SQUALL_MAX_RETRIES`.
fn max_retries(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.max_retries = Some(num(&ctx, 1));
    done()
}

/// Timing-precise cases run slower than the suite's default scale, so that scheduling noise
/// on a busy machine stays small next to what they measure.
fn time_scale(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let divisor: f64 = num(&ctx, 1);
    // Never faster than the suite itself runs.
    world.time_scale = Some((1.0 / divisor).max(world.ctx().time_scale));
    done()
}
