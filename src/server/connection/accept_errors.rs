//! What the accept loop says when accepting fails: at most a line a second (a server out of
//! descriptors fails every retry), and for running out of descriptors, why and what to raise.

use std::io;
use std::time::{Duration, Instant};

/// `EMFILE` and `ENFILE` on Linux: the process's or the system's descriptors are used up.
const OUT_OF_DESCRIPTORS: [i32; 2] = [24, 23];

/// The longest the loop stays silent about failures that go on.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// Failures since the last line, and when that line was said.
#[derive(Debug, Default)]
pub(in crate::server) struct AcceptErrors {
    said_at: Option<Instant>,
    unsaid: u64,
}

impl AcceptErrors {
    /// The line to print for `error` with `open` connections open, or `None` while the last line
    /// is less than a second old (the failure is counted for the next one).
    pub(in crate::server) fn line(&mut self, error: &io::Error, open: usize, now: Instant) -> Option<String> {
        if self.said_at.is_some_and(|at| now.duration_since(at) < QUIET_FOR) {
            self.unsaid += 1;
            return None;
        }
        let more = std::mem::take(&mut self.unsaid);
        self.said_at = Some(now);
        let repeated = if more > 0 { format!(" ({more} more failures since the last line)") } else { String::new() };
        let why = if error.raw_os_error().is_some_and(|code| OUT_OF_DESCRIPTORS.contains(&code)) {
            format!(
                " with {open} connections open: each holds a descriptor (its socket), so `ulimit -n` must exceed the connections you expect; new connections wait in the kernel's queue until one closes"
            )
        } else {
            String::new()
        };
        Some(format!("squall: accept failed: {error}{why}{repeated}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_out_of_descriptors_says_why_once_a_second() {
        let mut errors = AcceptErrors::default();
        let emfile = io::Error::from_raw_os_error(24);
        let start = Instant::now();
        let first = errors.line(&emfile, 9_990, start).expect("the first failure is said");
        assert!(first.contains("with 9990 connections open: each holds a descriptor"), "{first}");
        assert!(first.contains("`ulimit -n`"), "{first}");
        for n in 1..100 {
            assert_eq!(errors.line(&emfile, 9_990, start + Duration::from_millis(n * 10)), None);
        }
        let next = errors.line(&emfile, 9_990, start + Duration::from_secs(1)).expect("a second later");
        assert!(next.ends_with("(99 more failures since the last line)"), "{next}");
        let other = errors.line(&io::Error::other("boom"), 3, start + Duration::from_secs(3)).expect("said");
        assert_eq!(other, "squall: accept failed: boom");
    }
}
