//! The judge as a service over HTTP (public contract, `docs/service.md`): the admin API's
//! `GET /__squall/cases`, `POST /__squall/cases/{id}/runs` and `POST`/`GET
//! /__squall/runs/{id}/verdict`, read into the types of [`super::case_judge`] and carried to the
//! server's judge.

use std::time::Duration;

use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use serde_json::Value;

use super::case_judge::{CaseRun, CasesQuery, Judge, JudgedRun, Refusal, RunUrls};
use crate::server::http_util::{json, openai_error, read_body, ResponseBody};
use crate::server::model::base_path;
use crate::server::runs::Run;
use crate::server::State;

impl Refusal {
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

/// `GET /__squall/cases`.
pub(in crate::server) fn cases(state: &State, request: &Request<Incoming>) -> Response<ResponseBody> {
    let Some(judge) = judge_of(state) else { return no_judge() };
    let mut query = CasesQuery::default();
    for (key, value) in request.uri().query().map(|q| url_pairs(q).collect::<Vec<_>>()).unwrap_or_default() {
        match key.as_str() {
            "profile" => query.profiles.push(value),
            "level" => query.level = query.level.or(Some(value)),
            "tags" => query.tags = query.tags.or(Some(value)),
            _ => {}
        }
    }
    match judge.cases(&query) {
        Ok(cases) => json(StatusCode::OK, &cases),
        Err(refusal) => refusal.response(),
    }
}

/// `POST /__squall/cases/{case}/runs`.
pub(in crate::server) async fn create_case_run(
    state: &State,
    origin: &str,
    case: &str,
    request: Request<Incoming>,
) -> Response<ResponseBody> {
    let Some(judge) = judge_of(state) else { return no_judge() };
    let body = match read_json(state, request).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let prepared = match judge.prepare(case, &body) {
        Ok(prepared) => prepared,
        Err(refusal) => return refusal.response(),
    };
    let run = match state.runs.create(std::sync::Arc::new(prepared.scenario), prepared.time_scale) {
        Ok(run) => run,
        Err(e) => return Refusal::bad("scenario", format!("the case's scenario cannot run: {e}")).response(),
    };
    if let Some(frame) = prepared.client_frame {
        run.journal.set_client_frame(frame);
    }
    let clients = (0..prepared.herd.unwrap_or(0)).map(|k| base_path::base_url(origin, &run.id, Some(k))).collect();
    let urls = RunUrls {
        id: run.id.clone(),
        base_url: base_path::base_url(origin, &run.id, None),
        anthropic_base_url: base_path::anthropic_base_url(origin, &run.id, None),
        clients,
    };
    let welcome = judge.welcome(&prepared.ticket, &urls);
    // A run made just now has no case yet: this cannot be taken.
    let _ = run.case.set(CaseRun::new(prepared.ticket));
    json(StatusCode::CREATED, &welcome)
}

/// How long a verdict waits for the run's replies in flight to end (the server finishes an
/// entry just after the client sees the end of a reply).
const SETTLE: Duration = Duration::from_secs(1);

/// `POST /__squall/runs/{id}/verdict`.
pub(in crate::server) async fn post_verdict(
    state: &State,
    run: &Run,
    request: Request<Incoming>,
) -> Response<ResponseBody> {
    let Some(judge) = judge_of(state) else { return no_judge() };
    let Some(case) = run.case.get() else { return not_a_case_run(run) };
    if case.verdict.get().is_some() {
        return already_judged(run);
    }
    let outcome = match read_json(state, request).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let posted_at_ms = run.journal.ms_since_start(run.journal.now());
    let deadline = tokio::time::Instant::now() + SETTLE;
    let mut journal = run.journal.snapshot();
    while journal.iter().any(|e| e.end.is_none()) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
        journal = run.journal.snapshot();
    }
    let judged = JudgedRun { id: run.id.clone(), journal, outcome, posted_at_ms };
    match judge.judge(&case.ticket, judged) {
        Ok(verdict) => match case.verdict.set(verdict.clone()) {
            Ok(()) => {
                if let (Some(metrics), Some(given)) = (state.runs.metrics(), verdict["verdict"].as_str()) {
                    metrics.record(crate::metrics::Event::Verdict(given));
                }
                json(StatusCode::OK, &verdict)
            }
            Err(_) => already_judged(run),
        },
        Err(refusal) => refusal.response(),
    }
}

/// `GET /__squall/runs/{id}/verdict`.
pub(in crate::server) fn get_verdict(run: &Run) -> Response<ResponseBody> {
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

fn judge_of(state: &State) -> Option<&dyn super::case_judge::Judging> {
    state.judge.as_ref().map(Judge::judging)
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

/// A request's JSON object body read as `T` (an empty body is `{}`); a field of the wrong kind is
/// refused naming it (`clients[1].timed_out`).
async fn read_json<T: serde::de::DeserializeOwned>(
    state: &State,
    request: Request<Incoming>,
) -> Result<T, Response<ResponseBody>> {
    let bytes = read_body(request.into_body(), state.body_limit).await.map_err(|e| e.into_response(None))?;
    let text: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) { b"{}" } else { &bytes };
    match serde_json::from_slice::<Value>(text) {
        Ok(Value::Object(_)) => {}
        Ok(_) => return Err(Refusal::bad("body", "The body must be a JSON object").response()),
        Err(e) => return Err(Refusal::bad("body", format!("The body is not JSON: {e}")).response()),
    }
    let mut reader = serde_json::Deserializer::from_slice(text);
    serde_path_to_error::deserialize(&mut reader).map_err(|e| {
        let param = e.path().to_string();
        let param = if param == "." { "body".to_owned() } else { param };
        Refusal::bad(&param, format!("`{param}`: {}", e.inner())).response()
    })
}

/// `a=1&b=two%20words` as pairs, percent-decoded (`+` as a space).
fn url_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    query.split('&').filter(|pair| !pair.is_empty()).map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (percent_decode(key), percent_decode(value))
    })
}

/// `text` with `%XX` escapes decoded and `+` read as a space.
pub(in crate::server) fn percent_decode(text: &str) -> String {
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
