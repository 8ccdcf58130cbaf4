//! The sign-off commands of `squall report`: `attest` (an in-toto test-result Statement of a
//! report, signed into a DSSE envelope with `--key`), `verify` (digests and signature, and
//! exactly what does not match), `keygen` (an Ed25519 key pair) and `diff` (what changed since
//! the last sign-off; exit 1 on a regression).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use squall_suite::report::attest::{self, ENVELOPE_FILE, STATEMENT_FILE};
use squall_suite::report::diff::{diff, markdown};
use squall_suite::report::dsse;
use squall_suite::report::read::read_report;
use squall_suite::report::write_atomically;

use super::stdout;

/// The directory a report path names (a report.json's is its parent).
fn report_dir(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.to_owned()
    } else {
        path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_owned()
    }
}

/// `squall report attest REPORT [--subject FILE]… [--key KEY] [--out FILE]`.
pub(crate) fn attest(
    report: &Path,
    subjects: &[PathBuf],
    key: Option<&Path>,
    out: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let (_, read) = read_report(report).map_err(anyhow::Error::msg)?;
    let dir = report_dir(report);
    let statement = attest::statement(&dir, &read, subjects).map_err(anyhow::Error::msg)?;
    let (text, default_name) = match key {
        Some(key) => {
            let envelope = attest::signed(&statement, key).map_err(anyhow::Error::msg)?;
            (serde_json::to_string_pretty(&envelope)?, ENVELOPE_FILE)
        }
        None => (serde_json::to_string_pretty(&statement)?, STATEMENT_FILE),
    };
    let out = out.unwrap_or_else(|| dir.join(default_name));
    write_atomically(&out, &format!("{text}\n")).with_context(|| format!("cannot write {}", out.display()))?;
    let subjects = statement["subject"].as_array().map_or(0, Vec::len);
    let signed = if key.is_some() { "signed" } else { "unsigned (give --key to sign)" };
    stdout::line(format_args!("attestation of {subjects} subjects, {signed}: {}", out.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// `squall report verify ATTESTATION [--public-key KEY]`: exit 1 when anything does not match.
pub(crate) fn verify(attestation: &Path, public_key: Option<&Path>) -> anyhow::Result<ExitCode> {
    let verification = attest::verify(attestation, public_key).map_err(anyhow::Error::msg)?;
    for line in &verification.lines {
        stdout::line(line)?;
    }
    for problem in &verification.problems {
        stdout::line(format_args!("MISMATCH {problem}"))?;
    }
    if verification.problems.is_empty() {
        stdout::line(format_args!("verified: {}", attestation.display()))?;
        Ok(ExitCode::SUCCESS)
    } else {
        stdout::line(format_args!(
            "NOT verified: {} problem(s) in {}",
            verification.problems.len(),
            attestation.display()
        ))?;
        Ok(ExitCode::from(1))
    }
}

/// `squall report keygen --out KEY`: KEY (private, mode 0600) and KEY.pub.
pub(crate) fn keygen(out: &Path) -> anyhow::Result<ExitCode> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let (private, public) = dsse::generate().map_err(anyhow::Error::msg)?;
    let public_path = PathBuf::from(format!("{}.pub", out.display()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(out)
        .with_context(|| format!("cannot create {} (an existing key is never overwritten)", out.display()))?;
    file.write_all(private.as_bytes())?;
    write_atomically(&public_path, &public).with_context(|| format!("cannot write {}", public_path.display()))?;
    stdout::line(format_args!(
        "Ed25519 key pair: {} (private, keep it secret), {}",
        out.display(),
        public_path.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// `squall report diff OLD NEW [--json FILE] [--markdown FILE]`: Markdown on stdout; exit 1 on a
/// regression.
pub(crate) fn report_diff(old: &Path, new: &Path, json: Option<&Path>, md: Option<&Path>) -> anyhow::Result<ExitCode> {
    let (old_file, old_report) = read_report(old).map_err(anyhow::Error::msg)?;
    let (new_file, new_report) = read_report(new).map_err(anyhow::Error::msg)?;
    let (old_name, new_name) = (old_file.display().to_string(), new_file.display().to_string());
    let found = diff(&old_name, &old_report, &new_name, &new_report)?;
    let text = markdown(&found, &old_name, &new_name);
    if let Some(path) = json {
        write_atomically(path, &format!("{}\n", serde_json::to_string_pretty(&found)?))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = md {
        write_atomically(path, &text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    stdout::line(text.trim_end())?;
    Ok(if found.has_regressions() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
