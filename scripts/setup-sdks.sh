#!/usr/bin/env bash
# Installs the official OpenAI SDKs that the SDK conformance tests drive, under target/sdk
# (or $SQUALL_SDK_DIR): the Python `openai` package in a venv, the npm `openai` package; and
# the Node adapter's own pinned package (adapters/node-openai/node_modules), which the SDK
# report checks run. Idempotent: does nothing when all are already installed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sdk="${SQUALL_SDK_DIR:-$root/target/sdk}"
mkdir -p "$sdk"

if ! "$sdk/python/bin/python" -c 'import openai' 2>/dev/null; then
  echo "setup-sdks: installing the Python openai SDK into $sdk/python"
  python3 -m venv "$sdk/python"
  "$sdk/python/bin/pip" install --quiet --disable-pip-version-check -r "$root/tests/sdk/python/requirements.txt"
fi

if [ ! -d "$sdk/node/node_modules/openai" ]; then
  echo "setup-sdks: installing the npm openai SDK into $sdk/node"
  mkdir -p "$sdk/node"
  cp "$root/tests/sdk/node/package.json" "$sdk/node/package.json"
  (cd "$sdk/node" && npm install --no-audit --no-fund --loglevel=error)
fi

if [ ! -d "$root/adapters/node-openai/node_modules/openai" ]; then
  echo "setup-sdks: installing the Node adapter's openai package into adapters/node-openai"
  (cd "$root/adapters/node-openai" && npm ci --no-audit --no-fund --loglevel=error)
fi
