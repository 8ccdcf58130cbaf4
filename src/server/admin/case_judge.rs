//! What the server asks of the judge as a service, in types: [`CaseJudge`] (the suite implements
//! it, `squall::suite::service`), the requests it is handed as the HTTP API reads them
//! ([`CasesQuery`], [`CaseRunRequest`], [`PostedOutcome`]), and what it answers with. The server
//! keeps each case run's ticket and verdict with the run; it never depends on the suite.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::clock::{ClientFrame, TimeScale};
use crate::journal::JournalEntry;
use crate::scenario::Scenario;

/// What judges cases for the service (`docs/service.md`).
pub trait CaseJudge: Send + Sync + fmt::Debug + 'static {
    /// What a case run carries from its creation to its verdict.
    type Ticket: Send + Sync + fmt::Debug + 'static;
    /// `GET /__squall/cases`'s answer.
    type Cases: Serialize;
    /// What the client is told of a run just made for a case.
    type Welcome: Serialize;
    /// A verdict's answer.
    type Verdict: Serialize;

    /// `GET /__squall/cases?profile=…&level=…&tags=…`.
    fn cases(&self, query: &CasesQuery) -> Result<Self::Cases, Refusal>;

    /// `POST /__squall/cases/{case}/runs`: the run to create.
    fn prepare(&self, case: &str, request: &CaseRunRequest) -> Result<PreparedRun<Self::Ticket>, Refusal>;

    /// How to configure the client for a run just created, and where it sends requests.
    fn welcome(&self, ticket: &Self::Ticket, urls: &RunUrls) -> Self::Welcome;

    /// `POST /__squall/runs/{id}/verdict`: the verdict on what the client posted and what the
    /// server saw of the run.
    fn judge(&self, ticket: &Self::Ticket, run: JudgedRun) -> Result<Self::Verdict, Refusal>;
}

/// The query of `GET /__squall/cases`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CasesQuery {
    /// `profile=` (repeatable, or comma-separated).
    pub profiles: Vec<String>,
    /// `level=`.
    pub level: Option<String>,
    /// `tags=`: a tag expression.
    pub tags: Option<String>,
}

/// The body of `POST /__squall/cases/{id}/runs` (every field optional).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct CaseRunRequest {
    /// The calibration session the run belongs to.
    pub session: Option<String>,
    /// The contract level the client declares.
    pub level: Option<String>,
    /// A slower time scale than the case's own (to confirm an earlier run).
    pub time_scale: Option<TimeScale>,
    /// Instances of a herd case.
    pub herd: Option<u32>,
    /// The jitter seed the client is given.
    pub seed: Option<u64>,
    /// The frame file of squall's clock the client's process tree runs on (docs/clock.md): the
    /// client is told time scale 1, and dates sent to it are in its frame.
    pub clock_frame: Option<String>,
}

/// What a client posts for a verdict: its outcome in the shape of the IUT contract's outputs, or
/// for a herd one such outcome per client under `clients`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PostedOutcome {
    /// The `result.json` object.
    pub result: Option<Map<String, Value>>,
    /// The records of `events.jsonl`, as an array or as JSON Lines.
    pub events: Option<PostedEvents>,
    /// How the client's process ended (0 when absent).
    pub exit_code: Option<i32>,
    /// Whether the runner killed it at its timeout.
    pub timed_out: Option<bool>,
    /// The timeout the runner gave it, in seconds.
    pub case_timeout_s: Option<f64>,
    /// The tail of its standard error.
    pub stderr: Option<String>,
    /// Real milliseconds it ran.
    pub duration_ms: Option<f64>,
    /// A herd's clients' outcomes, client 0 first.
    pub clients: Option<Vec<PostedOutcome>>,
}

/// `events`, as posted.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum PostedEvents {
    /// An array of records.
    Records(Vec<Value>),
    /// JSON Lines.
    Lines(String),
}

/// A run to judge: what the client posted, what the server journaled, and when it was posted.
#[derive(Debug, Clone)]
pub struct JudgedRun {
    /// The run's id.
    pub id: String,
    /// What the server saw of the run.
    pub journal: Vec<JournalEntry>,
    /// What the client posted.
    pub outcome: PostedOutcome,
    /// When it was posted, in the journal's time (ms since the run was created).
    pub posted_at_ms: f64,
}

/// A run the judge asks for.
#[derive(Debug, Clone)]
pub struct PreparedRun<T> {
    /// The scenario it plays.
    pub scenario: Scenario,
    /// Its time scale.
    pub time_scale: TimeScale,
    /// Instances of the client a herd case runs (each at its own base URL), if it is one.
    pub herd: Option<u32>,
    /// The client's own frame of time, when it runs on squall's sped-up clock: the run's dates
    /// are written in it.
    pub client_frame: Option<ClientFrame>,
    /// What the judge needs again when the verdict is asked for; kept with the run.
    pub ticket: T,
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
}

/// A [`CaseJudge`] for [`crate::server::ServerConfig::judge`].
#[derive(Clone)]
pub struct Judge(Arc<dyn Judging>);

impl Judge {
    /// The server's judge.
    pub fn new(judge: impl CaseJudge) -> Judge {
        Judge(Arc::new(judge))
    }
}

impl fmt::Debug for Judge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A ticket, as the server keeps it.
pub(in crate::server) type Ticket = Box<dyn Any + Send + Sync>;

/// A [`CaseJudge`] with its types erased, as the server holds it: answers as JSON, tickets as
/// `Any` (each judge gets back only tickets it made).
pub(in crate::server) trait Judging: Send + Sync + fmt::Debug {
    fn cases(&self, query: &CasesQuery) -> Result<Value, Refusal>;
    fn prepare(&self, case: &str, request: &CaseRunRequest) -> Result<PreparedRun<Ticket>, Refusal>;
    fn welcome(&self, ticket: &Ticket, urls: &RunUrls) -> Value;
    fn judge(&self, ticket: &Ticket, run: JudgedRun) -> Result<Value, Refusal>;
}

impl<J: CaseJudge> Judging for J {
    fn cases(&self, query: &CasesQuery) -> Result<Value, Refusal> {
        to_json(&CaseJudge::cases(self, query)?)
    }

    fn prepare(&self, case: &str, request: &CaseRunRequest) -> Result<PreparedRun<Ticket>, Refusal> {
        let prepared = CaseJudge::prepare(self, case, request)?;
        let ticket: Ticket = Box::new(prepared.ticket);
        Ok(PreparedRun {
            scenario: prepared.scenario,
            time_scale: prepared.time_scale,
            herd: prepared.herd,
            client_frame: prepared.client_frame,
            ticket,
        })
    }

    fn welcome(&self, ticket: &Ticket, urls: &RunUrls) -> Value {
        ticket
            .downcast_ref()
            .map_or(Value::Null, |ticket| to_json(&CaseJudge::welcome(self, ticket, urls)).unwrap_or_default())
    }

    fn judge(&self, ticket: &Ticket, run: JudgedRun) -> Result<Value, Refusal> {
        let ticket = ticket.downcast_ref().ok_or_else(|| Refusal::bad("id", "the run's ticket is not this judge's"))?;
        to_json(&CaseJudge::judge(self, ticket, run)?)
    }
}

impl Judge {
    pub(in crate::server) fn judging(&self) -> &dyn Judging {
        self.0.as_ref()
    }
}

fn to_json(value: &impl Serialize) -> Result<Value, Refusal> {
    serde_json::to_value(value).map_err(|e| Refusal::bad("body", format!("the answer does not serialise: {e}")))
}

/// A case run's ticket and, once judged, its verdict: kept with the run (and gone with it).
#[derive(Debug)]
pub(crate) struct CaseRun {
    pub(in crate::server) ticket: Ticket,
    pub(in crate::server) verdict: OnceLock<Value>,
}

impl CaseRun {
    pub(in crate::server) fn new(ticket: Ticket) -> CaseRun {
        CaseRun { ticket, verdict: OnceLock::new() }
    }
}
