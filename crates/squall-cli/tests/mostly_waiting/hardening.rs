//! A soak of the server: thousands of runs one after another leave what the server keeps bounded.
//! Each run waits on its request; together they keep a third of a core busy.

use crate::kit::harness::{json_reply, require};
use crate::kit::server::server_with;
use crate::suite::hardening::{connections_drain, listed_runs};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: 3,000 runs one after another (scripts/test.sh runs it)"]
async fn a_soak_of_thousands_of_runs_does_not_grow() {
    let server = server_with(|c| c.max_runs = 50).await;
    let client = reqwest::Client::new();
    for _ in 0..3000 {
        let created: Value = json_reply(
            client
                .post(format!("{}/__squall/runs", server.server().origin()))
                .json(&json!({"scenario": {"name": "soak", "attempts": [{"stream": {"text": "a b c"}}]}})),
        )
        .await;
        let url = format!("{}/responses", created["base_url"].as_str().expect("base_url"));
        let body = client
            .post(url)
            .json(&json!({"model": "m", "input": "x", "stream": true}))
            .send()
            .await
            .expect("sent")
            .text()
            .await
            .expect("body");
        require(body.contains("response.completed"), "a soak reply was cut short");
        // The client's keep-alive pool serves the whole soak: connections do not pile up.
        require(
            server.server().open_connections() <= 4,
            &format!("{} connections open", server.server().open_connections()),
        );
    }
    let listed = listed_runs(&server).await;
    let retained: u64 = listed.iter().map(|(_, requests)| requests).sum();
    require(
        listed.len() == 50 && retained == 50,
        &format!("{} runs and {retained} journal entries retained", listed.len()),
    );
    drop(client);
    require(connections_drain(&server).await == 0, "the connection closed when the client went away");
}
