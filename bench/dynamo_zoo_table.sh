#!/usr/bin/env bash
# Writes "## Dynamo zoo: PyTorch 2.x exports (issue 39)" into docs/BENCHMARKS.md: every model of
# the dynamo zoo (tests/dynamo_zoo/make_dynamo_zoo.py: torchvision, the TorchScript zoo's BERT-
# and GPT-2-style blocks and transformers' Llama, Qwen2 and Mistral decoders, exported by PyTorch
# 2.x with dynamo=True, and each again at opset 23 after onnxscript's optimizer and fusions)
# through `footprint analyze` and `footprint run` against onnxruntime's outputs, checked as
# tests/zoo/check_zoo.py checks the TorchScript zoo. Needs scripts/torch2's environment.
#
#   scripts/torch2 && bench/dynamo_zoo_table.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
build_preset release footprint >/dev/null
py=build/torch2/bin/python
zoo=$(PYTHON=$py tests/dynamo_zoo/dynamo_zoo.sh)
table=$(mktemp)
trap 'rm -f "$table"' EXIT
/usr/bin/python3 tests/zoo/check_zoo.py build/release/bin/footprint "$zoo" --table "$table" \
  --known tests/dynamo_zoo/known_failures.txt --label "dynamo zoo" || true
versions=$("$py" -c 'import torch, onnxscript, onnxruntime, transformers
print("torch", torch.__version__, "onnxscript", onnxscript.__version__, "transformers",
      transformers.__version__, "onnxruntime", onnxruntime.__version__)')
{
  echo "## Dynamo zoo: PyTorch 2.x exports (issue 39)"
  echo
  echo "\`bench/dynamo_zoo_table.sh\` on $(date -u +%Y-%m-%d), $versions (onnxruntime's outputs"
  echo "are the reference). Each model as \`torch.onnx.export(..., dynamo=True)\` writes it (opset 18),"
  echo "and as \`NAME-o23\`: converted to opset 23, \`onnxscript.optimizer.optimize\`, then"
  echo "\`onnxscript.rewriter.onnx_fusions.fuse\` (the decoders get 5 RMSNormalization and 4"
  echo "RotaryEmbedding nodes; nothing there fuses into Attention); \`spox_mlp_if\` is built with spox"
  echo "0.18 (its graph naming, an If from Python lambdas, batch N dynamic). Seeded random weights, BatchNorm"
  echo "statistics calibrated, no all-zero weights; the dims in the names the exporter gives them"
  echo "(batch, seq, past: dynamic, bound as in each folder's meta.json). The checks are the TorchScript"
  echo "zoo's: outputs within rtol 1e-3, atol = max(1e-5, 1e-4 x max |reference|); planned arena ="
  echo "obtained; \`--check-shapes\` clean; analyze's lower bound, peaks, packed and prepare figures ="
  echo "the run's."
  echo
  cat "$table"
} | bench/write_section.py docs/BENCHMARKS.md "## Dynamo zoo: PyTorch 2.x exports (issue 39)"
echo "dynamo_zoo_table: docs/BENCHMARKS.md updated" >&2
