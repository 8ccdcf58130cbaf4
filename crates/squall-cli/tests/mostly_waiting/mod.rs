//! The suite-wide tests that mostly wait: on a client that hangs, crashes, starts slowly or
//! waits at real time, or on a runner or service that judges one case at a time. Their test
//! group (`.config/nextest.toml`) runs several at once and starts them first, so that they wait
//! out their hangs together.

mod conformance_suite; // the external contract path; an implementation that crashes, gives up with exit 1, or hangs
mod first_look; // a raised case looks first at its own scale: an uncapped backoff fails in seconds
mod hardening; // 3,000 runs one after another: what the server keeps stays bounded
mod integrations; // pytest-squall and squall-judge with real clients (SDKs)
mod service; // the service judges the reference one case at a time: squall run's verdicts
mod slow_clients; // an implementation slow to start is calibrated again
mod sped_up_clock; // a client the sped-up clock cannot reach is named
mod timing_verdicts; // a silent provider and unscaled sleeps, at real time
