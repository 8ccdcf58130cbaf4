//! Attestations of a report (`squall report attest` / `verify`): an in-toto Statement with the
//! test-result predicate (`https://in-toto.io/attestation/test-result/v0.1`) whose subjects are
//! the report's files and any artifact the user names, by SHA-256; unsigned, or in a DSSE
//! envelope signed with an Ed25519 key ([`super::dsse`]). Verification recomputes every digest
//! and checks the signature, and says exactly what does not match.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::dsse::{self, Envelope, IN_TOTO_PAYLOAD};
use super::schema::Report;
use crate::provenance::sha256_hex;
use crate::Verdict;

/// The Statement type.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// The predicate type.
pub const TEST_RESULT: &str = "https://in-toto.io/attestation/test-result/v0.1";
/// The attestation's file name in the report directory, unsigned.
pub const STATEMENT_FILE: &str = "attestation.intoto.json";
/// The attestation's file name in the report directory, signed.
pub const ENVELOPE_FILE: &str = "attestation.dsse.json";
/// The report files attested when present.
const REPORT_FILES: [&str; 7] =
    ["report.json", "acceptance.md", "junit.xml", "index.html", "badge.svg", "badge.json", "waivers.json"];

/// A subject: a file and its digest.
fn subject(name: &str, path: &Path) -> Result<Value, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: cannot read the subject: {e}", path.display()))?;
    Ok(json!({"name": name, "digest": {"sha256": sha256_hex(&bytes)}}))
}

/// The in-toto Statement for the report in `dir` (read as `report`), with the report's files
/// present in `dir` and `artifacts` (named as given) as subjects.
pub fn statement(dir: &Path, report: &Report, artifacts: &[PathBuf]) -> Result<Value, String> {
    let mut subjects = Vec::new();
    for file in REPORT_FILES {
        let path = dir.join(file);
        if path.is_file() {
            subjects.push(subject(file, &path)?);
        }
    }
    for artifact in artifacts {
        subjects.push(subject(&artifact.display().to_string(), artifact)?);
    }
    Ok(json!({
        "_type": STATEMENT_TYPE,
        "subject": subjects,
        "predicateType": TEST_RESULT,
        "predicate": predicate(report),
    }))
}

/// The test-result predicate: the run's result, what it ran with, and its cases by verdict.
fn predicate(report: &Report) -> Value {
    let mut cases: Vec<(&str, Verdict)> = report.cases().map(|c| (c.id.as_str(), c.verdict)).collect();
    cases.sort_unstable_by_key(|(id, _)| *id);
    cases.dedup_by_key(|(id, _)| *id);
    let with = |verdicts: &[Verdict]| -> Vec<&str> {
        cases.iter().filter(|(_, v)| verdicts.contains(v)).map(|(id, _)| *id).collect()
    };
    let failed = with(&[Verdict::Fail, Verdict::Error, Verdict::Inconclusive]);
    let warned = with(&[Verdict::Warn, Verdict::Waived]);
    let result = match (failed.is_empty(), warned.is_empty()) {
        (false, _) => "FAILED",
        (true, false) => "WARNED",
        (true, true) => "PASSED",
    };
    let mut configuration = vec![json!({
        "name": "squall",
        "annotations": {
            "version": report.squall_version,
            "commit": report.provenance.as_ref().and_then(|p| p.squall.commit.clone()),
            "iut": report.iut.run_as,
            "level": report.iut.level.as_str(),
            "profiles": report.profiles.judged.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(),
        }
    })];
    if let Some(provenance) = &report.provenance {
        configuration
            .extend(provenance.features.iter().map(|f| json!({"name": f.file, "digest": {"sha256": f.sha256}})));
    }
    json!({
        "result": result,
        "configuration": configuration,
        "passedTests": with(&[Verdict::Pass]),
        "warnedTests": warned,
        "failedTests": failed,
    })
}

/// `statement` signed with the private key in `key` into a DSSE envelope.
pub fn signed(statement: &Value, key: &Path) -> Result<Envelope, String> {
    let key = dsse::read_private(key)?;
    let payload = serde_json::to_vec(statement).map_err(|e| e.to_string())?;
    Ok(dsse::sign(&payload, IN_TOTO_PAYLOAD, &key))
}

/// What verifying an attestation found: a line per subject and one for the signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// One line per thing checked.
    pub lines: Vec<String>,
    /// What did not match (empty: everything did).
    pub problems: Vec<String>,
}

/// Verify the attestation in `file`: a Statement, or an envelope whose signature must verify
/// with `public_key`. Subjects are found relative to the attestation's directory, else as named.
pub fn verify(file: &Path, public_key: Option<&Path>) -> Result<Verification, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: cannot read: {e}", file.display()))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", file.display()))?;
    let mut lines = Vec::new();
    let mut problems = Vec::new();
    let statement: Value = if value.get("payloadType").is_some() {
        let envelope: Envelope =
            serde_json::from_value(value).map_err(|e| format!("{}: not a DSSE envelope: {e}", file.display()))?;
        let key = public_key.ok_or_else(|| {
            format!("{}: the attestation is signed: give the signer's public key (--public-key FILE)", file.display())
        })?;
        match dsse::open(&envelope, &dsse::read_public(key)?) {
            Ok(payload) => {
                lines.push(format!("signature: ok ({})", key.display()));
                serde_json::from_slice(&payload)
                    .map_err(|e| format!("{}: the payload is not JSON: {e}", file.display()))?
            }
            Err(why) => {
                problems.push(format!("signature: {why}"));
                return Ok(Verification { lines, problems });
            }
        }
    } else {
        if public_key.is_some() {
            problems.push("signature: the attestation is not signed, but a public key was given".to_owned());
        }
        value
    };
    if statement["_type"] != STATEMENT_TYPE || statement["predicateType"] != TEST_RESULT {
        problems.push(format!(
            "{}: not an in-toto Statement with the test-result predicate (_type {}, predicateType {})",
            file.display(),
            statement["_type"],
            statement["predicateType"]
        ));
    }
    let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    for subject in statement["subject"].as_array().into_iter().flatten() {
        let name = subject["name"].as_str().unwrap_or("");
        let expected = subject["digest"]["sha256"].as_str().unwrap_or("");
        let beside = dir.join(name);
        let path = if beside.is_file() { beside } else { PathBuf::from(name) };
        match std::fs::read(&path) {
            Ok(bytes) if sha256_hex(&bytes) == expected => lines.push(format!("{name}: ok (sha256 {expected})")),
            Ok(bytes) => problems.push(format!(
                "{name}: changed: the attestation says sha256 {expected}, {} has {}",
                path.display(),
                sha256_hex(&bytes)
            )),
            Err(e) => problems.push(format!("{name}: missing: cannot read {} ({e})", path.display())),
        }
    }
    lines.push(format!("result: {}", statement["predicate"]["result"].as_str().unwrap_or("?")));
    Ok(Verification { lines, problems })
}
