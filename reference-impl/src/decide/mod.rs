//! Deciding what to do about a failure, apart from doing it: the error taxonomy, the safety gate,
//! the retry policy with its waits, and the decision they make together. Nothing here sleeps or
//! sends a request.

pub mod backoff;
pub mod classify;
pub mod decision;
pub mod gate;
pub mod policy;
pub mod retry_after;
