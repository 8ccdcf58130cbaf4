//! `GET /metrics`: the server's counts for Prometheus (docs/server.md, "Metrics"), guarded by
//! the admin token when one is set.

use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};

use super::admin::refuse_without_token;
use super::http_util::{openai_error, ResponseBody};
use super::State;

pub(super) fn serve(state: &State, request: &Request<Incoming>) -> Response<ResponseBody> {
    if let Some(refusal) = refuse_without_token(state, request) {
        return refusal;
    }
    if request.method() != Method::GET {
        let message = format!("{} is not allowed on /metrics", request.method());
        return openai_error(StatusCode::METHOD_NOT_ALLOWED, &message, "method_not_allowed", None);
    }
    let Some(metrics) = state.runs.metrics() else {
        let message = "This server keeps no metrics (it was started with them off)";
        return openai_error(StatusCode::NOT_FOUND, message, "metrics_off", None);
    };
    render(state, metrics, request)
}

#[cfg(feature = "metrics")]
fn render(state: &State, metrics: &crate::metrics::Metrics, request: &Request<Incoming>) -> Response<ResponseBody> {
    use http_body_util::{BodyExt, Full};
    // Prometheus asks for OpenMetrics first in its Accept header; curl and most tools ask for nothing.
    let openmetrics = request
        .headers()
        .get_all(hyper::header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.contains("application/openmetrics-text"));
    let now = crate::metrics::Scraped {
        connections: state.connections.load(std::sync::atomic::Ordering::Relaxed),
        runs: state.runs.len(),
    };
    let (content_type, text) = metrics.render(openmetrics, now);
    let mut response = Response::new(Full::new(bytes::Bytes::from(text)).map_err(|never| match never {}).boxed());
    response.headers_mut().insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static(content_type));
    response
}

#[cfg(not(feature = "metrics"))]
fn render(_: &State, _: &crate::metrics::Metrics, _: &Request<Incoming>) -> Response<ResponseBody> {
    openai_error(
        StatusCode::NOT_IMPLEMENTED,
        "This squall was built without its `metrics` feature, which serves /metrics",
        "metrics_not_built",
        None,
    )
}
