//! The judge as a service over HTTP (public contract, `docs/service.md`): the admin API's
//! `GET /__squall/cases`, `POST /__squall/cases/{id}/runs` and `POST`/`GET
//! /__squall/runs/{id}/verdict`. The server only carries requests to a [`CaseJudge`] — the suite
//! implements it (`squall::suite::service`) — and keeps each case run's ticket and verdict with
//! the run, so the server never depends on the suite.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use serde_json::{json, Value};

use super::base_path;
use super::http_util::{json, openai_error, read_body, ResponseBody};
use super::runs::Run;
use super::State;
use crate::journal::JournalEntry;
use crate::scenario::Scenario;

/// What judges cases for the service.
pub trait CaseJudge: Send + Sync + std::fmt::Debug {
    /// `GET /__squall/cases?profile=…&level=…&tags=…`: the cases, as JSON.
    fn cases(&self, query: &[(String, String)]) -> Result<Value, Refusal>;

    /// `POST /__squall/cases/{case}/runs` with `request` (a JSON object): the run to create.
    fn prepare(&self, case: &str, request: &Value) -> Result<PreparedRun, Refusal>;

    /// What the client is told of a run just created for `ticket`: how to configure it, where
    /// to send requests.
    fn welcome(&self, ticket: &Value, urls: &RunUrls) -> Value;

    /// `POST /__squall/runs/{id}/verdict`: the verdict on `outcome` (what the client posted)
    /// and `journal` (what the server saw of the run), `posted_at_ms` after the run was created
    /// (the journal's clock).
    fn judge(
        &self,
        ticket: &Value,
        journal: Vec<JournalEntry>,
        outcome: &Value,
        posted_at_ms: f64,
    ) -> Result<Value, Refusal>;
}

/// A run the judge asks for.
#[derive(Debug, Clone)]
pub struct PreparedRun {
    /// The scenario it plays.
    pub scenario: Scenario,
    /// Its time scale.
    pub time_scale: f64,
    /// Instances of the client a herd case runs (each at its own base URL), if it is one.
    pub herd: Option<u32>,
    /// What the judge needs again when the verdict is asked for; kept with the run.
    pub ticket: Value,
}

/// Where a run's clients send requests.
#[derive(Debug, Clone)]
pub struct RunUrls {
    /// The run's id.
    pub id: String,
    /// The OpenAI base URL (ends in `/v1`).
    pub base_url: String,
    /// The Anthropic base URL.
    pub anthropic_base_url: String,
    /// A herd's clients' OpenAI base URLs, client 0 first (empty when one client runs).
    pub clients: Vec<String>,
}

/// A request the judge will not answer: the status, the message, the parameter at fault.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// 400 for a bad request, 404 for an unknown case, 409 for a verdict already given.
    pub status: u16,
    /// What is wrong, for people.
    pub message: String,
    /// The field or parameter at fault.
    pub param: Option<String>,
}

impl Refusal {
    /// A bad request naming `param`.
    pub fn bad(param: &str, message: impl Into<String>) -> Refusal {
        Refusal { status: 400, message: message.into(), param: Some(param.to_owned()) }
    }

    /// Nothing of that name.
    pub fn not_found(param: &str, message: impl Into<String>) -> Refusal {
        Refusal { status: 404, message: message.into(), param: Some(param.to_owned()) }
    }

    fn response(&self) -> Response<ResponseBody> {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::BAD_REQUEST);
        let code = match self.status {
            404 => "not_found",
            409 => "conflict",
            _ => "invalid_request",
        };
        openai_error(status, &self.message, code, self.param.as_deref())
    }
}

/// A case run's ticket and, once judged, its verdict: kept with the run (and gone with it).
#[derive(Debug)]
pub(crate) struct CaseRun {
    ticket: Value,
    verdict: OnceLock<Value>,
}

/// `GET /__squall/cases`.
pub(super) fn cases(state: &State, request: &Request<Incoming>) -> Response<ResponseBody> {
    let Some(judge) = judge_of(state) else { return no_judge() };
    let query: Vec<(String, String)> = request.uri().query().map(|q| url_pairs(q).collect()).unwrap_or_default();
    match judge.cases(&query) {
        Ok(cases) => json(StatusCode::OK, &cases),
        Err(refusal) => refusal.response(),
    }
}

/// `POST /__squall/cases/{case}/runs`.
pub(super) async fn create_case_run(state: &State, case: &str, request: Request<Incoming>) -> Response<ResponseBody> {
    let Some(judge) = judge_of(state) else { return no_judge() };
    let body = match read_json(state, request).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let prepared = match judge.prepare(case, &body) {
        Ok(prepared) => prepared,
        Err(refusal) => return refusal.response(),
    };
    let run = match state.runs.create(Arc::new(prepared.scenario), prepared.time_scale) {
        Ok(run) => run,
        Err(e) => return Refusal::bad("scenario", format!("the case's scenario cannot run: {e}")).response(),
    };
    let clients =
        (0..prepared.herd.unwrap_or(0)).map(|k| base_path::base_url(&state.origin, &run.id, Some(k))).collect();
    let urls = RunUrls {
        id: run.id.clone(),
        base_url: state.base_url(&run.id),
        anthropic_base_url: state.anthropic_base_url(&run.id),
        clients,
    };
    let welcome = judge.welcome(&prepared.ticket, &urls);
    // A run made just now has no case yet: this cannot be taken.
    let _ = run.case.set(CaseRun { ticket: prepared.ticket, verdict: OnceLock::new() });
    json(StatusCode::CREATED, &welcome)
}

/// How long a verdict waits for the run's replies in flight to end (the server finishes an
/// entry just after the client sees the end of a reply).
const SETTLE: Duration = Duration::from_secs(1);

/// `POST /__squall/runs/{id}/verdict`.
pub(super) async fn post_verdict(state: &State, run: &Run, request: Request<Incoming>) -> Response<ResponseBody> {
    let Some(judge) = judge_of(state) else { return no_judge() };
    let Some(case) = run.case.get() else { return not_a_case_run(run) };
    if case.verdict.get().is_some() {
        return already_judged(run);
    }
    let outcome = match read_json(state, request).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let posted_at_ms = run.journal.ms_since_start(tokio::time::Instant::now());
    let deadline = tokio::time::Instant::now() + SETTLE;
    let mut journal = run.journal.snapshot();
    while journal.iter().any(|e| e.end.is_none()) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
        journal = run.journal.snapshot();
    }
    match judge.judge(&case.ticket, journal, &outcome, posted_at_ms) {
        Ok(mut verdict) => {
            if let Value::Object(fields) = &mut verdict {
                fields.insert("run".to_owned(), Value::String(run.id.clone()));
            }
            match case.verdict.set(verdict.clone()) {
                Ok(()) => json(StatusCode::OK, &verdict),
                Err(_) => already_judged(run),
            }
        }
        Err(refusal) => refusal.response(),
    }
}

/// `GET /__squall/runs/{id}/verdict`.
pub(super) fn get_verdict(run: &Run) -> Response<ResponseBody> {
    let Some(case) = run.case.get() else { return not_a_case_run(run) };
    match case.verdict.get() {
        Some(verdict) => json(StatusCode::OK, verdict),
        None => openai_error(
            StatusCode::NOT_FOUND,
            &format!("Run `{}` has no verdict yet: POST the client's outcome to this path first", run.id),
            "not_found",
            Some("id"),
        ),
    }
}

fn judge_of(state: &State) -> Option<&Arc<dyn CaseJudge>> {
    state.judge.as_ref()
}

fn no_judge() -> Response<ResponseBody> {
    openai_error(
        StatusCode::NOT_FOUND,
        "This server judges no cases (squall serve does; a server embedded in a test does not)",
        "not_found",
        None,
    )
}

fn not_a_case_run(run: &Run) -> Response<ResponseBody> {
    openai_error(
        StatusCode::CONFLICT,
        &format!("Run `{}` was not created for a case (POST /__squall/cases/{{id}}/runs creates one)", run.id),
        "conflict",
        Some("id"),
    )
}

fn already_judged(run: &Run) -> Response<ResponseBody> {
    openai_error(
        StatusCode::CONFLICT,
        &format!("Run `{}` is judged already: GET this path for its verdict, or create a new run", run.id),
        "conflict",
        Some("id"),
    )
}

/// A request's JSON object body; an empty body is `{}`.
async fn read_json(state: &State, request: Request<Incoming>) -> Result<Value, Response<ResponseBody>> {
    let bytes = read_body(request.into_body(), state.body_limit).await.map_err(|e| e.into_response(None))?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(value) if value.is_object() => Ok(value),
        Ok(_) => Err(Refusal::bad("body", "The body must be a JSON object").response()),
        Err(e) => Err(Refusal::bad("body", format!("The body is not JSON: {e}")).response()),
    }
}

/// `a=1&b=two%20words` as pairs, percent-decoded (`+` as a space).
fn url_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    query.split('&').filter(|pair| !pair.is_empty()).map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (percent_decode(key), percent_decode(value))
    })
}

/// `text` with `%XX` escapes decoded and `+` read as a space.
pub(super) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|hex| u8::from_str_radix(hex, 16).ok()) {
                    Some(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn query_strings_decode() {
        let pairs: Vec<(String, String)> =
            super::url_pairs("profile=all&tags=%40wire+and+not+%40should&x&bad=%zz%4").collect();
        assert_eq!(
            pairs,
            [
                ("profile".to_owned(), "all".to_owned()),
                ("tags".to_owned(), "@wire and not @should".to_owned()),
                ("x".to_owned(), String::new()),
                ("bad".to_owned(), "%zz%4".to_owned()),
            ]
        );
    }
}
