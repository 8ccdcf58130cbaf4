//! Behind a port mapping (a container's, a proxy's) the client reaches squall at another port
//! than the one it listens on: with `--public-url` (or `--public-url-from-host`), every URL squall hands out is one the client
//! reaches, and a model call made at it is served through the mapping.

use serde_json::{json, Value};
use squall_testkit::calls::responses_request;
use squall_testkit::harness::require;
use tokio::net::{TcpListener, TcpStream};

use crate::kit::command::{serve, squall};

/// Forwards every connection `mapped` accepts to `target`, byte for byte, as a port mapping does.
async fn forward(mapped: TcpListener, target: String) {
    while let Ok((mut client, _)) = mapped.accept().await {
        let target = target.clone();
        tokio::spawn(async move {
            if let Ok(mut server) = TcpStream::connect(&target).await {
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            }
        });
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_port_mapping_every_url_squall_hands_out_reaches_it() {
    let mapped = TcpListener::bind("127.0.0.1:0").await.expect("a port to map");
    let public = format!("http://{}", mapped.local_addr().expect("its address"));
    every_url_reaches_squall_through(mapped, &["--public-url", &public]).await;
}

/// With the origin taken from each request's `Host`, squall needs no word of the mapping.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_origin_from_the_host_every_url_reaches_it_too() {
    let mapped = TcpListener::bind("127.0.0.1:0").await.expect("a port to map");
    every_url_reaches_squall_through(mapped, &["--public-url-from-host"]).await;
}

/// Serves squall with `args` behind `mapped`, and checks every URL a run is handed names the
/// mapped port and that a model call at its base URL streams through the mapping.
async fn every_url_reaches_squall_through(mapped: TcpListener, args: &[&str]) {
    let public = format!("http://{}", mapped.local_addr().expect("its address"));
    let served = serve(args);
    tokio::spawn(forward(mapped, served.origin.trim_start_matches("http://").to_owned()));
    let client = reqwest::Client::new();
    let scenario = json!({"scenario": {"name": "mapped", "attempts": [{"stream": {"text": "through the mapping"}}]}});
    let created = client.post(format!("{public}/__squall/runs")).json(&scenario).send().await.expect("created");
    require(created.status() == 201, "the run is created through the mapping");
    let run: Value = created.json().await.expect("the run's JSON");
    let urls = ["base_url", "anthropic_base_url", "gemini_base_url", "azure_openai_endpoint", "bedrock_base_url"];
    for key in urls {
        let url = run[key].as_str().unwrap_or_default();
        require(url.starts_with(&format!("{public}/runs/")), &format!("{key} is {url:?}, not under {public}"));
    }
    let websocket = run["responses_websocket_url"].as_str().unwrap_or_default();
    let expected = format!("{}/responses", run["base_url"].as_str().unwrap_or_default().replacen("http", "ws", 1));
    require(websocket == expected, &format!("responses_websocket_url is {websocket:?}"));
    let base = run["base_url"].as_str().expect("a base URL");
    let reply = client.post(format!("{base}/responses")).json(&responses_request()).send().await.expect("answered");
    let body = reply.text().await.expect("the stream");
    require(body.contains("through the mapping"), &format!("the stream through the mapping: {body}"));
}

#[test]
fn a_public_url_with_a_path_is_refused_naming_the_flag() {
    let output = squall().args(["serve", "--addr", "127.0.0.1:0", "--public-url", "http://host/squall"]).output();
    let output = output.expect("squall runs");
    let said = String::from_utf8_lossy(&output.stderr);
    require(!output.status.success(), "squall serve refuses it");
    require(said.contains("--public-url") && said.contains("a path"), &format!("it says why: {said}"));
}
