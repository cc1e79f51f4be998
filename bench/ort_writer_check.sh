#!/usr/bin/env bash
# Does onnxruntime-node accept what footprint writes? Every model in ../shared/models and the
# example model is read by footprint, exported from the graph IR, written back, and run in
# onnxruntime-node beside the original on the same seeded inputs; outputs must be bit-identical.
# Writes the section "## Writer output in onnxruntime-node (issue 2)" of docs/BENCHMARKS.md.
#
#   bench/ort_writer_check.sh            # ORT_DIR=~/.cache/footprint/ort, NO_DOC=1 only prints
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
cd "$FOOTPRINT_ROOT"
# ORT_DIR, ORT_VERSION and ort_install.
source bench/ort_install.sh
shared="${FOOTPRINT_SHARED:-$FOOTPRINT_ROOT/../shared}"
doc="${DOC:-docs/BENCHMARKS.md}"
scratch="build/bench/rewritten"

build_preset release rewrite_model example_model
ort_install || exit 1
mkdir -p "$scratch"
rows=""
pass=0
total=0
models=(build/release/examples/tiny_cnn.onnx)
while IFS= read -r m; do models+=("$m"); done < <(find "$shared/models" -name model.onnx | sort)
for m in "${models[@]}"; do
  name="$(basename "$(dirname "$m")")"
  [ "$m" = build/release/examples/tiny_cnn.onnx ] && name=tiny_cnn
  out="$scratch/$(echo "$m" | tr '/' '_')"
  total=$((total + 1))
  if ! build/release/bin/rewrite_model "$m" "$out" 2>"$scratch/err"; then
    rows+="| ${m#"$shared"/} | write failed: $(head -c 200 "$scratch/err") |"$'\n'
    continue
  fi
  if result="$(node bench/ort_compare.js "$m" "$out" 2>&1)"; then
    pass=$((pass + 1))
    rows+="| ${m#"$shared"/} | $(stat -c %s "$m") | $(stat -c %s "$out") | identical |"$'\n'
  else
    rows+="| ${m#"$shared"/} | $(stat -c %s "$m") | $(stat -c %s "$out") | $(echo "$result" | tail -n1 | head -c 200) |"$'\n'
  fi
done

section="## Writer output in onnxruntime-node (issue 2)

Measured $(date -u '+%Y-%m-%d %H:%M UTC') with onnxruntime-node $ORT_VERSION. Produced by \`bench/ort_writer_check.sh\`:
each model is read by footprint, turned into the graph IR, exported and written by footprint's writer
(\`build/release/bin/rewrite_model IN OUT\`), then both files run in onnxruntime-node on the same seeded inputs
(\`node bench/ort_compare.js IN OUT\`; symbolic dims set to 1).

**${pass} of ${total} rewritten models are accepted by onnxruntime-node and give bit-identical outputs.**

| model | original bytes | written bytes | outputs |
| --- | ---: | ---: | --- |
${rows}"
printf '%s\n' "$section"
if [ -z "${NO_DOC:-}" ]; then
  printf '%s\n' "$section" | bench/write_section.py "$doc" "## Writer output in onnxruntime-node (issue 2)"
  log "wrote $doc"
fi
[ "$pass" -eq "$total" ]
