//! The body a reply template filled last, kept so that the next request that differs from it
//! only in its id seed — every request of one client within the same second — costs one copy of
//! that body with the new seed written over the old, not a fill piece by piece (171 copies and
//! five allocations for a 50-event stream: a quarter of the instructions squall spent serving it).

use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::plan::Span;
use super::ReplyContext;

/// A filled body, what it was filled with besides its id seed, and where its seeds are.
#[derive(Debug)]
pub(super) struct Filled {
    model: String,
    created_at: u64,
    input_tokens: u64,
    seed_len: usize,
    bytes: Bytes,
    spans: Vec<Span>,
    /// Where each id seed starts in `bytes`.
    seeds: Vec<usize>,
}

impl Filled {
    /// `bytes` and `spans` as filled for `ctx`, its id seed at each of `seeds`.
    pub(super) fn new(ctx: &ReplyContext, bytes: Bytes, spans: Vec<Span>, seeds: Vec<usize>) -> Self {
        Filled {
            model: ctx.model.clone(),
            created_at: ctx.created_at,
            input_tokens: ctx.input_tokens,
            seed_len: ctx.id_seed.len(),
            bytes,
            spans,
            seeds,
        }
    }

    /// Filled for a context like `ctx` but for the seed, which has the same length: the spans'
    /// lengths and the seeds' places hold.
    fn fits(&self, ctx: &ReplyContext) -> bool {
        self.seed_len == ctx.id_seed.len()
            && self.created_at == ctx.created_at
            && self.input_tokens == ctx.input_tokens
            && self.model == ctx.model
    }
}

/// The last body one template filled (shared by every thread that serves it).
#[derive(Debug, Default)]
pub(super) struct LastFill(Mutex<Option<Arc<Filled>>>);

impl LastFill {
    /// The last body, filled again for `ctx`, when it differs from `ctx` in its seed alone.
    pub(super) fn refill(&self, ctx: &ReplyContext) -> Option<(Bytes, Vec<Span>)> {
        // Held only to take the body: the copy is made after.
        let last = self.0.lock().ok()?.clone()?;
        if !last.fits(ctx) {
            return None;
        }
        let mut bytes = last.bytes.to_vec();
        let seed = ctx.id_seed.as_bytes();
        for &at in &last.seeds {
            bytes[at..at + seed.len()].copy_from_slice(seed);
        }
        Some((Bytes::from(bytes), last.spans.clone()))
    }

    /// Keep `filled` as the last body.
    pub(super) fn keep(&self, filled: Filled) {
        if let Ok(mut last) = self.0.lock() {
            *last = Some(Arc::new(filled));
        }
    }
}
