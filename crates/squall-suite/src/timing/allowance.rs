//! What a busy machine may do to an outside client's timing, as verdicts allow for it. The
//! machine can only hold a client back — lengthen a wait or an attempt — never hurry it; so each
//! timing check reads the outcome a longer span would favour with a hold allowed at each wait
//! and attempt ([`MOMENT`]), and confirms a miss with a hold no machine exceeds ([`STALL`]).
//! On squall's virtual clock nothing holds a client back: [`Allowance::NONE`].

use serde::Serialize;

/// Real milliseconds a busy machine may hold a client back at each wait and attempt, beyond its
/// calibrated reaction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Allowance {
    /// Real milliseconds at each wait and attempt.
    pub held_back_ms: f64,
}

impl Allowance {
    /// Nothing: the virtual clock, where every span is exact.
    pub const NONE: Allowance = Allowance { held_back_ms: 0.0 };
}

/// What a verdict allows a busy machine at each wait and attempt of a client that runs in real
/// time: about twice the longest hold beyond a client's calibrated reaction measured with both
/// cores of the 2-core runner kept busy (docs/testing.md, "Stability").
pub const MOMENT: Allowance = Allowance { held_back_ms: 25.0 };

/// What a miss must survive to be certain without a slower run: a stall of a second at each wait
/// and attempt, read with a client that reacts in no time at all (fifteen times the widest
/// reaction calibrated on the runner; docs/testing.md).
pub const STALL: Allowance = Allowance { held_back_ms: 1_000.0 };

/// Which outcome of a timing check a longer span can fake, and so which is read with the
/// [`MOMENT`] allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lengthened {
    /// A lower bound, or evidence that must stand out (jitter, a herd's spread): a held-back
    /// client can look as if it met it. Its pass is read with the moment.
    CanPass,
    /// An upper bound: a held-back client can look as if it missed. Its miss is read with the
    /// moment (a client a moment late is not failed for it).
    CanMiss,
    /// A shape over several spans (growth, a window): either. Both are read with the moment.
    Either,
}

impl Lengthened {
    /// Whether a pass must hold with the moment allowed.
    pub fn pass_needs_moment(self) -> bool {
        self != Lengthened::CanMiss
    }

    /// Whether a miss must hold with the moment allowed.
    pub fn miss_needs_moment(self) -> bool {
        self != Lengthened::CanPass
    }
}
