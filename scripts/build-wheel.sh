#!/usr/bin/env bash
# Builds the squall wheel (integrations/python: the `squall` executable, the `squall` Python
# package that finds it, the pytest plugin) with maturin into target/wheels, and prints its path.
#   scripts/build-wheel.sh [--dev] [--install VENV]
# --dev builds the executable with the dev profile (what the tests install: the workspace's
# debug build is mostly reused); the default is the release build a user installs.
# --install VENV then installs it into that venv (replacing what was there).
# maturin comes from the SDK venv scripts/setup-sdks.sh makes, else from PATH.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sdk="${SQUALL_SDK_DIR:-$root/target/sdk}"
profile=release install=
while [ $# -gt 0 ]; do
  case $1 in
    --dev) profile=dev ;;
    --install) install=${2:?--install needs a venv}; shift ;;
    *) echo "build-wheel: unknown argument $1 (--dev, --install VENV)" >&2; exit 2 ;;
  esac
  shift
done
maturin=$sdk/python/bin/maturin
[ -x "$maturin" ] || maturin=$(command -v maturin || true)
if [ -z "$maturin" ]; then
  echo "build-wheel: maturin not found: scripts/setup-sdks.sh installs it, or pip install maturin" >&2
  exit 1
fi
out=$root/target/wheels
rm -f "$out"/squall-*.whl
# No RUSTC_WORKSPACE_WRAPPER here: clippy linted the crates already.
(cd "$root/integrations/python" && env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS \
  "$maturin" build --quiet --profile "$profile" --out "$out" >&2)
wheel=$(ls "$out"/squall-*.whl)
if [ -n "$install" ]; then
  # The plugin was once installed on its own (pytest-squall): one copy of it only.
  "$install/bin/pip" uninstall --quiet --yes pytest-squall >/dev/null 2>&1 || true
  "$install/bin/pip" install --quiet --disable-pip-version-check --no-deps --force-reinstall "$wheel"
fi
echo "$wheel"
