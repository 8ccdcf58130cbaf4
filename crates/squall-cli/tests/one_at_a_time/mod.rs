//! The tests that need the machine's cores: whole suites, load, and timing read to the
//! millisecond. Their test group (`.config/nextest.toml`) runs them one at a time, beside the
//! quick tests and `light_suites`. A module per topic; the topic's other tests are in `suite/`.

pub(crate) mod committed_reports; // the kept reports agree with fresh runs (SDKs)
mod hardening; // load: a thousand streams, the reference under load
mod independent_iut; // an independent correct implementation passes every profile
mod independent_suites; // the independent implementation and its twins: one run, every check
mod init; // `squall init` then its printed command gives the kept verdicts (SDKs)
mod integrations_first_hour; // pytest and vitest: one timed case alone is calibrated (SDKs)
mod python_wheel; // an installed wheel judges the reference; pytest starts it by itself
mod reference_retry; // the reference pipeline over real HTTP: retries, the gate, backoff
mod reports; // `squall run`'s four report files agree; usage errors exit 2
mod robustness; // huge bodies and arbitrary scenarios
mod run_verdicts; // `squall run`'s verdicts: profiles, empty runs, production seconds
mod shards; // `--shard K/N` partitions the cases; merged, they are the unsharded report
mod signoff; // attest and verify, diff, waivers, provenance and badges through the binary
mod slow_clients; // a client's own time per retry is never read as its policy
mod soak; // `squall soak` of the independent implementation
mod sped_up_clock; // the client as shipped on a sped-up clock: the verdicts it gets scaled
mod timing_verdicts; // time squall cannot read as policy: inconclusive, error or real time
mod warm_start; // a Python client started warm gets the verdicts it gets cold
