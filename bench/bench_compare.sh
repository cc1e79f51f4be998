#!/usr/bin/env bash
# `footprint compare` on real runs (issue 7): two `footprint bench` runs of the same build pass
# `--fail-on time:5% --fail-on peak_heap:1%`; the second run with its times scaled by 1.10 (an
# injected 10 % slowdown) and, separately, its peak heap scaled by 1.05 (a 5 % memory growth)
# fail with exit 1. Writes the section "## Bench: compare (issue 7)" of docs/BENCHMARKS.md through
# bench/write_section.py (NO_DOC=1 prints it instead).
#
# RERUNS more runs of the same build are each compared with the first: how many fail is the
# false-alarm rate of the gates on this machine.
#
# Environment (all optional):
#   MODELS="light/bvlc_alexnet random/densenet121"  MODELS_DIR=../shared/models  REPEAT=10
#   RERUNS=20
#   FOOTPRINT=build/release/bin/footprint   RESULTS=build/bench/bench_compare   DOC=docs/BENCHMARKS.md
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
MODELS=${MODELS:-"light/bvlc_alexnet random/densenet121"}
MODELS_DIR=${MODELS_DIR:-../shared/models}
REPEAT=${REPEAT:-10}
RERUNS=${RERUNS:-20}
FOOTPRINT=${FOOTPRINT:-build/release/bin/footprint}
RESULTS=${RESULTS:-build/bench/bench_compare}
DOC=${DOC:-docs/BENCHMARKS.md}
mkdir -p "$RESULTS"
rm -f "$RESULTS"/*.jsonl

paths=()
for m in $MODELS; do paths+=("$MODELS_DIR/$m/model.onnx"); done
"$FOOTPRINT" bench -q --repeat "$REPEAT" --out "$RESULTS/a.jsonl" "${paths[@]}"
"$FOOTPRINT" bench -q --repeat "$REPEAT" --out "$RESULTS/b.jsonl" "${paths[@]}"

# inject FIELD FACTOR OUT: B's records with one metric scaled (what a regression would record).
inject() {
  python3 - "$RESULTS/b.jsonl" "$1" "$2" >"$3" <<'PY'
import json, sys
src, field, factor = sys.argv[1], sys.argv[2], float(sys.argv[3])
for line in open(src):
    j = json.loads(line)
    if j.get("type") == "benchmark":
        if field == "time":
            for k in ("wall_ms", "cpu_ms"):
                j[k]["samples"] = [x * factor for x in j[k]["samples"]]
        else:
            j["memory"][field] = int(j["memory"][field] * factor)
    print(json.dumps(j))
PY
}
inject time 1.10 "$RESULTS/b_slow.jsonl"
inject peak_heap_bytes 1.05 "$RESULTS/b_grown.jsonl"

GATES=(--fail-on time:5% --fail-on peak_heap:1%)
compare() {  # compare NAME CONTENDER: keeps output, prints the exit code
  set +e
  "$FOOTPRINT" compare "$RESULTS/a.jsonl" "$2" "${GATES[@]}" >"$RESULTS/$1.out" 2>"$RESULTS/$1.err"
  echo $?
  set -e
}
same=$(compare same "$RESULTS/b.jsonl")
# The first same-build comparison (B) counts too.
false_alarms=0
alarms=""
if [ "$same" != 0 ]; then
  false_alarms=1
  alarms+="$(tr -d '\n' <"$RESULTS/same.err"); "
fi
for i in $(seq 1 "$RERUNS"); do
  "$FOOTPRINT" bench -q --repeat "$REPEAT" --out "$RESULTS/rerun_$i.jsonl" "${paths[@]}"
  code=$(compare "rerun_$i" "$RESULTS/rerun_$i.jsonl")
  if [ "$code" != 0 ]; then
    false_alarms=$((false_alarms + 1))
    alarms+="$(tr -d '\n' <"$RESULTS/rerun_$i.err"); "
  fi
done
slow=$(compare slow "$RESULTS/b_slow.jsonl")
grown=$(compare grown "$RESULTS/b_grown.jsonl")

{
  echo "## Bench: compare (issue 7)"
  echo
  echo "Two \`footprint bench --repeat $REPEAT\` runs of the same build over $MODELS, compared"
  echo "with \`footprint compare A B ${GATES[*]}\`; then B with every time sample scaled by 1.10"
  echo "(an injected 10 % slowdown) and B with each peak heap scaled by 1.05 (a 5 % memory"
  echo "growth). Command: \`bench/bench_compare.sh\`, $(date -u '+%Y-%m-%d %H:%M') UTC, load average"
  echo "$(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "| contender | exit code | stderr |"
  echo "| --- | ---: | --- |"
  echo "| same build | $same | $(tr -d '\n' <"$RESULTS/same.err") |"
  echo "| times x 1.10 | $slow | \`$(tr -d '\n' <"$RESULTS/slow.err")\` |"
  echo "| peak heap x 1.05 | $grown | \`$(tr -d '\n' <"$RESULTS/grown.err")\` |"
  echo
  echo "False alarms: $false_alarms of $((RERUNS + 1)) runs of the same build (B and $RERUNS more)"
  echo "failed the gates against the first${alarms:+ (${alarms% })}."
  echo
  echo "Same build, in full:"
  echo
  echo '```text'
  cat "$RESULTS/same.out"
  echo '```'
} >"$RESULTS/section.md"

if [ "${NO_DOC:-0}" = 1 ]; then
  cat "$RESULTS/section.md"
else
  python3 bench/write_section.py "$DOC" "## Bench: compare (issue 7)" <"$RESULTS/section.md"
  cat "$RESULTS/section.md"
fi
[ "$same" = 0 ] && [ "$slow" = 1 ] && [ "$grown" = 1 ]
