#!/usr/bin/env bash
# Build -> export -> onnxruntime-node (issue 6): the example MobileNetV2 that the build writes
# with the graph builder (examples/mobilenet_v2.hpp, build/<preset>/examples/mobilenet_v2/) gives
# the same outputs in footprint and in onnxruntime-node, checked both ways on its input_0.pb:
#
#   1. ORT's outputs as the reference: `node bench/ort_run.js --write-outputs` writes
#      output_0.pb, then `footprint run MODEL --data-dir` compares with it;
#   2. footprint's outputs as the reference: `footprint run -o` writes output_0.pb, then
#      `node bench/ort_run.js --data-dir` compares with it.
#
# Both use footprint's rule, |got - want| <= atol + rtol * |want| (rtol 1e-3, atol 1e-5). Exits
# 1 on a mismatch or a failed run. scripts/test runs it after the unit tests.
#
#   bench/example_vs_ort.sh              # check, one line per direction, docs untouched
#   DOC=docs/BENCHMARKS.md bench/example_vs_ort.sh   # also write the section "## Example model:
#                                        # footprint vs onnxruntime-node" (others kept)
#
# Environment (all optional):
#   BUILD_DIR=build/release              the footprint binary and the example folder (built by
#                                        the release preset; BUILD=1 builds them first)
#   ORT_DIR=~/.cache/footprint/ort ORT_VERSION=1.30.0   onnxruntime-node, installed from npm
#   RESULTS=build/bench/example_vs_ort   the two folders of inputs and reference outputs
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

log() { printf '[example_vs_ort] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# The command as run, with the settings that change what is measured when they were given.
COMMAND_LINE=""
for v in BUILD_DIR ORT_VERSION; do
  [[ -n ${!v:-} ]] && COMMAND_LINE+="$v=$(printf '%q' "${!v}") "
done
COMMAND_LINE+="bench/example_vs_ort.sh"
BUILD_DIR=${BUILD_DIR:-build/release}
RESULTS=${RESULTS:-build/bench/example_vs_ort}
DOC=${DOC:-}
# ORT_DIR, ORT_VERSION and ort_install.
source bench/ort_install.sh
command -v python3 >/dev/null || die "python3 not found"

if [[ ${BUILD:-0} == 1 ]]; then
  [[ $BUILD_DIR == build/release ]] || die "BUILD=1 builds the release preset only (BUILD_DIR=build/release)"
  cmake --preset release >/dev/null
  cmake --build --preset release -j "${JOBS:-2}" --target footprint example_model >&2
fi
FOOTPRINT=$BUILD_DIR/bin/footprint
EXAMPLE=$BUILD_DIR/examples/mobilenet_v2
MODEL=$EXAMPLE/model.onnx
for f in "$FOOTPRINT" "$MODEL" "$EXAMPLE/input_0.pb"; do
  [[ -f $f ]] || die "$f not found: build the release preset (scripts/run), or run with BUILD=1"
done
ort_install || die "no onnxruntime-node@$ORT_VERSION"

rm -rf "$RESULTS"
mkdir -p "$RESULTS/ort_reference" "$RESULTS/footprint_reference"
for d in ort_reference footprint_reference; do cp "$EXAMPLE/input_0.pb" "$RESULTS/$d/"; done

# field JSON_FILE NAME: one top-level field of a JSON object ("nan" when absent).
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], "nan"))' "$1" "$2"; }

fail=0
# 1. onnxruntime-node writes the reference, footprint is checked against it.
node bench/ort_run.js "$MODEL" --data-dir "$RESULTS/ort_reference" --repeat 1 --warmup 0 \
  --write-outputs "$RESULTS/ort_reference" >"$RESULTS/ort_write.json" ||
  die "onnxruntime-node could not run $MODEL"
rc=0
"$FOOTPRINT" run "$MODEL" --data-dir "$RESULTS/ort_reference" --repeat 1 --warmup 0 --json \
  >"$RESULTS/footprint_check.json" 2>"$RESULTS/footprint_check.err" || rc=$?
if [[ ! -s $RESULTS/footprint_check.json ]]; then
  cat "$RESULTS/footprint_check.err" >&2
  die "footprint run failed (exit $rc) on $RESULTS/ort_reference"
fi
# 2. footprint writes the reference, onnxruntime-node is checked against it.
"$FOOTPRINT" run "$MODEL" --input "x=$EXAMPLE/input_0.pb" --repeat 1 --warmup 0 \
  -o "$RESULTS/footprint_reference" >/dev/null || die "footprint run -o failed"
node bench/ort_run.js "$MODEL" --data-dir "$RESULTS/footprint_reference" --repeat 1 --warmup 0 \
  >"$RESULTS/ort_check.json" || die "onnxruntime-node could not run $MODEL"

rows=""
for check in "footprint_check:footprint, checked against onnxruntime-node's outputs" \
  "ort_check:onnxruntime-node, checked against footprint's outputs"; do
  json=$RESULTS/${check%%:*}.json
  what=${check#*:}
  match=$(field "$json" match)
  abs=$(field "$json" max_abs_error)
  rel=$(field "$json" max_rel_error)
  printf -v line '%s: match %s, max abs error %.3g, max rel error %.3g' "$what" "$match" "$abs" "$rel"
  log "$line"
  [[ $match == True ]] || { fail=1; log "  mismatch: $(field "$json" mismatch)"; }
  printf -v row '| %s | %s | %.3g | %.3g |' "$what" "$([[ $match == True ]] && echo yes || echo '**no**')" \
    "$abs" "$rel"
  rows+=$row$'\n'
done

HEADING="## Example model: footprint vs onnxruntime-node"
section="$HEADING

Measured $(date -u '+%Y-%m-%d %H:%M UTC') with onnxruntime-node $ORT_VERSION and $("$FOOTPRINT" --version 2>/dev/null | head -1),
by \`$COMMAND_LINE\`. scripts/test runs it after the unit tests: about 2 s with
onnxruntime-node installed, plus about 8 s for its first install from npm.

The example MobileNetV2 (width 0.35, 96x96, 1000 classes; \`examples/mobilenet_v2.hpp\`) is built
with the graph builder and written by footprint's writer at build time, with a seeded input for
N=1 (\`examples/mobilenet_v2/input_0.pb\` in the build folder). Each runtime's logits are the
other's reference: \`node bench/ort_run.js MODEL --data-dir DIR --write-outputs DIR\` then
\`footprint run MODEL --data-dir DIR\`, and \`footprint run MODEL --input x=input_0.pb -o DIR\` then
\`node bench/ort_run.js MODEL --data-dir DIR\`. Both check |got - want| <= 1e-5 + 1e-3 |want|.

| run | match | max abs error | max rel error |
| --- | --- | ---: | ---: |
${rows%$'\n'}"
if [[ -n $DOC ]]; then
  printf '%s\n' "$section"
  printf '%s\n' "$section" | python3 bench/write_section.py "$DOC" "$HEADING"
  log "wrote the section \"$HEADING\" of $DOC"
fi
((fail == 0)) || die "the example model's outputs differ between footprint and onnxruntime-node"
log "footprint and onnxruntime-node agree on $MODEL"
