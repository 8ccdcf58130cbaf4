//! The admin API contract: create runs by name or inline, read and delete them, errors that
//! name the field at fault.

use serde_json::{json, Value};
use squall::scenario::Catalogue;
use squall::server::{Server, ServerConfig};

use squall_testkit::harness::json_reply;
use squall_testkit::server::create_run;

async fn server() -> (Server, reqwest::Client) {
    let catalogue = Catalogue::embedded().expect("embedded catalogue");
    (Server::start(ServerConfig::loopback(catalogue)).await.expect("starts"), reqwest::Client::new())
}

#[tokio::test]
async fn create_run_by_catalogue_name_gives_an_sdk_ready_base_url() {
    let (server, client) = server().await;
    let (status, run) =
        create_run(server.origin(), &json!({"scenario": "reset-after-3-events-then-ok", "time_scale": 0.5})).await;
    assert_eq!(status, 201);
    let id = run["id"].as_str().expect("id");
    assert_eq!(run["base_url"], format!("{}/runs/{id}/v1", server.origin()));
    assert_eq!(run["time_scale"], 0.5);
    let journal: Value = json_reply(client.get(format!("{}/__squall/runs/{id}/journal", server.origin()))).await;
    assert_eq!(
        journal,
        json!({"id": id, "scenario": "reset-after-3-events-then-ok", "time_scale": 0.5, "requests": [], "dropped": 0})
    );
    let deleted = client.delete(format!("{}/__squall/runs/{id}", server.origin())).send().await.expect("sent");
    assert_eq!(deleted.status().as_u16(), 200);
    let gone = client.get(format!("{}/__squall/runs/{id}/journal", server.origin())).send().await.expect("sent");
    assert_eq!(gone.status().as_u16(), 404);
}

#[tokio::test]
async fn unknown_scenario_name_is_a_404_naming_it() {
    let (server, _) = server().await;
    let (status, body) = create_run(server.origin(), &json!({"scenario": "no-such-thing"})).await;
    assert_eq!(status, 404);
    assert!(body["error"]["message"].as_str().unwrap_or("").contains("no-such-thing"), "{body}");
}

#[tokio::test]
async fn invalid_inline_scenario_is_a_400_naming_field_and_value() {
    let (server, _) = server().await;
    let inline = json!({"name": "x", "attempts": [{"fault": {"kind": "explode"}}]});
    let (status, body) = create_run(server.origin(), &json!({"scenario": inline})).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["param"], "scenario.attempts[0].fault.kind");
    assert!(body["error"]["message"].as_str().unwrap_or("").contains("explode"), "{body}");

    let (status, body) =
        create_run(server.origin(), &json!({"scenario": "reset-after-3-events-then-ok", "time_scale": -1})).await;
    assert_eq!((status, body["error"]["param"].clone()), (400, json!("time_scale")));
    let (status, body) = create_run(server.origin(), &json!({"scenaro": "typo"})).await;
    assert_eq!((status, body["error"]["param"].clone()), (400, json!("scenaro")));
}

#[tokio::test]
async fn inline_scenarios_run_like_catalogue_ones() {
    let (server, client) = server().await;
    let inline = json!({"name": "inline", "attempts": [{"status": 503}, {"stream": {"text": "ok"}}]});
    let (_, run) = create_run(server.origin(), &json!({"scenario": inline})).await;
    let url = format!("{}/responses", run["base_url"].as_str().expect("base_url"));
    let statuses = [
        client.post(&url).json(&json!({"model": "m", "input": "x"})).send().await.expect("sent").status().as_u16(),
        client.post(&url).json(&json!({"model": "m", "input": "x"})).send().await.expect("sent").status().as_u16(),
    ];
    assert_eq!(statuses, [503, 200]);
}

#[tokio::test]
async fn scenarios_health_and_shared_scenario_runs() {
    let (server, client) = server().await;
    let get = |path: &str| client.get(format!("{}{path}", server.origin())).send();
    let health: Value = get("/__squall/health").await.expect("sent").json().await.expect("json");
    assert_eq!(health["status"], "ok");
    let list: Value = get("/__squall/scenarios").await.expect("sent").json().await.expect("json");
    let names: Vec<&str> =
        list["scenarios"].as_array().expect("array").iter().filter_map(|s| s["name"].as_str()).collect();
    assert!(names.contains(&"reset-after-3-events-then-ok"));
    // The convenience form shares one run per scenario name.
    let url = format!("{}/scenarios/reset-after-3-events-then-ok/v1/responses", server.origin());
    let first = client.post(&url).json(&json!({"model": "m", "input": "x"})).send().await.expect("sent");
    drop(first);
    let journal: Value = get("/__squall/runs/scenario-reset-after-3-events-then-ok/journal")
        .await
        .expect("sent")
        .json()
        .await
        .expect("json");
    assert_eq!(journal["requests"][0]["attempt"], 0);
}
