#!/usr/bin/env bash
# The runtime against the ONNX operator conformance suite (Debian libonnx-testdata): runs
# tests/runtime/conformance_test.cpp with FOOTPRINT_CONFORMANCE_REPORT set and writes its per-op
# table, failures and skips into docs/CONFORMANCE.md.
#
#   bench/conformance_report.sh        # BIN=build/release/bin/footprint_runtime_tests to override
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BIN=${BIN:-build/release/bin/footprint_runtime_tests}
DOC=${DOC:-docs/CONFORMANCE.md}
[ -x "$BIN" ] || { echo "conformance_report: $BIN not found (build the release preset)" >&2; exit 1; }
table=$(mktemp)
trap 'rm -f "$table"' EXIT
summary=$(FOOTPRINT_CONFORMANCE_REPORT="$table" "$BIN" --gtest_filter='Conformance*' |
          grep '^conformance:' || true)
[ -s "$table" ] || { echo "conformance_report: the test wrote no table" >&2; exit 1; }
{
  echo "# ONNX conformance (runtime)"
  echo
  echo "The ONNX node tests of Debian's libonnx-testdata, each run through \`runtime::Session\` in a"
  echo "child process by \`tests/runtime/conformance_test.cpp\` (rtol 1e-3, atol 1e-5). Every failure"
  echo "is listed with its reason in \`tests/runtime/conformance_known_failures.txt\`; a skipped"
  echo "case uses an op without a kernel, or test data footprint cannot hold."
  echo
  echo "Produced by \`bench/conformance_report.sh\` on $(date -u '+%Y-%m-%d %H:%M') UTC:"
  echo "${summary#conformance: }."
  echo
  cat "$table"
} >"$DOC"
echo "$summary"
