#!/usr/bin/env bash
# Writes "## Float32 carriers: float16 models with and without (issue 37)" into
# docs/BENCHMARKS.md: every float16 variant of the quantized zoo (tests/quant_zoo/quant_zoo.sh)
# run by `footprint run --data-dir` as it runs by default (16-bit activations between float32
# kernels stored as float32 carriers, graph::carry_float32) and with --keep-16bit: how many
# values are carried, the arena each plans (and obtains), and whether the two output files are
# the same bytes. Latency is left to bench/quant_compare.sh, which runs beside onnxruntime.
#
#   bench/float32_carriers.sh        # raw results in build/release/float32_carriers/
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
build_preset release footprint >/dev/null
zoo=$(tests/quant_zoo/quant_zoo.sh)
OUT=build/release/float32_carriers
rm -rf "$OUT" && mkdir -p "$OUT"
CLI=build/release/bin/footprint
for d in "$zoo"/*-fp16*/; do
  name=$(basename "$d")
  mkdir -p "$OUT/$name"
  for mode in carried kept; do
    flag=()
    [[ $mode == kept ]] && flag=(--keep-16bit)
    "$CLI" run --json --repeat 1 --warmup 0 "${flag[@]}" --data-dir "$d" -o "$OUT/$name/$mode" \
      "$d/model.onnx" >"$OUT/$name/$mode.json" 2>/dev/null || true
  done
done

/usr/bin/python3 - "$OUT" <<'PY' | python3 bench/write_section.py docs/BENCHMARKS.md \
  "## Float32 carriers: float16 models with and without (issue 37)"
import datetime, filecmp, json, os, sys
out = sys.argv[1]
w = print
w("## Float32 carriers: float16 models with and without (issue 37)")
w("")
w(f"Measured {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC by `bench/float32_carriers.sh`: each "
  "float16 variant of the quantized zoo run by `footprint run --json --data-dir DIR -o OUT` as it "
  "runs by default and with `--keep-16bit`. Carried: the 16-bit activations stored as float32 "
  "holding their 16-bit values (`float32_carriers.values`); the arena planned (= obtained on "
  "every row, checked); the output files compared byte for byte.")
w("")
w("| model | carried values | arena with carriers | arena with --keep-16bit | planned = obtained | "
  "outputs identical |")
w("| --- | ---: | ---: | ---: | :---: | :---: |")
names = sorted(os.listdir(out))
same_all = bool(names)
for name in names:
    runs = {}
    for mode in ("carried", "kept"):
        try:
            runs[mode] = json.load(open(os.path.join(out, name, mode + ".json")))
        except (OSError, ValueError):
            runs[mode] = None
    if not all(runs.values()):
        w(f"| {name} | run failed | – | – | – | – |")
        same_all = False
        continue
    c, k = runs["carried"], runs["kept"]
    exact = all(r["predicted"]["arena_bytes"] == r["measured"]["arena_bytes"] for r in (c, k))
    files = sorted(f for f in os.listdir(os.path.join(out, name, "carried")) if f.endswith(".pb"))
    same = bool(files) and all(filecmp.cmp(os.path.join(out, name, "carried", f),
                                           os.path.join(out, name, "kept", f), shallow=False)
                               for f in files)
    same_all = same_all and same and exact
    mib = lambda b: f"{b / 1048576:.2f} MiB"
    w(f"| {name} | {c['float32_carriers']['values']} | {mib(c['predicted']['arena_bytes'])} | "
      f"{mib(k['predicted']['arena_bytes'])} | {'yes' if exact else 'NO'} | "
      f"{'yes' if same else 'NO'} |")
w("")
w("Every row planned = obtained with identical outputs." if same_all else
  "Some row differs: see above.")
PY
