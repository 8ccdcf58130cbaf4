//! Reference implementation of PRD-0006 (skeleton; see issue 3).
