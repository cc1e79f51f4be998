#!/usr/bin/env bash
# The dynamo zoo side by side (issue 39, item 2): `footprint run` beside onnxruntime-node on every
# model of tests/dynamo_zoo/ (PyTorch 2.x's dynamo exports and their opset-23 forms after
# onnxscript's optimizer and fusions), 1 and 2 threads, fresh processes, peak RSS and latency.
# It is bench/runtime_compare.sh on those folders (its --help lists every setting), writing the
# section "## Dynamo zoo: footprint run vs onnxruntime-node (issue 39)" of docs/BENCHMARKS.md.
# Needs scripts/torch2's environment (the zoo is made with it, once per generator hash).
#
#   bench/dynamo_compare.sh                  # THREADS="1 2", REPEATS=2
#   THREADS=1 REPEATS=1 NO_DOC=1 bench/dynamo_compare.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
zoo=$(PYTHON=build/torch2/bin/python tests/dynamo_zoo/dynamo_zoo.sh)
MODELS=$(find "$zoo" -mindepth 1 -maxdepth 1 -type d | sort | tr '\n' ' ')
export MODELS LABEL_GROUP=dynamo THREADS="${THREADS:-1 2}" REPEATS="${REPEATS:-2}"
export HEADING="## Dynamo zoo: footprint run vs onnxruntime-node (issue 39)"
export RESULTS=${RESULTS:-build/bench/dynamo_compare}
export BENCH_COMMAND=bench/dynamo_compare.sh BENCH_FIXED="MODELS LABEL_GROUP"
exec bench/runtime_compare.sh "$@"
