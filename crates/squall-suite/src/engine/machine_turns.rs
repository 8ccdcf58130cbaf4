//! The machine as cases share it: every case of a run holds it shared, a herd case alone. A
//! herd's spread is judged against a lockstep herd's, measured with the machine to itself, so a
//! herd runs with it to itself too: another case's processes beside it would spread the herd as
//! jitter would. On squall's virtual clock nothing is shared and nobody waits.
//!
//! Each case also holds one of the run's slots (`--concurrency` of them) while it runs; a case
//! that draws its runs again takes the slots no case holds (at the end of a run, when the cases
//! left are fewer than the slots) and runs that many draws at once.

use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard, Semaphore, SemaphorePermit};

/// The turns of one suite run's cases on the machine.
#[derive(Debug)]
pub(crate) struct MachineTurns {
    machine: RwLock<()>,
    /// One for each case the run may run at once.
    slots: Semaphore,
}

/// A case's hold on the machine while it runs: shared, alone, or none on the virtual clock.
pub(crate) struct Turn<'a> {
    _shared: Option<RwLockReadGuard<'a, ()>>,
    _alone: Option<RwLockWriteGuard<'a, ()>>,
    _slot: Option<SemaphorePermit<'a>>,
}

impl MachineTurns {
    /// The turns of a run of `concurrency` cases at once.
    pub(crate) fn new(concurrency: usize) -> MachineTurns {
        MachineTurns { machine: RwLock::new(()), slots: Semaphore::new(concurrency.max(1)) }
    }

    /// Wait for a case's turn: shared, or — for a herd — the machine alone; and a slot.
    pub(crate) async fn take(&self, herd: bool, virtual_clock: bool) -> Turn<'_> {
        if virtual_clock {
            return Turn { _shared: None, _alone: None, _slot: None };
        }
        let (shared, alone) = match herd {
            true => (None, Some(self.machine.write().await)),
            false => (Some(self.machine.read().await), None),
        };
        Turn { _shared: shared, _alone: alone, _slot: self.slots.acquire().await.ok() }
    }

    /// Up to `most` slots no case holds now, taken without waiting (released when dropped).
    pub(crate) fn spare(&self, most: usize) -> Vec<SemaphorePermit<'_>> {
        std::iter::from_fn(|| self.slots.try_acquire().ok()).take(most).collect()
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
        let turns = MachineTurns::new(2);
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

    #[tokio::test]
    async fn a_case_takes_the_slots_no_case_holds_and_gives_them_back() {
        let turns = MachineTurns::new(3);
        let case = turns.take(false, false).await;
        let spare = turns.spare(5);
        assert_eq!(spare.len(), 2, "three slots, one held by the case");
        assert!(!can_take(&turns, false, false).await, "no case starts while its draws hold the rest");
        drop(spare);
        let other = turns.take(false, false).await;
        assert_eq!(turns.spare(5).len(), 1, "two cases running leave one");
        drop((case, other));
        assert_eq!(turns.spare(1).len(), 1, "no more than asked");
    }
}
