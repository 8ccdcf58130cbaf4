//! Deep-research reports (REQ-0006-021): a structured report on success; on failure a report
//! that is never empty — the cause (失败原因), every source collected before the failure, and
//! how to resume or retry (续跑建议). Written atomically: a reader sees the old file or the
//! new one, never half of one.

use std::io::Write;
use std::path::Path;

use crate::clock::Clock;

use crate::session::TurnError;
use crate::task::research::Source;

/// The report of a successful deep-research sub-session, with PRD-0006's four sections.
pub fn success_report(prompt: &str, findings: &str, sources: &[Source]) -> String {
    let summary = findings.split("\n\n").next().unwrap_or(findings).trim();
    let key_findings: Vec<String> = findings
        .split(['.', '。', '\n'])
        .map(str::trim)
        .filter(|s| s.len() > 12)
        .take(5)
        .map(|s| format!("- {s}"))
        .collect();
    format!(
        "# Deep research: {prompt}\n\n## 执行摘要 (Executive summary)\n\n{summary}\n\n## 关键发现 (Key findings)\n\n{}\n\n## 详细分析 (Detailed analysis)\n\n{}\n\n## 参考来源 (Sources)\n\n{}\n",
        if key_findings.is_empty() { format!("- {summary}") } else { key_findings.join("\n") },
        findings.trim(),
        source_list(sources),
    )
}

/// The report of a failed deep-research sub-session.
pub fn failure_report(
    prompt: &str,
    error: &TurnError,
    sources: &[Source],
    sub_session_id: &str,
    events_path: &Path,
) -> String {
    format!(
        "# Deep research failed: {prompt}\n\n## 失败原因 (Cause of failure)\n\n{}: {} (after {} provider attempt(s)).\n\n## 已收集来源 (Sources collected before the failure)\n\n{}\n\n## 续跑建议 (How to resume or retry)\n\n- The failure is recorded in sub-session `{sub_session_id}`; its events are in `{}`.\n- Retry when the provider is reachable again: ask for `Task(agent=\"deep-research\")` with the same prompt, and start from the sources above instead of searching again.\n- The main session will not restart deep research on its own (REQ-0006-030): the decision to retry is the user's.\n",
        error.error_type,
        error.message,
        error.attempts,
        source_list(sources),
        events_path.display(),
    )
}

fn source_list(sources: &[Source]) -> String {
    if sources.is_empty() {
        return "- No source was collected before the sub-session ended.".to_owned();
    }
    sources.iter().map(|s| format!("- [{}]({}) — {}", s.title, s.url, s.snippet)).collect::<Vec<_>>().join("\n")
}

/// Write `contents` to `path` through a temporary file and a rename.
pub fn write_atomically(path: &Path, contents: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // Unique per write, so concurrent writers of one path never share a temporary file.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temp = dir.join(format!(".{file_name}.tmp-{}-{n}", std::process::id()));
    let mut file = std::fs::File::create(&temp)?;
    file.write_all(contents.as_bytes())?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&temp, path)
}

/// [`write_atomically`] off the async runtime: the fsync may block for a long time on a busy
/// disk, and a blocked worker would delay every timer on it (retry sleeps included). A simulated
/// `clock` is held still meanwhile.
pub async fn write_atomically_async(path: &Path, contents: String, clock: &dyn Clock) -> std::io::Result<()> {
    let path = path.to_owned();
    let _still = clock.hold();
    match tokio::task::spawn_blocking(move || write_atomically(&path, &contents)).await {
        Ok(result) => result,
        Err(e) => Err(std::io::Error::other(format!("the report writer failed: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source() -> Source {
        Source { url: "https://example.invalid/a".into(), title: "A".into(), snippet: "s".into() }
    }

    #[test]
    fn success_report_has_the_four_sections() {
        let report = success_report(
            "retry",
            "Backoff with jitter works well for transient failures.\n\nMore detail here.",
            &[source()],
        );
        for section in ["执行摘要", "关键发现", "详细分析", "参考来源"] {
            assert!(report.contains(section), "missing {section}");
        }
        assert!(report.contains("https://example.invalid/a"));
    }

    #[test]
    fn failure_report_names_cause_sources_and_how_to_resume() {
        let error = TurnError { error_type: "ProviderTimeoutException".into(), message: "EOF".into(), attempts: 7 };
        let report = failure_report("retry", &error, &[source()], "main-dr1", Path::new("/w/events.jsonl"));
        for needle in ["失败原因", "续跑建议", "ProviderTimeoutException", "https://example.invalid/a", "main-dr1"]
        {
            assert!(report.contains(needle), "missing {needle}");
        }
        assert_ne!(report.trim(), "(empty)");
    }

    proptest::proptest! {
        #[test]
        fn a_failure_report_is_never_empty(
            error_type in "[A-Za-z]{0,30}",
            message in ".{0,200}",
            attempts in 0u32..10,
            urls in proptest::collection::vec("https://[a-z]{1,12}\\.invalid/[a-z]{0,8}", 0..6),
        ) {
            let error = TurnError { error_type, message, attempts };
            let sources: Vec<Source> = urls.iter().map(|u| Source { url: u.clone(), title: "t".into(), snippet: String::new() }).collect();
            let report = failure_report("prompt", &error, &sources, "sub-1", Path::new("/w/events.jsonl"));
            proptest::prop_assert!(report.contains("失败原因") && report.contains("续跑建议") && report.contains("sub-1"));
            proptest::prop_assert!(report.trim() != "(empty)");
            for url in &urls {
                proptest::prop_assert!(report.contains(url.as_str()));
            }
        }
    }

    #[test]
    fn concurrent_writers_of_one_report_leave_one_whole_file() {
        let dir = std::env::temp_dir().join(format!("squall-writers-{}", std::process::id()));
        let path = dir.join("report.md");
        let writers: Vec<_> = ["X", "Y", "Z"]
            .into_iter()
            .map(|letter| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        write_atomically(&path, &letter.repeat(100_000)).expect("write");
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().expect("writer");
        }
        let seen = std::fs::read_to_string(&path).expect("read");
        assert!(["X", "Y", "Z"].iter().any(|l| seen == l.repeat(100_000)), "a mixed report of {} bytes", seen.len());
        assert_eq!(std::fs::read_dir(&dir).expect("dir").count(), 1, "temporary files left behind");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn readers_see_the_old_or_the_new_report_never_half() {
        let dir = std::env::temp_dir().join(format!("squall-atomic-{}", std::process::id()));
        let path = dir.join("report.md");
        let (old, new) = ("A".repeat(256 * 1024), "B".repeat(512 * 1024));
        write_atomically(&path, &old).expect("write");
        let writer = {
            let (path, old, new) = (path.clone(), old.clone(), new.clone());
            std::thread::spawn(move || {
                for i in 0..40 {
                    write_atomically(&path, if i % 2 == 0 { &new } else { &old }).expect("write");
                }
            })
        };
        let mut reads = 0;
        while !writer.is_finished() {
            let seen = std::fs::read_to_string(&path).expect("read");
            assert!(seen == old || seen == new, "a reader saw {} bytes of a half-written report", seen.len());
            reads += 1;
        }
        writer.join().expect("writer");
        assert!(reads > 0);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn atomic_write_replaces_the_file_whole() {
        let dir = std::env::temp_dir().join(format!("squall-report-{}", std::process::id()));
        let path = dir.join("report.md");
        write_atomically(&path, "old").expect("write");
        write_atomically(&path, "new").expect("write");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "new");
        let leftovers = std::fs::read_dir(&dir).expect("dir").count();
        assert_eq!(leftovers, 1, "no temporary file left behind");
        let _ = std::fs::remove_dir_all(dir);
    }
}
