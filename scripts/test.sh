#!/usr/bin/env bash
# The test command (README): formatting, clippy as the tests build, every test through
# cargo-nextest (its groups and setup scripts: .config/nextest.toml) and, beside them, what
# nextest cannot list: the conformance suite over every wire format (cucumber's own main), then
# the doc tests. Each step's time goes to target/test-times.log, each test's to
# target/test-times-by-test.log. Arguments go to nextest.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo-nextest > /dev/null; then
  echo "scripts/test.sh: cargo-nextest is missing: cargo install cargo-nextest --locked" >&2
  exit 2
fi
mkdir -p target && : > target/test-times.log
step() {
  local name=$1 started=$SECONDS status=0
  shift
  "$@" || status=$?
  echo "test.sh: $name took $((SECONDS - started)) s" | tee -a target/test-times.log >&2
  return $status
}
# The SDKs download while the tests build (nextest's setup script then finds them installed).
scripts/setup-sdks.sh > target/setup-sdks.log 2>&1 &
sdks=$!
step "fmt" cargo fmt --all --check
# clippy-driver compiles the workspace's crates with its lints: one build instead of two.
export RUSTC_WORKSPACE_WRAPPER=$(rustup which clippy-driver) CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
step "clippy and the build" cargo test --workspace --all-features --all-targets --no-run --quiet
wait "$sdks" || { cat target/setup-sdks.log >&2; exit 1; }
status=0
# The conformance suite (cucumber) against the reference over every wire format, side by side:
# on the reference's virtual clock, beside the other tests.
conformance=$(cargo test -p squall-suite --all-features --test conformance --no-run --message-format=json 2> /dev/null |
  grep -o '"executable":"[^"]*"' | cut -d'"' -f4)
wire_formats() {
  local formats=(responses chat messages gemini responses-websocket bedrock responses-h2 responses-tls)
  local api i pids=() failed=0
  for format in "${formats[@]}"; do
    api=${format%-h2} && api=${api%-tls}
    SQUALL_REFERENCE_PROVIDER=$api SQUALL_REFERENCE_HTTP=$([ "${format%-h2}" = "$format" ] || echo 2) \
      SQUALL_TLS=$([ "${format%-tls}" = "$format" ] && echo false || echo true) SQUALL_PROFILES=all \
      "$conformance" > "target/suite-$format.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { failed=1; tail -n 40 "target/suite-${formats[$i]}.log" >&2; }
  done
  return $failed
}
step "the suite over every wire format (beside the tests)" wire_formats &
suites=$!
tests() {
  cargo nextest run --profile ci --workspace --all-features --lib --bins --test all --test library \
    --run-ignored all "$@" 2>&1 | tee target/test-output.log
}
step "the tests (nextest)" tests "$@" || status=1
grep -E '^ +(PASS|FAIL|TIMEOUT|SIGSEGV|SIGABRT) \[' target/test-output.log | sort -t'[' -k2 -rn > target/test-times-by-test.log || true
wait "$suites" || status=1
step "the doc tests" cargo test --workspace --all-features --doc --quiet || status=1
echo "test.sh: $SECONDS s in all" | tee -a target/test-times.log >&2
exit $status
