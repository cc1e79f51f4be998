#!/usr/bin/env bash
# Writes "## Planner: models (issue 4)" into docs/BENCHMARKS.md: every planner on the arena of
# every shared model (activations and workspace from the analysis timeline, 64-byte buffers),
# the lower bound, the ratio and the planning time, and the lower bound in the stored order
# beside the memory-aware order's.
#
#   bench/plan_models.sh            # raw results in build/release/plan_models/
#
# Dims are at their defaults (1), except for the models named in BIND (default: ppocr, whose
# dims are all dynamic): their symbolic input dims are bound to the shape of the input_N.pb
# beside them (ppocr: N=1, H=48, W=192).
# Every plan comes from `footprint plan --json` and so has passed the validator. The searching
# planners (anneal, exact, auto) get TIME_LIMIT seconds each to keep the run to a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${FOOTPRINT_SHARED:-../shared}
TIME_LIMIT=${TIME_LIMIT:-2}
BIND=${BIND:-ppocr_mobile_v2_cls}
[ -d "$SHARED/models" ] || { echo "plan_models: $SHARED/models not found" >&2; exit 1; }

# Another build may hold the release tree's lock: retry a few times.
for attempt in 1 2 3 4 5; do
  if cmake --preset release >/dev/null && cmake --build --preset release -j2 --target footprint; then
    break
  fi
  [ "$attempt" = 5 ] && { echo "plan_models: the release build failed" >&2; exit 1; }
  sleep 30
done
CLI=build/release/bin/footprint
OUT=build/release/plan_models
rm -rf "$OUT" && mkdir -p "$OUT"

# --dim flags binding each symbolic input dim to the shape of the model's input_N.pb.
dims_of() {
  "$CLI" info --json "$1" | python3 -c '
import json, os, sys
model = sys.argv[1]
folder = os.path.dirname(model)

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7F) << s; s += 7
        if c < 0x80: return v, i

def tensor_dims(path):  # TensorProto field 1 (dims), packed or not; other fields skipped
    b = open(path, "rb").read(); i = 0; dims = []
    while i < len(b):
        key, i = varint(b, i); field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(b, i)
            if field == 1: dims.append(v)
        elif wire == 2:
            n, i = varint(b, i); end = i + n
            if field == 1:
                while i < end:
                    v, i = varint(b, i); dims.append(v)
            i = end
        elif wire == 1: i += 8
        elif wire == 5: i += 4
        else: break
    return dims

flags = []
for k, inp in enumerate(json.load(sys.stdin)["graph_inputs"]):
    pb = os.path.join(folder, f"input_{k}.pb")
    if not os.path.exists(pb): continue
    for d, v in zip(inp["shape"], tensor_dims(pb)):
        flag = f"--dim {d}={v}"
        if isinstance(d, str) and flag not in flags: flags.append(flag)
print(" ".join(flags))
' "$1"
}

ALGOS="naive greedy-size greedy-breadth best-fit anneal exact auto"
for model in "$SHARED"/models/*/*/model.onnx; do
  name=$(basename "$(dirname "$(dirname "$model")")")/$(basename "$(dirname "$model")")
  dims=""
  for bound in $BIND; do
    [ "$(basename "$(dirname "$model")")" = "$bound" ] && dims=$(dims_of "$model")
  done
  # A model the analysis refuses has no buffer list: said in the section, not planned.
  # shellcheck disable=SC2086  # dims is a flag list
  if ! "$CLI" plan --algo naive $dims "$model" >/dev/null 2>"$OUT/error.txt"; then
    echo "$name: $(tail -1 "$OUT/error.txt")" >>"$OUT/skipped.txt"
    echo "plan_models: $name: no buffer list (skipped)" >&2
    continue
  fi
  for algo in $ALGOS memory; do
    if [ "$algo" = memory ]; then
      args="--algo auto --order memory --time-limit $TIME_LIMIT"
    else
      args="--algo $algo --time-limit $TIME_LIMIT"
    fi
    # shellcheck disable=SC2086  # dims and args are flag lists
    taskset -c 0 "$CLI" plan --json $args $dims "$model" 2>/dev/null |
      python3 -c 'import json,sys; j=json.load(sys.stdin); j["name"]=sys.argv[1]; j["run"]=sys.argv[2]; j["dims"]=sys.argv[3]; print(json.dumps(j))' "$name" "$algo" "$dims" >>"$OUT/results.jsonl"
  done
  echo "plan_models: $name done" >&2
done

touch "$OUT/skipped.txt"
python3 - "$OUT/results.jsonl" "$TIME_LIMIT" "$OUT/skipped.txt" >"$OUT/section.md" <<'PY'
import collections, datetime, json, platform, sys

rows = [json.loads(l) for l in open(sys.argv[1])]
limit = sys.argv[2]
algos = ["naive", "greedy-size", "greedy-breadth", "best-fit", "anneal", "exact", "auto"]
by = {(r["name"], r["run"]): r for r in rows}
names = list(dict.fromkeys(r["name"] for r in rows))
kib = lambda b: f"{b / 1024:,.1f}"

out = ["## Planner: models (issue 4)", ""]
load = " ".join(open("/proc/loadavg").read().split()[:3])
out.append(f"`bench/plan_models.sh` on {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, {platform.machine()}, one core "
           f"(`taskset -c 0`; load average {load} at the end: the machine was shared, times are noisy), "
           f"release build; searching planners limited to {limit} s. "
           "Each model's arena buffers are its activations and per-step workspace from "
           "`footprint analyze`'s timeline in the stored order, sizes rounded up to 64 bytes, "
           "so the lower bound is the timeline's `lower_bound_arena_bytes`. Dims at their "
           "defaults (1) except where noted. Every plan passed the validator.")
out.append("")
out.append("Arena in KiB per planner (ratio to the lower bound in brackets where above it):")
out.append("")
out.append("| model | buffers | lower bound KiB | " + " | ".join(algos) + " |")
out.append("| --- | ---: | ---: | " + " | ".join("---:" for _ in algos) + " |")
misses = []
for n in names:
    base = by[(n, "auto")]
    lb = base["lower_bound_bytes"]
    cells = []
    for a in algos:
        r = by[(n, a)]
        ratio = r["arena_bytes"] / lb if lb else 1.0
        cells.append(kib(r["arena_bytes"]) + (f" ({ratio:.3f})" if r["arena_bytes"] > lb else ""))
    note = f" ({base['dims'].replace('--dim ', '')})" if base["dims"] else ""
    out.append(f"| {n}{note} | {base['buffers']} | {kib(lb)} | " + " | ".join(cells) + " |")
    if lb and base["arena_bytes"] > lb * 1.005:
        misses.append(f"{n}: auto {base['arena_bytes']} B vs lower bound {lb} B "
                      f"(+{(base['arena_bytes'] / lb - 1) * 100:.2f}%)")
out.append("")
out.append("Planning time in ms (`solve_ms`, one run):")
out.append("")
out.append("| model | " + " | ".join(algos) + " |")
out.append("| --- | " + " | ".join("---:" for _ in algos) + " |")
for n in names:
    out.append(f"| {n} | " + " | ".join(f"{by[(n, a)]['solve_ms']:.1f}" for a in algos) + " |")
out.append("")
if misses:
    out.append("`auto` is more than 0.5% above the lower bound on: " + "; ".join(misses) + ".")
else:
    out.append("`auto` reaches the lower bound or stays within 0.5% of it on every model.")
out.append("")
out.append("Memory-aware operator order (`--order memory`: exact search over ready sets up to "
           "20 steps, beam search of width 8 beyond; never worse than the stored order). Lower "
           "bounds are the timeline's exact bytes; the arena is `auto`'s in that order:")
out.append("")
out.append("| model | stored order lower bound | memory order lower bound | change | arena (memory order) |")
out.append("| --- | ---: | ---: | ---: | ---: |")
for n in names:
    m = by[(n, "memory")]
    s, b = m["stored_lower_bound_bytes"], m["timeline_lower_bound_bytes"]
    change = f"{(b / s - 1) * 100:+.1f}%" if s else "0"
    out.append(f"| {n} | {s:,} | {b:,} | {change} | {m['arena_bytes']:,} |")
skipped = [l.strip() for l in open(sys.argv[3]) if l.strip()]
if skipped:
    out.append("")
    out.append("Not planned (the analysis refuses the model, so there is no buffer list): " +
               "; ".join(f"`{l}`" for l in skipped) + ".")
print("\n".join(out))
PY
bench/write_section.py docs/BENCHMARKS.md "## Planner: models (issue 4)" <"$OUT/section.md"
echo "plan_models: wrote docs/BENCHMARKS.md" >&2
