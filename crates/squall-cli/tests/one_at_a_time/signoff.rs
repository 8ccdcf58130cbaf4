//! Sign-off you can audit, through the binary: an attestation verifies until one byte of a
//! report changes (and names the file), `report diff` lists a broken implementation's
//! regressions and exits 1 (nothing, and 0, against itself), a waiver turns a failed MUST into
//! `waived` in every format until its date, and a report carries its provenance, traceability
//! and badges.

use std::path::Path;
use std::process::Output;

use base64::Engine as _;
use serde_json::Value;

use crate::kit::command::{squall, squall_run};

/// Cases `give-up-after-3` fails (it stops after 3 attempts), and one it passes.
const CASES: [&str; 3] = [
    "req-0006-002/the-defaults-make-exactly-7-attempts-when-status-500-never-recovers",
    "req-0006-002/the-defaults-make-exactly-7-attempts-when-status-503-never-recovers",
    "req-0006-001/status-503-is-retried",
];

fn run(iut: &str, dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["--iut", iut];
    for case in CASES {
        args.extend(["--case", case]);
    }
    args.extend(extra);
    squall_run(&args, dir)
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn report(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).expect("report.json")).expect("JSON")
}

#[test]
fn a_signed_attestation_verifies_until_one_byte_of_the_report_changes() {
    let dir = tempfile::tempdir().expect("a directory");
    let reports = dir.path().join("ref");
    assert_eq!(run("reference", &reports, &[]).status.code(), Some(0));
    let key = dir.path().join("key");
    let keygen = squall().args(["report", "keygen", "--out"]).arg(&key).output().expect("runs");
    assert!(keygen.status.success(), "{}", text(&keygen));
    let artifact = dir.path().join("client.whl");
    std::fs::write(&artifact, "the client under test").expect("writes");
    let attest = squall()
        .args(["report", "attest"])
        .arg(&reports)
        .arg("--subject")
        .arg(&artifact)
        .arg("--key")
        .arg(&key)
        .output()
        .expect("runs");
    assert!(attest.status.success(), "{}", text(&attest));
    let envelope = reports.join("attestation.dsse.json");
    let verify = |key: &Path| {
        squall().args(["report", "verify"]).arg(&envelope).arg("--public-key").arg(key).output().expect("runs")
    };
    let public = dir.path().join("key.pub");
    let good = verify(&public);
    assert_eq!(good.status.code(), Some(0), "{}", text(&good));
    assert!(text(&good).contains("report.json: ok") && text(&good).contains("signature: ok"), "{}", text(&good));

    // The statement inside is the in-toto test-result predicate, its tests the case ids.
    let signed: Value = serde_json::from_str(&std::fs::read_to_string(&envelope).expect("reads")).expect("JSON");
    assert_eq!(signed["payloadType"], "application/vnd.in-toto+json");
    let payload = base64::engine::general_purpose::STANDARD
        .decode(signed["payload"].as_str().expect("a payload"))
        .expect("base64");
    let statement: Value = serde_json::from_slice(&payload).expect("a statement");
    assert_eq!(statement["predicateType"], "https://in-toto.io/attestation/test-result/v0.1");
    assert_eq!(statement["predicate"]["result"], "PASSED");
    assert_eq!(statement["predicate"]["passedTests"].as_array().map(Vec::len), Some(3));

    // One byte of report.json changed: verification fails and names the file.
    let path = reports.join("report.json");
    let mut bytes = std::fs::read(&path).expect("reads");
    let at = bytes.iter().position(|b| *b == b'p').expect("a p");
    bytes[at] = b'q';
    std::fs::write(&path, bytes).expect("writes");
    let changed = verify(&public);
    assert_eq!(changed.status.code(), Some(1), "{}", text(&changed));
    assert!(text(&changed).contains("MISMATCH report.json: changed"), "{}", text(&changed));

    // Another key does not verify the signature.
    let other = dir.path().join("other");
    assert!(squall().args(["report", "keygen", "--out"]).arg(&other).status().expect("runs").success());
    let wrong = verify(&dir.path().join("other.pub"));
    assert_eq!(wrong.status.code(), Some(1));
    assert!(text(&wrong).contains("MISMATCH signature: no signature verifies"), "{}", text(&wrong));
}

#[test]
fn report_diff_lists_a_mutants_regressions_and_exits_1_and_nothing_against_itself() {
    let dir = tempfile::tempdir().expect("a directory");
    let (reference, mutant) = (dir.path().join("ref"), dir.path().join("mutant"));
    assert_eq!(run("reference", &reference, &[]).status.code(), Some(0));
    assert_eq!(run("reference:give-up-after-3", &mutant, &[]).status.code(), Some(1));
    let json = dir.path().join("diff.json");
    let diff =
        squall().args(["report", "diff"]).arg(&reference).arg(&mutant).arg("--json").arg(&json).output().expect("runs");
    assert_eq!(diff.status.code(), Some(1), "{}", text(&diff));
    let found: Value = serde_json::from_str(&std::fs::read_to_string(&json).expect("written")).expect("JSON");
    let regressed: Vec<&str> =
        found["regressions"].as_array().expect("a list").iter().filter_map(|c| c["id"].as_str()).collect();
    assert!(
        regressed.contains(&"REQ-0006-002") && regressed.contains(&CASES[0]) && regressed.contains(&CASES[1]),
        "{regressed:?}"
    );
    assert!(!regressed.contains(&CASES[2]) && !regressed.contains(&"REQ-0006-001"), "{regressed:?}");
    let moved = found["moved"].as_array().expect("a list");
    assert!(moved.iter().any(|m| m["old"] == "7 attempts" && m["new"] == "4 attempts"), "{moved:?}");
    assert!(text(&diff).contains("**3 regressed**"), "{}", text(&diff));

    let same = squall().args(["report", "diff"]).arg(&reference).arg(&reference).output().expect("runs");
    assert_eq!(same.status.code(), Some(0), "{}", text(&same));
    assert!(text(&same)
        .contains("**0 regressed**, 0 fixed, 0 changed otherwise, 0 appeared, 0 disappeared, 0 observed values moved"));

    let mut other: Value = report(&mutant);
    other["schema"] = "squall-report/2".into();
    let other_path = dir.path().join("other.json");
    std::fs::write(&other_path, other.to_string()).expect("writes");
    let refused = squall().args(["report", "diff"]).arg(&reference).arg(&other_path).output().expect("runs");
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused).contains("different schemas") && text(&refused).contains("squall-report/2"),
        "{}",
        text(&refused)
    );
}

#[test]
fn a_waiver_turns_a_failed_must_into_waived_in_every_format_until_its_date() {
    let dir = tempfile::tempdir().expect("a directory");
    let waivers = dir.path().join("waivers.toml");
    let waiver = |id: &str, expires: &str| {
        format!("[[waiver]]\nid = \"{id}\"\nreason = \"the gateway never sends it; PROJ-12\"\nowner = \"qa@example.com\"\nexpires = \"{expires}\"\n")
    };
    std::fs::write(
        &waivers,
        waiver(CASES[0], "2999-01-01")
            + &waiver(&format!("{}#the-server-sees-exactly-7-attempts", CASES[1]), "2999-01-01"),
    )
    .expect("writes");
    let out = dir.path().join("waived");
    let waived = run("reference:give-up-after-3", &out, &["--waivers", waivers.to_str().expect("utf-8")]);
    assert_eq!(waived.status.code(), Some(0), "a run with every failed MUST waived passes: {}", text(&waived));
    let json = report(&out);
    let requirement = json["requirements"]
        .as_array()
        .expect("requirements")
        .iter()
        .find(|r| r["id"] == "REQ-0006-002")
        .expect("judged");
    assert_eq!(requirement["verdict"], "waived");
    assert!(json["requirements"].to_string().contains("\"verdict\":\"waived\""));
    assert!(
        !requirement["cases"].as_array().expect("cases").iter().any(|c| c["verdict"] == "pass"),
        "waived is never pass"
    );
    assert_eq!(json["waivers"].as_array().map(Vec::len), Some(2));
    assert!(json["waivers"].as_array().expect("waivers").iter().all(|w| w["status"] == "applied"));
    let markdown = std::fs::read_to_string(out.join("acceptance.md")).expect("markdown");
    assert!(
        markdown.contains("pass with waivers")
            && markdown.contains("Signing accepts these waivers")
            && markdown.contains("PROJ-12")
    );
    let junit = std::fs::read_to_string(out.join("junit.xml")).expect("junit");
    assert!(
        junit.contains("WAIVED: MUST the server sees exactly 7 attempts") && junit.contains("<skipped/>"),
        "{junit}"
    );
    let html = std::fs::read_to_string(out.join("index.html")).expect("html");
    assert!(html.contains("<h2>Waivers</h2>") && html.contains("class=\"waived\""));

    // Expired: ignored, said so, and the MUSTs fail again.
    std::fs::write(&waivers, waiver(CASES[0], "2020-01-01")).expect("writes");
    let expired = dir.path().join("expired");
    assert_eq!(
        run("reference:give-up-after-3", &expired, &["--waivers", waivers.to_str().expect("utf-8")]).status.code(),
        Some(1)
    );
    let json = report(&expired);
    assert_eq!(json["waivers"][0]["status"], "expired");
    assert!(std::fs::read_to_string(expired.join("acceptance.md")).expect("markdown").contains("| expired |"));

    // An id no case has is an error naming it, and no report is written.
    std::fs::write(&waivers, waiver("req-0006-002/no-such-case", "2999-01-01")).expect("writes");
    let unknown = dir.path().join("unknown");
    let refused = run("reference:give-up-after-3", &unknown, &["--waivers", waivers.to_str().expect("utf-8")]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(text(&refused).contains("waiver `req-0006-002/no-such-case`: no case has this id"), "{}", text(&refused));
    assert!(!unknown.exists());
}

#[test]
fn a_report_carries_its_provenance_traceability_and_badges() {
    let dir = tempfile::tempdir().expect("a directory");
    let out = dir.path().join("ref");
    assert_eq!(run("reference", &out, &[]).status.code(), Some(0));
    let json = report(&out);
    let provenance = &json["provenance"];
    assert_eq!(provenance["implementation"]["reported"]["name"], "squall-reference");
    assert!(provenance["host"]["cores"].as_u64().is_some_and(|n| n >= 1));
    let features = provenance["features"].as_array().expect("features");
    assert!(features.iter().any(|f| f["file"] == "REQ-0006-002.feature"
        && f["cases"] == 2
        && f["sha256"].as_str().is_some_and(|s| s.len() == 64)));
    let reproduce = provenance["cases"][0]["reproduce"].as_str().expect("a command").to_owned();
    assert!(
        reproduce.starts_with("squall run --iut reference --level tasks --profile prd-0006 --case "),
        "{reproduce}"
    );
    // The command runs that case alone.
    let again = dir.path().join("again");
    let words: Vec<&str> = reproduce.split_whitespace().skip(2).collect();
    let alone = squall()
        .arg("run")
        .args(&words)
        .arg("--report-dir")
        .arg(&again)
        .current_dir(crate::kit::suites::root())
        .output()
        .expect("runs");
    assert_eq!(alone.status.code(), Some(0), "{}", text(&alone));
    assert_eq!(report(&again)["case_summary"]["pass"], 1);

    let markdown = std::fs::read_to_string(out.join("acceptance.md")).expect("markdown");
    assert!(markdown.contains("## Traceability: seed clause → cases → checks → verdict"));
    assert!(
        markdown.contains(
            "| seed 000, line 61 `000_294a847aa3c1187d.txt:61`: \"`ProviderRetryOptions.maxRetries` 默认值为 **6**"
        ),
        "{markdown}"
    );
    assert!(markdown.contains("## Provenance") && markdown.contains("squall-reference"));
    let html = std::fs::read_to_string(out.join("index.html")).expect("html");
    assert!(
        html.contains("Answers seed 000, line 61 (<code>000_294a847aa3c1187d.txt:61</code>)"),
        "each case its clause"
    );
    let badge: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("badge.json")).expect("badge")).expect("JSON");
    assert_eq!((badge["label"].as_str(), badge["message"].as_str()), (Some("squall prd-0006"), Some("pass")));
    assert!(std::fs::read_to_string(out.join("badge.svg")).expect("svg").contains("squall prd-0006: pass"));
}
