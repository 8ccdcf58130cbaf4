//! The sample CI workflow (`docs/ci/squall.yml`) judges something in every job: each part of its
//! matrix, run against the reference at the part's level, profile and tags, passes — and would
//! exit 2 if its cases were all above its level.

use std::process::Command;

use regex::Regex;

use super::suite_kit::{root, take_turn_blocking};
use super::support::require;

#[test]
fn every_job_of_the_sample_workflow_judges_cases() {
    let workflow = std::fs::read_to_string(root().join("docs/ci/squall.yml")).expect("docs/ci/squall.yml");
    let part =
        Regex::new(r#"- \{ name: ([\w-]+), level: (\w+), profile: "?([\w,-]+)"?, tags: "([^"]+)" \}"#).expect("regex");
    let parts: Vec<_> = part.captures_iter(&workflow).collect();
    require(parts.len() >= 3, &format!("{} matrix parts found in the workflow", parts.len()));
    for part in parts {
        let (name, level, profile, tags) = (&part[1], &part[2], &part[3], &part[4]);
        let dir = tempfile::tempdir().expect("tempdir");
        let output = {
            let _one = take_turn_blocking();
            Command::new(env!("CARGO_BIN_EXE_squall"))
                .args([
                    "run",
                    "--iut",
                    "reference",
                    "--level",
                    level,
                    "--profile",
                    profile,
                    "--tags",
                    tags,
                    "--report-dir",
                ])
                .arg(dir.path())
                .current_dir(root())
                .output()
                .expect("squall runs")
        };
        let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        require(output.status.code() == Some(0), &format!("job {name}: exit {:?}\n{text}", output.status.code()));
    }
}
