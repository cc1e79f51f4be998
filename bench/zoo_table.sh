#!/usr/bin/env bash
# Writes "## Model zoo: PyTorch exports (issue 15)" into docs/BENCHMARKS.md: every zoo model
# (tests/zoo/make_zoo.py, torchvision and hand-written transformers and recurrent nets exported
# by PyTorch 1.13 with seeded random weights) through `footprint analyze` and `footprint run`
# against onnxruntime-node's outputs (tests/zoo/check_zoo.py; known failures are listed in
# tests/zoo/known_failures.txt with their causes).
#
#   bench/zoo_table.sh        # builds the release CLI, generates or reuses the zoo
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
source bench/ort_install.sh
build_preset release footprint >/dev/null
zoo=$(tests/zoo/zoo.sh)
table=$(mktemp)
trap 'rm -f "$table"' EXIT
/usr/bin/python3 tests/zoo/check_zoo.py build/release/bin/footprint "$zoo" --table "$table" || true
{
  echo "## Model zoo: PyTorch exports (issue 15)"
  echo
  echo "\`bench/zoo_table.sh\` on $(date -u +%Y-%m-%d), $(/usr/bin/python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__)'),"
  echo "onnxruntime-node $ORT_VERSION for the reference outputs. Each model is exported with"
  echo "seeded random weights, BatchNorm statistics calibrated on seeded batches, no all-zero"
  echo "weights; the run check is rtol 1e-3, atol = max(1e-5, 1e-4 x max |reference|), and the"
  echo "planned arena must equal the arena obtained, and \`run --check-shapes\` must find every value's"
  echo "dtype, extents and bytes as analyze predicts them. analyze fails (exit 1) on any size it neither"
  echo "knows nor can bound; a data-dependent size is counted at the bound its op declares, and the"
  echo 'figure is printed as an upper bound (`<=`).'
  echo
  cat "$table"
} | bench/write_section.py docs/BENCHMARKS.md "## Model zoo: PyTorch exports (issue 15)"
echo "zoo_table: docs/BENCHMARKS.md updated" >&2
