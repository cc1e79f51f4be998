#!/usr/bin/env bash
# Real-width transformers side by side (issue 40, item 3): the zoo's BERT-style encoder and
# GPT-2-style decoder built at hidden 768 and 1024 (heads of 64, feed-forward 4x, 4 layers) on
# batch x sequence 1x128, 8x128 and 1x512, and the decoder's one-token step over 1024 past keys
# and values, and single Linear layers of BERT-base's widths (bench/wide_transformers_models.py,
# Debian's torch 1.13 exporter), each run by
# `footprint run` and by onnxruntime-node in fresh processes, alternated, 1 and 2 threads. It is
# bench/runtime_compare.sh on those folders (its --help lists every setting), writing the section
# "## Real-width transformers: footprint run vs onnxruntime-node" of docs/BENCHMARKS.md.
#
#   bench/wide_transformers.sh                           # the default family, REPEATS=3
#   WIDTHS=768 SHAPES=1x128 PAST=0 THREADS=1 REPEATS=1 NO_DOC=1 bench/wide_transformers.sh
#
# The models are made once per generator hash and settings, with onnxruntime-node's outputs as
# the reference, under ~/.cache/footprint/wide/<hash>.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
source "$FOOTPRINT_ROOT/bench/ort_install.sh"
cd "$FOOTPRINT_ROOT"
WIDTHS=${WIDTHS-768,1024}
SHAPES=${SHAPES-1x128,8x128,1x512}
PAST=${PAST:-1024}
LAYERS=${LAYERS:-4}
PRODUCTS=${PRODUCTS-64x768x3072,64x3072x768,1x768x3072}
RNNS=${RNNS-}
py=/usr/bin/python3
key=$({
  cat bench/wide_transformers.sh bench/wide_transformers_models.py tests/zoo/make_zoo.py \
    bench/ort_run.js
  "$py" -c 'import torch; print(torch.__version__)'
  echo "$WIDTHS $SHAPES $PAST $LAYERS $PRODUCTS $RNNS $ORT_VERSION"
} | sha256sum | cut -c1-16)
dir=${FOOTPRINT_WIDE_CACHE:-$HOME/.cache/footprint/wide}/$key
if [ ! -f "$dir/.complete" ]; then
  ort_install >&2
  log "wide transformers: exporting into $dir (once per generator hash and settings)"
  rm -rf "$dir.partial"
  mkdir -p "$dir.partial"
  "$py" -W ignore bench/wide_transformers_models.py "$dir.partial" --widths "$WIDTHS" \
    --shapes "$SHAPES" --past "$PAST" --layers "$LAYERS" --products "$PRODUCTS" --rnns "$RNNS" >&2
  for m in "$dir.partial"/*/; do
    NODE_PATH="$ORT_DIR/node_modules" node bench/ort_run.js "$m/model.onnx" --data-dir "$m" \
      --write-outputs "$m" --repeat 1 --warmup 0 >"$m/ort.json"
  done
  "$py" tests/zoo/make_zoo.py --tolerances "$dir.partial" >&2
  touch "$dir.partial/.complete"
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
fi
# For a wrapper that makes variants of these models (bench/wide_quant.sh): their folder only.
if [[ ${WIDE_PRINT_DIR:-0} == 1 ]]; then
  echo "$dir"
  exit 0
fi
models=$(ls -d "$dir"/*/ | sed 's:/$::' | tr '\n' ' ')
export MODELS="$models" LABEL_GROUP=wide
export HEADING=${HEADING:-"## Real-width transformers: footprint run vs onnxruntime-node"}
export RESULTS=${RESULTS:-build/bench/wide_transformers}
# The command printed above the table: the wrapper's own (bench/wide_recurrent.sh) when one ran
# this, else this one with the family's settings.
export BENCH_COMMAND=${WIDE_COMMAND:-"WIDTHS=$WIDTHS SHAPES=$SHAPES PAST=$PAST LAYERS=$LAYERS PRODUCTS=$PRODUCTS bench/wide_transformers.sh"}
export BENCH_FIXED="MODELS LABEL_GROUP"
exec bench/runtime_compare.sh "$@"
