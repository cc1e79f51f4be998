#!/usr/bin/env bash
# Writes "## The prepare peak: predicted and measured (issue 16)" into docs/BENCHMARKS.md: for
# every model of ../shared/models and of the zoo (tests/zoo/), what `footprint analyze` predicts
# preparing holds on the heap (weights copied for alignment, computed constants, packed weights,
# at their peak together: a lower bound) beside what `footprint run` tallied of those buffers and
# what the counting allocator measured of the whole heap while preparing, with the model's
# weights for scale. Inputs and extents from each folder's input_N.pb (--data-dir).
#
#   bench/prepare_peak.sh        # raw results in build/release/prepare_peak/
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
build_preset release footprint >/dev/null
zoo=$(tests/zoo/zoo.sh)
OUT=build/release/prepare_peak
rm -rf "$OUT" && mkdir -p "$OUT"
CLI=build/release/bin/footprint
for d in ../shared/models/*/*/ "$zoo"/*/; do
  d=${d%/}
  [[ -f $d/model.onnx ]] || continue
  label=$(basename "$(dirname "$d")")/$(basename "$d")
  [[ $d == "$zoo"/* ]] && label=zoo/$(basename "$d")
  name=${label//\//__}
  "$CLI" run --json --repeat 1 --warmup 0 --data-dir "$d" "$d/model.onnx" >"$OUT/$name.run.json" \
    2>"$OUT/$name.run.err" || { echo "prepare_peak: $label: run failed" >&2; continue; }
  "$CLI" analyze --json --data-dir "$d" "$d/model.onnx" >"$OUT/$name.analyze.json" \
    2>"$OUT/$name.analyze.err" || { echo "prepare_peak: $label: analyze failed" >&2; continue; }
  echo "$label" >>"$OUT/labels"
done

/usr/bin/python3 - "$OUT" <<'EOF' | python3 bench/write_section.py docs/BENCHMARKS.md \
  "## The prepare peak: predicted and measured (issue 16)"
import datetime, json, sys
out = sys.argv[1]
load = " ".join(open("/proc/loadavg").read().split()[:3])
mib = lambda b: f"{b / 2**20:.1f}"
w = print
w("## The prepare peak: predicted and measured (issue 16)")
w("")
w(f"Measured {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC by `bench/prepare_peak.sh` (load "
  f"average {load}): `footprint analyze --json --data-dir DIR` (its `prepare` object) and "
  "`footprint run --json --repeat 1 --data-dir DIR` (`measured`) on every shared and zoo model. "
  "Predicted: the buffers preparing allocates and releases (weights the model stores misaligned "
  "or as typed fields, copied; constants computed once; packed weights, each original released "
  "once its last reader has packed it), replayed in the runtime's order, at their peak together. "
  "Tallied: the same buffers as the run made and freed them. Measured: the counting "
  "allocator's whole heap peak while preparing, which adds what nothing declares (oneDNN's "
  "primitives and JIT code, the graph, plan and contexts). MiB.")
w("")
w("| model | weights | copied | computed | packed | predicted peak | tallied peak | = | measured heap peak | kept after |")
w("| --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: | ---: |")
equal = rows = 0
extra = []
for label in open(f"{out}/labels").read().split():
    name = label.replace("/", "__")
    a = json.load(open(f"{out}/{name}.analyze.json"))["prepare"]
    r = json.load(open(f"{out}/{name}.run.json"))
    m = r["measured"]
    same = a["peak_bytes"] == m["prepare_buffers_peak_bytes"] and \
        a["kept_bytes"] == m["prepare_buffers_kept_bytes"]
    rows += 1
    equal += same
    heap = m["prepare_peak_heap_bytes"]
    extra.append(heap - a["peak_bytes"])
    w(f"| {label} | {mib(r['predicted']['weights_bytes'])} | {mib(a['copied_weights_bytes'])} | "
      f"{mib(a['constants_bytes'])} | {mib(a['packed_bytes'])} | {mib(a['peak_bytes'])} | "
      f"{mib(m['prepare_buffers_peak_bytes'])} | {'yes' if same else 'NO'} | {mib(heap)} | "
      f"{mib(a['kept_bytes'])} |")
w("")
extra.sort()
w(f"Predicted = tallied (peak and kept) on {equal} of {rows} models. The measured heap peak is "
  f"above the prediction on every model by {mib(extra[0])} to {mib(extra[-1])} MiB (median "
  f"{mib(extra[len(extra) // 2])}): what preparing allocates that no row declares.")
EOF
echo "prepare_peak: wrote the section to docs/BENCHMARKS.md"
