//! An in-process server configured for a test, and runs created through the admin API.

use serde_json::Value;
use squall::embedded::MockProvider;
use squall::scenario::Catalogue;
use squall::server::ServerConfig;

/// A loopback server whose configuration `change` adjusts.
pub async fn server_with(change: impl FnOnce(&mut ServerConfig)) -> MockProvider {
    let mut config = ServerConfig::loopback(Catalogue::default());
    change(&mut config);
    MockProvider::start_with(config).await
}

/// `POST {origin}/__squall/runs` with `body`: the status and the reply (`null` when it is not
/// JSON).
pub async fn create_run(origin: &str, body: &Value) -> (u16, Value) {
    let reply = reqwest::Client::new()
        .post(format!("{origin}/__squall/runs"))
        .json(body)
        .send()
        .await
        .expect("the server answers");
    (reply.status().as_u16(), reply.json().await.unwrap_or(Value::Null))
}
