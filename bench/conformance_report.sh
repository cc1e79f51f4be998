#!/usr/bin/env bash
# The runtime against the ONNX operator conformance suites: Debian's libonnx-testdata, and every
# node test of PyPI's onnx 1.20.1 (the newest opsets; tests/quant_zoo/node_tests.sh unpacks them).
# Runs `footprint conformance` (the build scripts/run makes) over both and writes their per-op
# tables (pass / wrong / no kernel / data not read / error) and every case that did not pass,
# with its reason, into OUT; then onnxruntime on the same cases (bench/conformance_vs_ort.py, in
# scripts/quant's environment).
#
#   bench/conformance_report.sh docs/CONFORMANCE.md
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -eq 1 ] || { echo "usage: bench/conformance_report.sh OUT.md" >&2; exit 2; }
OUT=$(realpath -m "$1")
cd "$ROOT"
source scripts/lib.sh
build_preset release footprint >/dev/null
BIN=build/release/bin/footprint
DEBIAN=/usr/share/libonnx-testdata/data/node
[ -d "$DEBIAN" ] || { echo "conformance_report: $DEBIAN not found (libonnx-testdata)" >&2; exit 1; }
node_tests=$(tests/quant_zoo/node_tests.sh)
debian=$(mktemp)
newer=$(mktemp)
trap 'rm -f "$debian" "$newer"' EXIT
"$BIN" conformance "$DEBIAN" -o "$debian"
"$BIN" conformance "$node_tests" -o "$newer"
# The first line of a report: "N cases: a pass, b wrong, ..."
summary() { head -n 1 "$1" | sed 's/\.$//'; }
subset() { "$BIN" conformance "$node_tests" --cases "$1" 2>/dev/null | head -n 1 | sed 's/\.$//'; }
quantization=$(subset quantizelinear,dequantizelinear,qlinear,matmulinteger,convinteger)
opset23=$(subset rms_normalization,rotary_embedding,test_attention)
{
  echo "# ONNX conformance (runtime)"
  echo
  echo "The ONNX backend node tests, each run through \`runtime::Session\` in a process of its own"
  echo "by \`footprint conformance\` (rtol 1e-3, atol 1e-5; a pass also needs the predicted outputs"
  echo "and arena to be the run's). Per op: cases that **pass**, give a **wrong** value or figure, use"
  echo "an op with **no kernel** (or a dtype its kernel declares it does not run, as \`analyze\`"
  echo "warns), carry test data footprint does not read (**data not read**: strings, maps), or fail"
  echo "otherwise (**error**: a refusal, a crash, a case past its time limit). Every wrong or error"
  echo "case is also listed with its reason in \`tests/runtime/conformance_known_failures.txt\`"
  echo "(Debian's cases) or \`tests/runtime/conformance_newer_known_failures.txt\` (onnx 1.20.1's),"
  echo "which \`tests/runtime/conformance_test.cpp\` holds the runtime to."
  echo
  echo "Produced by \`bench/conformance_report.sh docs/CONFORMANCE.md\` on $(date -u '+%Y-%m-%d %H:%M') UTC."
  echo
  echo "## Debian's libonnx-testdata"
  echo
  cat "$debian"
  echo "## onnx 1.20.1's node tests (the newest opsets)"
  echo
  echo "PyPI's onnx wheel 1.20.1 (the last that ships its node tests' data), unpacked once by"
  echo "\`tests/quant_zoo/node_tests.sh\` (cached by the script's hash) and run by \`scripts/test\`."
  echo "Of them, the quantization ops of opsets 19 to 25: $quantization; opset 23's"
  echo "RMSNormalization, RotaryEmbedding and Attention, each also as ONNX's function expanded:"
  echo "$opset23."
  echo
  echo "Of the known failures, some encode onnx 1.20.1's reference where the spec and onnxruntime 1.32"
  echo "differ (Attention's softcap and qk_matmul_output modes, since corrected by ONNX; QLinearMatMul"
  echo "int8 outputs wrapped where the spec saturates): footprint follows the spec and onnxruntime"
  echo "there. The others are work not done yet, each with its reason in the file."
  echo
  cat "$newer"
  echo "## Beside onnxruntime"
  echo
  echo "\`scripts/quant bench/conformance_vs_ort.py\` over the same two folders:"
  echo
  scripts/quant bench/conformance_vs_ort.py --footprint "$BIN" "$DEBIAN" "$node_tests" 2>/dev/null
} >"$OUT"
printf 'Debian: %s\nonnx 1.20.1: %s\n' "$(summary "$debian")" "$(summary "$newer")"
