//! The command line's integration tests that may run side by side, a module per topic: the
//! `squall` binary as users run it, real SDKs and the packages users install (the library's
//! own are `tests/library/`). Tests that need the packages scripts/setup-sdks.sh installs are
//! `#[ignore]`d for the quick loop and run by scripts/test.sh.

mod catalogue; // the shipped scenario catalogue loads and covers every fault
mod cli; // the `squall` binary as a user runs it
mod clock_matrix; // squall's clock reaches every wait a client makes: Python, Node, Rust, curl, a shell
mod container_image; // the image under podman: non-root, healthy, each Testcontainers module judges a case
mod docs; // the docs read as a manual: short sentences, an index, every requirement number kept
pub(crate) mod drawn_waits; // random waits decided from runs drawn anew, each seeded and recorded
mod github_action; // the GitHub Action's steps with a fake runner: install, judge, summary, comment, exit code
pub(crate) mod hardening; // security defaults, bad input, load
pub(crate) mod init; // `squall init`: adapters written as kept, never over a file; then the printed command judges a real SDK
mod integrations_first_hour; // a new user's first hour with pytest and vitest: rootdir, one case alone, warnings, types
mod layout; // the library stays light, and no crate has an import circle
mod metrics; // GET /metrics counts a scripted run's faults; squall health's exit codes
pub(crate) mod mutation_matrix; // every broken implementation is rejected on exactly the requirements it breaks (slow)
mod npm_packages; // squall-judge and the executable's package, installed offline by npm and found alone
mod public_url; // behind a port mapping, --public-url makes every URL squall hands out reachable
pub(crate) mod python_wheel; // the squall wheel as pip installs it: its executable found anywhere, pytest starting it alone
mod recording; // what an upstream answers becomes a scenario that replays it
mod reference_tasks; // sessions and Task(deep-research) against scripted runs
mod release_archive; // the archive cargo binstall downloads holds squall where its metadata says
pub(crate) mod reports; // `squall run`'s four report files agree; a kept report renders again
pub(crate) mod robustness; // no input crashes squall: crafted scenarios, extreme numbers, huge bodies
mod sdk; // the official SDKs parse every stream squall sends
mod seed_quotations; // every clause and quotation presented as seed text is the seed's, verbatim
mod serve_process; // `squall serve` as a process: one descriptor a stream, memory to read a journal, SIGTERM
mod server_tls; // TLS with ALPN: every API over HTTP/2 and HTTP/1.1, faults under TLS, certificates
pub(crate) mod service; // the judge as a service: cases as data, runs, verdicts on posted outcomes
pub(crate) mod soak; // `squall soak`: the reference passes, a truncation bug is caught
mod warm_start; // a Python client forked from one process that imported it: the verdicts it gets cold
