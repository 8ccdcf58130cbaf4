//! A herd on one run over real HTTP: each client's base URL (`/runs/{id}/clients/{k}/v1`) meets
//! the script from its own first attempt, the journal names the client of every request, run-wide
//! conditions are shared, and chaos draws each client's requests apart from the others'.

use serde_json::json;
use squall::embedded::MockProvider;
use squall::scenario::{Attempt, Scenario};

/// Send one `/responses` request to `base_url`; the status.
async fn status_at(client: &reqwest::Client, base_url: &str) -> u16 {
    let body = json!({"model": "m", "input": "hi"});
    let reply = client.post(format!("{base_url}/responses")).json(&body).send().await.expect("sent");
    let status = reply.status().as_u16();
    let _ = reply.bytes().await;
    status
}

#[tokio::test]
async fn each_client_counts_its_own_attempts_and_the_journal_names_it() {
    let provider = MockProvider::start().await;
    let run = provider.run(Scenario::named("herd").attempt(Attempt::status(503)).attempt(Attempt::text("ok")));
    let http = reqwest::Client::new();
    let mut statuses = Vec::new();
    for base in [run.client_base_url(0), run.client_base_url(1), run.client_base_url(0), run.base_url().to_owned()] {
        statuses.push(status_at(&http, &base).await);
    }
    // Client 1's first attempt is its own attempt 0, though the run has seen one before.
    assert_eq!(statuses, [503, 503, 200, 503]);
    let journal = run.journal();
    let seen: Vec<(Option<u32>, Option<u32>, &str)> =
        journal.iter().map(|e| (e.client, e.attempt, e.path.as_str())).collect();
    assert_eq!(
        seen,
        [
            (Some(0), Some(0), "/responses"),
            (Some(1), Some(0), "/responses"),
            (Some(0), Some(1), "/responses"),
            (None, Some(0), "/responses")
        ]
    );
    // The admin journal writes the field too, null on the run's own base URL.
    let admin: serde_json::Value = http
        .get(format!("{}/__squall/runs/{}/journal", provider.server().origin(), run.id()))
        .send()
        .await
        .expect("the journal")
        .json()
        .await
        .expect("JSON");
    let clients: Vec<&serde_json::Value> =
        admin["requests"].as_array().expect("requests").iter().map(|e| &e["client"]).collect();
    assert_eq!(clients, [&json!(0), &json!(1), &json!(0), &serde_json::Value::Null]);
}

#[tokio::test]
async fn a_shared_quota_counts_every_client_and_chaos_draws_each_apart() {
    let provider = MockProvider::start().await;
    let http = reqwest::Client::new();
    // Two requests a minute for the whole run: the third client is refused.
    let run = provider.run(Scenario::named("quota").attempt(Attempt::text("ok")).quota(Some(2), None));
    let mut statuses = Vec::new();
    for client in 0..3 {
        statuses.push(status_at(&http, &run.client_base_url(client)).await);
    }
    assert_eq!(statuses, [200, 200, 429]);
    // Half of the requests fail under chaos; the clients' first attempts are not all alike, and a
    // second run with the seed draws each client's the same way.
    let chaotic = || Scenario::named("chaos").attempt(Attempt::text("ok")).chaos(Some(11), 0.5, &[("503", 1)]);
    let mut per_run = Vec::new();
    for _ in 0..2 {
        let run = provider.run(chaotic());
        let mut statuses = Vec::new();
        for client in 0..24 {
            statuses.push(status_at(&http, &run.client_base_url(client)).await);
        }
        per_run.push(statuses);
    }
    assert_eq!(per_run[0], per_run[1], "one seed replays every client's draw");
    let failed = per_run[0].iter().filter(|s| **s == 503).count();
    assert!((3..=21).contains(&failed), "{failed} of 24 clients' first attempts failed: {:?}", per_run[0]);
}

#[tokio::test]
async fn a_client_number_out_of_range_is_an_unknown_path_that_says_the_form() {
    let provider = MockProvider::start().await;
    let run = provider.run(Scenario::named("herd").attempt(Attempt::text("ok")));
    let url = format!("{}/clients/10000/v1/responses", run.anthropic_base_url());
    let reply = reqwest::Client::new().post(url).json(&json!({"input": "hi"})).send().await.expect("sent");
    assert_eq!(reply.status().as_u16(), 404);
    let message = reply.text().await.expect("a body");
    assert!(message.contains("/runs/{id}/clients/{k}/v1") && message.contains("10000"), "{message}");
    assert!(run.journal().is_empty(), "no run saw it");
}
