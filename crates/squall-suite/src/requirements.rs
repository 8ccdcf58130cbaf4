//! The requirements the features encode, and the profiles they belong to.
//!
//! A profile is a set of requirements from one seed document. `prd-0006` — the spec under
//! test — is the default and the sign-off; the others are opt-in (`--profile`, repeatable, or
//! `all`). A run judges only the profiles it selected; requirement ids never change.

use std::fmt;

use crate::clauses::Clause;

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

/// The seed clauses each of squall's requirements is written from: (requirement, seed, line,
/// the seed's words). Held to the seeds verbatim by the integration tests.
const REQUIREMENT_CLAUSES: &[(&str, &str, usize, &str)] = &[
    ("REQ-0006-001", "000", 47, "REQ-0006-001：`OpenAgenticOptions.providerRetry` 从“仅 429”扩展为通用重试策略，覆盖："),
    ("REQ-0006-002", "000", 57, "REQ-0006-002：重试必须可控，默认不启用（保持兼容），由 `providerRetry.maxRetries > 0` 显式开启。"),
    ("REQ-0006-002", "000", 61, "`ProviderRetryOptions.maxRetries` 默认值为 **6**（失败后最多重试 6 次；总尝试最多 7 次）。"),
    ("REQ-0006-002", "000", 62, "退避策略为指数退避并设置上限"),
    ("REQ-0006-010", "000", 66, "REQ-0006-010：`OpenAIResponsesHttpProvider` 在流式读取中出现 EOF/connection reset 时，不直接抛出裸 `EOFException`，而应包装为 `ProviderTimeoutException`（或可识别的 `ProviderException`）。"),
    ("REQ-0006-020", "000", 72, "REQ-0006-020：`Task(deep-research)` 失败时必须返回 `ok=false`，并包含："),
    ("REQ-0006-021", "000", 78, "REQ-0006-021：deep-research 报告文件必须满足："),
    ("REQ-0006-030", "000", 86, "REQ-0006-030：主会话 system prompt 明确规定：当 `Task(deep-research)` 返回 `ok=false` 或 `stop_reason=\"error\"` 时，**不得**自动再次启动 deep-research；应向用户报告失败并给出重试建议。"),
    ("REQ-0003-001", "003", 32, "REQ-0003-001：SDK 在构建 provider input（responses/legacy）时，对 tool outputs 做统一预算化（不依赖 tool 自觉）。"),
    ("REQ-0003-020", "003", 49, "REQ-0003-020：主会话提供 `Task(agent, prompt)`，用于把高噪音任务下沉到子会话执行，并把结果以小 JSON 回传主会话。"),
    ("SEED-001-GATE", "001", 49, "Safe-recovery checks still block automatic retry after visible output, text output, reasoning output where applicable, tool input, materialized tool calls, tool execution, …"),
    ("SEED-001-OBSERVABILITY", "001", 53, "Observability can answer: whether the failure was technically retryable, whether the safety gate allowed it, whether a retry was attempted, which attempt timeout was used, and how the retry ended."),
    ("SEED-001-TIMEOUT-LADDER", "001", 50, "reasoning-model first safe-recovery-eligible attempt uses the shorter timeout, the automatic safe retry keeps the longer timeout, and no automatic third safe-recovery attempt is made."),
    ("SEED-002-PROFILES", "002", 29, "| Coder | 0 | ✅ 是 | 有写入副作用，默认不重试 |"),
    ("SEED-002-PROFILES", "002", 30, "| Codex | 1 | ✅ 是 | 只读操作，默认允许 1 次重试 |"),
    ("SEED-002-JITTER", "002", 38, "等待时间 = base_delay × (2 ^ retry_count) + random_jitter"),
    ("SEED-002-JITTER", "002", 43, "random_jitter: 随机抖动（0-1 秒），避免同时重试"),
    ("SEED-002-SESSION", "002", 139, "重试时必须使用相同的 SESSION_ID"),
    ("SEED-004-LIMITS", "004", 45, "| LLM 层（超时） | 2 | LLMTimeoutError | ~246s |"),
    ("SEED-004-LIMITS", "004", 46, "| LLM 层（其他） | 3 | 429、5xx | ~366s |"),
    ("SEED-004-DEGRADE", "004", 111, "当 `generateSpec` 成功降级（返回而非抛出），batch-orchestrator 应将该模块记录为 `degraded` 状态。"),
    ("SEED-004-DEGRADE", "004", 119, "满足 SC-002（≤5 分钟）"),
];

/// The seed clauses a requirement of squall's is written from (none for one of your own).
pub fn requirement_clauses(id: &str) -> Vec<Clause> {
    REQUIREMENT_CLAUSES
        .iter()
        .filter(|(requirement, ..)| *requirement == id)
        .filter_map(|(_, seed, line, words)| Clause::new(seed, *line, words))
        .collect()
}

/// Every requirement id squall's own features judge.
pub fn known_requirements() -> Vec<&'static str> {
    let mut ids: Vec<&str> = REQUIREMENT_CLAUSES.iter().map(|(id, ..)| *id).collect();
    ids.dedup();
    ids
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
