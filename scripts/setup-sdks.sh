#!/usr/bin/env bash
# Installs libfaketime's faketime program (Debian's package, for the sped-up clock's tests) and the official OpenAI, Anthropic, Google, Ollama and AWS SDKs that the SDK conformance tests drive, under
# target/sdk (or $SQUALL_SDK_DIR): the Python `openai`, `anthropic`, `litellm`, `google-genai`, `ollama` and `boto3` packages in a venv (with
# pytest, and maturin for the squall wheel), the npm `openai`,
# `@anthropic-ai/sdk`, `@google/genai`, `ollama` and `@aws-sdk/client-bedrock-runtime` packages; the Node adapters' own pinned packages
# (adapters/node-*/node_modules: the openai and Anthropic SDKs, the Vercel AI SDK, LangChain
# JS, the AWS SDK for JavaScript's Bedrock client), which the SDK report checks run; and the JavaScript
# integration's examples (integrations/js/examples/node_modules: openai, ai, @ai-sdk/openai,
# vitest). Idempotent: does nothing when all are already installed.
#   scripts/setup-sdks.sh [clock|packages]
# `clock` installs only the faketime program, `packages` everything else (scripts/test.sh runs
# the two side by side: most tests need the clock, only some the packages).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sdk="${SQUALL_SDK_DIR:-$root/target/sdk}"
stage=${1:-all}
case $stage in
  all | clock | packages) ;;
  *) echo "setup-sdks: unknown stage $stage (clock, packages, or none for both)" >&2; exit 2 ;;
esac
mkdir -p "$sdk"

# The sped-up clock (`squall run --clock accelerated`) runs an implementation under libfaketime's
# `faketime` program; its tests need it. Debian's package, installed where we may (root, apt).
if [ "$stage" != packages ] && ! command -v faketime >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup-sdks: installing Debian's faketime (libfaketime) for the sped-up clock"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime
  else
    echo "setup-sdks: the sped-up clock's tests need the faketime program: apt-get install faketime" >&2
    exit 1
  fi
fi
[ "$stage" != clock ] || exit 0

if ! "$sdk/python/bin/python" -c 'import openai, anthropic, litellm, google.genai, websockets, ollama, boto3' 2>/dev/null; then
  echo "setup-sdks: installing the Python openai (with websockets, for its WebSocket mode), anthropic, litellm, google-genai, ollama and boto3 packages into $sdk/python"
  python3 -m venv "$sdk/python"
  "$sdk/python/bin/pip" install --quiet --disable-pip-version-check -r "$root/crates/squall-cli/tests/sdk/python/requirements.txt"
fi

if [ ! -d "$sdk/node/node_modules/openai" ] || [ ! -d "$sdk/node/node_modules/@anthropic-ai/sdk" ] || [ ! -d "$sdk/node/node_modules/@google/genai" ] || [ ! -d "$sdk/node/node_modules/ollama" ] || [ ! -d "$sdk/node/node_modules/@aws-sdk/client-bedrock-runtime" ]; then
  echo "setup-sdks: installing the npm openai, @anthropic-ai/sdk, @google/genai, ollama and @aws-sdk/client-bedrock-runtime SDKs into $sdk/node"
  mkdir -p "$sdk/node"
  cp "$root/crates/squall-cli/tests/sdk/node/package.json" "$sdk/node/package.json"
  (cd "$sdk/node" && npm install --no-audit --no-fund --loglevel=error)
fi

# maturin builds the squall wheel (scripts/build-wheel.sh; scripts/test.sh installs it here, with
# the pytest plugin), and pytest's own wheels are kept for the wheel's tests, which install it with
# pytest into fresh venvs offline, as a user would.
if [ ! -x "$sdk/python/bin/maturin" ]; then
  echo "setup-sdks: installing maturin into $sdk/python"
  "$sdk/python/bin/pip" install --quiet --disable-pip-version-check maturin==1.16.0
fi
if ! ls "$sdk/wheels"/pytest-9.2.0-*.whl >/dev/null 2>&1; then
  echo "setup-sdks: keeping pytest's wheels in $sdk/wheels"
  "$sdk/python/bin/pip" download --quiet --disable-pip-version-check --only-binary=:all: -d "$sdk/wheels" pytest==9.2.0
fi

if [ ! -d "$root/integrations/js/examples/node_modules/vitest" ] || [ ! -d "$root/integrations/js/examples/node_modules/typescript" ]; then
  echo "setup-sdks: installing the JavaScript integration's examples' packages into integrations/js/examples"
  (cd "$root/integrations/js/examples" && npm ci --no-audit --no-fund --loglevel=error)
fi

if [ ! -d "$root/adapters/node-openai/node_modules/openai" ]; then
  echo "setup-sdks: installing the Node adapter's openai package into adapters/node-openai"
  (cd "$root/adapters/node-openai" && npm ci --no-audit --no-fund --loglevel=error)
fi

if [ ! -d "$root/adapters/node-anthropic/node_modules/@anthropic-ai/sdk" ]; then
  echo "setup-sdks: installing the Node adapter's @anthropic-ai/sdk package into adapters/node-anthropic"
  (cd "$root/adapters/node-anthropic" && npm ci --no-audit --no-fund --loglevel=error)
fi

for adapter in node-ai-sdk node-langchain node-aws-bedrock; do
  if [ ! -d "$root/adapters/$adapter/node_modules" ]; then
    echo "setup-sdks: installing the $adapter adapter's packages into adapters/$adapter"
    (cd "$root/adapters/$adapter" && npm ci --no-audit --no-fund --loglevel=error)
  fi
done
