//! The machine as cases share it: every case of a run holds it shared, a herd case alone. A
//! herd's spread is judged against a lockstep herd's, measured with the machine to itself, so a
//! herd runs with it to itself too: another case's processes beside it would spread the herd as
//! jitter would. On squall's virtual clock nothing is shared and nobody waits.

use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The turns of one suite run's cases on the machine.
#[derive(Debug, Default)]
pub(crate) struct MachineTurns {
    machine: RwLock<()>,
}

/// A case's hold on the machine while it runs: shared, alone, or none on the virtual clock.
pub(crate) struct Turn<'a> {
    _shared: Option<RwLockReadGuard<'a, ()>>,
    _alone: Option<RwLockWriteGuard<'a, ()>>,
}

impl MachineTurns {
    /// Wait for a case's turn: shared, or — for a herd — the machine alone.
    pub(crate) async fn take(&self, herd: bool, virtual_clock: bool) -> Turn<'_> {
        match (virtual_clock, herd) {
            (true, _) => Turn { _shared: None, _alone: None },
            (false, true) => Turn { _shared: None, _alone: Some(self.machine.write().await) },
            (false, false) => Turn { _shared: Some(self.machine.read().await), _alone: None },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Whether a turn can be taken within a moment (it would otherwise wait).
    async fn can_take(turns: &MachineTurns, herd: bool, virtual_clock: bool) -> bool {
        tokio::time::timeout(Duration::from_millis(50), turns.take(herd, virtual_clock)).await.is_ok()
    }

    #[tokio::test]
    async fn cases_share_the_machine_and_a_herd_has_it_alone() {
        let turns = MachineTurns::default();
        let case = turns.take(false, false).await;
        assert!(can_take(&turns, false, false).await, "cases run side by side");
        assert!(!can_take(&turns, true, false).await, "a herd waits for the cases running");
        drop(case);
        let herd = turns.take(true, false).await;
        assert!(!can_take(&turns, false, false).await, "no case starts beside a herd");
        assert!(!can_take(&turns, true, false).await, "nor another herd");
        assert!(can_take(&turns, true, true).await, "on the virtual clock nothing is shared");
        drop(herd);
        assert!(can_take(&turns, false, false).await);
    }
}
