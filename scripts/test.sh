#!/usr/bin/env bash
# Runs every test: installs the SDKs the SDK tests drive (once), checks formatting and lints
# (clippy over every target type-checks the benches too; they are run by hand: see
# BENCHMARKS.md), runs the whole workspace's tests and the conformance suite against the
# reference speaking Chat Completions and the Messages API (the workspace tests cover
# Responses) with the test binary already built, checks that the harness builds without the
# reference implementation and the light library without the suite, and ends with one line
# totalling every test run.
#
# The quick loop for contributors (no SDKs, no suite-wide tests) is scripts/quick-test.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup-sdks.sh
mkdir -p target
cargo fmt --all --check
cargo clippy --workspace --all-targets --all-features -- -D warnings
# Tests that run whole suites take turns (they hold one lock); sixteen test threads let the
# quick tests go on while they wait for it (a waiting test holds a thread).
RUST_TEST_THREADS=${RUST_TEST_THREADS:-16} cargo test --workspace --all-features "$@" 2>&1 | tee target/test-output.log
# One suite, every wire format: the reference again, speaking Chat Completions, then
# Anthropic's Messages API, through the conformance binary the line above built.
for provider in chat messages; do
  SQUALL_REFERENCE_PROVIDER=$provider SQUALL_PROFILES=all cargo test --all-features --test conformance 2>&1 \
    | tee -a target/test-output.log
done
# The judge builds without the judged (no reference), and the light library without the suite.
cargo check -p squall --no-default-features --features cli
cargo check -p squall --no-default-features
awk '/^test result:/ { passed += $4; failed += $6 }
     /^[0-9]+ passed, [0-9]+ failed/ { passed += $1; failed += $3 }
     END { print passed " passed, " failed " failed" }' target/test-output.log
