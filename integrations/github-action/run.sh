#!/usr/bin/env bash
# The Action's second step: `squall run` with the inputs; its exit code to $GITHUB_OUTPUT (the
# last step fails the job with it, after the report is uploaded); its verdicts, and the diff
# against a baseline, to $GITHUB_STEP_SUMMARY; and, in the report directory, `comment.md` and
# `pr-number` for a workflow_run job to post (docs/ci.md: comments from forks, safely).
set -uo pipefail
: "${GITHUB_OUTPUT:?}" "${GITHUB_STEP_SUMMARY:?}"
dir=${INPUT_REPORT_DIR:-squall-report} name=${INPUT_NAME:-squall}
args=(run --iut "${INPUT_IUT:?the iut input is required}" --level "${INPUT_LEVEL:-events}"
  --profile "${INPUT_PROFILE:-prd-0006}" --name "$name" --report-dir "$dir")
[ -n "${INPUT_TAGS:-}" ] && args+=(--tags "$INPUT_TAGS")
[ -n "${INPUT_WAIVERS:-}" ] && args+=(--waivers "$INPUT_WAIVERS")
# shellcheck disable=SC2206 # extra arguments are words, as on a command line
[ -n "${INPUT_ARGS:-}" ] && args+=($INPUT_ARGS)
log=$(mktemp)
squall "${args[@]}" 2>&1 | tee "$log"
code=${PIPESTATUS[0]}
echo "exit-code=$code" >> "$GITHUB_OUTPUT"
mkdir -p "$dir"
{
  echo
  echo "## squall: $name — $(case $code in 0) echo pass ;; 1) echo "requirements failed" ;; *) echo "error (exit $code)" ;; esac)"
  echo
  echo '```'
  grep -v '^squall run: client reaction' "$log" | tail -n 40
  echo '```'
  if [ -n "${INPUT_BASELINE:-}" ]; then
    echo
    echo "### Against the baseline"
    echo
    squall report diff "$INPUT_BASELINE" "$dir" || true
  fi
} > "$dir/comment.md"
cat "$dir/comment.md" >> "$GITHUB_STEP_SUMMARY"
# The pull request this run is for, when it is one: the comment job posts there.
if [ -n "${GITHUB_EVENT_PATH:-}" ] && [ -f "$GITHUB_EVENT_PATH" ]; then
  python3 -c 'import json, sys; n = json.load(open(sys.argv[1])).get("pull_request", {}).get("number"); print(n or "")' \
    "$GITHUB_EVENT_PATH" > "$dir/pr-number" || true
fi
exit 0
