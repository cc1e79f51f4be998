#!/usr/bin/env bash
# The ONNX backend node tests as a newer onnx than Debian's writes them (1,653 cases, 49 MB):
# every op at its newest opset, among them the quantization ops (opsets 19 to 25: blocked scales,
# int4/uint4, int16/uint16, float8, float4, 2-bit) and opset 23's RMSNormalization,
# RotaryEmbedding and Attention: unpacked from PyPI's onnx wheel
# (the last release that ships its node tests' data, pinned below) into
# ~/.cache/footprint/onnx_node_tests/onnx-VERSION-HASH once (HASH: this script's, so that a
# change of the cases it keeps unpacks again), and the folder of test_* cases printed on stdout.
# Conformance.QuantizationOpsPassTheNewerOnnxNodeTests, Conformance.Opset23OpsPassTheNewerOnnxNodeTests
# and Conformance.EveryOpPassesTheNewerOnnxNodeTests run them (scripts/test sets
# FOOTPRINT_ONNX_NODE_TESTS to this folder).
#
#   FOOTPRINT_ONNX_NODE_TESTS=$(tests/quant_zoo/node_tests.sh) \
#     build/release/bin/footprint_runtime_tests --gtest_filter='Conformance.*'
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

# onnx 1.21 and later leave the node tests' data out of the wheel.
version=1.20.1
hash=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)
cache=${FOOTPRINT_ONNX_NODE_TESTS_CACHE:-$HOME/.cache/footprint/onnx_node_tests}/onnx-$version-$hash
if [ -f "$cache/.complete" ]; then
  echo "$cache/node"
  exit 0
fi
log "onnx node tests: unpacking the node tests of onnx $version (PyPI) into $cache"
"$FOOTPRINT_ROOT/scripts/quant" >/dev/null  # the pinned environment, for its pip
rm -rf "$cache.partial"
mkdir -p "$cache.partial"
"$FOOTPRINT_ROOT/build/quant/bin/pip" download --quiet --disable-pip-version-check --no-deps \
  --only-binary :all: --python-version 3.11 --dest "$cache.partial/wheel" "onnx==$version" >&2
"$FOOTPRINT_ROOT/build/quant/bin/python" - "$cache.partial" <<'PY'
import glob, os, re, sys, zipfile
out = sys.argv[1]
wheel = glob.glob(os.path.join(out, "wheel", "onnx-*.whl"))[0]
prefix = "onnx/backend/test/data/node/"
wanted = re.compile(r"test_[A-Za-z0-9_]*/")  # every case: the whole suite runs too
n = 0
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(prefix) and wanted.match(name[len(prefix):]):
            z.extract(name, out)
            n += 1
if n == 0:
    sys.exit(f"no node tests in {wheel}")
os.replace(os.path.join(out, prefix), os.path.join(out, "node"))
PY
rm -rf "$cache.partial/wheel" "$cache.partial/onnx"
touch "$cache.partial/.complete"
rm -rf "$cache"
mv "$cache.partial" "$cache"
echo "$cache/node"
