#!/usr/bin/env bash
# Runs every test: installs the SDKs the SDK tests drive (once), checks formatting, lints every
# target while building it (the benches too; they are run by hand: see BENCHMARKS.md), runs every
# test binary of the workspace and its doc tests, and the conformance suite against the reference
# speaking Chat Completions, the Messages API, the Gemini API, the Responses API over WebSocket,
# Bedrock's Converse API and Responses over HTTP/2 and TLS (the workspace's tests cover Responses
# over HTTP/1.1) with the test binary already built; checks that the harness builds without the
# reference implementation and that the library's tests pass without its features, and ends with
# one line totalling every test run. Each binary's output is in target/tests/, all of it in
# target/test-output.log; a failed binary's failures are printed.
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
  local name=$1 started=$SECONDS status=0
  shift
  "$@" || status=$?
  echo "test.sh: $name took $((SECONDS - started)) s" | tee -a target/test-times.log >&2
  return $status
}
# The SDKs install (every install side by side: 28 s and 52 CPU-s on 2 cores, alone) while cargo
# lints and builds: the tests wait for both. Its output goes to target/setup-sdks.log, shown if
# it fails. Niced, it takes the builds' idle moments first; at the lowest priority it ended
# 4-9 s after them in three clean clones of four, the tests waiting for it.
sdk_setup() {
  local started=$SECONDS status=0
  nice -n 10 scripts/setup-sdks.sh > target/setup-sdks.log 2>&1 || status=$?
  echo "test.sh: SDK setup took $((SECONDS - started)) s (beside the builds)" | tee -a target/test-times.log >&2
  return $status
}
sdk_setup &
sdk_setup_pid=$!
# What runs in the background does not outlive a step that failed.
trap 'kill $(jobs -p) 2> /dev/null || true' EXIT
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
# linted every target above). Their dependencies build again with other features, so they
# build beside the tests, in the idle scheduling class (only on a core nothing else wants: a
# test's client preempts them at once), once the wheel is built (below): in the tests' target
# directory they reuse every crate built with the same features (124 CPU-s instead of 185 in a
# directory of their own), and the wheel's cargo would otherwise wait for their lock. The
# script waits for them before the other test binaries.
light_builds() {
  local started=$SECONDS status=0
  local idle="chrt --idle 0"
  command -v chrt > /dev/null || idle="nice -n 19"
  while [ "$(cat "$SQUALL_WHEEL_PENDING" 2> /dev/null)" = building ]; do sleep 1; done
  $idle env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS bash -c 'set -o pipefail
    cargo check -p squall-cli --no-default-features && cargo test -p squall --lib' > target/light-tests.log 2>&1 || status=$?
  echo "test.sh: light builds took $((SECONDS - started)) s (beside the tests, after the wheel)" | tee -a target/test-times.log >&2
  return $status
}
# Every test executable cargo built for the workspace, one per line: its target's name, its
# package's directory (where cargo would run it) and its path.
test_executables() {
  cargo test --workspace --all-features --no-run --message-format=json 2>/dev/null \
    | grep '"executable":"/' | grep '"test":true' | while read -r artifact; do
      local name manifest executable
      name=$(grep -o '"name":"[^"]*"' <<< "$artifact" | head -1 | cut -d'"' -f4)
      manifest=$(grep -o '"manifest_path":"[^"]*"' <<< "$artifact" | cut -d'"' -f4)
      executable=$(grep -o '"executable":"[^"]*"' <<< "$artifact" | cut -d'"' -f4)
      echo "$name $(dirname "$manifest") $executable"
    done
}
test_executables > target/test-executables.txt
[ -s target/test-executables.txt ] || { echo "test.sh: cargo listed no test executable" >&2; exit 1; }
mkdir -p target/tests
if ! wait "$sdk_setup_pid"; then
  cat target/setup-sdks.log >&2
  echo "test.sh: installing the SDKs failed (target/setup-sdks.log above)" >&2
  exit 1
fi
# Runs one test executable as cargo would (from its package's directory), its output to
# target/tests/NAME.log. The slow tests (whole suites, the SDKs) are `#[ignore]`d with the
# reason, for the quick loop: here every one runs. Arguments go to the test binaries (a name
# filter).
run_test_executable() {
  local name=$1 dir=$2 executable=$3 status=0 niced=${NICED:-}
  shift 3
  (cd "$dir" && $niced "$executable" --include-ignored "$@") > "target/tests/$name.log" 2>&1 || status=$?
  [ $status -eq 0 ] || failed_output "$name"
  return $status
}
# A failed binary's failures (its whole output's end if it failed before listing any), to stderr.
failed_output() {
  local log=target/tests/$1.log
  echo "test.sh: $1 failed ($log):" >&2
  if grep -q '^failures:$' "$log"; then sed -n '/^failures:$/,$p' "$log" >&2; else tail -n 60 "$log" >&2; fi
}
# The squall wheel (the executable, its finder, the pytest plugin), into the SDK venv where the
# pytest tests run; the wheel's own tests install it elsewhere too. It builds beside the
# integration binary's first turns, its tests that mostly wait (alone, before them: 36-38 s), and
# the tests that need it wait for it: the file SQUALL_WHEEL_PENDING names is there until the
# wheel is installed, and says "failed" if it could not be built. Its build replaces
# target/debug/squall (other features: cargo builds it again), so the tests run this build's
# executable through a link of their own, SQUALL_TEST_BIN.
export SQUALL_WHEEL_PENDING=$root/target/wheel-pending SQUALL_TEST_BIN=$root/target/tests/squall
echo building > "$SQUALL_WHEEL_PENDING"
ln -f target/debug/squall "$SQUALL_TEST_BIN"
wheel() {
  if scripts/build-wheel.sh --dev --install "${SQUALL_SDK_DIR:-$root/target/sdk}/python" > target/wheel-build.log 2>&1; then
    rm -f "$SQUALL_WHEEL_PENDING"
  else
    echo failed > "$SQUALL_WHEEL_PENDING"
    cat target/wheel-build.log >&2
    return 1
  fi
}
# Niced: the turns' clients come first when they wake.
(renice -n 10 -p "$BASHPID" > /dev/null; step "the Python wheel, beside the tests" wheel) &
wheel_pid=$!
light_builds &
light_builds_pid=$!
# The command line's integration binary (`all`) holds most of the tests' time: its suite-wide
# tests take turns at the machine (they hold one lock), keeping 1.3 cores busy on average.
# It starts now, run directly so that cargo's lock stays free; sixteen test threads let the
# quick tests go on while the suite-wide ones wait for their turn (a waiting test holds a thread).
read -r _ all_dir all_executable < <(grep '^all ' target/test-executables.txt)
RUST_TEST_THREADS=${RUST_TEST_THREADS:-16} step "the integration binary (all)" \
  run_test_executable all "$all_dir" "$all_executable" "$@" &
all_pid=$!
# Every other test binary, the doc tests and the other wire formats' suites (below) run beside
# its later turns, once the light builds are done: the machine has room for one of the two
# beside the turns, not both.
if ! wait "$light_builds_pid"; then
  cat target/light-tests.log >&2
  echo "test.sh: the light builds failed (target/light-tests.log above)" >&2
  exit 1
fi
# One suite, every wire format: the reference again, speaking Chat Completions, Anthropic's
# Messages API, Google's Gemini API, the Responses API over WebSocket, Amazon Bedrock's
# Converse API, and the Responses API over HTTP/2 (h2c) and over TLS (HTTP/2 by ALPN), side by
# side (each mostly waits on scaled sleeps), through the conformance binary the build made. The
# first starts alone for 3 s, to measure its client's reaction on a calm machine.
other_wire_formats() {
  local binary format status=0 pids=()
  local formats=(chat messages gemini responses-websocket bedrock responses-h2 responses-tls)
  binary=$(grep '^conformance ' target/test-executables.txt | cut -d' ' -f3)
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
  done > target/tests/other-wire-formats.log
  [ $status -eq 0 ] || failed_output other-wire-formats
  return $status
}
# The other test binaries one after another (the library's example test runs `cargo run`: cargo's
# lock must be free), then the doc tests. Niced a little: the integration binary's turns come
# first (when the light builds ended early, these ran beside its heaviest turns and slowed them).
other_tests() {
  local name dir executable status=0
  while read -r name dir executable; do
    [ "$name" != all ] || continue
    NICED="nice -n 5" run_test_executable "$name" "$dir" "$executable" "$@" || status=1
  done < target/test-executables.txt
  cargo test --workspace --all-features --doc -- --include-ignored "$@" > target/tests/doc.log 2>&1 || { status=1; failed_output doc; }
  return $status
}
status=0
step "the other test binaries and the doc tests, beside the integration binary" other_tests "$@" || status=1
step "chat, messages, gemini, websocket, bedrock, HTTP/2 and TLS suites, beside it" other_wire_formats || status=1
wait "$wheel_pid" || status=1
wait "$all_pid" || status=1
# Every binary's output, in one file: the integration binary's first.
for log in all $(grep -v '^all ' target/test-executables.txt | cut -d' ' -f1) doc other-wire-formats; do
  echo "--- $log"
  cat "target/tests/$log.log"
done > target/test-output.log
echo "test.sh: $SECONDS s in all" | tee -a target/test-times.log >&2
awk '/^test result:/ { passed += $4; failed += $6 }
     /^[0-9]+ passed, [0-9]+ failed/ { passed += $1; failed += $3 }
     END { print passed " passed, " failed " failed" }' target/light-tests.log target/test-output.log
exit $status
