//! `squall health`: asks a running squall whether it serves, for a container's health check
//! (no shell or curl in the image). Exit 0 when it answers `ok`, 1 otherwise: Docker reads 1
//! as unhealthy and reserves 2.

use std::process::ExitCode;
use std::time::Duration;

use super::stdout;

/// The options of `squall health`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct HealthArgs {
    /// The server's origin (also SQUALL_HEALTH_URL).
    #[arg(long, env = "SQUALL_HEALTH_URL", default_value = "http://127.0.0.1:8787")]
    url: String,
    /// The admin token the server requires, if any (also SQUALL_ADMIN_TOKEN, as `serve` reads it).
    #[arg(long, env = "SQUALL_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,
    /// Seconds to wait for the answer.
    #[arg(long, default_value_t = 5)]
    timeout: u64,
}

pub(crate) async fn health(args: HealthArgs) -> anyhow::Result<ExitCode> {
    let url = format!("{}/__squall/health", args.url.trim_end_matches('/'));
    match ask(&url, &args).await {
        Ok(version) => {
            stdout::line(format_args!("squall {version} at {}: ok", args.url))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(why) => {
            eprintln!("squall health: {url}: {why}");
            Ok(ExitCode::from(1))
        }
    }
}

/// The server's version when it answers `{"status": "ok"}`; else what went wrong.
async fn ask(url: &str, args: &HealthArgs) -> Result<String, String> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(args.timeout))
        .build()
        .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
    let mut request = client.get(url);
    if let Some(token) = &args.admin_token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.map_err(|e| format!("no answer: {e}"))?;
    let status = response.status();
    let body: serde_json::Value = response.json().await.map_err(|e| format!("{status}, not JSON: {e}"))?;
    match (status.is_success(), body["status"].as_str()) {
        (true, Some("ok")) => Ok(body["version"].as_str().unwrap_or("?").to_owned()),
        _ => Err(format!("{status}: {body}")),
    }
}
