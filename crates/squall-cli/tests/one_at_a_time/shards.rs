//! Many machines: `--shard K/N` splits the cases into disjoint parts that together are every
//! case, and `squall report merge` joins the shards' reports into the report an unsharded run
//! writes — same cases, verdicts and counts.

use std::collections::BTreeSet;

use serde_json::Value;
use squall_suite::cases::Shard;
use squall_suite::iut::Iut;
use squall_suite::report::{write_all, ReportMeta};
use squall_suite::{Level, SuiteConfig, SuiteOutcome};

use crate::kit::command::squall;
use crate::kit::harness::require;
use crate::kit::suites::{config, run_side_by_side};

fn meta(config: &SuiteConfig) -> ReportMeta {
    ReportMeta {
        name: "reference".into(),
        command: config.iut.describe(),
        run_as: "reference".into(),
        level: config.level,
        time_scale: config.time_scale,
        max_time_scale: config.max_time_scale,
        case_timeout: config.case_timeout,
        concurrency: config.concurrency,
    }
}

fn names(outcome: &SuiteOutcome) -> BTreeSet<(String, String)> {
    outcome.cases.iter().map(|c| (c.feature.clone(), c.name.clone())).collect()
}

/// (feature, name, verdict) of every case of a report.json, each once.
fn case_verdicts(report: &Value) -> BTreeSet<(String, String, String)> {
    report["requirements"]
        .as_array()
        .expect("requirements")
        .iter()
        .flat_map(|r| r["cases"].as_array().expect("cases").iter())
        .map(|c| {
            let text = |key: &str| c[key].as_str().unwrap_or("").to_owned();
            (text("feature"), text("name"), text("verdict"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
async fn three_shards_partition_the_cases_and_their_merged_report_is_the_unsharded_one() {
    let whole = config(Iut::Reference { mutant: None });
    let shards: Vec<SuiteConfig> =
        (1..=3).map(|k| SuiteConfig { shard: Some(Shard::new(k, 3).expect("a shard")), ..whole.clone() }).collect();
    let mut configs = vec![whole.clone()];
    configs.extend(shards.iter().cloned());
    let outcomes = run_side_by_side(configs).await;
    let (all, parts) = outcomes.split_first().expect("four runs");

    let mut seen = BTreeSet::new();
    for (k, part) in parts.iter().enumerate() {
        require(!part.cases.is_empty(), &format!("shard {} of 3 holds some of {} cases", k + 1, all.cases.len()));
        for case in names(part) {
            require(seen.insert(case.clone()), &format!("{case:?} is in two shards"));
        }
    }
    require(seen == names(all), "the shards hold every case of the unsharded run, no more");

    let dir = tempfile::tempdir().expect("tempdir");
    let whole_dir = dir.path().join("whole");
    write_all(&whole_dir, &meta(&whole), all).expect("the unsharded reports");
    let mut shard_dirs = Vec::new();
    for (k, (part, config)) in parts.iter().zip(&shards).enumerate() {
        let shard_dir = dir.path().join(format!("shard-{}", k + 1));
        write_all(&shard_dir, &meta(config), part).expect("a shard's reports");
        shard_dirs.push(shard_dir);
    }
    let merged_dir = dir.path().join("merged");
    let output =
        squall().args(["report", "merge", "--out"]).arg(&merged_dir).args(&shard_dirs).output().expect("squall runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    require(output.status.code() == Some(0), &format!("{stdout}{}", String::from_utf8_lossy(&output.stderr)));
    for file in squall_suite::report::FILES {
        require(merged_dir.join(file).is_file(), &format!("merged {file}"));
    }
    let read = |dir: &std::path::Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).expect("report.json")).expect("JSON")
    };
    let (merged, unsharded) = (read(&merged_dir), read(&whole_dir));
    require(case_verdicts(&merged) == case_verdicts(&unsharded), "the same cases with the same verdicts");
    for field in ["verdict", "summary", "case_summary"] {
        require(merged[field] == unsharded[field], &format!("{field}: {} vs {}", merged[field], unsharded[field]));
    }
    let requirements = |report: &Value| -> Vec<(Value, Value, Value)> {
        let list = report["requirements"].as_array().expect("requirements");
        list.iter().map(|r| (r["id"].clone(), r["verdict"].clone(), r["cases_tally"].clone())).collect()
    };
    require(requirements(&merged) == requirements(&unsharded), "each requirement's verdict and count");
    let profiles = |report: &Value| report["profiles"]["judged"].clone();
    require(profiles(&merged) == profiles(&unsharded), "each profile's verdict");
    require(merged["iut"]["level"] == serde_json::json!(Level::Tasks.as_str()), "the shards' level");

    // One shard given twice is refused, naming the case and both reports.
    let twice = squall()
        .args(["report", "merge", "--out"])
        .arg(dir.path().join("twice"))
        .arg(&shard_dirs[0])
        .arg(&shard_dirs[0])
        .output()
        .expect("squall runs");
    let stderr = String::from_utf8_lossy(&twice.stderr);
    require(twice.status.code() == Some(2) && stderr.contains("was one given twice?"), &stderr);
    require(!dir.path().join("twice").exists(), "no partial report");
}
