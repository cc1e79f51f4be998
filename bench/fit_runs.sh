#!/usr/bin/env bash
# Writes "## footprint fit, verified by runs (issue 15)" into docs/BENCHMARKS.md: `footprint fit`
# on the zoo's GPT-2-style decoder with past keys/values (past length) and BERT-style encoder
# (sequence length), each answer checked by `footprint run` at the answer and at answer + 1: the
# arena the run obtained is within the budget at the answer and over it one above (or the model
# refuses the value above, when that is what stops the fit).
#
#   bench/fit_runs.sh        # raw results in build/release/fit_runs/
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
build_preset release footprint >/dev/null
zoo=$(tests/zoo/zoo.sh)
OUT=build/release/fit_runs
rm -rf "$OUT" && mkdir -p "$OUT"
cp build/release/bin/footprint "$OUT/footprint"
CLI=$OUT/footprint

# name model dim budget figure other-dims...
cases=(
  "gpt2_past_64MiB $zoo/gpt2_mini_past/model.onnx past 64MiB arena batch=1 seq=4"
  "gpt2_past_256KiB $zoo/gpt2_mini_past/model.onnx past 256KiB arena batch=1 seq=4"
  "bert_seq_4MiB $zoo/bert_mini/model.onnx seq 4MiB arena batch=1"
)
for c in "${cases[@]}"; do
  read -r name model dim budget figure rest <<<"$c"
  dims=()
  for d in $rest; do dims+=(--dim "$d"); done
  "$CLI" fit --json --budget "$budget" --solve "$dim" --figure "$figure" "${dims[@]}" "$model" \
    >"$OUT/$name.fit.json"
  largest=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["largest"])' \
    "$OUT/$name.fit.json")
  for v in "$largest" "$((largest + 1))"; do
    if "$CLI" run --json --repeat 1 "${dims[@]}" --dim "$dim=$v" "$model" >"$OUT/$name.run_$v.json" \
      2>"$OUT/$name.run_$v.err"; then :; else echo "refused" >"$OUT/$name.run_$v.refused"; fi
  done
  echo "$name $dim $budget $largest" >>"$OUT/cases.txt"
done

/usr/bin/python3 - "$OUT" <<'EOF' | python3 bench/write_section.py docs/BENCHMARKS.md \
  "## footprint fit, verified by runs (issue 15)"
import datetime, json, os, sys
out = sys.argv[1]
w = print
w("## footprint fit, verified by runs (issue 15)")
w("")
w(f"Measured {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC by `bench/fit_runs.sh` on the zoo's "
  "`gpt2_mini_past` (GPT-2-style decoder, 2 layers, d=256, 256 positions, past keys and values as "
  "inputs; batch 1, seq 4) and `bert_mini` (batch 1). `footprint fit --figure arena` finds the "
  "largest value whose arena lower bound (activations and workspace, 64-byte buffers) fits the "
  "budget, from exact predictions at the values it probes; `footprint run` at the answer and one "
  "above reports the arena the run obtained.")
w("")
w("| model | dim | budget | answer | predicted at answer | run's arena at answer | above | run's arena above | probes | verified |")
w("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |")
for line in open(f"{out}/cases.txt"):
    name, dim, budget, largest = line.split()
    f = json.load(open(f"{out}/{name}.fit.json"))
    def run(v):
        p = f"{out}/{name}.run_{v}.json"
        if os.path.exists(f"{out}/{name}.run_{v}.refused"):
            return None, open(f"{out}/{name}.run_{v}.err").read().strip().splitlines()[-1]
        return json.load(open(p))["measured"]["arena_bytes"], ""
    at, _ = run(f["largest"])
    above, why = run(f["largest"] + 1)
    ok = at is not None and at <= f["budget_bytes"] and (
        (above is not None and above > f["budget_bytes"]) or (above is None and "bytes_above" not in f))
    above_cell = f"{above:,}" if above is not None else "refused: " + why.replace("|", "/")[:160]
    w(f"| {name.split('_')[0]} | {dim} | {budget} ({f['budget_bytes']:,} B) | {f['largest']} | "
      f"{f['bytes_at_largest']:,} | {at:,} | {f['above']} | {above_cell} | {len(f['probes'])} | "
      f"{'yes' if ok else 'NO'} |")
w("")
w("Where the run above refuses the value, the fit says so too: the model takes no more (the "
  "position table of 256 entries ends at past + seq = 256), and the budget does not bind.")
EOF
echo "fit_runs: wrote the section to docs/BENCHMARKS.md" >&2
