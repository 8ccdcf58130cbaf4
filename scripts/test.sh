#!/usr/bin/env bash
# Runs every test: installs the SDKs the SDK tests drive (once), checks formatting and lints,
# runs the whole workspace's tests and the conformance suite against the reference speaking
# Chat Completions and the Messages API (the workspace tests cover Responses), checks that the harness builds without the reference
# implementation and that the benches build (they are run by hand: see BENCHMARKS.md), and
# ends with one line totalling every test run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup-sdks.sh
mkdir -p target
cargo fmt --all --check
cargo clippy --workspace --all-targets --all-features -- -D warnings
cargo test --workspace --all-features "$@" 2>&1 | tee target/test-output.log
# One suite, every wire format: the reference again, speaking Chat Completions, then
# Anthropic's Messages API.
for provider in chat messages; do
  SQUALL_REFERENCE_PROVIDER=$provider SQUALL_PROFILE=all cargo test --all-features --test conformance 2>&1 \
    | tee -a target/test-output.log
done
cargo build -p squall --no-default-features
cargo bench --workspace --all-features --no-run
awk '/^test result:/ { passed += $4; failed += $6 }
     /^[0-9]+ passed, [0-9]+ failed/ { passed += $1; failed += $3 }
     END { print passed " passed, " failed " failed" }' target/test-output.log
