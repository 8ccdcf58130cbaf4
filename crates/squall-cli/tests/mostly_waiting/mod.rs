//! The suite-wide tests that mostly wait — on a client that hangs, crashes, starts slowly or
//! waits at real time, or on a runner or service that judges one case at a time — and share a
//! light turn at the machine ([`crate::kit::machine::take_light_turn`]). They are here, not
//! beside their topics in `suite/`, for the order libtest starts tests in (by name, as test
//! threads come free): named first, they all ask for their turn as the binary starts and wait
//! out their hangs together, instead of one by one whenever a thread reaches them behind the
//! tests that wait for a turn of their own (that cost the test command about a minute).
//! `take_light_turn` holds the rule: called from a test outside this module, it panics.

mod conformance_suite; // the external contract path; an implementation that crashes, gives up with exit 1, or hangs
mod drawn_waits; // a linear backoff with a full jitter fails from runs drawn beyond 30
mod first_look; // a raised case looks first at its own scale: an uncapped backoff fails in seconds
mod integrations; // pytest-squall and squall-judge with real clients (SDKs)
mod service; // the service judges the reference one case at a time: squall run's verdicts
mod slow_clients; // an implementation slow to start is calibrated again
mod sped_up_clock; // a client the sped-up clock cannot reach is named
mod timing_verdicts; // a silent provider and unscaled sleeps, at real time
