#!/usr/bin/env bash
# The model zoo: real architectures exported by PyTorch's own exporter (tests/zoo/make_zoo.py)
# with reference outputs from onnxruntime-node. Prints the zoo's folder on stdout.
#
# Generating it takes a few minutes, so it is cached by the hash of what makes it (this script,
# make_zoo.py, bench/ort_run.js, the torch and onnxruntime-node versions) under
# FOOTPRINT_ZOO_CACHE (default ~/.cache/footprint/zoo/<hash>); a cached zoo is reused as it is.
#
#   tests/zoo/zoo.sh              # installs the Debian packages it needs (as root), builds once
#   ZOO_ONLY=resnet18,bert_mini tests/zoo/zoo.sh   # a subset, in its own cache folder
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
source "$FOOTPRINT_ROOT/bench/ort_install.sh"

ensure_packages "${FOOTPRINT_ZOO_PACKAGES[@]}"
# Debian's interpreter, whatever else is first on PATH: the exporter is Debian's python3-torch.
py=/usr/bin/python3
torch_version=$("$py" -c 'import torch, torchvision; print(torch.__version__, torchvision.__version__)')
key=$({
  cat "$FOOTPRINT_ROOT/tests/zoo/zoo.sh" "$FOOTPRINT_ROOT/tests/zoo/make_zoo.py" \
    "$FOOTPRINT_ROOT/bench/ort_run.js"
  echo "$torch_version" "$ORT_VERSION" "${ZOO_ONLY:-}"
} | sha256sum | cut -c1-16)
cache=${FOOTPRINT_ZOO_CACHE:-$HOME/.cache/footprint/zoo}
zoo=$cache/$key
if [ -f "$zoo/.complete" ]; then
  echo "$zoo"
  exit 0
fi

ort_install >&2 || { echo "zoo: onnxruntime-node is needed for the reference outputs" >&2; exit 1; }
log "zoo: exporting into $zoo (torch $torch_version; once per generator hash)"
rm -rf "$zoo.partial"
mkdir -p "$zoo.partial"
start=$(date +%s)
# The exporter's warnings (TracerWarning and the like) are noise here; errors still fail.
"$py" -W ignore "$FOOTPRINT_ROOT/tests/zoo/make_zoo.py" "$zoo.partial" --only "${ZOO_ONLY:-}" >&2
for dir in "$zoo.partial"/*/; do
  node "$FOOTPRINT_ROOT/bench/ort_run.js" "$dir/model.onnx" --data-dir "$dir" \
    --write-outputs "$dir" --repeat 1 --warmup 0 >"$dir/ort.json"
done
"$py" "$FOOTPRINT_ROOT/tests/zoo/make_zoo.py" --tolerances "$zoo.partial" >&2
touch "$zoo.partial/.complete"
rm -rf "$zoo"
mv "$zoo.partial" "$zoo"
log "zoo: $(ls "$zoo" | wc -l) models in $(($(date +%s) - start)) s"
# Older generations of the whole zoo are dead weight (hundreds of MB each).
if [ -z "${ZOO_ONLY:-}" ]; then
  for old in "$cache"/*/; do
    [ "${old%/}" = "$zoo" ] || rm -rf "${old%/}"
  done
fi
echo "$zoo"
