#!/usr/bin/env bash
# Real-width quantized and float16 transformers side by side (issue 37, item 5, at the widths of
# issue 40): the BERT-style encoder and GPT-2-style decoder of bench/wide_transformers.sh at
# hidden 768 and 1024 (4 layers, batch x sequence 1x128, and the decoder's one-token step over
# 1024 past keys and values), made dynamic-int8 and float16 (keep_io_types) by onnxruntime's
# quantizer and onnxconverter-common as the quantized zoo makes its variants
# (bench/wide_quant_models.py, in the environment scripts/quant makes), each run by
# `footprint run` and by onnxruntime-node in fresh processes, alternated, 1 and 2 threads, both
# judged at the variant's own tolerances. It is bench/runtime_compare.sh on those folders (its
# --help lists every setting), writing the section "## Real-width quantized and float16
# transformers: footprint run vs onnxruntime-node" of docs/BENCHMARKS.md.
#
#   bench/wide_quant.sh                                   # KINDS=dyn,fp16io, REPEATS=3
#   KINDS=dyn WIDTHS=768 THREADS=1 REPEATS=1 NO_DOC=1 bench/wide_quant.sh
#
# The decoder steps' float16 variants are invalid as onnxconverter-common 1.x writes them
# (keep_io_types leaves the past keys and values float32 ahead of a Transpose whose output it
# declares float16): onnxruntime and footprint both refuse them, naming that Transpose.
#
# The variants are made once per generator hash and settings under
# ~/.cache/footprint/wide_quant/<hash>.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
cd "$FOOTPRINT_ROOT"
KINDS=${KINDS:-dyn,fp16io}
WIDTHS=${WIDTHS:-768,1024}
SHAPES=${SHAPES:-1x128}
PAST=${PAST:-1024}
wide=$(WIDE_PRINT_DIR=1 WIDTHS=$WIDTHS SHAPES=$SHAPES PAST=$PAST PRODUCTS= RNNS= \
  bench/wide_transformers.sh)
only=$(ls "$wide" | grep -E '^(bert|gpt2)_' | tr '\n' ',' | sed 's/,$//')
key=$({
  cat bench/wide_quant.sh bench/wide_quant_models.py tests/quant_zoo/make_quant_zoo.py \
    tests/quant_zoo/requirements.txt
  echo "$wide $KINDS $only"
} | sha256sum | cut -c1-16)
dir=${FOOTPRINT_WIDE_QUANT_CACHE:-$HOME/.cache/footprint/wide_quant}/$key
if [ ! -f "$dir/.complete" ]; then
  log "wide quant: making $KINDS variants of $only into $dir (once per generator hash)"
  rm -rf "$dir.partial"
  mkdir -p "$dir.partial"
  scripts/quant bench/wide_quant_models.py "$dir.partial" "$wide" --kinds "$KINDS" --only "$only" >&2
  touch "$dir.partial/.complete"
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
fi
models=$(ls -d "$dir"/*/ | sed 's:/$::' | tr '\n' ' ')
export MODELS="$models" LABEL_GROUP=wide
export HEADING=${HEADING:-"## Real-width quantized and float16 transformers: footprint run vs onnxruntime-node"}
export RESULTS=${RESULTS:-build/bench/wide_quant}
export BENCH_COMMAND="KINDS=$KINDS WIDTHS=$WIDTHS SHAPES=$SHAPES PAST=$PAST bench/wide_quant.sh"
export BENCH_FIXED="MODELS LABEL_GROUP"
exec bench/runtime_compare.sh "$@"
