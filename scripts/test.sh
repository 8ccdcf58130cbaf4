#!/usr/bin/env bash
# Runs every test: installs the SDKs the SDK tests drive (once), then the whole workspace.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup-sdks.sh
cargo test --workspace "$@"
