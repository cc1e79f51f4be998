#!/usr/bin/env bash
# Quantized and float16 models side by side (issue 37, item 5): `footprint run` beside
# onnxruntime-node on every variant of the quantized zoo (tests/quant_zoo/quant_zoo.sh: int8
# dynamic and static, QDQ and QOperator, float16, int4 weight-only), 1 and 2 threads, fresh
# processes, peak RSS and latency, both runtimes judged at each variant's own tolerances. It is
# bench/runtime_compare.sh on those folders (its --help lists every setting), writing the section
# "## Quantized and float16: footprint run vs onnxruntime-node" of docs/BENCHMARKS.md, with the
# ratios summarised per kind beside the issue's targets (int8: latency geomean <= 1.0, each
# <= 1.3; float16: <= 1.0; peak RSS <= 0.7).
#
#   bench/quant_compare.sh                        # every variant, THREADS="1 2", REPEATS=3
#   QUANT_ONLY=resnet18-qdq,bert_mini-dyn THREADS=1 REPEATS=1 NO_DOC=1 bench/quant_compare.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export QUANT=1 MODELS="${MODELS-}"
export HEADING="## Quantized and float16: footprint run vs onnxruntime-node"
export RESULTS=${RESULTS:-build/bench/quant_compare}
export BENCH_COMMAND=bench/quant_compare.sh BENCH_FIXED="QUANT MODELS"
exec bench/runtime_compare.sh "$@"
