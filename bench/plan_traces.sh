#!/usr/bin/env bash
# Writes "## Planner: real and training-like traces (issue 17)" into docs/BENCHMARKS.md: every
# planner, and `auto`, on
#   * ../shared/benchmarks/traces/iopddl_Y_1.csv (62,185 buffers of a distributed-training trace),
#   * the eleven MiniMalloc instances (../shared/benchmarks/minimalloc),
#   * every shared model's own arena buffers (`footprint plan MODEL -o`, dims at their defaults),
#   * training-like traces from bench/make_training_trace.py at 10^4, 10^5 and 10^6 buffers
#     (generated here, seed 1; never committed),
# each with the same --time-limit for every algorithm (TIME_LIMIT, LARGE_TIME_LIMIT at 10^6), the
# ratio to the lower bound, the planning time (median of REPS; one run at 10^6), CPU time and
# peak RSS; then `auto --capacity 1048576` on the MiniMalloc eleven, and `--time-limit 1/5/20`
# against the wall time actually taken on the largest instance, and the greedy placements with no
# time limit on the real trace and the training-like ones up to 10^5 buffers.
#
#   bench/plan_traces.sh            # raw results in build/release/plan_traces/
#
# Every run is pinned to one core (taskset -c 0); every plan comes from `footprint plan --json`
# and so has passed the validator. The tables are bench/plan_traces_table.py's, from the raw
# results, so they can be redrawn without planning again.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
TIME_LIMIT=${TIME_LIMIT:-2}
LARGE_TIME_LIMIT=${LARGE_TIME_LIMIT:-15}
SHARED=${FOOTPRINT_SHARED:-../shared}
TRACE=$SHARED/benchmarks/traces/iopddl_Y_1.csv
[ -f "$TRACE" ] || { echo "plan_traces: $TRACE not found" >&2; exit 1; }

source scripts/lib.sh
build_preset release footprint >/dev/null
OUT=build/release/plan_traces
rm -rf "$OUT" && mkdir -p "$OUT/csv"
# A copy: a rebuild while the tables run (they take half an hour) must not change what they time.
cp build/release/bin/footprint "$OUT/footprint"
CLI=$OUT/footprint
cut -d' ' -f1-3 /proc/loadavg >"$OUT/load_start.txt"

# The instances, as "name path" lines.
{
  echo "iopddl_Y_1 $TRACE"
  for f in "$SHARED"/benchmarks/minimalloc/*.csv; do echo "minimalloc/$(basename "$f" .1048576.csv) $f"; done
  for model in "$SHARED"/models/*/*/model.onnx; do
    name=$(basename "$(dirname "$(dirname "$model")")")_$(basename "$(dirname "$model")")
    if "$CLI" plan --algo naive -o "$OUT/csv/$name.csv" "$model" >/dev/null 2>&1; then
      echo "model/$name $OUT/csv/$name.csv"
    else
      echo "plan_traces: $model: no buffer list (skipped)" >&2
    fi
  done
  for n in 10000 100000 1000000; do
    python3 bench/make_training_trace.py "$n" 1 >"$OUT/csv/training_$n.csv"
    echo "training/$n $OUT/csv/training_$n.csv"
  done
} >"$OUT/instances.txt"

# One run: the plan's JSON with wall, CPU and peak RSS of the process added.
run() {  # run TAG INSTANCE FILE ARGS...
  local tag=$1 name=$2 file=$3
  shift 3
  /usr/bin/time -f '%e %U %S %M' -o "$OUT/time.txt" taskset -c 0 "$CLI" plan --json "$@" "$file" |
    python3 -c '
import json, sys
j = json.load(sys.stdin)
wall, user, sys_, rss = open(sys.argv[3]).read().split()[-4:]
j.update(instance=sys.argv[1], run=sys.argv[2], wall_s=float(wall), cpu_s=float(user) + float(sys_),
         rss_kb=int(rss))
print(json.dumps(j))' "$name" "$tag" "$OUT/time.txt" >>"$OUT/results.jsonl"
}

ALGOS="naive greedy-size greedy-breadth best-fit anneal exact auto"
while read -r name file; do
  limit=$TIME_LIMIT reps=$REPS
  case $name in training/1000000) limit=$LARGE_TIME_LIMIT reps=1 ;; esac
  for algo in $ALGOS; do
    for _ in $(seq "$reps"); do run "$algo" "$name" "$file" --algo "$algo" --time-limit "$limit"; done
  done
  case $name in
    minimalloc/*) for _ in $(seq "$REPS"); do run fit "$name" "$file" --capacity 1048576; done ;;
    training/*) run default "$name" "$file" ;;  # auto with its default budget
  esac
  echo "plan_traces: $name done" >&2
done <"$OUT/instances.txt"
for limit in 1 5 20; do
  run "limit$limit" training/1000000 "$OUT/csv/training_1000000.csv" --time-limit "$limit"
done
# The greedy placements with no time limit (a heuristic's default): how long each takes to end.
while read -r name file; do
  case $name in iopddl_Y_1 | training/10000 | training/100000) ;; *) continue ;; esac
  for algo in greedy-size greedy-breadth best-fit; do
    for _ in $(seq "$REPS"); do run "whole-$algo" "$name" "$file" --algo "$algo"; done
  done
done <"$OUT/instances.txt"

python3 bench/plan_traces_table.py "$OUT/results.jsonl" "$REPS" "$TIME_LIMIT" "$LARGE_TIME_LIMIT" \
  "$(cat "$OUT/load_start.txt")" >"$OUT/section.md"
python3 bench/write_section.py docs/BENCHMARKS.md "## Planner: real and training-like traces (issue 17)" <"$OUT/section.md"
echo "plan_traces: wrote the section to docs/BENCHMARKS.md" >&2
