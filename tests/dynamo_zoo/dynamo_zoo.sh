#!/usr/bin/env bash
# The dynamo zoo: models as PyTorch 2.x's dynamo exporter writes them, as exported and at opset
# 23 after onnxscript's optimizer and fusions (tests/dynamo_zoo/make_dynamo_zoo.py), with
# reference outputs from onnxruntime. Prints the zoo's folder on stdout.
#
# It needs scripts/torch2's environment (PyTorch 2.x, transformers, onnx, onnxscript,
# onnxruntime from PyPI, pinned there): scripts/torch2 makes it and runs this. Generating takes
# about a minute, so it is cached by the hash of what makes it (this script, the generators, the
# environment's pins) under FOOTPRINT_DYNAMO_ZOO_CACHE (default ~/.cache/footprint/dynamo_zoo).
#
#   PYTHON=build/torch2/bin/python tests/dynamo_zoo/dynamo_zoo.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py=${PYTHON:-$root/build/torch2/bin/python}
[ -x "$py" ] || { echo "dynamo zoo: no $py; scripts/torch2 makes the environment" >&2; exit 1; }
key=$({
  cat "$root/tests/dynamo_zoo/dynamo_zoo.sh" "$root/tests/dynamo_zoo/make_dynamo_zoo.py" \
    "$root/tests/zoo/make_zoo.py"
  "$py" -m pip freeze 2>/dev/null | grep -i -E '^(torch|torchvision|transformers|onnx|onnxscript|onnxruntime|onnx-ir|numpy|spox)=='
} | sha256sum | cut -c1-16)
cache=${FOOTPRINT_DYNAMO_ZOO_CACHE:-$HOME/.cache/footprint/dynamo_zoo}
zoo=$cache/$key
if [ -f "$zoo/.complete" ]; then
  echo "$zoo"
  exit 0
fi
echo "dynamo zoo: exporting into $zoo (once per generator hash)" >&2
rm -rf "$zoo.partial"
mkdir -p "$zoo.partial"
# The exporters' warnings (torchvision's unannotated ops, guards) are noise here; errors fail.
rc=0
log=$zoo.partial/export.log
"$py" -W ignore "$root/tests/dynamo_zoo/make_dynamo_zoo.py" "$zoo.partial" >"$log" 2>&1 || rc=$?
grep -E '^dynamo zoo:' "$log" >&2 || true
if [ "$rc" -ne 0 ]; then
  tail -20 "$log" >&2
  echo "dynamo zoo: the export failed (whole log: $log)" >&2
  exit 1
fi
touch "$zoo.partial/.complete"
rm -rf "$zoo"
mv "$zoo.partial" "$zoo"
for old in "$cache"/*/; do
  [ "${old%/}" = "$zoo" ] || rm -rf "${old%/}"
done
echo "$zoo"
