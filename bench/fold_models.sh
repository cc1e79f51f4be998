#!/usr/bin/env bash
# Writes "## Folding: light models (issue 6)" into docs/BENCHMARKS.md: `footprint fold` on every
# model of ../shared/models/light (their weights are ConstantOfShape nodes), inline and with
# --external-data; peak RSS from /usr/bin/time -v against the bound 1.15 x folded weight bytes +
# 64 MiB; the counting allocator's peak heap; and whether `footprint run OUT --data-dir FOLDER`
# reproduces the expected outputs.
#
#   bench/fold_models.sh                      # builds build/release, raw results in $OUT
#   BUILD=build/h6 bench/fold_models.sh       # use an existing build tree instead
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${FOOTPRINT_SHARED:-../shared}
BUILD=${BUILD:-build/release}
[ -d "$SHARED/models/light" ] || { echo "fold_models: $SHARED/models/light not found" >&2; exit 1; }
if [ "$BUILD" = build/release ]; then
  cmake --preset release >/dev/null && cmake --build --preset release -j2 --target footprint
fi
CLI=$BUILD/bin/footprint
OUT=$BUILD/fold_models
rm -rf "$OUT" && mkdir -p "$OUT"

for dir in "$SHARED"/models/light/*/; do
  name=$(basename "$dir")
  for mode in inline external; do
    flag=""
    [ "$mode" = external ] && flag="--external-data"
    folded="$OUT/$name.$mode.onnx"
    /usr/bin/time -v -o "$OUT/$name.$mode.time" "$CLI" fold "$dir/model.onnx" -o "$folded" $flag \
      --json >"$OUT/$name.$mode.json"
    rss_kib=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$OUT/$name.$mode.time")
    if "$CLI" run "$folded" --data-dir "$dir" --repeat 1 >"$OUT/$name.$mode.run" 2>&1; then
      match=$(sed -n 's/^match *\([a-zA-Z]*\).*/\1/p' "$OUT/$name.$mode.run")
    else
      match="FAILED"
    fi
    size=$(du -bc "$folded"* | tail -1 | cut -f1)
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j.update(name=sys.argv[2], mode=sys.argv[3], rss_kib=int(sys.argv[4]), match=sys.argv[5], out_bytes=int(sys.argv[6])); print(json.dumps(j))' \
      "$OUT/$name.$mode.json" "$name" "$mode" "$rss_kib" "${match:-?}" "$size" >>"$OUT/results.jsonl"
  done
done

python3 - "$OUT/results.jsonl" >"$OUT/section.md" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
mib = lambda b: f"{b / 2**20:.1f}"
print("## Folding: light models (issue 6)\n")
print("`bench/fold_models.sh` (`footprint fold MODEL -o OUT.onnx [--external-data] --json` under "
      "`/usr/bin/time -v`, then `footprint run OUT.onnx --data-dir FOLDER --repeat 1`). Peak RSS is "
      "the process's VmHWM; the bound is 1.15 x weight bytes of the output + 64 MiB; *peak heap* is "
      "the counting allocator's peak during load + fold + write. With `--external-data` each folded weight is appended to `OUT.onnx.data` "
      "(64-byte aligned) as soon as it is computed and released after its last folded use, so the "
      "heap holds about the largest single weight (vgg19: fc6, 392 MiB) rather than all of them. "
      "*output MiB* counts the model file and its data file.\n")
print("| model | mode | folded nodes | kept nodes | weights MiB | output MiB | fold ms | peak heap MiB | peak RSS MiB | bound MiB | RSS within | outputs match |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
for r in rows:
    bound = 1.15 * r["weight_bytes"] + 64 * 2**20
    rss = r["rss_kib"] * 1024
    print(f"| {r['name']} | {r['mode']} | {r['folded_nodes']} | {r['kept_nodes']} | "
          f"{mib(r['weight_bytes'])} | {mib(r['out_bytes'])} | {r['fold_ms']:.0f} | "
          f"{mib(r['peak_heap_bytes'])} | {mib(rss)} | {mib(bound)} | "
          f"{'yes' if rss <= bound else 'NO'} | {r['match']} |")
PY
bench/write_section.py docs/BENCHMARKS.md "## Folding: light models (issue 6)" <"$OUT/section.md"
cat "$OUT/section.md"
