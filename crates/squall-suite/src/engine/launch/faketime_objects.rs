//! What the `faketime` program leaves behind when it is killed, and its removal.
//!
//! `faketime` keeps its clock's frame in a semaphore and a shared memory object named after its
//! own process id (`/dev/shm/sem.faketime_sem_<pid>`, `/dev/shm/faketime_shm_<pid>`), created
//! exclusively at its start and removed when its process tree has ended. Killed, it removes
//! nothing; a later `faketime` that gets the same process id then refuses to start
//! (`faketime: sem_open: File exists`) and the case's client is lost. With process ids
//! recycled within 32,768, a handful of leftovers fails one start in a few thousand: a suite
//! starts thousands. So every kill of squall's removes the killed process's objects before it
//! is reaped (until then no other process can have its id), and a run first removes those left
//! by a squall that was itself killed.

use std::path::{Path, PathBuf};

/// Where glibc keeps named semaphores and shared memory.
const SHARED_MEMORY: &str = "/dev/shm";

/// The names `faketime` gives its objects, before its process id.
const PREFIXES: [&str; 2] = ["sem.faketime_sem_", "faketime_shm_"];

/// Remove what a `faketime` with process id `pid` left, if it was one: call it once the process
/// is killed and before it is reaped.
pub(super) fn remove_left_by(pid: u32) {
    for prefix in PREFIXES {
        let _ = std::fs::remove_file(Path::new(SHARED_MEMORY).join(format!("{prefix}{pid}")));
    }
}

/// Remove every object of a `faketime` that is no longer running (those of another user's stay:
/// `/dev/shm` lets only their owner remove them).
pub(super) fn remove_stale() {
    let Ok(entries) = std::fs::read_dir(SHARED_MEMORY) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(faketime_pid) else { continue };
        if !is_running_faketime(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The process id in one of `faketime`'s object names.
fn faketime_pid(name: &str) -> Option<u32> {
    PREFIXES.iter().find_map(|prefix| name.strip_prefix(prefix)?.parse().ok())
}

/// Whether `pid` is a `faketime` process now (it creates its objects after it has become one,
/// and removes them before it ends, so a running one's are never taken for stale).
fn is_running_faketime(pid: u32) -> bool {
    let comm: PathBuf = ["/proc", &pid.to_string(), "comm"].iter().collect();
    std::fs::read_to_string(comm).is_ok_and(|name| name.trim_end() == "faketime")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A `faketime` process running `sleep` through `sh` (which writes faketime's id to
    /// `pid_file`), as squall starts a client on the sped-up clock.
    fn faketime_sleeping(pid_file: &Path) -> Vec<String> {
        let script = format!("echo $PPID > '{}'; exec sleep 30", pid_file.display());
        ["faketime", "-f", "+0 x1", "sh", "-c", &script].map(str::to_owned).to_vec()
    }

    /// The process id written to `file`, once it is.
    async fn written_pid(file: &Path) -> u32 {
        for _ in 0..500 {
            if let Some(pid) = std::fs::read_to_string(file).ok().and_then(|text| text.trim().parse().ok()) {
                return pid;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{} was never written", file.display());
    }

    fn objects_of(pid: u32) -> Vec<PathBuf> {
        PREFIXES
            .iter()
            .map(|prefix| Path::new(SHARED_MEMORY).join(format!("{prefix}{pid}")))
            .filter(|p| p.exists())
            .collect()
    }

    #[tokio::test]
    async fn a_faketime_killed_at_the_timeout_or_with_its_case_dropped_leaves_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        // Killed at the timeout.
        let at_timeout = dir.path().join("at_timeout");
        let argv = faketime_sleeping(&at_timeout);
        let end = super::super::command::run(&argv, &[], Duration::from_secs(1), std::future::pending())
            .await
            .expect("faketime runs (scripts/setup-sdks.sh installs it)");
        assert!(end.timed_out, "{end:?}");
        let pid = written_pid(&at_timeout).await;
        assert_eq!(objects_of(pid), Vec::<PathBuf>::new(), "killed at the timeout");
        // The case's future dropped while its process runs.
        let dropped = dir.path().join("dropped");
        let argv = faketime_sleeping(&dropped);
        let running = super::super::command::run(&argv, &[], Duration::from_secs(30), std::future::pending());
        let watch = async {
            let pid = written_pid(&dropped).await;
            assert_eq!(objects_of(pid).len(), 2, "a running faketime has its semaphore and shared memory");
            pid
        };
        let pid = tokio::select! {
            _ = running => panic!("the sleep outlived the watch"),
            pid = watch => pid,
        };
        assert_eq!(objects_of(pid), Vec::<PathBuf>::new(), "killed with its case dropped");
    }

    #[tokio::test]
    async fn only_a_faketime_no_longer_running_has_its_objects_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pid_file = dir.path().join("running");
        let mut running = tokio::process::Command::new("faketime")
            .args(&faketime_sleeping(&pid_file)[1..])
            .kill_on_drop(true)
            .spawn()
            .expect("faketime runs (scripts/setup-sdks.sh installs it)");
        let live = written_pid(&pid_file).await;
        // What a faketime killed long ago left, under an id no process has (Linux gives ids
        // below 2^22).
        let dead = 4_194_304;
        let stale = Path::new(SHARED_MEMORY).join(format!("faketime_shm_{dead}"));
        std::fs::write(&stale, b"").expect("a stale object");
        remove_stale();
        assert!(!stale.exists(), "the stale object is removed");
        assert_eq!(objects_of(live).len(), 2, "a running faketime keeps its objects");
        running.kill().await.expect("killed");
        remove_left_by(live);
        assert_eq!(objects_of(live), Vec::<PathBuf>::new());
    }

    #[test]
    fn only_faketime_object_names_give_a_process_id() {
        assert_eq!(faketime_pid("sem.faketime_sem_4242"), Some(4242));
        assert_eq!(faketime_pid("faketime_shm_17"), Some(17));
        assert_eq!(faketime_pid("faketime_shm_"), None);
        assert_eq!(faketime_pid("sem.other_4242"), None);
        assert_eq!(faketime_pid("faketime_shm_12x"), None);
    }
}
