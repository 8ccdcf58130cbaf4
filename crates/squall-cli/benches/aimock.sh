#!/usr/bin/env bash
# aimock side by side with squall and wiremock-rs: server CPU per request for the same
# Responses stream, 1 and 16 connections, medians of 3 rounds, and requests/s. Run by hand
# (needs node and npm, and the npm registry the first time); never run in CI.
#
#   bash crates/squall-cli/benches/aimock.sh            # installs aimock into target/aimock if it is missing
#   AIMOCK_VERSION=1.44.0 bash crates/squall-cli/benches/aimock.sh
#
# The figures go into BENCHMARKS.md with the date, the versions and the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

version="${AIMOCK_VERSION:-1.43.0}"
prefix="target/aimock/$version"
cli="$prefix/node_modules/@copilotkit/aimock/dist/cli.js"
if [ ! -f "$cli" ]; then
    echo "installing @copilotkit/aimock@$version into $prefix" >&2
    mkdir -p "$prefix"
    npm install --silent --no-audit --no-fund --prefix "$prefix" "@copilotkit/aimock@$version" >&2
fi
echo "aimock $version, node $(node --version), $(nproc) cores, $(uname -sr), $(date -u +%Y-%m-%d)"
cargo bench --quiet --bench squall -- --aimock-side-by-side "$PWD/$cli"
