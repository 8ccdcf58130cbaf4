#!/usr/bin/env bash
# Runs every test: installs the SDKs the SDK tests drive (once), checks formatting, lints every
# target while building it (the benches too; they are run by hand: see BENCHMARKS.md), runs the
# whole workspace's tests, and the conformance suite against the reference speaking Chat
# Completions, the Messages API, the Gemini API, the Responses API over WebSocket and Bedrock's
# Converse API (the
# workspace tests cover Responses over HTTP) with the test binary already built; checks that the
# harness builds without the reference implementation and that the library's tests pass without
# its features, and ends with one line totalling every test run.
#
# The quick loop for contributors (no SDKs, no suite-wide tests) is scripts/quick-test.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p target
# Each step's time, to stderr and target/test-times.log: where the test command's time goes
# (target/test-turns.log says the same of each suite-wide test).
: > target/test-times.log
step() {
  local name=$1 started=$SECONDS
  shift
  "$@"
  echo "test.sh: $name took $((SECONDS - started)) s" | tee -a target/test-times.log >&2
}
# What the tests need installed comes from the registries while cargo lints and builds, at the
# lowest priority (the builds take the cores first): the faketime program for the sped-up
# clock, which most suite tests need, and the SDKs and packages, which only the tests that say so
# need (`#[ignore = "needs the SDKs …"]`, or the wheel, or Node). Those run last; every other
# test runs while the SDKs install. Each background job's output goes to its log under target/,
# shown if it fails.
# A job's exit status goes to LOG.status too, for jobs that are not its parent's to `wait` for.
background() {
  local name=$1 log=$2 started=$SECONDS status=0
  shift 2
  rm -f "$log.status"
  nice -n 19 "$@" > "$log" 2>&1 || status=$?
  echo "test.sh: $name took $((SECONDS - started)) s (in the background)" | tee -a target/test-times.log >&2
  echo "$status" > "$log.status"
  return $status
}
waited_for() {
  local pid=$1 name=$2 log=$3
  if ! wait "$pid"; then
    cat "$log" >&2
    echo "test.sh: $name failed ($log above)" >&2
    exit 1
  fi
}
background "installing the faketime program" target/setup-clock.log scripts/setup-sdks.sh clock &
clock_pid=$!
rm -f target/setup-sdks.log.status
background "SDK setup" target/setup-sdks.log scripts/setup-sdks.sh packages &
step "fmt" cargo fmt --all --check
# Clippy lints as the tests build: clippy-driver compiles the workspace's own crates, every
# target, with its lints and -D warnings (what `cargo clippy` does, through the same variables),
# so each crate is compiled once instead of checked by clippy and then built again (171 s in CI,
# beside the SDK setup, instead of 119 + 113). Every cargo command below builds with the same
# wrapper, so nothing is built twice.
clippy_driver=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver || true)
if [ -n "$clippy_driver" ]; then
  export RUSTC_WORKSPACE_WRAPPER=$clippy_driver CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
  step "clippy and building the tests" cargo test --workspace --all-features --all-targets --no-run
else
  step "clippy" cargo clippy --workspace --all-targets --all-features -- -D warnings
  step "building the tests" cargo test --workspace --all-features --no-run
fi
# The judge builds without the judged (no reference), and the library as a user gets it (no
# features: no WebSocket, no TLS, no suite) with its unit tests run so, by rustc alone (clippy
# linted every target above); then the squall wheel (the executable, its finder, the pytest
# plugin), into the SDK venv where the pytest tests run (the wheel's own tests install it
# elsewhere too). In a target directory of their own: the tests run from target/debug
# meanwhile, and a build there would take cargo's lock from them and relink their squall.
light_builds_and_wheel() (
  local started=$SECONDS
  export CARGO_TARGET_DIR=$root/target/light
  env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS bash -c 'set -o pipefail
    cargo check -p squall-cli --no-default-features && cargo test -p squall --lib 2>&1 | tee target/light-tests.log'
  until [ -s target/setup-sdks.log.status ]; do sleep 1; done
  if [ "$(cat target/setup-sdks.log.status)" != 0 ]; then
    cat target/setup-sdks.log
    echo "test.sh: installing the SDKs failed (target/setup-sdks.log above)"
    return 1
  fi
  scripts/build-wheel.sh --dev --install "${SQUALL_SDK_DIR:-$root/target/sdk}/python" > /dev/null
  echo "test.sh: the light builds and the wheel ended $((SECONDS - started)) s after they began" >&2
)
waited_for "$clock_pid" "installing the faketime program" target/setup-clock.log
# Tests that run whole suites take turns (they hold one lock); sixteen test threads let the
# quick tests go on while they wait for it (a waiting test holds a thread).
# The slow tests (whole suites, the SDKs) are `#[ignore]`d with the reason, for the quick loop:
# here every one runs. Arguments go to the test binaries (a name filter).
workspace_tests() {
  RUST_TEST_THREADS=${RUST_TEST_THREADS:-16} cargo test --workspace --all-features "$@" 2>&1 \
    | tee -a target/test-output.log
}
: > target/test-output.log
# The command line's tests whose `#[ignore]` says they need what setup-sdks.sh installs (or the
# wheel), by their full names.
provisioned_tests() {
  awk 'FNR == 1 { module = FILENAME; sub(/.*\//, "", module); sub(/\.rs$/, "", module); wanted = 0 }
       /#\[ignore = "needs the (SDKs|wheel|Node)/ { wanted = 1; next }
       wanted && match($0, /fn [a-z0-9_]+/) { print "suite::" module "::" substr($0, RSTART + 3, RLENGTH - 3); wanted = 0 }' \
    crates/squall-cli/tests/suite/*.rs
}
if [ $# -gt 0 ]; then
  # A name filter: everything installed first, then the tests it names.
  step "light builds and the wheel" light_builds_and_wheel
  step "workspace tests" workspace_tests -- --include-ignored "$@"
else
  mapfile -t provisioned < <(provisioned_tests)
  [ "${#provisioned[@]}" -gt 0 ] || { echo "test.sh: no test says it needs the SDKs: the awk above is broken" >&2; exit 1; }
  # At the lowest priority, as the SDK setup: the suite-wide tests' timing comes first.
  (renice -n 19 -p "$BASHPID" > /dev/null && light_builds_and_wheel) > target/light-builds.log 2>&1 &
  light_pid=$!
  skips=()
  for name in "${provisioned[@]}"; do skips+=(--skip "$name"); done
  SQUALL_SDKS_INSTALLING=1 step "workspace tests but those that need the SDKs" \
    workspace_tests -- --include-ignored "${skips[@]}"
fi
# One suite, every wire format: the reference again, speaking Chat Completions, Anthropic's
# Messages API, Google's Gemini API, the Responses API over WebSocket, Amazon Bedrock's
# Converse API, and the Responses API over HTTP/2 (h2c) and over TLS (HTTP/2 by ALPN), side by
# side (each mostly waits on scaled sleeps), through the conformance binary the line above
# built. The first starts alone for 3 s, to measure its client's reaction on a calm machine.
other_wire_formats() {
  local binary format status=0 pids=()
  local formats=(chat messages gemini responses-websocket bedrock responses-h2 responses-tls)
  # `--workspace`, as the build above: a crate's own features would build it again.
  binary=$(cargo test --workspace --all-features --test conformance --no-run --message-format=json 2>/dev/null \
    | grep '"name":"conformance"' | grep -o '"executable":"[^"]*"' | cut -d'"' -f4)
  [ -x "$binary" ] || { echo "test.sh: the conformance binary was not found" >&2; return 1; }
  for format in "${formats[@]}"; do
    # `NAME-h2`: the API NAME over HTTP/2 (h2c); `NAME-tls`: over TLS, HTTP/2 chosen by ALPN.
    local api=$format http=1.1 tls=false
    case $format in
      *-h2) api=${format%-h2} http=2 ;;
      *-tls) api=${format%-tls} http= tls=true ;;
    esac
    SQUALL_REFERENCE_PROVIDER=$api SQUALL_REFERENCE_HTTP=$http SQUALL_TLS=$tls SQUALL_PROFILES=all "$binary" \
      > "target/suite-$format.log" 2>&1 &
    pids+=($!)
    [ "${#pids[@]}" -gt 1 ] || sleep 3
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  for format in "${formats[@]}"; do
    echo "--- the suite over $format"
    cat "target/suite-$format.log"
  done | tee -a target/test-output.log
  return $status
}
step "chat, messages, gemini, websocket, bedrock, HTTP/2 and TLS suites" other_wire_formats
if [ $# -eq 0 ]; then
  step "waiting for the SDKs, the light builds and the wheel" waited_for "$light_pid" "the light builds and the wheel" target/light-builds.log
  step "the tests that need the SDKs" workspace_tests --test all -- --include-ignored "${provisioned[@]}"
fi
echo "test.sh: $SECONDS s in all" | tee -a target/test-times.log >&2
awk '/^test result:/ { passed += $4; failed += $6 }
     /^[0-9]+ passed, [0-9]+ failed/ { passed += $1; failed += $3 }
     END { print passed " passed, " failed " failed" }' target/light-tests.log target/test-output.log
