#!/usr/bin/env bash
# Regenerates the acceptance reports kept in reports/: the reference implementation's sign-off
# (every profile), the official OpenAI and Anthropic SDKs', Google's google-genai Python SDK's, the
# Vercel AI SDK's, LangChain JS's, litellm's, the openai SDK's AzureOpenAI's, boto3's (Bedrock, standard
# and adaptive retries) and the ollama Python client's (behind adapters/, installed by scripts/setup-sdks.sh), and the resilience matrix
# made from them (reports/MATRIX.md). Run it after a change to the features, the checks or the reference;
# crates/squall-cli/tests/suite/committed_reports.rs fails while a kept report disagrees with a fresh run.
#
# Each report records how it was made (iut.run_as, level, time_scale, case_timeout_s,
# concurrency, the judged profiles), which is what that test repeats.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup-sdks.sh
cargo build --release --quiet
squall=target/release/squall

# An implementation that fails requirements exits 1; anything else is an error here.
run() {
  local status=0
  "$squall" run "$@" || status=$?
  if [ "$status" -gt 1 ]; then
    echo "refresh-reports: squall run $* exited $status" >&2
    exit "$status"
  fi
}

run --iut reference --profile all --name reference --report-dir reports/reference
# At the default time scale, each client unmodified on the sped-up clock (docs/iut-contract.md):
# squall measures each client's own time per retry and takes it out. The Python clients are
# started warm (their imports run once, each case forked from them: half the CPU).
# Node starts slowly: fewer at once.
run --iut "target/sdk/python/bin/python adapters/python-openai/adapter.py" --warm --clock accelerated --level wire --profile all \
  --name python-openai --case-timeout 120 --concurrency 8 --report-dir reports/python-openai
run --iut "node adapters/node-openai/adapter.mjs" --clock accelerated --level wire --profile all \
  --name node-openai --case-timeout 120 --concurrency 2 --report-dir reports/node-openai
run --iut "target/sdk/python/bin/python adapters/python-anthropic/adapter.py" --warm --clock accelerated --level wire --profile all \
  --name python-anthropic --case-timeout 120 --concurrency 8 --report-dir reports/python-anthropic
run --iut "node adapters/node-anthropic/adapter.mjs" --clock accelerated --level wire --profile all \
  --name node-anthropic --case-timeout 120 --concurrency 2 --report-dir reports/node-anthropic
run --iut "target/sdk/python/bin/python adapters/python-google-genai/adapter.py" --warm --clock accelerated --level wire --profile all \
  --name python-google-genai --case-timeout 120 --concurrency 8 --report-dir reports/python-google-genai
run --iut "node adapters/node-ai-sdk/adapter.mjs" --clock accelerated --level wire --profile all \
  --name node-ai-sdk --case-timeout 120 --concurrency 2 --report-dir reports/node-ai-sdk
run --iut "node adapters/node-langchain/adapter.mjs" --clock accelerated --level wire --profile all \
  --name node-langchain --case-timeout 120 --concurrency 2 --report-dir reports/node-langchain
run --iut "target/sdk/python/bin/python adapters/python-litellm/adapter.py" --warm --clock accelerated --level wire --profile all \
  --name python-litellm --case-timeout 120 --concurrency 4 --report-dir reports/python-litellm

# AWS's boto3 Bedrock Runtime client in its two retry modes, the openai SDK's AzureOpenAI, and
# the ollama Python client.
run --iut "target/sdk/python/bin/python adapters/python-boto3-bedrock/adapter.py standard" --warm --clock accelerated --level wire --profile all \
  --name python-boto3-standard --case-timeout 120 --concurrency 8 --report-dir reports/python-boto3-standard
run --iut "target/sdk/python/bin/python adapters/python-boto3-bedrock/adapter.py adaptive" --warm --clock accelerated --level wire --profile all \
  --name python-boto3-adaptive --case-timeout 120 --concurrency 8 --report-dir reports/python-boto3-adaptive
run --iut "target/sdk/python/bin/python adapters/python-openai/adapter.py --azure" --warm --clock accelerated --level wire --profile all \
  --name python-openai-azure --case-timeout 120 --concurrency 8 --report-dir reports/python-openai-azure
run --iut "node adapters/node-aws-bedrock/adapter.mjs" --clock accelerated --level wire --profile all \
  --name node-aws-bedrock --case-timeout 120 --concurrency 2 --report-dir reports/node-aws-bedrock
run --iut "target/sdk/python/bin/python adapters/python-ollama/adapter.py" --warm --clock accelerated --level wire --profile all \
  --name python-ollama --case-timeout 120 --concurrency 8 --report-dir reports/python-ollama

# Kept compressed: the data of every case, a twentieth of the size (`squall report render DIR`
# writes every format again). The matrix reads them so.
for dir in reports/*/; do
  gzip -9nf "$dir/report.json"
done

# The resilience matrix: every client's verdicts side by side, from the reports just written.
"$squall" report matrix reports/python-openai reports/node-openai reports/python-anthropic reports/node-anthropic \
  reports/python-google-genai reports/node-ai-sdk reports/node-langchain reports/python-litellm \
  reports/python-openai-azure reports/python-boto3-standard reports/python-boto3-adaptive reports/python-ollama \
  reports/node-aws-bedrock \
  --out reports/MATRIX.md
