//! Provenance: what a run judged with, and where — squall's build, a digest of every feature
//! file and of the scenario each case played, the machine and its load while the run went on —
//! so that a report can be audited, and any case repeated alone. Nothing secret is recorded:
//! no environment, no keys, no paths beyond the features directory's file names.

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use crate::digest::sha256_hex;

/// Everything a report records of where its verdicts came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The squall that judged.
    pub squall: Build,
    /// The feature files read, each with its digest and the cases of it that ran.
    pub features: Vec<FeatureDigest>,
    /// The implementation: how it was run, and what it says of itself.
    pub implementation: Implementation,
    /// The machine, and its load.
    pub host: Host,
    /// Each case: the scenario it played, and the command that runs it alone.
    pub cases: Vec<CaseOrigin>,
}

/// The implementation under test, as provenance records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Implementation {
    /// The command that ran it, or `reference (in-process)`.
    pub command: String,
    /// What it says of itself in `result.json`'s optional `implementation` (the first case's
    /// that has one); absent when it says nothing.
    pub reported: Option<SelfDescription>,
}

/// `result.json`'s `implementation`: `{"name": "openai-python", "version": "1.109.1"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelfDescription {
    /// Its name.
    pub name: String,
    /// Its version, if it gave one.
    pub version: Option<String>,
    /// What it runs on (`CPython 3.12.3`, `node v22.11.0`), if it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
}

impl SelfDescription {
    /// What a `result.json` says, when it has an `implementation` with a string `name`.
    pub fn of(result: &serde_json::Value) -> Option<SelfDescription> {
        let about = result.get("implementation")?;
        Some(SelfDescription {
            name: about.get("name")?.as_str()?.to_owned(),
            version: about.get("version").and_then(|v| v.as_str()).map(str::to_owned),
            runtime: about.get("runtime").and_then(|v| v.as_str()).map(str::to_owned),
        })
    }
}

/// One case's origin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseOrigin {
    /// The case's id.
    pub id: String,
    /// The SHA-256 of the scenario the server played, as JSON.
    pub scenario_sha256: Option<String>,
    /// The command that runs this case alone, as the run ran it.
    pub reproduce: String,
}

/// `text` as one shell word: as it is when it needs no quoting, else in single quotes.
pub fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The squall that judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Build {
    /// Its version.
    pub version: String,
    /// The git commit the checkout it was built from was at (changes not yet committed are not
    /// told apart); absent when it was not built from a checkout.
    pub commit: Option<String>,
    /// The Rust compiler that built it (`rustc 1.91.0 (…)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rustc: Option<String>,
}

impl Build {
    /// This build.
    pub fn this() -> Build {
        Build {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            commit: option_env!("SQUALL_GIT_COMMIT").filter(|c| !c.is_empty()).map(str::to_owned),
            rustc: option_env!("SQUALL_RUSTC").filter(|c| !c.is_empty()).map(str::to_owned),
        }
    }
}

/// A feature file that was read, and how many of its cases ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureDigest {
    /// Its file name (`REQ-0006-001.feature`).
    pub file: String,
    /// The SHA-256 of its bytes, in hex.
    pub sha256: String,
    /// Its cases that ran.
    pub cases: usize,
}

/// The machine the run was on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Host {
    /// `linux`, `macos`, …
    pub os: String,
    /// `x86_64`, `aarch64`, …
    pub arch: String,
    /// Cores the process could use.
    pub cores: usize,
    /// The 1-, 5- and 15-minute load averages when the run began (Linux only).
    pub load_at_start: Option<[f64; 3]>,
    /// The same when it ended.
    pub load_at_end: Option<[f64; 3]>,
}

impl Host {
    /// This machine now; [`Host::ended`] adds the load at the end.
    pub fn now() -> Host {
        Host {
            os: std::env::consts::OS.to_owned(),
            arch: std::env::consts::ARCH.to_owned(),
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            load_at_start: load_average(),
            load_at_end: None,
        }
    }

    /// With the load at the end of the run.
    pub fn ended(self) -> Host {
        Host { load_at_end: load_average(), ..self }
    }
}

/// `/proc/loadavg`'s three averages.
fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut numbers = text.split_whitespace().map(str::parse::<f64>);
    Some([numbers.next()?.ok()?, numbers.next()?.ok()?, numbers.next()?.ok()?])
}

/// Every `.feature` file in `dir`, digested, with the number of `case_ids` of each (a case id
/// begins with its feature's id, [`crate::cases::case_id`]); in file name order.
pub fn feature_digests<'a>(dir: &Path, case_ids: impl Iterator<Item = &'a str> + Clone) -> Vec<FeatureDigest> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut digests: Vec<FeatureDigest> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "feature"))
        .filter_map(|path| {
            let file = path.file_name()?.to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).ok()?;
            let prefix = crate::cases::case_id(&file, "");
            let cases = case_ids.clone().filter(|id| id.starts_with(&prefix)).count();
            Some(FeatureDigest { sha256: sha256_hex(&bytes), file, cases })
        })
        .collect();
    digests.sort_by(|a, b| a.file.cmp(&b.file));
    digests
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_quote_only_what_needs_it() {
        assert_eq!(shell_word("reference:no-jitter"), "reference:no-jitter");
        assert_eq!(shell_word("python a.py"), "'python a.py'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }

    #[test]
    fn a_self_description_needs_a_name() {
        let said = serde_json::json!({"implementation": {"name": "openai-python", "version": "1.2.3"}});
        assert_eq!(SelfDescription::of(&said).map(|s| s.version), Some(Some("1.2.3".to_owned())));
        assert_eq!(SelfDescription::of(&serde_json::json!({"implementation": {"version": "1"}})), None);
    }

    #[test]
    fn a_digest_is_sha_256_in_hex() {
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn feature_digests_count_each_files_cases() {
        let dir = tempfile::tempdir().expect("a directory");
        std::fs::write(dir.path().join("REQ-1.feature"), "Feature: one").expect("writes");
        std::fs::write(dir.path().join("notes.md"), "not a feature").expect("writes");
        let ids = ["req-1/a", "req-1/b", "req-2/c"];
        let digests = feature_digests(dir.path(), ids.iter().copied());
        assert_eq!(digests.len(), 1);
        assert_eq!((digests[0].file.as_str(), digests[0].cases), ("REQ-1.feature", 2));
        assert_eq!(digests[0].sha256, sha256_hex(b"Feature: one"));
    }
}
