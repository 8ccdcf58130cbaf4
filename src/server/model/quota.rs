//! A run's rate quota: token buckets for requests and tokens per minute that refill
//! continuously in policy time, asked once per model request, and the rate-limit headers each
//! provider's API sends about them — OpenAI's `x-ratelimit-*` on the Responses and Chat
//! Completions APIs, `anthropic-ratelimit-*` on the Messages API, `retry-after` on a refusal.

use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use crate::api::Api;
use crate::scenario::Quota;

/// One bucket: `capacity` units that refill at `capacity` per minute of policy time.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bucket {
    capacity: f64,
    level: f64,
}

impl Bucket {
    fn full(per_minute: u32) -> Bucket {
        Bucket { capacity: f64::from(per_minute), level: f64::from(per_minute) }
    }

    fn refill(&mut self, elapsed_ms: f64) {
        self.level = (self.level + elapsed_ms * self.capacity / 60_000.0).min(self.capacity);
    }

    /// Policy ms until the bucket holds `units` (at most its capacity).
    fn ms_until(&self, units: f64) -> f64 {
        ((units.min(self.capacity) - self.level).max(0.0) * 60_000.0 / self.capacity).ceil()
    }
}

/// What one bucket says in the headers: its limit, what remains, and policy ms until it is full.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BucketState {
    /// Its capacity: the limit per minute.
    pub limit: u32,
    /// Whole units left.
    pub remaining: u64,
    /// Policy ms until it is full again.
    pub reset_ms: f64,
}

impl BucketState {
    fn of(bucket: &Bucket) -> BucketState {
        BucketState {
            limit: bucket.capacity as u32,
            remaining: bucket.level.max(0.0).floor() as u64,
            reset_ms: bucket.ms_until(bucket.capacity),
        }
    }
}

/// The quota's answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Admission {
    /// `None`: admitted. Otherwise which limit refused it ("requests" or "tokens") and the
    /// policy ms until the request would fit.
    pub refused: Option<(&'static str, f64)>,
    /// The requests bucket after the answer, when the quota has one.
    pub requests: Option<BucketState>,
    /// The tokens bucket after the answer, when the quota has one.
    pub tokens: Option<BucketState>,
    /// The tokens the request asked for.
    pub cost: u64,
}

/// A run's quota, as the requests of the run draw on it.
#[derive(Debug)]
pub struct QuotaBuckets {
    state: Mutex<(f64, Option<Bucket>, Option<Bucket>)>,
}

impl QuotaBuckets {
    /// Full buckets for `quota`.
    pub fn new(quota: &Quota) -> QuotaBuckets {
        let buckets = (0.0, quota.requests_per_minute.map(Bucket::full), quota.tokens_per_minute.map(Bucket::full));
        QuotaBuckets { state: Mutex::new(buckets) }
    }

    /// Ask for one request costing `tokens` at `now_ms` of policy run time: admitted when every
    /// bucket holds enough (a request and its tokens are then taken), else refused by the first
    /// bucket short of it, with the wait until it would fit.
    pub fn admit(&self, now_ms: f64, tokens: u64) -> Admission {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (last, requests, token_bucket) = &mut *state;
        let elapsed = (now_ms - *last).max(0.0);
        *last = now_ms.max(*last);
        for bucket in [requests.as_mut(), token_bucket.as_mut()].into_iter().flatten() {
            bucket.refill(elapsed);
        }
        let cost = tokens as f64;
        let short = |bucket: &Option<Bucket>, units: f64, name| {
            bucket.filter(|b| b.level < units.min(b.capacity)).map(|b| (name, b.ms_until(units)))
        };
        let refused = short(requests, 1.0, "requests").or_else(|| short(token_bucket, cost, "tokens"));
        if refused.is_none() {
            if let Some(bucket) = requests.as_mut() {
                bucket.level -= 1.0;
            }
            if let Some(bucket) = token_bucket.as_mut() {
                bucket.level -= cost.min(bucket.capacity);
            }
        }
        Admission {
            refused,
            requests: requests.as_ref().map(BucketState::of),
            tokens: token_bucket.as_ref().map(BucketState::of),
            cost: tokens,
        }
    }
}

impl Admission {
    /// The rate-limit headers `api` sends with this answer (reset times as wall-clock moments
    /// for the Messages API, counted from `now`). The Gemini, Ollama and Bedrock APIs have no
    /// rate-limit headers; Gemini's refusal's wait is a `RetryInfo` in the body
    /// ([`Admission::retry_after_seconds`]) and, as for every API, a `retry-after` header.
    pub fn headers(&self, api: Api, now: SystemTime) -> Vec<(String, String)> {
        let mut headers = Vec::new();
        for (kind, state) in [("requests", self.requests), ("tokens", self.tokens)] {
            let Some(state) = state else { continue };
            match api {
                Api::Messages => {
                    let reset = now + Duration::from_secs_f64(state.reset_ms / 1000.0);
                    headers.push((format!("anthropic-ratelimit-{kind}-limit"), state.limit.to_string()));
                    headers.push((format!("anthropic-ratelimit-{kind}-remaining"), state.remaining.to_string()));
                    headers.push((
                        format!("anthropic-ratelimit-{kind}-reset"),
                        humantime::format_rfc3339_seconds(reset).to_string(),
                    ));
                }
                Api::Responses | Api::Chat => {
                    headers.push((format!("x-ratelimit-limit-{kind}"), state.limit.to_string()));
                    headers.push((format!("x-ratelimit-remaining-{kind}"), state.remaining.to_string()));
                    headers.push((format!("x-ratelimit-reset-{kind}"), openai_duration(state.reset_ms)));
                }
                // None of them sends rate-limit headers: only `retry-after`.
                Api::Gemini | Api::OllamaChat | Api::OllamaGenerate | Api::Bedrock | Api::BedrockInvoke => {}
            }
        }
        if let Some(seconds) = self.retry_after_seconds() {
            headers.push(("retry-after".to_owned(), seconds.to_string()));
        }
        headers
    }

    /// The whole seconds a refused request is asked to wait (at least one); `None` when admitted.
    pub fn retry_after_seconds(&self) -> Option<u64> {
        self.refused.map(|(_, wait_ms)| ((wait_ms / 1000.0).ceil() as u64).max(1))
    }

    /// The refusal's message, as `api`'s provider words it.
    pub fn message(&self, api: Api) -> Option<String> {
        let (kind, wait_ms) = self.refused?;
        let (state, requested, unit) = match kind {
            "requests" => (self.requests?, 1, "requests per min (RPM)"),
            _ => (self.tokens?, self.cost, "tokens per min (TPM)"),
        };
        let used = u64::from(state.limit).saturating_sub(state.remaining);
        let wait = openai_duration(wait_ms);
        Some(match api {
            Api::Messages => format!(
                "This request would exceed your organization's rate limit of {} {kind} per minute. Please try again in {wait}.",
                state.limit
            ),
            Api::Responses | Api::Chat => format!(
                "Rate limit reached for {unit}: Limit {}, Used {used}, Requested {requested}. Please try again in {wait}.",
                state.limit
            ),
            Api::Gemini => format!(
                "Quota exceeded for {kind} per minute: limit {}, used {used}, requested {requested}. Please retry in {wait}.",
                state.limit
            ),
            Api::OllamaChat | Api::OllamaGenerate => {
                format!("too many requests: {kind} per minute limit {} reached, please try again in {wait}", state.limit)
            }
            Api::Bedrock | Api::BedrockInvoke => format!(
                "Too many requests, please wait before trying again. {kind} per minute: limit {}, used {used}, retry in {wait}.",
                state.limit
            ),
        })
    }
}

/// A duration as OpenAI's reset headers write it: `12ms`, `1.5s`, `6m0s`.
fn openai_duration(ms: f64) -> String {
    let ms = ms.max(0.0).round();
    if ms < 1000.0 {
        return format!("{ms}ms");
    }
    let seconds = ms / 1000.0;
    let trim = |s: f64| format!("{s:.3}").trim_end_matches('0').trim_end_matches('.').to_owned();
    if seconds < 60.0 {
        return format!("{}s", trim(seconds));
    }
    let minutes = (seconds / 60.0).floor();
    format!("{minutes}m{}s", trim(seconds - minutes * 60.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_bucket_refuses_past_its_limit_and_refills_over_the_minute() {
        let quota = QuotaBuckets::new(&Quota { requests_per_minute: Some(60), tokens_per_minute: None });
        for n in 0..60 {
            let admitted = quota.admit(0.0, 10);
            assert_eq!(admitted.refused, None, "request {n}");
            assert_eq!(admitted.requests.map(|s| s.remaining), Some(59 - n));
        }
        let refused = quota.admit(0.0, 10);
        assert_eq!(refused.refused, Some(("requests", 1000.0)), "one request a second comes back");
        assert_eq!(refused.requests.map(|s| (s.limit, s.remaining, s.reset_ms)), Some((60, 0, 60_000.0)));
        assert_eq!(quota.admit(990.0, 10).refused.map(|r| r.0), Some("requests"));
        assert_eq!(quota.admit(1_010.0, 10).refused, None);
    }

    #[test]
    fn a_token_bucket_charges_each_request_its_tokens() {
        let quota = QuotaBuckets::new(&Quota { requests_per_minute: None, tokens_per_minute: Some(1_000) });
        assert_eq!(quota.admit(0.0, 600).refused, None);
        let refused = quota.admit(0.0, 600);
        assert_eq!(refused.refused, Some(("tokens", 12_000.0)), "200 tokens short at 1,000 a minute");
        assert_eq!(
            refused.message(Api::Chat).as_deref(),
            Some("Rate limit reached for tokens per min (TPM): Limit 1000, Used 600, Requested 600. Please try again in 12s.")
        );
        assert_eq!(
            quota.admit(0.0, 5_000).refused.map(|r| r.1),
            Some(36_000.0),
            "a request past the limit waits for a full bucket"
        );
    }

    #[test]
    fn each_api_gets_its_providers_headers() {
        let quota = QuotaBuckets::new(&Quota { requests_per_minute: Some(1), tokens_per_minute: Some(100) });
        quota.admit(0.0, 10);
        let refused = quota.admit(30_000.0, 10);
        let epoch = SystemTime::UNIX_EPOCH;
        let openai = refused.headers(Api::Responses, epoch);
        let find = |headers: &[(String, String)], name: &str| {
            headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap_or_default()
        };
        assert_eq!(find(&openai, "x-ratelimit-limit-requests"), "1");
        assert_eq!(find(&openai, "x-ratelimit-remaining-requests"), "0");
        assert_eq!(find(&openai, "x-ratelimit-reset-requests"), "30s");
        assert_eq!(find(&openai, "x-ratelimit-remaining-tokens"), "100", "refilled by half a minute");
        assert_eq!(find(&openai, "retry-after"), "30");
        let anthropic = refused.headers(Api::Messages, epoch);
        assert_eq!(find(&anthropic, "anthropic-ratelimit-requests-remaining"), "0");
        assert_eq!(find(&anthropic, "anthropic-ratelimit-requests-reset"), "1970-01-01T00:00:30Z");
        assert_eq!(find(&anthropic, "retry-after"), "30");
        assert!(anthropic.iter().all(|(n, _)| !n.starts_with("x-ratelimit")));
    }

    #[test]
    fn durations_read_like_openais() {
        assert_eq!(openai_duration(12.0), "12ms");
        assert_eq!(openai_duration(1_500.0), "1.5s");
        assert_eq!(openai_duration(360_000.0), "6m0s");
        assert_eq!(openai_duration(61_250.0), "1m1.25s");
    }
}
