//! A test runner's side of the judge as a service, written as an outside user would write it
//! (HTTP and a process per client, nothing of squall's internals): list the cases, calibrate a
//! session, run each case's client with the environment its run gives, post what it left, follow
//! a `confirm`, and keep the verdicts.

use std::path::Path;
use std::time::Duration;

use futures_util::stream::{self, StreamExt as _};
use serde_json::{json, Value};

/// A squall server's admin API.
#[derive(Debug, Clone)]
pub(crate) struct Judge {
    pub origin: String,
    pub http: reqwest::Client,
}

impl Judge {
    pub(crate) fn new(origin: &str) -> Judge {
        Judge { origin: origin.to_owned(), http: reqwest::Client::new() }
    }

    pub(crate) async fn get(&self, path: &str) -> (u16, Value) {
        let response = self.http.get(format!("{}{path}", self.origin)).send().await.expect("GET sent");
        (response.status().as_u16(), response.json().await.expect("a JSON reply"))
    }

    pub(crate) async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let response = self.http.post(format!("{}{path}", self.origin)).json(body).send().await.expect("POST sent");
        (response.status().as_u16(), response.json().await.expect("a JSON reply"))
    }

    /// Create a run of `case` in `session`; the reply says where the client goes and how.
    pub(crate) async fn create_run(&self, case: &str, body: Value) -> Value {
        let (status, run) = self.post(&format!("/__squall/cases/{case}/runs"), &body).await;
        assert_eq!(status, 201, "{case}: {run}");
        run
    }

    /// Run the client `command` for `run` (each of a herd's clients at once), post what it
    /// left, and return the verdict.
    pub(crate) async fn judge_run(&self, command: &str, run: &Value, timeout: Duration) -> Value {
        let clients: Vec<&Value> = match run["clients"].as_array() {
            Some(clients) if !clients.is_empty() => clients.iter().map(|c| &c["env"]).collect(),
            _ => vec![&run["env"]],
        };
        let outcomes =
            futures_util::future::join_all(clients.iter().map(|env| run_client(command, env, timeout))).await;
        let outcome = if run["clients"].as_array().is_some_and(|c| !c.is_empty()) {
            json!({"clients": outcomes})
        } else {
            outcomes.into_iter().next().expect("one client")
        };
        let (status, verdict) = self.post(run["verdict"].as_str().expect("a verdict path"), &outcome).await;
        assert_eq!(status, 200, "{verdict}");
        verdict
    }

    /// The calibration the cases list asks for, in `session`: its instances at both scales at once.
    pub(crate) async fn calibrate(&self, command: &str, session: &str, cases: &Value) -> Value {
        let calibration = &cases["calibration"];
        let instances = calibration["instances_per_scale"].as_u64().expect("instances") as usize;
        let scales: Vec<f64> =
            calibration["time_scales"].as_array().expect("scales").iter().filter_map(Value::as_f64).collect();
        let runs = scales.iter().flat_map(|scale| std::iter::repeat_n(*scale, instances)).map(|scale| async move {
            let run = self.create_run("calibration", json!({"session": session, "time_scale": scale})).await;
            self.judge_run(command, &run, Duration::from_secs(20)).await
        });
        let mut verdicts = futures_util::future::join_all(runs).await;
        // Herd cases count spread only beyond a lockstep herd's, measured by one herd at once.
        if calibration["herd_run"] == true {
            let run = self.create_run("calibration", json!({"session": session, "herd": HERD})).await;
            verdicts.push(self.judge_run(command, &run, Duration::from_secs(30)).await);
        }
        verdicts.into_iter().last().expect("a calibration run")
    }

    /// Every case of `cases` judged in `session` at `level` with the jitter seed `seed`, `at_once`
    /// at a time, a `confirm` followed once: (case id, verdict).
    pub(crate) async fn judge_all(
        &self,
        command: &str,
        session: &str,
        level: &str,
        seed: u64,
        cases: &Value,
        at_once: usize,
    ) -> Vec<(String, Value)> {
        let ids: Vec<String> = cases["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .map(|c| c["id"].as_str().expect("id").to_owned())
            .collect();
        stream::iter(ids)
            .map(|id| async move {
                let body = json!({"session": session, "level": level, "seed": seed});
                let run = self.create_run(&id, body).await;
                let mut verdict = self.judge_run(command, &run, case_timeout(&run)).await;
                if let Some(scale) = verdict["confirm"]["time_scale"].as_f64() {
                    let body = json!({"session": session, "level": level, "seed": seed, "time_scale": scale});
                    let run = self.create_run(&id, body).await;
                    verdict = self.judge_run(command, &run, case_timeout(&run)).await;
                }
                (id, verdict)
            })
            .buffer_unordered(at_once)
            .collect()
            .await
    }
}

/// The herd size the cases run with: the service's default.
const HERD: u32 = 10;

/// 60 s at 1/100, more for a run made slower, as `squall run` gives.
fn case_timeout(run: &Value) -> Duration {
    let scale = run["time_scale"].as_f64().unwrap_or(0.01);
    Duration::from_secs_f64(60.0 * (scale / 0.01).max(1.0))
}

/// Run `command` through `sh -c` with the IUT contract's variables `env` and a fresh
/// `SQUALL_OUT`, and read what it left there as an outcome to post.
async fn run_client(command: &str, env: &Value, timeout: Duration) -> Value {
    let out = tempfile::tempdir().expect("a temporary directory");
    let mut process = tokio::process::Command::new("sh");
    process.arg("-c").arg(command).env("SQUALL_OUT", out.path()).kill_on_drop(true);
    process.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped());
    for (name, value) in env.as_object().expect("an environment") {
        process.env(name, value.as_str().expect("a string"));
    }
    let child = process.spawn().expect("the client starts");
    let (exit_code, timed_out, stderr) = match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(output) => {
            let output = output.expect("the client ran");
            (output.status.code(), false, String::from_utf8_lossy(&output.stderr).into_owned())
        }
        Err(_) => (None, true, String::new()),
    };
    let read = |name: &str| std::fs::read_to_string(Path::new(out.path()).join(name)).ok();
    let result: Option<Value> = read("result.json").and_then(|text| serde_json::from_str(&text).ok());
    json!({
        "result": result,
        "events": read("events.jsonl").unwrap_or_default(),
        "exit_code": exit_code,
        "timed_out": timed_out,
        "stderr": stderr.chars().rev().take(2000).collect::<String>().chars().rev().collect::<String>(),
        "case_timeout_s": timeout.as_secs_f64(),
    })
}
