//! Gate: is it *safe* to replay this failed attempt automatically? (seed 001)
//!
//! A pure function over what the attempt observed. Technical retryability is `classify`'s
//! question; the gate only ever says no to a retry the classifier would allow. This is how
//! PRD-0006 (retry a broken stream) and seed 001 (never replay after visible output) are both
//! met: a stream that broke before anything reached the user is replayed, one that already
//! showed text is not. Output buffered where nobody saw it (a sub-session before its report)
//! does not count as visible.

use crate::decide::classify::{ErrorKind, ProviderError};

/// What happened during an attempt before it failed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AttemptObservation {
    /// Text or reasoning reached the user.
    pub visible_output: bool,
    /// Output arrived but was buffered, not shown (does not block a replay).
    pub buffered_output: bool,
    /// The model started a tool call (its input materialised).
    pub tool_call_started: bool,
    /// A tool ran during the attempt.
    pub tool_executed: bool,
    /// The user cancelled.
    pub user_cancelled: bool,
    /// The session's lifecycle closed (shutdown, turn aborted).
    pub lifecycle_closed: bool,
}

/// Why the gate refused a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockReason {
    /// The user has seen output of this attempt.
    VisibleOutput,
    /// The model called a tool in this attempt.
    ToolCall,
    /// A tool of this attempt has run (it may have had effects).
    ToolExecuted,
    /// The user cancelled.
    UserCancelled,
    /// The session or task around the call has ended.
    LifecycleClosed,
    /// The account's quota is used up: a retry cannot succeed.
    Quota,
    /// The request is too long for the model: a retry cannot succeed.
    ContextOverflow,
}

impl BlockReason {
    /// The reason as decision records name it (`visible_output`, `tool_call`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            BlockReason::VisibleOutput => "visible_output",
            BlockReason::ToolCall => "tool_call",
            BlockReason::ToolExecuted => "tool_executed",
            BlockReason::UserCancelled => "user_cancelled",
            BlockReason::LifecycleClosed => "lifecycle_closed",
            BlockReason::Quota => "quota",
            BlockReason::ContextOverflow => "context_overflow",
        }
    }
}

/// The gate's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateVerdict {
    /// The replay is safe.
    Allow,
    /// The replay is refused, for this reason.
    Block(BlockReason),
}

impl GateVerdict {
    /// Whether the replay is allowed.
    pub fn allows(self) -> bool {
        self == GateVerdict::Allow
    }

    /// `allowed`, or the reason as decision records name it.
    pub fn as_str(self) -> &'static str {
        match self {
            GateVerdict::Allow => "allowed",
            GateVerdict::Block(reason) => reason.as_str(),
        }
    }
}

/// May this failed attempt be replayed automatically?
pub fn gate(error: &ProviderError, observed: &AttemptObservation) -> GateVerdict {
    let block = if observed.user_cancelled || error.kind == ErrorKind::Cancelled {
        Some(BlockReason::UserCancelled)
    } else if observed.lifecycle_closed {
        Some(BlockReason::LifecycleClosed)
    } else if error.kind == ErrorKind::Quota {
        Some(BlockReason::Quota)
    } else if error.kind == ErrorKind::ContextOverflow {
        Some(BlockReason::ContextOverflow)
    } else if observed.tool_executed {
        Some(BlockReason::ToolExecuted)
    } else if observed.tool_call_started {
        Some(BlockReason::ToolCall)
    } else if observed.visible_output {
        Some(BlockReason::VisibleOutput)
    } else {
        None
    };
    block.map_or(GateVerdict::Allow, GateVerdict::Block)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::classify::{classify_transport, TransportFailure};

    fn eof() -> ProviderError {
        classify_transport(TransportFailure::Eof, "")
    }

    #[test]
    fn a_break_before_any_output_may_be_replayed() {
        assert_eq!(gate(&eof(), &AttemptObservation::default()), GateVerdict::Allow);
    }

    #[test]
    fn never_replays_after_visible_output() {
        let observed = AttemptObservation { visible_output: true, ..Default::default() };
        assert_eq!(gate(&eof(), &observed), GateVerdict::Block(BlockReason::VisibleOutput));
    }

    #[test]
    fn buffered_output_does_not_block() {
        let observed = AttemptObservation { buffered_output: true, ..Default::default() };
        assert!(gate(&eof(), &observed).allows());
    }

    #[test]
    fn tool_calls_cancel_and_lifecycle_block() {
        for (observed, reason) in [
            (AttemptObservation { tool_call_started: true, ..Default::default() }, BlockReason::ToolCall),
            (AttemptObservation { tool_executed: true, ..Default::default() }, BlockReason::ToolExecuted),
            (AttemptObservation { user_cancelled: true, ..Default::default() }, BlockReason::UserCancelled),
            (AttemptObservation { lifecycle_closed: true, ..Default::default() }, BlockReason::LifecycleClosed),
        ] {
            assert_eq!(gate(&eof(), &observed), GateVerdict::Block(reason));
        }
    }

    #[test]
    fn quota_and_context_overflow_are_blocked_whatever_was_observed() {
        let quota = ProviderError::new(ErrorKind::Quota, "q");
        let overflow = ProviderError::new(ErrorKind::ContextOverflow, "c");
        assert_eq!(gate(&quota, &AttemptObservation::default()), GateVerdict::Block(BlockReason::Quota));
        assert_eq!(gate(&overflow, &AttemptObservation::default()), GateVerdict::Block(BlockReason::ContextOverflow));
    }
}
