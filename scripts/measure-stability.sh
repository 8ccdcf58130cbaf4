#!/usr/bin/env bash
# Measures whether squall's verdicts depend on the machine (docs/testing.md, "Stability"): each
# implementation is judged once on a quiet machine, then RUNS more times while two busy loops keep
# both cores loaded; every case verdict of a loaded run is compared with the quiet run's. Then a
# herd of 12 independent clients without jitter is judged RUNS times under the same load on seed
# 002's spread MUST (it must never pass), and the reference's jittered herd as often (it must
# pass every time). The independent implementation runs on the sped-up clock (`--clock
# accelerated`, squall's own). A measurement, not a test: it takes about half an
# hour on 2 cores.
#
#   scripts/measure-stability.sh [RUNS]        (default 10; needs python3, builds squall --release)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
runs=${1:-10}
cargo build --release --quiet --bin squall
squall="$root/target/release/squall"
out="$root/target/stability"
rm -rf "$out" && mkdir -p "$out"
python=$(python3 -c 'import sys; print(sys.executable)')
independent="$python $root/crates/squall-cli/tests/iut/prd0006"

# name|iut|extra flags
subjects=(
  "reference|reference|"
  "prd0006|$independent|--seed 18 --clock accelerated"
  "prd0006-150ms|PRD0006_OVERHEAD_MS=150 $independent|--seed 18 --clock accelerated"
)

# Every case's verdict, one line each: "feature — name: verdict".
verdicts() {
  python3 -c '
import json, sys
report = json.load(open(sys.argv[1]))
for requirement in report["requirements"]:
    for case in requirement["cases"]:
        print(case["feature"] + " — " + case["name"] + ": " + case["verdict"])
' "$1" | sort -u
}

# The longest a loaded machine held the client back beyond its calibrated reaction, in real ms:
# on the waits the independent implementation makes exactly as asked (retry-after-ms and
# retry-after in seconds), real gap − asked wait at the case's scale − the reaction's high end.
held_back() {
  python3 -c '
import json, re, sys
held = []
for path in sys.argv[1:]:
    for requirement in json.load(open(path))["requirements"]:
        for case in requirement["cases"]:
            if case["name"] not in ("A 429 with retry-after-ms is honoured", "A 429 with retry-after in seconds is honoured"):
                continue
            for check in case["checks"]:
                asked = re.match(r"attempt 2 starts at least ([\d.]+) seconds", check["name"])
                real = re.search(r"\(([\d.]+) ms real", check["observed"])
                if asked and real and case["reaction_ms"] and case["reaction_ms"]["high"] is not None:
                    held.append(float(real.group(1)) - float(asked.group(1)) * case["time_scale"] * 1000 - case["reaction_ms"]["high"])
print(f"{max(held):.1f} ms over {len(held)} waits" if held else "no wait measured")
' "$@"
}

judge() { # name iut extra dir
  # shellcheck disable=SC2086
  "$squall" run --iut "$2" --profile all $3 --report-dir "$4" >/dev/null 2>&1 || true
  verdicts "$4/report.json"
}

load() {
  for _ in 1 2; do (while :; do :; done) & done
}

echo "stability: quiet runs"
for subject in "${subjects[@]}"; do
  IFS='|' read -r name iut extra <<<"$subject"
  judge "$name" "$iut" "$extra" "$out/$name-quiet" >"$out/$name-quiet.txt"
done

load
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
echo "stability: $runs runs of each under load (two busy loops)"
printf '| implementation | cases | runs | verdicts that differ from the quiet run |\n|---|---|---|---|\n' >"$out/table.md"
for subject in "${subjects[@]}"; do
  IFS='|' read -r name iut extra <<<"$subject"
  differ=0
  for n in $(seq 1 "$runs"); do
    judge "$name" "$iut" "$extra" "$out/$name-$n" >"$out/$name-$n.txt"
    changed=$(diff "$out/$name-quiet.txt" "$out/$name-$n.txt" | grep -c '^>' || true)
    differ=$((differ + changed))
    if [ "$changed" -ne 0 ]; then
      # diff exits 1 when the runs differ, which is what is being reported here.
      diff "$out/$name-quiet.txt" "$out/$name-$n.txt" | sed "s/^/  $name run $n: /" >&2 || true
    fi
  done
  printf '| %s | %s | %s | %s |\n' "$name" "$(wc -l <"$out/$name-quiet.txt")" "$runs" "$differ" | tee -a "$out/table.md"
done
printf '\nThe longest hold beyond the calibrated reaction under load (MOMENT allows 25 ms): %s\n' \
  "$(held_back "$out"/prd0006-[0-9]*/report.json)" | tee -a "$out/table.md"

echo "stability: seed 002's herd spread, herds of 12, $runs runs each under load"
spread="Clients that failed at once spread their first retries"
printf '\n| herd of 12 | runs | pass | fail | inconclusive |\n|---|---|---|---|---|\n' >>"$out/table.md"
for herd in "prd0006 without jitter|PRD0006_BUG=zero-jitter $independent" "reference|reference"; do
  IFS='|' read -r name iut <<<"$herd"
  pass=0 fail=0 inconclusive=0
  for n in $(seq 1 "$runs"); do
    dir="$out/herd-${name// /-}-$n"
    "$squall" run --iut "$iut" --profile all --tags "@SEED-002-JITTER and @herd" --herd 12 --report-dir "$dir" >/dev/null 2>&1 || true
    verdict=$(verdicts "$dir/report.json" | grep -F "$spread:" | sed 's/.*: //')
    case "$verdict" in
      pass) pass=$((pass + 1)) ;;
      fail) fail=$((fail + 1)) ;;
      *) inconclusive=$((inconclusive + 1)) ;;
    esac
  done
  printf '| %s | %s | %s | %s | %s |\n' "$name" "$runs" "$pass" "$fail" "$inconclusive" | tee -a "$out/table.md"
done
echo "stability: the tables are in $out/table.md"
