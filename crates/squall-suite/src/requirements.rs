//! The requirements the features encode, and the profiles they belong to.
//!
//! A profile is a set of requirements from one seed document. `prd-0006` — the spec under
//! test — is the default and the sign-off; the others are opt-in (`--profile`, repeatable, or
//! `all`). A run judges only the profiles it selected; requirement ids never change.

use std::fmt;

/// A group of requirements from one seed document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Profile {
    /// `prd-0006`, `seed-002`, ...
    pub id: &'static str,
    /// The seed document it comes from.
    pub title: &'static str,
    /// Requirement ids starting with this belong to the profile.
    prefix: &'static str,
}

/// Every profile, the sign-off first. Requirements matching no prefix belong to [`CUSTOM`].
pub const PROFILES: [Profile; 6] = [
    Profile {
        id: "prd-0006",
        title: "PRD-0006 Provider Retry + Sub-agent Resilience (seed 000, with ECN-0003)",
        prefix: "REQ-0006-",
    },
    Profile { id: "prd-0003", title: "PRD-0003 Context Overflow Control (seed 003)", prefix: "REQ-0003-" },
    Profile { id: "seed-001", title: "Seed 001: one retry pipeline with a safety gate", prefix: "SEED-001-" },
    Profile { id: "seed-002", title: "Seed 002: adaptive retry strategy", prefix: "SEED-002-" },
    Profile { id: "seed-004", title: "Seed 004: timeout retry strategy and degrade", prefix: "SEED-004-" },
    CUSTOM,
];

/// Requirement ids of no seed squall knows (`--features DIR` with other `@REQ-…` tags).
pub const CUSTOM: Profile =
    Profile { id: "custom", title: "Other requirement ids (REQ-*, SEED-*) of your own features", prefix: "" };

/// The profile judged when none is chosen.
pub const DEFAULT_PROFILE: &str = "prd-0006";

impl Profile {
    /// The profile named `id`.
    pub fn by_id(id: &str) -> Option<Profile> {
        PROFILES.into_iter().find(|p| p.id == id)
    }

    /// The profile a requirement id belongs to.
    pub fn of(requirement: &str) -> Profile {
        PROFILES.into_iter().find(|p| !p.prefix.is_empty() && requirement.starts_with(p.prefix)).unwrap_or(CUSTOM)
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id)
    }
}

/// The profiles a run judges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileSelection(Vec<Profile>);

impl Default for ProfileSelection {
    fn default() -> Self {
        ProfileSelection(PROFILES.into_iter().filter(|p| p.id == DEFAULT_PROFILE).collect())
    }
}

/// A profile name squall does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown profile `{0}`; known: {known}", known = UnknownProfile::known())]
pub struct UnknownProfile(pub String);

impl UnknownProfile {
    /// Every name that is known: the profiles, and `all`.
    pub fn known() -> String {
        let mut known: Vec<&str> = PROFILES.iter().map(|p| p.id).collect();
        known.push("all");
        known.join(", ")
    }
}

impl ProfileSelection {
    /// From names such as `prd-0006`, `seed-002` or `all` (several may be given, or one
    /// comma-separated list); none means the default. The error names the unknown profile.
    pub fn parse<S: AsRef<str>>(names: &[S]) -> Result<ProfileSelection, UnknownProfile> {
        let mut chosen = Vec::new();
        for name in names.iter().flat_map(|n| n.as_ref().split(',')).map(str::trim).filter(|n| !n.is_empty()) {
            if name == "all" {
                return Ok(ProfileSelection(PROFILES.to_vec()));
            }
            let profile = Profile::by_id(name).ok_or_else(|| UnknownProfile(name.to_owned()))?;
            if !chosen.contains(&profile) {
                chosen.push(profile);
            }
        }
        if chosen.is_empty() {
            return Ok(ProfileSelection::default());
        }
        chosen.sort_by_key(|p| PROFILES.iter().position(|q| q == p));
        Ok(ProfileSelection(chosen))
    }

    /// The selected profiles, the sign-off first.
    pub fn profiles(&self) -> &[Profile] {
        &self.0
    }

    /// Whether `profile` is selected.
    pub fn contains(&self, profile: Profile) -> bool {
        self.0.contains(&profile)
    }

    /// Whether a case tagged with these requirements is judged by this selection.
    pub fn judges<S: AsRef<str>>(&self, requirements: &[S]) -> bool {
        requirements.iter().any(|r| self.contains(Profile::of(r.as_ref())))
    }

    /// squall's own profiles not selected, for reports to list as "not judged".
    pub fn others(&self) -> Vec<Profile> {
        PROFILES.into_iter().filter(|p| *p != CUSTOM && !self.contains(*p)).collect()
    }

    /// `prd-0006, seed-002`.
    pub fn describe(&self) -> String {
        self.0.iter().map(|p| p.id).collect::<Vec<_>>().join(", ")
    }
}

/// The requirement ids in a case's tags (`@REQ-0006-001` → `REQ-0006-001`).
pub fn requirement_tags<S: AsRef<str>>(tags: &[S]) -> Vec<String> {
    tags.iter()
        .map(|t| t.as_ref().trim_start_matches('@'))
        .filter(|t| t.starts_with("REQ-") || t.starts_with("SEED-"))
        .map(str::to_owned)
        .collect()
}

/// Titles of the requirements squall's features encode.
pub fn requirement_title(id: &str) -> &'static str {
    match id {
        "REQ-0006-001" => "Generic provider retry: timeouts, 408/425/429/5xx, Retry-After; final runtime.error",
        "REQ-0006-002" => "Retry is bounded: max_retries = 6 by default, capped exponential backoff",
        "REQ-0006-010" => {
            "Stream breaks (EOF, reset, truncation, stall) become ProviderTimeoutException and are retried"
        }
        "REQ-0006-020" => "Task(deep-research) failure returns ok=false with error and sub-session fields",
        "REQ-0006-021" => "Deep-research reports: structured on success; cause, sources and resume guidance on failure",
        "REQ-0006-030" => "No retry storm: a failed deep research is not relaunched automatically",
        "REQ-0003-001" => "Tool outputs are budgeted head+tail with a marker before entering provider input",
        "REQ-0003-020" => "Task sub-sessions return small JSON with sub_session_id, report_path and a bounded summary",
        "SEED-001-GATE" => {
            "Safety gate: no automatic replay after visible output, tool calls, quota or context overflow"
        }
        "SEED-001-OBSERVABILITY" => {
            "Every failure has a decision record: retryable, gate, retried, attempt, timeout, outcome"
        }
        "SEED-001-TIMEOUT-LADDER" => "Reasoning timeout ladder: 60 s, then one safe retry at 120 s, no third attempt",
        "SEED-002-PROFILES" => "Per-agent retry profiles: a writing agent 0 retries, a read-only agent 1",
        "SEED-002-JITTER" => "Backoff waits follow base 1 s × 2^n plus a random jitter of 0-1 s",
        "SEED-002-SESSION" => "Retries keep the session id",
        "SEED-004-LIMITS" => "Per-error-kind limits: timeouts 2 attempts, 429/5xx 3",
        "SEED-004-DEGRADE" => "Degrade instead of fail, within 5 minutes",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_belong_to_the_profile_of_their_seed() {
        assert_eq!(Profile::of("REQ-0006-010").id, "prd-0006");
        assert_eq!(Profile::of("REQ-0003-001").id, "prd-0003");
        assert_eq!(Profile::of("SEED-002-JITTER").id, "seed-002");
        assert_eq!(Profile::of("ACME-7").id, "custom");
    }

    #[test]
    fn the_default_is_the_sign_off_and_all_is_every_profile() {
        let default = ProfileSelection::parse::<&str>(&[]).expect("default");
        assert_eq!(default.describe(), "prd-0006");
        assert!(default.judges(&["REQ-0006-001"]) && !default.judges(&["SEED-002-JITTER"]));
        assert_eq!(ProfileSelection::parse(&["all"]).expect("all").profiles().len(), PROFILES.len());
        let two = ProfileSelection::parse(&["seed-002,prd-0006", "seed-002"]).expect("two");
        assert_eq!(two.describe(), "prd-0006, seed-002");
        assert_eq!(two.others().len(), PROFILES.len() - 3, "custom is not listed as not judged");
        let error = ProfileSelection::parse(&["prd-6"]).expect_err("unknown").to_string();
        assert!(error.contains("prd-6") && error.contains("prd-0006") && error.ends_with(", all"), "{error}");
    }
}
