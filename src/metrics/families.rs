//! The metric families, registered once per server with prometheus-client.

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::{Ended, Event, Scraped};

/// OpenMetrics' content type (prometheus-client names only the Prometheus text format's).
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Debug)]
pub(super) struct Families {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    ended: Family<EndLabels, Counter>,
    faults: Family<FaultLabels, Counter>,
    bytes: Counter,
    streams_open: Gauge,
    connections_open: Gauge,
    runs: Gauge,
    dropped: Counter,
    admin: Family<AdminLabels, Counter>,
    judge: Family<AdminLabels, Counter>,
    verdicts: Family<VerdictLabels, Counter>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RequestLabels {
    api: &'static str,
    protocol: &'static str,
    status: Status,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct EndLabels {
    end: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct FaultLabels {
    kind: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct AdminLabels {
    endpoint: &'static str,
    method: &'static str,
    status: Status,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct VerdictLabels {
    verdict: &'static str,
}

/// A status code, or `none` when no status was sent (a refused request, a client gone first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Status(Option<u16>);

impl EncodeLabelValue for Status {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> Result<(), std::fmt::Error> {
        match self.0 {
            Some(code) => code.encode(encoder),
            None => "none".encode(encoder),
        }
    }
}

impl Default for Families {
    fn default() -> Self {
        let mut f = Families {
            registry: Registry::with_prefix("squall"),
            requests: Family::default(),
            ended: Family::default(),
            faults: Family::default(),
            bytes: Counter::default(),
            streams_open: Gauge::default(),
            connections_open: Gauge::default(),
            runs: Gauge::default(),
            dropped: Counter::default(),
            admin: Family::default(),
            judge: Family::default(),
            verdicts: Family::default(),
        };
        let r = &mut f.registry;
        r.register(
            "requests",
            "Requests under a run's base URL that ended, by model API (none: not a model call), HTTP version and status sent (none: no status)",
            f.requests.clone(),
        );
        r.register("replies_ended", "Replies by how they ended, as the journal's `end` names it", f.ended.clone());
        r.register("faults_injected", "Faults that fired, by kind (eof, reset, stall...)", f.faults.clone());
        r.register("bytes_streamed", "Body bytes written in replies to model requests", f.bytes.clone());
        r.register(
            "streams_open",
            "Replies in progress: an HTTP/1.1 response, an HTTP/2 stream or a WebSocket response each",
            f.streams_open.clone(),
        );
        r.register("connections_open", "Connections being served", f.connections_open.clone());
        r.register("runs", "Runs the server holds", f.runs.clone());
        r.register(
            "journal_entries_dropped",
            "Journal entries dropped to keep each run's journal within --journal-max",
            f.dropped.clone(),
        );
        r.register(
            "admin_requests",
            "Admin API requests (/__squall/), by endpoint, method and status",
            f.admin.clone(),
        );
        r.register(
            "judge_requests",
            "Judge-as-a-service requests (cases, case runs, verdicts), by endpoint, method and status",
            f.judge.clone(),
        );
        r.register("verdicts", "Verdicts the judge as a service gave, by verdict", f.verdicts.clone());
        // Every fault kind and verdict from 0, so a query's rate sees the first one happen.
        for kind in crate::scenario_model::FaultKind::ALL {
            drop(f.faults.get_or_create(&FaultLabels { kind: kind.as_str() }));
        }
        for verdict in VERDICTS {
            drop(f.verdicts.get_or_create(&VerdictLabels { verdict }));
        }
        f
    }
}

impl Families {
    pub(super) fn record(&self, event: Event<'_>) {
        match event {
            Event::ReplyBegan => {
                self.streams_open.inc();
            }
            Event::ReplyEnded(ended) => self.ended_reply(ended),
            Event::EntryDropped { in_flight } => {
                self.dropped.inc();
                if in_flight {
                    self.streams_open.dec();
                }
            }
            Event::Admin { endpoint, method, status } => {
                let labels = AdminLabels {
                    endpoint: endpoint.name,
                    method: method_name(method),
                    status: Status(Some(status.as_u16())),
                };
                let family = if endpoint.judge { &self.judge } else { &self.admin };
                family.get_or_create(&labels).inc();
            }
            Event::Verdict(verdict) => {
                self.verdicts.get_or_create(&VerdictLabels { verdict: verdict_name(verdict) }).inc();
            }
        }
    }

    fn ended_reply(&self, ended: Ended) {
        self.streams_open.dec();
        let api = ended.api.map_or("none", crate::api::Api::as_str);
        self.requests
            .get_or_create(&RequestLabels { api, protocol: ended.protocol, status: Status(ended.status) })
            .inc();
        self.ended.get_or_create(&EndLabels { end: ended.end }).inc();
        if let Some(fault) = ended.fault {
            self.faults.get_or_create(&FaultLabels { kind: fault.as_str() }).inc();
        }
        self.bytes.inc_by(ended.bytes);
    }

    pub(super) fn render(&self, openmetrics: bool, now: Scraped) -> (&'static str, String) {
        self.connections_open.set(i64::try_from(now.connections).unwrap_or(i64::MAX));
        self.runs.set(i64::try_from(now.runs).unwrap_or(i64::MAX));
        let mut text = String::new();
        // Writing to a String cannot fail.
        if openmetrics {
            let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
            (OPENMETRICS, text)
        } else {
            let _ = prometheus_client::encoding::prometheus_text::encode(&mut text, &self.registry);
            (prometheus_client::encoding::prometheus_text::CONTENT_TYPE, text)
        }
    }
}

/// A method as a label: the ones the admin API serves, every other one as `other`.
fn method_name(method: &http::Method) -> &'static str {
    match *method {
        http::Method::GET => "GET",
        http::Method::POST => "POST",
        http::Method::DELETE => "DELETE",
        _ => "other",
    }
}

/// The report schema's verdicts.
const VERDICTS: [&str; 6] = ["pass", "warn", "fail", "n/a", "error", "inconclusive"];

/// A verdict as a label: one of [`VERDICTS`], anything else as `other`.
fn verdict_name(verdict: &str) -> &'static str {
    VERDICTS.into_iter().find(|v| *v == verdict).unwrap_or("other")
}
