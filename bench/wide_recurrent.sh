#!/usr/bin/env bash
# Recurrent nets at the sizes people export (issue 40, items 2 and 3): the zoo's bidirectional
# GRU over 80 speech features and an LSTM language model (2 layers), at hidden 256-1024 over 100
# and 1000 steps, each run by `footprint run` and by onnxruntime-node in fresh processes,
# alternated, 1 and 2 threads (bench/wide_transformers.sh with its recurrent family only), writing
# the section "## Recurrent nets at real sizes: footprint run vs onnxruntime-node" of
# docs/BENCHMARKS.md.
#
#   bench/wide_recurrent.sh                                   # REPEATS=3
#   RNNS=gru:512x100 THREADS=1 REPEATS=1 NO_DOC=1 bench/wide_recurrent.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export RNNS=${RNNS:-gru:256x100,gru:512x1000,lstm:512x100,lstm:1024x100}
export WIDTHS="" SHAPES="" PAST=0 PRODUCTS=""
export HEADING="## Recurrent nets at real sizes: footprint run vs onnxruntime-node"
export RESULTS=${RESULTS:-build/bench/wide_recurrent}
export WIDE_COMMAND="RNNS=$RNNS bench/wide_recurrent.sh"
exec bench/wide_transformers.sh "$@"
