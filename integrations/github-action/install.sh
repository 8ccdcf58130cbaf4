#!/usr/bin/env bash
# The Action's first step: puts a squall executable on the job's PATH ($GITHUB_PATH) — from a
# release archive for this runner, from the wheel (pip, into a venv of its own: the runner's
# Python refuses --user installs), or one already there. It carries its own clock: nothing else.
set -euo pipefail
: "${GITHUB_PATH:?}" "${RUNNER_TEMP:?}"
from=${INPUT_INSTALL_FROM:-release} version=${INPUT_VERSION:?}
case $from in
  release)
    case "$(uname -s)-$(uname -m)" in
      Linux-x86_64) target=x86_64-unknown-linux-gnu ;;
      Linux-aarch64) target=aarch64-unknown-linux-gnu ;;
      Darwin-x86_64) target=x86_64-apple-darwin ;;
      Darwin-arm64) target=aarch64-apple-darwin ;;
      *) echo "squall: no release archive for $(uname -s) $(uname -m): use install-from: wheel or path" >&2; exit 1 ;;
    esac
    url=${INPUT_RELEASE_URL:?}/v$version/squall-$version-$target.tar.gz
    mkdir -p "$RUNNER_TEMP/squall"
    curl --fail --silent --show-error --location "$url" | tar -xz -C "$RUNNER_TEMP/squall"
    dir=$RUNNER_TEMP/squall/squall-$version-$target
    ;;
  wheel)
    python3 -m venv "$RUNNER_TEMP/squall-venv"
    "$RUNNER_TEMP/squall-venv/bin/pip" install --quiet --disable-pip-version-check "${INPUT_WHEEL:-squall==$version}"
    dir=$RUNNER_TEMP/squall-venv/bin
    ;;
  path)
    dir=$(cd "$(dirname "${INPUT_SQUALL_BIN:?install-from path needs squall-bin}")" && pwd)
    ;;
  *) echo "squall: install-from is release, wheel or path, not $from" >&2; exit 1 ;;
esac
[ -x "$dir/squall" ] || { echo "squall: no squall executable in $dir after installing from $from" >&2; exit 1; }
echo "$dir" >> "$GITHUB_PATH"
"$dir/squall" --version
