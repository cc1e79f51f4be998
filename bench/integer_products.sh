#!/usr/bin/env bash
# The integer products (docs/RUNTIME.md, "Integer products"): each model of
# bench/integer_products_models.py in onnxruntime-node (its outputs written as the reference,
# `bench/ort_run.js --write-outputs`) and in footprint (`footprint run --data-dir`, which must
# match them exactly: the outputs are integers), one thread, best and median of REPEAT runs.
# The *_input models hold their weights as a graph input, so footprint runs its plain loops.
#
#   bench/integer_products.sh            # one line per model and runtime
#
# Environment (all optional): BUILD_DIR=build/release, REPEAT=20, RESULTS=build/bench/integer_products,
# ORT_DIR / ORT_VERSION (bench/ort_install.sh).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build/release}
REPEAT=${REPEAT:-20}
RESULTS=${RESULTS:-build/bench/integer_products}
source "$ROOT/bench/ort_install.sh"
ort_install || { echo "integer_products: onnxruntime-node is not available" >&2; exit 1; }

python3 bench/integer_products_models.py "$RESULTS"
status=0
for name in mmi mmi_input qmm qmm_input qconv3 qconv3_input qconv1; do
  model=$RESULTS/$name.onnx
  dir=$RESULTS/$name
  ort=$(node bench/ort_run.js "$model" --data-dir "$dir" --threads 1 --repeat "$REPEAT" \
    --write-outputs "$dir" | tail -1)
  fp=$("$BUILD_DIR/bin/footprint" run "$model" --data-dir "$dir" --threads 1 --repeat "$REPEAT" \
    --json)
  python3 - "$name" "$ort" "$fp" <<'PY' || status=1
import json, sys
name, ort, fp = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
o, f = ort["latency_ms"], fp["latency_ms"]
print(f"{name:13s} onnxruntime {o['min']:8.3f} ms (median {o['median']:8.3f})   "
      f"footprint {f['min']:8.3f} ms (median {f['median']:8.3f})   match {fp.get('match')}")
sys.exit(0 if fp.get("match") else 1)
PY
done
exit $status
