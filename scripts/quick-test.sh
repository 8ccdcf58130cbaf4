#!/usr/bin/env bash
# The contributor's loop: unit tests of every crate and the integration tests that need neither
# the official SDKs nor whole suite runs (the mutation matrix, slow clients, kept reports, the
# external contract path, a soak of the independent Python implementation). scripts/test.sh
# runs everything; CI runs that.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --all-features --lib --bins "$@"
cargo test -p squall-cli --all-features --test all "$@" -- \
  --skip suite::mutation_matrix --skip suite::slow_clients --skip suite::committed_reports \
  --skip suite::sdk:: --skip suite::ci_recipe --skip suite::independent_iut --skip suite::conformance_suite \
  --skip suite::timing_verdicts --skip suite::hardening::a_soak --skip suite::soak::the_independent_implementation \
  --skip suite::service::through_the_service --skip suite::shards --skip suite::integrations
