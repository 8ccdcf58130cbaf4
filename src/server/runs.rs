//! Runs: one scripted conversation each, with its scenario, clock, journal and counters.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::admin::case_judge::CaseRun;
use super::model::quota::QuotaBuckets;
use crate::api::Api;
use crate::clock::Clock;
use crate::clock::TimeScale;
use crate::journal::Journal;
use crate::metrics::Metrics;
use crate::scenario::headers::ScriptedHeaders;
use crate::scenario::routing::ReplySlot;
use crate::scenario::{Attempt, Scenario};
use crate::scenario::{FieldPath, ScenarioError};
use crate::wire::template::ReplyTemplate;

/// One scripted conversation with a client.
#[derive(Debug)]
pub(crate) struct Run {
    pub id: String,
    pub scenario: Arc<Scenario>,
    /// Multiplies every server-side delay and stall.
    pub time_scale: TimeScale,
    pub journal: Arc<Journal>,
    /// Attempts seen so far, per herd client (`None`: the run's own base URL) and track.
    attempts: Mutex<HashMap<(Option<u32>, String), u32>>,
    /// WebSockets opened so far (`GET /responses` upgraded).
    #[cfg(feature = "websocket")]
    sockets: std::sync::atomic::AtomicU32,
    /// The upstream's replies to forwarded requests, for the run's recording.
    pub(crate) replies: Arc<super::upstream::recording::RecordedReplies>,
    /// Replies rendered once per script slot, API and form (`None`: render per request).
    templates: Mutex<HashMap<TemplateKey, Option<Arc<ReplyTemplate>>>>,
    /// Each track's attempts' headers, parsed (the default track last, as routing numbers it).
    headers: Vec<Vec<ScriptedHeaders>>,
    /// Each outage's reply's headers, parsed.
    outage_headers: Vec<ScriptedHeaders>,
    /// The seed chaos draws from: the scenario's, or one drawn for the run (and reported).
    pub chaos_seed: Option<u64>,
    /// The run's rate quota, as its requests draw on it.
    pub quota: Option<QuotaBuckets>,
    /// Set when the run was created for a case of the judge as a service.
    pub case: std::sync::OnceLock<CaseRun>,
}

/// What a reply template depends on besides the run: the track (by position), the reply in it,
/// the API, and whether the reply is streamed (with a usage chunk or not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct TemplateKey {
    pub(crate) track: usize,
    pub(crate) slot: ReplySlot,
    pub(crate) api: Api,
    pub(crate) stream: bool,
    pub(crate) include_usage: bool,
}

impl Run {
    /// A run of a validated scenario whose journal is made as `journal` says. The
    /// scripted headers are parsed now, so a request only renders them; a header that does not
    /// parse is named (validation lets none through).
    pub(crate) fn new(
        id: String,
        scenario: Arc<Scenario>,
        time_scale: TimeScale,
        journal: JournalSettings,
    ) -> Result<Self, ScenarioError> {
        let journal = Arc::new(journal.journal());
        let headers = scripted_headers(&scenario)?;
        let outage_headers = outage_headers(&scenario)?;
        let (attempts, templates) = (Mutex::new(HashMap::new()), Mutex::default());
        let chaos_seed = scenario.chaos.as_ref().map(|chaos| chaos.seed.unwrap_or_else(crate::scenario::fresh_seed));
        let quota = scenario.quota.as_ref().map(QuotaBuckets::new);
        Ok(Run {
            id,
            scenario,
            time_scale,
            journal,
            attempts,
            #[cfg(feature = "websocket")]
            sockets: std::sync::atomic::AtomicU32::new(0),
            replies: Arc::default(),
            templates,
            headers,
            outage_headers,
            chaos_seed,
            quota,
            case: std::sync::OnceLock::new(),
        })
    }

    /// The scripted headers of the reply in `slot` on track `track` (routing's index).
    pub(crate) fn headers(&self, track: usize, slot: ReplySlot) -> Option<&ScriptedHeaders> {
        match slot {
            ReplySlot::Scripted(n) => self.headers.get(track)?.get(n),
            ReplySlot::Outage(i) => self.outage_headers.get(i),
            ReplySlot::PlainOk | ReplySlot::PlainFail | ReplySlot::Made => None,
        }
    }

    /// The template for `key`, made by `make` the first time it is asked for.
    pub(crate) fn template(
        &self,
        key: TemplateKey,
        make: impl FnOnce() -> Option<ReplyTemplate>,
    ) -> Option<Arc<ReplyTemplate>> {
        let mut templates = self.templates.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        templates.entry(key).or_insert_with(|| make().map(Arc::new)).clone()
    }

    /// Policy milliseconds since the run was created, at `at`: run time, as outages count it.
    pub(crate) fn policy_ms_at(&self, at: tokio::time::Instant) -> f64 {
        self.time_scale.policy_ms(self.journal.ms_since_start(at))
    }

    /// The attempt the next request of `client` on `track` will get, without counting one.
    #[cfg(feature = "websocket")]
    pub(crate) fn peek_attempt(&self, client: Option<u32>, track: &str) -> u32 {
        let attempts = self.attempts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        attempts.get(&(client, track.to_owned())).copied().unwrap_or(0)
    }

    /// A new WebSocket's number in this run (from 1), as the journal names it.
    #[cfg(feature = "websocket")]
    pub(crate) fn next_socket(&self) -> u32 {
        self.sockets.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
    }

    /// The next 0-based attempt number of `client` on `track`: each client of a herd has its own
    /// counters, so each meets the script from its first attempt.
    pub(crate) fn next_attempt(&self, client: Option<u32>, track: &str) -> u32 {
        let mut attempts = self.attempts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let counter = attempts.entry((client, track.to_owned())).or_insert(0);
        let attempt = *counter;
        *counter += 1;
        attempt
    }
}

/// Every attempt's headers, parsed, by track (`tracks[i]`, then the default track).
fn scripted_headers(scenario: &Scenario) -> Result<Vec<Vec<ScriptedHeaders>>, ScenarioError> {
    let root = FieldPath::root();
    let tracks = scenario.tracks.iter().enumerate().map(|(i, t)| (root.key("tracks").index(i), &t.attempts));
    let all = tracks.chain(std::iter::once((root.clone(), &scenario.attempts)));
    all.map(|(path, attempts): (FieldPath, &Vec<Attempt>)| {
        attempts
            .iter()
            .enumerate()
            .map(|(j, attempt)| {
                ScriptedHeaders::parse(&attempt.headers).map_err(|(name, message)| {
                    ScenarioError::new(path.key("attempts").index(j).key("headers").key(&name), message)
                })
            })
            .collect()
    })
    .collect()
}

/// Every outage's reply's headers, parsed (`outage[i].reply.headers`).
fn outage_headers(scenario: &Scenario) -> Result<Vec<ScriptedHeaders>, ScenarioError> {
    let root = FieldPath::root().key("outage");
    scenario
        .outage
        .iter()
        .enumerate()
        .map(|(i, outage)| {
            ScriptedHeaders::parse(&outage.reply.headers).map_err(|(name, message)| {
                ScenarioError::new(root.index(i).key("reply").key("headers").key(&name), message)
            })
        })
        .collect()
}

#[derive(Debug)]
pub(crate) struct Runs {
    runs: Mutex<BTreeMap<String, Arc<Run>>>,
    /// Ids in creation order, for expiry.
    order: Mutex<std::collections::VecDeque<String>>,
    created: AtomicU64,
    limit: usize,
    /// Entries each run's journal keeps.
    journal_max: usize,
    /// The clock every run's journal, delays and stalls read.
    clock: Clock,
    /// The server's counters, which every run's journal records in (`None`: not counted).
    metrics: Option<Arc<Metrics>>,
}

/// What a new run's journal is made with.
#[derive(Debug, Clone)]
pub(crate) struct JournalSettings {
    capacity: usize,
    clock: Clock,
    metrics: Option<Arc<Metrics>>,
}

impl JournalSettings {
    fn journal(self) -> Journal {
        let journal = Journal::on_clock(self.capacity, self.clock);
        match self.metrics {
            Some(metrics) => journal.counted_in(metrics),
            None => journal,
        }
    }
}

impl Runs {
    /// At most `limit` live runs, each journal keeping at most `journal_max` entries, timed by
    /// `clock`.
    pub(crate) fn with_limits(limit: usize, journal_max: usize, clock: Clock) -> Self {
        Runs {
            runs: Mutex::default(),
            order: Mutex::default(),
            created: AtomicU64::new(0),
            limit: limit.max(1),
            journal_max: journal_max.max(1),
            clock,
            metrics: None,
        }
    }

    /// The same runs, their journals counting in the server's `metrics`.
    pub(crate) fn counted_in(self, metrics: Option<Arc<Metrics>>) -> Self {
        Runs { metrics, ..self }
    }

    /// What a new run's journal is made with: its capacity, its clock, the server's counters.
    pub(crate) fn journal_settings(&self) -> JournalSettings {
        JournalSettings { capacity: self.journal_max, clock: self.clock.clone(), metrics: self.metrics.clone() }
    }

    /// Runs held now.
    #[cfg(feature = "metrics")]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    /// The server's counters, when it keeps them.
    pub(crate) fn metrics(&self) -> Option<&Metrics> {
        self.metrics.as_deref()
    }

    /// The clock runs are timed by.
    pub(crate) fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Create a run with a fresh id.
    pub(crate) fn create(&self, scenario: Arc<Scenario>, time_scale: TimeScale) -> Result<Arc<Run>, ScenarioError> {
        let n = self.created.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("r{n}-{}", short_tag(&scenario.name));
        let run = Arc::new(Run::new(id.clone(), scenario, time_scale, self.journal_settings())?);
        self.insert(id, run.clone());
        Ok(run)
    }

    fn insert(&self, id: String, run: Arc<Run>) {
        let mut order = self.order.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut runs = self.lock();
        runs.insert(id.clone(), run);
        order.push_back(id);
        while runs.len() > self.limit {
            match order.pop_front() {
                Some(oldest) => {
                    runs.remove(&oldest);
                }
                None => break,
            }
        }
    }

    /// The run with this id, created by `make` if it does not exist (shared scenario runs).
    pub(crate) fn get_or_create(
        &self,
        id: &str,
        make: impl FnOnce() -> Result<Run, ScenarioError>,
    ) -> Result<Arc<Run>, ScenarioError> {
        if let Some(run) = self.get(id) {
            return Ok(run);
        }
        let run = Arc::new(make()?);
        self.insert(id.to_owned(), run.clone());
        Ok(run)
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<Run>> {
        self.lock().get(id).cloned()
    }

    pub(crate) fn remove(&self, id: &str) -> Option<Arc<Run>> {
        self.lock().remove(id)
    }

    pub(crate) fn list(&self) -> Vec<Arc<Run>> {
        self.lock().values().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<Run>>> {
        self.runs.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The start of a scenario name in whole words, so run ids say what they run
/// (`r12-reset-after-3-events` for `reset-after-3-events-then-ok`).
fn short_tag(name: &str) -> String {
    const MAX: usize = 24;
    if name.len() <= MAX {
        return name.to_owned();
    }
    // Names are ASCII (validation keeps them URL-safe): whole words up to MAX, where there are words.
    let head = &name[..=MAX];
    match head.rfind(['-', '_', '.']) {
        Some(at) if at > 0 => head[..at].to_owned(),
        _ => name[..MAX].to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::short_tag;

    #[test]
    fn a_run_id_keeps_whole_words_of_the_scenario_name() {
        assert_eq!(short_tag("reset-after-3-events-then-ok"), "reset-after-3-events");
        assert_eq!(short_tag("always-503"), "always-503");
        assert_eq!(
            short_tag("abcdefghijklmnopqrstuvwx-tail"),
            "abcdefghijklmnopqrstuvwx",
            "a word that ends at the limit"
        );
        assert_eq!(short_tag("abcdefghijklmnopqrstuvwxyz0123"), "abcdefghijklmnopqrstuvwx", "one long word is cut");
    }
}
