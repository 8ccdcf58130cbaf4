#!/usr/bin/env bash
# Installs the official OpenAI, Anthropic, Google, Ollama and AWS SDKs that the SDK conformance tests drive, under
# target/sdk (or $SQUALL_SDK_DIR): the Python `openai`, `anthropic`, `litellm`, `google-genai`, `ollama` and `boto3` packages in a venv (with
# pytest, and maturin for the squall wheel), the npm `openai`,
# `@anthropic-ai/sdk`, `@google/genai`, `ollama` and `@aws-sdk/client-bedrock-runtime` packages; the Node adapters' own pinned packages
# (adapters/node-*/node_modules: the openai and Anthropic SDKs, the Vercel AI SDK, LangChain
# JS, the AWS SDK for JavaScript's Bedrock client), which the SDK report checks run; and the JavaScript
# integration's examples (integrations/js/examples/node_modules: openai, ai, @ai-sdk/openai,
# vitest, testcontainers); podman and runc. The Python packages are installed by uv (itself from PyPI), the npm ones by npm, all
# side by side. Idempotent: does nothing when all are already installed.
#   scripts/setup-sdks.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sdk="${SQUALL_SDK_DIR:-$root/target/sdk}"
mkdir -p "$sdk"

# The Python packages, by uv (from PyPI, pinned): it resolves, downloads and installs in
# parallel, about ten times faster than pip. Bytecode is compiled as pip does: a client run with
# PYTHONDONTWRITEBYTECODE set would otherwise compile the SDK at every start.
uv_pip_install() {
  if [ ! -x "$sdk/python/bin/uv" ]; then
    "$sdk/python/bin/pip" install --quiet --disable-pip-version-check uv==0.13.9
  fi
  "$sdk/python/bin/uv" pip install --quiet --compile-bytecode --python "$sdk/python/bin/python" "$@"
}

python_packages() {
  # Found, not imported: importing litellm costs seconds (and a fetch that fails offline).
  local found='import importlib.util as u, sys; sys.exit(not all(u.find_spec(m) for m in ["openai", "anthropic", "litellm", "google.genai", "websockets", "ollama", "boto3", "h2", "testcontainers"]))'
  if ! "$sdk/python/bin/python" -c "$found" 2>/dev/null; then
    echo "setup-sdks: [$SECONDS s] installing the Python openai (with websockets, for its WebSocket mode), anthropic, litellm, google-genai, ollama and boto3 packages into $sdk/python"
    python3 -m venv "$sdk/python"
    uv_pip_install -r "$root/crates/squall-cli/tests/sdk/python/requirements.txt"
  fi
  # maturin builds the squall wheel (scripts/build-wheel.sh; scripts/test.sh installs it here,
  # with the pytest plugin), and pytest's and the openai SDK's wheels are kept for the wheel's
  # tests, which install them into fresh venvs offline, as a user would.
  if [ ! -x "$sdk/python/bin/maturin" ]; then
    echo "setup-sdks: [$SECONDS s] installing maturin into $sdk/python"
    uv_pip_install maturin==1.16.0
  fi
  if ! ls "$sdk/wheels"/pytest-9.2.0-*.whl >/dev/null 2>&1; then
    echo "setup-sdks: [$SECONDS s] keeping pytest's wheels in $sdk/wheels"
    "$sdk/python/bin/pip" download --quiet --disable-pip-version-check --only-binary=:all: -d "$sdk/wheels" pytest==9.2.0
  fi
  # And the openai SDK's, which `squall init python-openai` pins, for the newcomer's path offline.
  if ! ls "$sdk/wheels"/openai-3.51.0-*.whl >/dev/null 2>&1; then
    echo "setup-sdks: [$SECONDS s] keeping the openai SDK's wheels in $sdk/wheels"
    "$sdk/python/bin/pip" download --quiet --disable-pip-version-check --only-binary=:all: -d "$sdk/wheels" openai==3.51.0
  fi
}

node_sdks() {
  if [ ! -d "$sdk/node/node_modules/openai" ] || [ ! -d "$sdk/node/node_modules/@anthropic-ai/sdk" ] || [ ! -d "$sdk/node/node_modules/@google/genai" ] || [ ! -d "$sdk/node/node_modules/ollama" ] || [ ! -d "$sdk/node/node_modules/@aws-sdk/client-bedrock-runtime" ]; then
    echo "setup-sdks: [$SECONDS s] installing the npm openai, @anthropic-ai/sdk, @google/genai, ollama and @aws-sdk/client-bedrock-runtime SDKs into $sdk/node"
    mkdir -p "$sdk/node"
    cp "$root/crates/squall-cli/tests/sdk/node/package.json" "$sdk/node/package.json"
    (cd "$sdk/node" && npm install --no-audit --no-fund --loglevel=error)
  fi
}

# `npm ci` in DIR (its package-lock.json) unless node_modules/WITNESS is there; WHAT for people.
npm_ci() {
  local dir=$1 witness=$2 what=$3
  if [ ! -e "$root/$dir/node_modules/$witness" ]; then
    echo "setup-sdks: [$SECONDS s] installing $what into $dir"
    (cd "$root/$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

# podman and runc (Debian's), which run squall's image in the container test
# (crates/squall-cli/tests/suite/container_image.rs): installed as root, where they are missing.
containers() {
  if ! command -v podman > /dev/null || ! command -v runc > /dev/null; then
    if [ "$(id -u)" != 0 ]; then
      echo "setup-sdks: podman and runc are missing, and only root installs them (apt-get install podman runc)" >&2
      return 1
    fi
    echo "setup-sdks: [$SECONDS s] installing podman and runc (Debian's)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman runc > /dev/null
  fi
}

# Each install has a directory of its own, so they run side by side (npm's cache takes
# concurrent writers): they mostly wait on the registries.
pids=()
python_packages & pids+=($!)
containers & pids+=($!)
node_sdks & pids+=($!)
npm_ci integrations/js/examples testcontainers "the JavaScript integration's examples' packages (vitest, typescript, testcontainers)" & pids+=($!)
npm_ci adapters/node-openai openai "the Node adapter's openai package" & pids+=($!)
npm_ci adapters/node-anthropic @anthropic-ai/sdk "the Node adapter's @anthropic-ai/sdk package" & pids+=($!)
for adapter in node-ai-sdk node-langchain node-aws-bedrock; do
  npm_ci "adapters/$adapter" .package-lock.json "the $adapter adapter's packages" & pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do
  wait "$pid" || failed=1
done
[ "$failed" = 0 ] || { echo "setup-sdks: an install failed (its output above)" >&2; exit 1; }
echo "setup-sdks: [$SECONDS s] done"
