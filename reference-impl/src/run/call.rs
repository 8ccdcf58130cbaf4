//! One streamed model call through the whole pipeline: provider attempts under the retry
//! engine, ending in a `result` event (`end_turn` with the final text, or `error` after the
//! engine's `runtime.error`).

use std::sync::Arc;

use crate::provider::{Delta, HttpProvider, ModelOutput, ModelRequest, OutputMode};
use crate::run::engine::{CallFailure, RetryEngine};
use crate::run::events::{result_event, EventSink};

/// Run `request` with retries; every outcome is written to `events`.
pub async fn stream_call(
    engine: &RetryEngine,
    provider: &HttpProvider,
    request: &ModelRequest,
    mode: OutputMode,
    display: &(dyn Fn(Delta<'_>) + Send + Sync),
    events: &Arc<dyn EventSink>,
) -> Result<ModelOutput, CallFailure> {
    let outcome = engine.run(|context| provider.attempt(request, context, mode, display)).await;
    match &outcome {
        Ok(output) => events.emit(&result_event("end_turn", Some(&output.text))),
        Err(_) => events.emit(&result_event("error", None)),
    }
    outcome
}
