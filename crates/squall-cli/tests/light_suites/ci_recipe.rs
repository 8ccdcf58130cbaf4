//! The sample CI workflow (`docs/ci/squall.yml`) judges something in every job: each part of its
//! matrix, run against the reference at the part's level, profile and tags, passes — and would
//! exit 2 if its cases were all above its level.

use regex::Regex;

use crate::kit::command::squall;
use crate::kit::harness::require;
use crate::kit::suites::root;

/// The workflow's jobs run side by side, as a CI service runs a matrix: each mostly waits on
/// scaled sleeps.
#[test]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
fn every_job_of_the_sample_workflow_judges_cases() {
    let workflow = std::fs::read_to_string(root().join("docs/ci/squall.yml")).expect("docs/ci/squall.yml");
    let part =
        Regex::new(r#"- \{ name: ([\w-]+), level: (\w+), profile: "?([\w,-]+)"?, tags: "([^"]+)" \}"#).expect("regex");
    let parts: Vec<_> = part.captures_iter(&workflow).collect();
    require(parts.len() >= 3, &format!("{} matrix parts found in the workflow", parts.len()));
    let jobs: Vec<_> = parts
        .iter()
        .map(|part| {
            let (name, level, profile, tags) = (&part[1], &part[2], &part[3], &part[4]);
            let dir = tempfile::tempdir().expect("tempdir");
            // Its output goes to a file: a job blocked on a full pipe would be held back mid-case.
            let log = std::fs::File::create(dir.path().join("output.log")).expect("a log file");
            let child = squall()
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
                .arg(dir.path().join("reports"))
                .current_dir(root())
                .stdout(log.try_clone().expect("the log file"))
                .stderr(log)
                .spawn()
                .expect("squall runs");
            (name.to_owned(), dir, child)
        })
        .collect();
    for (name, dir, mut child) in jobs {
        let status = child.wait().expect("squall ends");
        let text = std::fs::read_to_string(dir.path().join("output.log")).unwrap_or_default();
        require(status.code() == Some(0), &format!("job {name}: exit {:?}\n{text}", status.code()));
    }
}
