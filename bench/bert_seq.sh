#!/usr/bin/env bash
# Writes "## BERT-style encoder against the sequence length (issue 15)" into docs/BENCHMARKS.md:
# the zoo's bert_mini (tests/zoo/: PyTorch's exporter, seeded random weights) predicted by
# `footprint analyze` and measured by `footprint run` at seq 32, 128 and 512 (batch 1), and the
# exact law of its total peak from `analyze --sweep seq=8,...,256` (analysis::peak_law: each
# step's total a polynomial through every swept value, the peak the largest of them), and what
# the same sweep to 512 says.
#
#   bench/bert_seq.sh         # raw results in build/release/bert_seq/
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
build_preset release footprint >/dev/null
zoo=$(tests/zoo/zoo.sh)
model=$zoo/bert_mini/model.onnx
[ -f "$model" ] || { echo "bert_seq: $model not found" >&2; exit 1; }
OUT=build/release/bert_seq
rm -rf "$OUT" && mkdir -p "$OUT"
cp build/release/bin/footprint "$OUT/footprint"
CLI=$OUT/footprint
for seq in 32 128 512; do
  "$CLI" analyze --json --dim batch=1 --dim "seq=$seq" "$model" >"$OUT/analyze_$seq.json"
  "$CLI" run --json --repeat 5 --dim batch=1 --dim "seq=$seq" "$model" >"$OUT/run_$seq.json"
done
"$CLI" analyze --json --dim batch=1 --sweep seq=8,16,32,64,128,256 "$model" >"$OUT/sweep.json"
"$CLI" analyze --json --dim batch=1 --sweep seq=8,16,32,64,128,256,512 "$model" >"$OUT/sweep_512.json"

/usr/bin/python3 - "$OUT" "$model" <<'EOF' | python3 bench/write_section.py docs/BENCHMARKS.md \
  "## BERT-style encoder against the sequence length (issue 15)"
import datetime, json, sys
out, model = sys.argv[1], sys.argv[2]
load = " ".join(open("/proc/loadavg").read().split()[:3])
w = print
w("## BERT-style encoder against the sequence length (issue 15)")
w("")
w(f"Measured {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC by `bench/bert_seq.sh` (load average "
  f"{load}) on the zoo's `bert_mini` (tests/zoo/make_zoo.py: 2 layers, d=256, 4 heads, PyTorch 1.13's "
  "exporter, seeded random weights), batch 1. Predicted: `footprint analyze --json`; measured: "
  "`footprint run --json --repeat 5` (random inputs, one thread): the arena the run obtained and "
  "the heap its prepare and runs took, against what the prediction said they would be.")
w("")
w("| seq | activations peak (predicted) | total peak (predicted) | arena planned | arena obtained | "
  "run heap predicted | run heap measured | predicted = obtained |")
w("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
all_equal = True
for seq in (32, 128, 512):
    a = json.load(open(f"{out}/analyze_{seq}.json"))
    r = json.load(open(f"{out}/run_{seq}.json"))
    p, m = r["predicted"], r["measured"]
    equal = p["arena_bytes"] == m["arena_bytes"] and \
        a["bytes"]["activations_peak"] == p["activations_peak_bytes"]
    all_equal = all_equal and equal
    w(f"| {seq} | {a['bytes']['activations_peak']:,} | {a['bytes']['total_peak']:,} | "
      f"{p['arena_bytes']:,} | {m['arena_bytes']:,} | {p['run_heap_bytes']:,} | "
      f"{m['peak_heap_bytes']:,} | {'yes' if equal else 'NO'} |")
w("")
w(f"- Predicted arena = obtained arena at every length: {'yes' if all_equal else 'NO'}. The run's "
  "heap adds what `docs/RUNTIME.md` lists beside the arena (outputs, inputs, kernel state).")
s = json.load(open(f"{out}/sweep.json"))["sweep"]
law = s["total_peak_law"]
w("")
w("The total peak (weights included) against seq, from `analyze --sweep "
  f"seq={','.join(str(p['value']) for p in s['points'])}`:")
w("")
w("| seq | total peak (bytes) |")
w("| ---: | ---: |")
for p in s["points"]:
    w(f"| {p['value']} | {p['total_peak_bytes']:,} |")
w("")
if law["exact"]:
    w(f"Its exact law (every step's total is a polynomial of degree <= {law['max_degree']} in seq "
      f"through all {len(s['points'])} values, two or more to spare; the peak is the largest step):")
    w("")
    for piece in law["pieces"]:
        rng = f"seq = {piece['from']}" if piece["from"] == piece["to"] else \
            f"seq in [{piece['from']}, {piece['to']}]"
        w(f"- {rng}: `{piece['polynomial']}` bytes (step `{piece['step']}`)")
    d = law["dominant"]
    w(f"- as seq grows: `{d['polynomial']}` bytes (step `{d['step']}`), the step whose total "
      "grows fastest.")
else:
    w(f"No exact law: {law['why_not']}.")
far = json.load(open(f"{out}/sweep_512.json"))["sweep"]
from fractions import Fraction
at = lambda piece, x: sum(Fraction(c) * x ** i for i, c in enumerate(piece["coefficients"]))
last = far["points"][-1]
w("")
w(f"The same sweep to seq = {last['value']} (total peak {last['total_peak_bytes']:,} bytes there): "
  + ("exact as well." if far["total_peak_law"]["exact"] else
     f"no law, and `analyze` says why: {far['total_peak_law']['why_not']}."))
if law["exact"]:
    got = at(law["dominant"], last["value"])
    w(f"The fastest-growing step's polynomial from the sweep to 256 gives {int(got):,} bytes at "
      f"seq = {last['value']}: {'equal to' if got == last['total_peak_bytes'] else 'NOT equal to'} "
      "the analysis there.")
EOF
echo "bert_seq: wrote the section to docs/BENCHMARKS.md" >&2
