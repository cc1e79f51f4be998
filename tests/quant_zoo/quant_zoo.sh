#!/usr/bin/env bash
# The quantized zoo: int8 (dynamic, static QDQ and QOperator), int4 weight-only and float16
# variants of float32 models footprint runs (the model zoo's and ../shared/models'), made with
# onnxruntime's quantizer and onnxconverter-common (tests/quant_zoo/make_quant_zoo.py) in the
# pinned environment scripts/quant makes, with onnxruntime's outputs as references. Prints the
# quantized zoo's folder on stdout.
#
# It is cached by the hash of what makes it (this script, make_quant_zoo.py, the pins, the float
# zoo's own hash, the shared models' bytes) under FOOTPRINT_QUANT_ZOO_CACHE (default
# ~/.cache/footprint/quant_zoo/<hash>); a cached zoo is reused as it is. Making it takes about
# half a minute on two cores, once the float zoo and the environment exist.
#
#   tests/quant_zoo/quant_zoo.sh
#   QUANT_ZOO_ONLY=resnet18-qdq,bert_mini tests/quant_zoo/quant_zoo.sh   # a subset, own folder
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

here="$FOOTPRINT_ROOT/tests/quant_zoo"
zoo=$("$FOOTPRINT_ROOT/tests/zoo/zoo.sh")
shared=${FOOTPRINT_SHARED_MODELS:-$(cd "$FOOTPRINT_ROOT/.." && pwd)/shared/models}
[ -d "$shared" ] || { echo "quant zoo: no shared models at $shared" >&2; exit 1; }
key=$({
  cat "$here/quant_zoo.sh" "$here/make_quant_zoo.py" "$here/requirements.txt"
  # The float zoo's folder is named by its own generator's hash.
  basename "$zoo"
  # Only the shared models a variant is made from.
  for src in $("$FOOTPRINT_ROOT/scripts/quant" "$here/make_quant_zoo.py" --shared-sources); do
    cat "$shared/$src"/*
  done
  echo "${QUANT_ZOO_ONLY:-}"
} | sha256sum | cut -c1-16)
cache=${FOOTPRINT_QUANT_ZOO_CACHE:-$HOME/.cache/footprint/quant_zoo}
out=$cache/$key
if [ -f "$out/.complete" ]; then
  echo "$out"
  exit 0
fi

log "quant zoo: making into $out (once per generator hash)"
rm -rf "$out.partial"
mkdir -p "$out.partial"
start=$(date +%s)
# The quantizer prints protobuf dumps on stdout: stdout is this script's answer, so they go to
# stderr with the rest of its noise.
"$FOOTPRINT_ROOT/scripts/quant" "$here/make_quant_zoo.py" "$out.partial" --zoo "$zoo" \
  --shared "$shared" --only "${QUANT_ZOO_ONLY:-}" >&2
touch "$out.partial/.complete"
rm -rf "$out"
mv "$out.partial" "$out"
log "quant zoo: $(ls "$out" | wc -l) variants in $(($(date +%s) - start)) s"
if [ -z "${QUANT_ZOO_ONLY:-}" ]; then
  for old in "$cache"/*/; do
    [ "${old%/}" = "$out" ] || rm -rf "${old%/}"
  done
fi
echo "$out"
