//! What `GET /metrics` reports (docs/server.md, "Metrics"): every server-wide count the journal
//! and the admin API see, in the Prometheus text format, with no per-run label.
//!
//! The server records [`Event`]s as they happen; without the `metrics` feature recording
//! compiles to nothing and `/metrics` answers 501.

#[cfg(feature = "metrics")]
mod families;

use crate::api::Api;
use crate::scenario_model::FaultKind;

/// Something the metrics count (read only when the `metrics` feature counts it).
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(crate) enum Event<'a> {
    /// A journal entry began: a reply is in progress.
    ReplyBegan,
    /// A journal entry ended, for the first and only time.
    ReplyEnded(Ended),
    /// The journal dropped its oldest entry to stay within its capacity.
    EntryDropped {
        /// The entry had not ended: its reply stops counting as in progress now.
        in_flight: bool,
    },
    /// A request under `/__squall/` was answered.
    Admin {
        /// Which endpoint, by its shape (`run`, `journal`, `cases`…), never by a run's id.
        endpoint: AdminEndpoint,
        /// The request's method.
        method: &'a http::Method,
        /// The status answered.
        status: http::StatusCode,
    },
    /// The judge as a service gave a verdict (`pass`, `fail`…).
    Verdict(&'a str),
}

/// A reply that ended, as its journal entry says (the journal's own names: the metrics stay
/// below the journal, which counts in them).
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(crate) struct Ended {
    pub(crate) api: Option<Api>,
    /// `http/1.1` or `h2`.
    pub(crate) protocol: &'static str,
    pub(crate) status: Option<u16>,
    /// How it ended: `completed`, `eof`…
    pub(crate) end: &'static str,
    pub(crate) fault: Option<FaultKind>,
    pub(crate) bytes: u64,
}

/// An admin endpoint named by its shape, and whether it belongs to the judge as a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(crate) struct AdminEndpoint {
    pub(crate) name: &'static str,
    pub(crate) judge: bool,
}

/// The server's counters; shared by its runs' journals.
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    #[cfg(feature = "metrics")]
    families: families::Families,
}

impl Metrics {
    /// Count `event`.
    pub(crate) fn record(&self, event: Event<'_>) {
        #[cfg(feature = "metrics")]
        self.families.record(event);
        #[cfg(not(feature = "metrics"))]
        let _ = (self, event);
    }

    /// The exposition: OpenMetrics text when `openmetrics`, else Prometheus text 0.0.4; the
    /// gauges read at scrape time are given here. Returns the content type and the body.
    #[cfg(feature = "metrics")]
    pub(crate) fn render(&self, openmetrics: bool, now: Scraped) -> (&'static str, String) {
        self.families.render(openmetrics, now)
    }
}

/// What is read when `/metrics` is asked for rather than counted as it happens.
#[cfg(feature = "metrics")]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scraped {
    /// Connections being served.
    pub(crate) connections: usize,
    /// Runs the server holds.
    pub(crate) runs: usize,
}
