#!/usr/bin/env bash
# The runtime against the ONNX operator conformance suites: Debian's libonnx-testdata, and every
# node test of PyPI's onnx 1.20.1 (the newest opsets; tests/quant_zoo/node_tests.sh unpacks them).
# Runs tests/runtime/conformance_test.cpp with FOOTPRINT_CONFORMANCE_REPORT and
# FOOTPRINT_NEWER_CONFORMANCE_REPORT set and writes both per-op tables, their failures and skips
# into docs/CONFORMANCE.md.
#
#   bench/conformance_report.sh        # BIN=build/release/bin/footprint_runtime_tests to override
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BIN=${BIN:-build/release/bin/footprint_runtime_tests}
DOC=${DOC:-docs/CONFORMANCE.md}
[ -x "$BIN" ] || { echo "conformance_report: $BIN not found (build the release preset)" >&2; exit 1; }
debian=$(mktemp)
newer=$(mktemp)
trap 'rm -f "$debian" "$newer"' EXIT
node_tests=$(tests/quant_zoo/node_tests.sh)
out=$(FOOTPRINT_CONFORMANCE_REPORT="$debian" FOOTPRINT_NEWER_CONFORMANCE_REPORT="$newer" \
  FOOTPRINT_ONNX_NODE_TESTS="$node_tests" "$BIN" \
  --gtest_filter='Conformance.RegisteredOpsPassTheOnnxNodeTests:Conformance.*NewerOnnxNodeTests')
[ -s "$debian" ] && [ -s "$newer" ] || { echo "conformance_report: the tests wrote no table" >&2; exit 1; }
# "conformance (FOLDER): N pass, ..." per suite, in the order the tests ran.
summary_of() { grep "^conformance ($1" <<<"$out" | sed -n "${2}p" | sed 's/^conformance ([^)]*): //'; }
debian_summary=$(summary_of /usr/share 1)
quantization_summary=$(summary_of "$node_tests" 1)
opset23_summary=$(summary_of "$node_tests" 2)
every_summary=$(summary_of "$node_tests" 3)
{
  echo "# ONNX conformance (runtime)"
  echo
  echo "The ONNX backend node tests, each run through \`runtime::Session\` in a child process by"
  echo "\`tests/runtime/conformance_test.cpp\` (rtol 1e-3, atol 1e-5). Every failure is listed with"
  echo "its reason in \`tests/runtime/conformance_known_failures.txt\` (Debian's cases) or"
  echo "\`tests/runtime/conformance_newer_known_failures.txt\` (onnx 1.20.1's); a skipped case uses an"
  echo "op without a kernel, a dtype its row declares it does not run (as \`analyze\` warns), or test"
  echo "data footprint cannot hold."
  echo
  echo "Produced by \`bench/conformance_report.sh\` on $(date -u '+%Y-%m-%d %H:%M') UTC."
  echo
  echo "## Debian's libonnx-testdata"
  echo
  echo "$debian_summary."
  echo
  cat "$debian"
  echo
  echo "## onnx 1.20.1's node tests (the newest opsets)"
  echo
  echo "PyPI's onnx wheel 1.20.1 (the last that ships its node tests' data), unpacked once by"
  echo "\`tests/quant_zoo/node_tests.sh\` (cached by the script's hash) and run by \`scripts/test\`:"
  echo
  echo "- every case, \`Conformance.EveryOpPassesTheNewerOnnxNodeTests\`: $every_summary;"
  echo "- the quantization ops of opsets 19 to 25, \`Conformance.QuantizationOpsPassTheNewerOnnxNodeTests\`:"
  echo "  $quantization_summary;"
  echo "- opset 23's RMSNormalization, RotaryEmbedding and Attention, each also as ONNX's function"
  echo "  expanded, \`Conformance.Opset23OpsPassTheNewerOnnxNodeTests\`: $opset23_summary."
  echo
  echo "Of the known failures, some encode onnx 1.20.1's reference where the spec and onnxruntime 1.32"
  echo "differ (Attention's softcap and qk_matmul_output modes, since corrected by ONNX; QLinearMatMul"
  echo "int8 outputs wrapped where the spec saturates): footprint follows the spec and onnxruntime"
  echo "there. The others are work not done yet, each with its reason in the file."
  echo
  cat "$newer"
} >"$DOC"
printf 'Debian: %s\nonnx 1.20.1: %s\n' "$debian_summary" "$every_summary"
