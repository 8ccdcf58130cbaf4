#!/usr/bin/env bash
# The contributor's loop: every crate's unit tests and the integration tests that need neither
# the official SDKs nor whole suite runs. Those are marked in the code itself, `#[ignore = "…"]`
# with the reason; scripts/test.sh runs them (`cargo test -- --include-ignored`); CI runs that.
# Arguments go to the test binaries (a name filter).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --all-features --lib --bins --test library --test all -- "$@"
