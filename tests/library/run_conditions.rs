//! Run-wide conditions over real HTTP: an outage answers every request in its window instead of
//! the script and records itself in the journal; a ramp takes the same requests in every run of
//! one seed; a bad outage is refused with the field at fault, from a file, inline JSON or code.

use std::time::Duration;

use serde_json::{json, Value};
use squall::clock::TimeScale;
use squall::embedded::MockProvider;
use squall::scenario::{Attempt, Outage, Scenario};

use squall_testkit::harness::Harness;
use squall_testkit::server::create_run;

#[tokio::test]
async fn an_outage_answers_every_request_in_its_window_and_the_script_answers_after_it() {
    // The catalogue's 40 s outage at 1/200 lasts 200 ms of real time from the run's creation.
    let h = Harness::catalogue("outage-40s-then-ok", TimeScale::of(0.005)).await;
    let during = h.stream_responses().await;
    assert_eq!(during.status().as_u16(), 503);
    assert_eq!(during.headers()["retry-after"], "2");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = h.stream_responses().await;
    assert_eq!(after.status().as_u16(), 200);
    assert!(after.text().await.expect("a body").contains("Answered after the outage."));
    let journal = h.settled_journal().await;
    let seen: Vec<(Option<u32>, Option<u16>, Option<&str>)> =
        journal.iter().map(|e| (e.attempt, e.status, e.condition.as_deref())).collect();
    // The track counts the attempt the outage answered.
    assert_eq!(seen, [(Some(0), Some(503), Some("outage[0]")), (Some(1), Some(200), None)]);
}

/// Statuses of `n` requests, one after the other, on a fresh run of `scenario`.
async fn statuses(provider: &MockProvider, scenario: Scenario, n: usize) -> Vec<u16> {
    let run = provider.run(scenario);
    let client = reqwest::Client::new();
    let mut statuses = Vec::new();
    for _ in 0..n {
        let body = json!({"model": "m", "input": "hi"});
        let reply = client.post(format!("{}/responses", run.base_url())).json(&body).send().await.expect("sent");
        statuses.push(reply.status().as_u16());
    }
    statuses
}

#[tokio::test]
async fn a_ramp_takes_its_share_of_requests_and_the_same_ones_for_one_seed() {
    let provider = MockProvider::start().await;
    let half = |seed| {
        Scenario::named("half-down")
            .attempt(Attempt::text("up"))
            .outage(Outage::between(0, 3_600_000, Attempt::status(502)).ramp(0.5, 0.5, seed))
    };
    let first = statuses(&provider, half(3), 40).await;
    let again = statuses(&provider, half(3), 40).await;
    let other = statuses(&provider, half(4), 40).await;
    assert_eq!(first, again, "one seed, one sequence");
    assert_ne!(first, other, "another seed, another sequence");
    let down = first.iter().filter(|s| **s == 502).count();
    assert!((8..=32).contains(&down), "{down} of 40 down at rate 0.5: {first:?}");
    assert!(first.iter().all(|s| *s == 502 || *s == 200), "{first:?}");
}

/// `POST /__squall/runs` with `scenario`: the status and the reply.
async fn create(provider: &MockProvider, scenario: Value) -> (u16, Value) {
    create_run(provider.server().origin(), &json!({"scenario": scenario})).await
}

#[tokio::test]
async fn a_bad_outage_is_refused_with_the_field_at_fault() {
    let provider = MockProvider::start().await;
    let reply = json!({"status": 503});
    for (outage, param) in [
        (json!({"from_ms": 5000, "until_ms": 5000, "reply": reply}), "scenario.outage[0].until_ms"),
        (json!({"until_ms": 5000, "reply": reply, "rate": 1.5}), "scenario.outage[0].rate"),
        (json!({"until_ms": 5000, "reply": reply, "rate_until": -0.1}), "scenario.outage[0].rate_until"),
        (
            json!({"until_ms": 5000, "reply": {"status": 503, "delay_ms": u64::MAX}}),
            "scenario.outage[0].reply.delay_ms",
        ),
        (json!({"until_ms": 5000, "reply": {"status": 99}}), "scenario.outage[0].reply.status"),
        (json!({"until_ms": 5000}), "scenario"),
    ] {
        let (status, body) = create(&provider, json!({"name": "bad", "outage": [outage]})).await;
        assert_eq!(status, 400, "{body}");
        let at = body["error"]["param"].as_str().unwrap_or("");
        assert!(at.starts_with(param), "expected {param}, got {at}: {body}");
    }
    let mut header = Attempt::status(503);
    header.headers.insert("retry-after".to_owned(), "@now+x".to_owned());
    let coded = Scenario::named("h").outage(Outage::between(0, 1000, header));
    let error = provider.try_run(coded).expect_err("a bad header template");
    assert_eq!(error.field.to_string(), "outage[0].reply.headers.retry-after", "{error}");
}

/// What a client saw of each of `n` streamed requests on the run at `base_url` — the status, and
/// whether the body ended in an error — and the journal's condition for each.
async fn played(provider: &MockProvider, run_id: &str, base_url: &str, n: usize) -> Vec<(u16, bool, Option<String>)> {
    let client = reqwest::Client::new();
    let mut seen = Vec::new();
    for _ in 0..n {
        let body = json!({"model": "m", "input": "hi", "stream": true});
        let reply = client.post(format!("{base_url}/responses")).json(&body).send().await.expect("sent");
        let status = reply.status().as_u16();
        let broke = reply.bytes().await.is_err();
        seen.push((status, broke));
    }
    let url = format!("{}/__squall/runs/{run_id}/journal", provider.server().origin());
    let journal: Value = client.get(url).send().await.expect("journal").json().await.expect("json");
    let entries: Vec<squall::journal::JournalEntry> =
        serde_json::from_value(journal["requests"].clone()).expect("entries");
    seen.into_iter().zip(entries).map(|((status, broke), e)| (status, broke, e.condition)).collect()
}

/// A chaotic run created through the admin API: its id, base URL and reported seed.
async fn chaotic_run(provider: &MockProvider, chaos: Value) -> (String, String, u64) {
    let scenario =
        json!({"name": "chaotic", "attempts": [{"stream": {"text": "The quick brown fox jumps"}}], "chaos": chaos});
    let (status, run) = create(provider, scenario).await;
    assert_eq!(status, 201, "{run}");
    let seed = run["chaos_seed"].as_u64().unwrap_or_else(|| panic!("the run reports its chaos seed: {run}"));
    (run["id"].as_str().expect("id").to_owned(), run["base_url"].as_str().expect("base_url").to_owned(), seed)
}

#[tokio::test]
async fn chaos_breaks_its_share_of_requests_and_one_seed_replays_the_same_faults() {
    let provider = MockProvider::start().await;
    let mix = json!({"503": 1, "429": 1, "reset": 1, "eof": 1, "truncate": 1, "garbage": 1});
    let (id, url, seed) = chaotic_run(&provider, json!({"rate": 0.5, "mix": mix})).await;
    let first = played(&provider, &id, &url, 40).await;
    let (again_id, again_url, again_seed) =
        chaotic_run(&provider, json!({"seed": seed, "rate": 0.5, "mix": mix})).await;
    assert_eq!(again_seed, seed);
    let again = played(&provider, &again_id, &again_url, 40).await;
    assert_eq!(first, again, "the reported seed replays the run");
    let taken: Vec<&(u16, bool, Option<String>)> = first.iter().filter(|(_, _, c)| c.is_some()).collect();
    assert!((8..=32).contains(&taken.len()), "{} of 40 taken at rate 0.5: {first:?}", taken.len());
    for (status, broke, condition) in &first {
        let condition = condition.as_deref().unwrap_or("");
        assert!(condition.is_empty() || condition.starts_with(&format!("chaos (seed {seed}): ")), "{condition}");
        match condition.rsplit(": ").next().unwrap_or("") {
            "" => assert_eq!((*status, *broke), (200, false), "untouched"),
            "status 503" => assert_eq!(*status, 503),
            "status 429" => assert_eq!(*status, 429),
            what if what.starts_with("reset") || what.starts_with("eof") => {
                assert_eq!((*status, *broke), (200, true), "{what}")
            }
            what => assert!(what.starts_with("truncate") || what.starts_with("garbage"), "{what}"),
        }
    }
    let (_, _, other) = chaotic_run(&provider, json!({"rate": 0.5})).await;
    assert_ne!(other, seed, "a run without a seed draws its own");
}

#[tokio::test]
async fn bad_chaos_is_refused_with_the_field_at_fault() {
    let provider = MockProvider::start().await;
    for (chaos, param) in [
        (json!({"rate": 2.0}), "scenario.chaos.rate"),
        (json!({"rate": 0.5, "mix": {"418": 1}}), "scenario.chaos.mix"),
        (json!({"rate": 0.5, "mix": {"reset": 0}}), "scenario.chaos.mix"),
        (json!({"mix": {"reset": 1}}), "scenario"),
    ] {
        let (status, body) = create(&provider, json!({"name": "bad", "chaos": chaos})).await;
        assert_eq!(status, 400, "{body}");
        let at = body["error"]["param"].as_str().unwrap_or("");
        assert!(at.starts_with(param), "expected {param}, got {at}: {body}");
    }
}

const THREE_A_MINUTE: &str = r#"
name = "three-a-minute"
[[attempts]]
stream = { text = "Within quota." }
[quota]
requests_per_minute = 3
"#;

#[tokio::test]
async fn a_quota_admits_its_limit_says_so_in_openais_headers_and_refuses_the_next_with_a_true_retry_after() {
    let h = Harness::new(THREE_A_MINUTE).await;
    let body = json!({"model": "m", "input": "hi"});
    let mut remaining = Vec::new();
    for _ in 0..3 {
        let reply = h.post("/responses", body.clone()).await;
        assert_eq!(reply.status().as_u16(), 200);
        assert_eq!(reply.headers()["x-ratelimit-limit-requests"], "3");
        remaining.push(reply.headers()["x-ratelimit-remaining-requests"].to_str().expect("ascii").to_owned());
    }
    assert_eq!(remaining, ["2", "1", "0"]);
    let refused = h.post("/responses", body).await;
    assert_eq!(refused.status().as_u16(), 429);
    assert_eq!(refused.headers()["retry-after"], "20", "a request comes back every 20 s at 3 a minute");
    assert_eq!(refused.headers()["x-ratelimit-remaining-requests"], "0");
    let error: Value = refused.json().await.expect("a JSON error");
    assert_eq!(
        (error["error"]["type"].as_str(), error["error"]["code"].as_str()),
        (Some("requests"), Some("rate_limit_exceeded"))
    );
    assert!(error["error"]["message"].as_str().unwrap_or("").contains("Limit 3, Used 3, Requested 1"), "{error}");
    let journal = h.settled_journal().await;
    let conditions: Vec<Option<&str>> = journal.iter().map(|e| e.condition.as_deref()).collect();
    assert_eq!(conditions, [None, None, None, Some("quota: requests per minute")]);
}

#[tokio::test]
async fn a_quota_speaks_anthropics_headers_on_the_messages_api_and_refills_in_policy_time() {
    let one_a_minute = THREE_A_MINUTE.replace("requests_per_minute = 3", "requests_per_minute = 1");
    // At 1/100 a minute of policy time is 600 ms.
    let h = Harness::scaled(&one_a_minute, TimeScale::of(0.01)).await;
    let body = json!({"model": "claude-x", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]});
    let since_first = std::time::Instant::now();
    let first = h.post("/messages", body.clone()).await;
    assert_eq!(first.status().as_u16(), 200);
    assert_eq!(first.headers()["anthropic-ratelimit-requests-remaining"], "0");
    assert!(first.headers().get("x-ratelimit-remaining-requests").is_none(), "OpenAI's headers are not Anthropic's");
    let refused = h.post("/messages", body.clone()).await;
    assert_eq!(refused.status().as_u16(), 429);
    // The next request comes back a minute of policy time after the first, less what has passed
    // since: each real millisecond is 0.1 s of it at 1/100, a few on a busy machine.
    let passed_s = since_first.elapsed().as_secs_f64() * 100.0;
    let retry_after: f64 = refused.headers()["retry-after"].to_str().expect("ascii").parse().expect("seconds");
    assert!(
        retry_after <= 60.0 && retry_after >= (60.0 - passed_s).floor(),
        "retry-after {retry_after} s, {passed_s:.1} s of policy time after the first request"
    );
    let reset = refused.headers()["anthropic-ratelimit-requests-reset"].to_str().expect("ascii").to_owned();
    assert!(humantime::parse_rfc3339(&reset).is_ok(), "an RFC 3339 moment: {reset}");
    let error: Value = refused.json().await.expect("a JSON error");
    assert_eq!(error["error"]["type"], "rate_limit_error", "{error}");
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(h.post("/messages", body).await.status().as_u16(), 200, "a minute of policy time later");
}

#[tokio::test]
async fn a_bad_quota_is_refused_with_the_field_at_fault() {
    let provider = MockProvider::start().await;
    for (quota, param) in [
        (json!({}), "scenario.quota"),
        (json!({"requests_per_minute": 0}), "scenario.quota.requests_per_minute"),
        (json!({"tokens_per_minute": -1}), "scenario"),
    ] {
        let (status, body) = create(&provider, json!({"name": "bad", "quota": quota})).await;
        assert_eq!(status, 400, "{body}");
        let at = body["error"]["param"].as_str().unwrap_or("");
        assert!(at.starts_with(param), "expected {param}, got {at}: {body}");
    }
}
