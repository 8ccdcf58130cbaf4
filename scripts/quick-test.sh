#!/usr/bin/env bash
# The contributor's loop: every crate's unit tests and the integration tests that need neither
# the official SDKs nor whole suite runs. Those are `#[ignore]`d in the code, with the reason;
# scripts/test.sh runs them. The groups of .config/nextest.toml hold here too. Arguments go to
# nextest (a name filter).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo-nextest > /dev/null || { echo "scripts/quick-test.sh: cargo-nextest is missing: cargo install cargo-nextest --locked" >&2; exit 2; }
cargo nextest run --workspace --all-features --lib --bins --test all --test library "$@"
