//! The admin API under `/__squall/` (public contract, `docs/server.md`): create, inspect and
//! delete runs, list scenarios, health.

// Public for the fuzz targets, hidden (re-exported as `server::create_run`): what outside code
// scripts against is the admin API (docs/server.md), not its parser.
pub(in crate::server) mod case_judge;
#[doc(hidden)]
pub mod create_run;
mod endpoint_name;
mod journal_out;
pub(in crate::server) mod judge_api;

use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};

use self::create_run::{parse_create_run, CreateRunError};
pub(super) use self::endpoint_name::endpoint;
use self::journal_out::journal_response;
use super::http_util::{declares_too_large, json, openai_error, read_body, BodyError, ResponseBody};
use super::model::base_path;
use super::runs::Run;
use super::State;
use crate::journal::KeptEntry;
use crate::scenario::{Scenario, ScenarioError};

pub(super) async fn handle(state: &State, rest: &str, request: Request<Incoming>) -> Response<ResponseBody> {
    let method = request.method().clone();
    let origin = state.origin_for(&request);
    let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    match (&method, segments.as_slice()) {
        (&Method::GET, ["health"]) => {
            json(StatusCode::OK, &json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")}))
        }
        (&Method::GET, ["scenarios"]) => list_scenarios(state),
        (&Method::GET, ["scenarios", name]) => match state.catalogue.get(name) {
            Some(scenario) => json(StatusCode::OK, &serde_json::to_value(&*scenario).unwrap_or_default()),
            None => unknown_scenario(name),
        },
        (&Method::POST, ["runs"]) => create_run(state, &origin, request).await,
        (&Method::GET, ["cases"]) => judge_api::cases(state, &request),
        (&Method::POST, ["cases", case @ .., "runs"]) if !case.is_empty() => {
            // A case id has a `/` in it (`req-0006-001/status-408-is-retried`), written as is or as `%2F`.
            let case = judge_api::percent_decode(&case.join("/"));
            judge_api::create_case_run(state, &origin, &case, request).await
        }
        (&Method::POST, ["runs", id, "verdict"]) => match state.runs.get(id) {
            Some(run) => judge_api::post_verdict(state, &run, request).await,
            None => unknown_run(id),
        },
        (&Method::GET, ["runs", id, "verdict"]) => with_run(state, id, judge_api::get_verdict),
        (&Method::GET, ["runs"]) => {
            let runs: Vec<Value> = state.runs.list().iter().map(|run| run_summary(&origin, run)).collect();
            json(StatusCode::OK, &json!({"runs": runs}))
        }
        (&Method::GET, ["runs", id]) => with_run(state, id, |run| json(StatusCode::OK, &run_summary(&origin, run))),
        (&Method::GET, ["runs", id, "journal"]) => {
            with_run(state, id, |run| journal_response(run, run.journal.kept(), json!({})))
        }
        (&Method::GET, ["runs", id, "recording"]) => with_run(state, id, |run| recording(state, run)),
        (&Method::DELETE, ["runs", id]) => match state.runs.remove(id) {
            Some(run) => delete_run(&run).await,
            None => unknown_run(id),
        },
        (_, ["health" | "scenarios" | "runs" | "cases", ..]) => openai_error(
            StatusCode::METHOD_NOT_ALLOWED,
            &format!("{method} is not allowed on /__squall/{rest}"),
            "method_not_allowed",
            None,
        ),
        _ => openai_error(StatusCode::NOT_FOUND, &format!("No admin endpoint /__squall/{rest}"), "not_found", None),
    }
}

/// The scenario that replays what the run's upstream answered (docs/proxy.md).
fn recording(state: &State, run: &Run) -> Response<ResponseBody> {
    let upstream = state.upstream.as_ref().map_or_else(String::new, super::Upstream::url);
    let description = format!("Recorded from {upstream} through run {}: one attempt per reply, in order.", run.id);
    match run.replies.scenario(&format!("recorded-{}", run.id), description) {
        Some(scenario) => json(StatusCode::OK, &serde_json::to_value(&scenario).unwrap_or_default()),
        None => openai_error(
            StatusCode::NOT_FOUND,
            &format!("Run {} has forwarded no request to an upstream: there is nothing to record (start squall serve with --upstream)", run.id),
            "nothing_recorded",
            None,
        ),
    }
}

fn list_scenarios(state: &State) -> Response<ResponseBody> {
    let scenarios: Vec<Value> = state
        .catalogue
        .iter()
        .map(|s| json!({"name": s.name, "description": s.description, "requirements": s.requirements}))
        .collect();
    json(StatusCode::OK, &json!({"scenarios": scenarios}))
}

async fn create_run(state: &State, origin: &str, request: Request<Incoming>) -> Response<ResponseBody> {
    if declares_too_large(request.headers(), state.body_limit) {
        return BodyError::TooLarge { limit: state.body_limit }.into_response(None);
    }
    let bytes = match read_body(request.into_body(), state.body_limit).await {
        Ok(bytes) => bytes,
        Err(e) => return e.into_response(None),
    };
    // Parsing and checking a large inline scenario takes a while: not on a serving thread,
    // where it would hold up every stream and scheduled fault that thread serves.
    let catalogue = state.catalogue.clone();
    let parsed = tokio::task::spawn_blocking(move || parse_create_run(&bytes, &catalogue)).await;
    let Ok(parsed) = parsed else {
        let message = "The scenario could not be checked (the server is shutting down)";
        return openai_error(StatusCode::SERVICE_UNAVAILABLE, message, "unavailable", None);
    };
    match parsed {
        Ok((scenario, time_scale)) => match state.runs.create(scenario, time_scale) {
            Ok(run) => json(StatusCode::CREATED, &run_summary(origin, &run)),
            Err(e) => bad_request(Some("scenario"), &e.to_string()),
        },
        Err(CreateRunError::UnknownScenario(name)) => unknown_scenario(&name),
        Err(CreateRunError::BadRequest { param, message }) => bad_request(param.as_deref(), &message),
    }
}

/// A run as the admin API describes it, its URLs under `origin`.
fn run_summary(origin: &str, run: &Run) -> Value {
    let (base_url, root) =
        (base_path::base_url(origin, &run.id, None), base_path::anthropic_base_url(origin, &run.id, None));
    let mut summary = json!({
        "id": run.id,
        "base_url": base_url,
        "anthropic_base_url": root,
        "gemini_base_url": root,
        "azure_openai_endpoint": root,
        "ollama_host": root,
        "bedrock_base_url": root,
        "responses_websocket_url": super::responses_websocket_url(&base_url),
        "scenario": run.scenario.name,
        "time_scale": run.time_scale,
        "requests": run.journal.total(),
        "dropped": run.journal.dropped(),
    });
    if let Some(seed) = run.chaos_seed {
        summary["chaos_seed"] = json!(seed);
    }
    summary
}

/// How long a deleted run's replies in flight are waited for before its journal is returned:
/// the journal is never readable again, so an entry still in flight after this is counted in
/// `in_flight` (its `end` stays null).
const DELETE_WAITS_FOR_REPLIES: Duration = Duration::from_secs(2);

/// The journal of a run just deleted, once its replies in flight ended or after
/// [`DELETE_WAITS_FOR_REPLIES`].
async fn delete_run(run: &Run) -> Response<ResponseBody> {
    let deadline = tokio::time::Instant::now() + DELETE_WAITS_FOR_REPLIES;
    let mut entries = run.journal.kept();
    while entries.iter().any(KeptEntry::in_flight) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
        entries = run.journal.kept();
    }
    let in_flight = entries.iter().filter(|e| e.in_flight()).count();
    journal_response(run, entries, json!({"in_flight": in_flight}))
}

fn with_run(state: &State, id: &str, reply: impl FnOnce(&Run) -> Response<ResponseBody>) -> Response<ResponseBody> {
    match state.runs.get(id) {
        Some(run) => reply(&run),
        None => unknown_run(id),
    }
}

/// With an admin token configured, a request without `Authorization: Bearer <token>` gets a
/// 401. The model endpoints stay open: SDKs send their own API keys there.
pub(super) fn refuse_without_token(state: &State, request: &Request<Incoming>) -> Option<Response<ResponseBody>> {
    let token = state.admin_token.as_deref()?;
    let given = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if given == Some(token) {
        return None;
    }
    Some(openai_error(
        StatusCode::UNAUTHORIZED,
        "The admin API needs `Authorization: Bearer <token>` (the server was started with --admin-token)",
        "admin_token_required",
        None,
    ))
}

pub(super) fn unknown_run(id: &str) -> Response<ResponseBody> {
    openai_error(StatusCode::NOT_FOUND, &format!("No run with id `{id}`"), "run_not_found", Some("id"))
}

pub(super) fn unknown_scenario(name: &str) -> Response<ResponseBody> {
    openai_error(
        StatusCode::NOT_FOUND,
        &format!("No scenario named `{name}` in the catalogue (GET /__squall/scenarios lists them)"),
        "scenario_not_found",
        Some("scenario"),
    )
}

fn bad_request(param: Option<&str>, message: &str) -> Response<ResponseBody> {
    openai_error(StatusCode::BAD_REQUEST, message, "invalid_request", param)
}

/// A shared run for `/scenarios/{name}/v1/...`, created on first use.
pub(super) fn shared_scenario_run(state: &State, scenario: Arc<Scenario>) -> Result<Arc<Run>, ScenarioError> {
    let id = format!("scenario-{}", scenario.name);
    state.runs.get_or_create(&id.clone(), || {
        Run::new(id, scenario, crate::clock::TimeScale::REAL, state.runs.journal_settings())
    })
}
