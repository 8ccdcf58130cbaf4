//! Building scenarios in code, for Rust tests that embed squall: the same model the TOML files
//! describe, with constructors that read like the wire.
//!
//! ```
//! use squall::scenario::{Attempt, Scenario};
//! let scenario = Scenario::named("flaky")
//!     .attempt(Attempt::status(429).header("retry-after", "2"))
//!     .attempt(Attempt::text("The quick brown fox").reset_after_events(3))
//!     .attempt(Attempt::text("The quick brown fox"));
//! assert_eq!(scenario.attempts.len(), 3);
//! ```

use crate::scenario_model::{
    AfterScript, Attempt, Chaos, ErrorSpec, Fault, FaultKind, FaultPoint, FunctionCallSpec, Outage, Quota, Scenario,
    StreamFailure, StreamSpec,
};

impl Scenario {
    /// An empty scenario: every request gets a plain `OK` until attempts are added.
    pub fn named(name: &str) -> Self {
        Scenario {
            name: name.to_owned(),
            description: String::new(),
            requirements: Vec::new(),
            after: AfterScript::RepeatLast,
            attempts: Vec::new(),
            tracks: Vec::new(),
            outage: Vec::new(),
            chaos: None,
            quota: None,
        }
    }

    /// Add a rate quota shared by the run: requests and tokens per minute of policy time.
    pub fn quota(mut self, requests_per_minute: Option<u32>, tokens_per_minute: Option<u32>) -> Self {
        self.quota = Some(Quota { requests_per_minute, tokens_per_minute });
        self
    }

    /// Add seeded chaos: a share `rate` of model requests get one of `mix`'s outcomes, by weight
    /// (all alike when `mix` is empty).
    pub fn chaos(mut self, seed: Option<u64>, rate: f64, mix: &[(&str, u32)]) -> Self {
        let mix = mix.iter().map(|(outcome, weight)| ((*outcome).to_owned(), *weight)).collect();
        self.chaos = Some(Chaos { seed, rate, mix });
        self
    }

    /// Add a run-wide outage.
    pub fn outage(mut self, outage: Outage) -> Self {
        self.outage.push(outage);
        self
    }

    /// Add the next attempt of the default track.
    pub fn attempt(mut self, attempt: Attempt) -> Self {
        self.attempts.push(attempt);
        self
    }

    /// What requests beyond the script get.
    pub fn after(mut self, after: AfterScript) -> Self {
        self.after = after;
        self
    }
}

impl Attempt {
    /// An error reply with this status and OpenAI's default error body for it.
    pub fn status(status: u16) -> Self {
        Attempt { status: Some(status), ..Attempt::default() }
    }

    /// A successful reply with this text (streamed when the client asks for a stream).
    pub fn text(text: &str) -> Self {
        Attempt {
            stream: Some(StreamSpec { text: Some(text.to_owned()), ..StreamSpec::default() }),
            ..Attempt::default()
        }
    }

    /// A reply that calls a tool.
    pub fn function_call(name: &str, arguments: &str) -> Self {
        let call = FunctionCallSpec { name: name.to_owned(), arguments: arguments.to_owned(), call_id: None };
        Attempt {
            stream: Some(StreamSpec { function_call: Some(call), ..StreamSpec::default() }),
            ..Attempt::default()
        }
    }

    /// A stream that fails in-band with this OpenAI error code (`response.failed`).
    pub fn stream_failure(code: &str, message: &str) -> Self {
        let fail =
            StreamFailure { code: code.to_owned(), message: Some(message.to_owned()), ..StreamFailure::default() };
        Attempt { stream: Some(StreamSpec { fail: Some(fail), ..StreamSpec::default() }), ..Attempt::default() }
    }

    /// Add a response header (`retry-after`, `x-should-retry`, `@now+3s` templates, ...).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.insert(name.to_owned(), value.to_owned());
        self
    }

    /// Set the error code of a status reply (`insufficient_quota`, ...).
    pub fn error_code(mut self, code: &str) -> Self {
        self.error.get_or_insert_with(ErrorSpec::default).code = Some(code.to_owned());
        self
    }

    /// Wait this long before sending the response headers.
    pub fn with_delay_ms(mut self, ms: u64) -> Self {
        self.delay_ms = Some(ms);
        self
    }

    /// Wait this long between stream events.
    pub fn with_event_delay_ms(mut self, ms: u64) -> Self {
        self.event_delay_ms = Some(ms);
        self
    }

    fn fault(self, kind: FaultKind, after_events: u32, ms: Option<u64>) -> Self {
        self.fault_at(Fault { ms, ..Fault::at(kind, FaultPoint::Events(after_events)) })
    }

    /// Any fault, at any point: `Fault::at(FaultKind::Reset, FaultPoint::Deltas(0))` resets the
    /// stream right before its first output in whichever API the client speaks.
    pub fn fault_at(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }

    /// `kind` right before the first output (text, reasoning or tool-call arguments), after the
    /// framing events, in whichever API the client speaks: nothing visible reached the client.
    pub fn breaks_before_output(self, kind: FaultKind) -> Self {
        self.breaks_after_deltas(kind, 0)
    }

    /// `kind` after `n` output deltas — pieces of text, reasoning or tool-call arguments —
    /// counted alike in every API: the client has shown `n` pieces when the stream breaks.
    pub fn breaks_after_deltas(self, kind: FaultKind, n: u32) -> Self {
        self.fault_at(Fault::at(kind, FaultPoint::Deltas(n)))
    }

    /// A TCP reset after `n` complete events.
    pub fn reset_after_events(self, n: u32) -> Self {
        self.fault(FaultKind::Reset, n, None)
    }

    /// A FIN mid-body after `n` complete events.
    pub fn eof_after_events(self, n: u32) -> Self {
        self.fault(FaultKind::Eof, n, None)
    }

    /// A clean end of body after `n` events, without the terminal event.
    pub fn truncate_after_events(self, n: u32) -> Self {
        self.fault(FaultKind::Truncate, n, None)
    }

    /// Silence after `n` events: for `ms`, or until the client gives up.
    pub fn stall_after_events(self, n: u32, ms: Option<u64>) -> Self {
        self.fault(FaultKind::Stall, n, ms)
    }

    /// Bytes that are not SSE after `n` events.
    pub fn garbage_after_events(self, n: u32) -> Self {
        self.fault(FaultKind::Garbage, n, None)
    }
}

impl Outage {
    /// Every model request between `from_ms` and `until_ms` of policy time gets `reply`.
    pub fn between(from_ms: u64, until_ms: u64, reply: Attempt) -> Self {
        Outage { from_ms, until_ms, reply, rate: None, rate_until: None, seed: 0 }
    }

    /// Only a share of them, `rate` where the window opens and `rate_until` where it closes,
    /// drawn from `seed`.
    pub fn ramp(mut self, rate: f64, rate_until: f64, seed: u64) -> Self {
        (self.rate, self.rate_until, self.seed) = (Some(rate), Some(rate_until), seed);
        self
    }
}
