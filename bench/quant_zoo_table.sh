#!/usr/bin/env bash
# Writes "## Quantized zoo (issue 37)" into docs/BENCHMARKS.md: every variant of the quantized
# zoo (tests/quant_zoo/: int8, int4 and float16 variants made by onnxruntime's quantizer and
# onnxconverter-common from PyPI) through tests/quant_zoo/check_quant_zoo.py (runs and matches
# onnxruntime, or refused with the op analyze named first), then a first look at the figures
# (bench/quant_first_look.py: file, analyze's weights and total peak against the float32
# model's, onnxruntime's latency at one thread).
#
#   bench/quant_zoo_table.sh   # builds the release CLI, generates or reuses both zoos
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
build_preset release footprint >/dev/null
quant_zoo=$(tests/quant_zoo/quant_zoo.sh)
table=$(mktemp)
looks=$(mktemp)
trap 'rm -f "$table" "$looks"' EXIT
start=$(date +%s)
/usr/bin/python3 tests/quant_zoo/check_quant_zoo.py build/release/bin/footprint "$quant_zoo" \
  --table "$table" || true
checked=$(($(date +%s) - start))
scripts/quant bench/quant_first_look.py build/release/bin/footprint "$quant_zoo" >"$looks"
{
  echo "## Quantized zoo (issue 37)"
  echo
  echo "\`bench/quant_zoo_table.sh\` on $(date -u '+%Y-%m-%d %H:%M') UTC, commit $(git rev-parse --short HEAD); $(scripts/quant),"
  echo "load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores. The variants are made by"
  echo "\`tests/quant_zoo/make_quant_zoo.py\` (its docstring says how) from the model zoo's and"
  echo "../shared/models' float32 models, with onnxruntime's outputs for the source model's seeded"
  echo "inputs as references, and cached by the generator's hash (\`tests/quant_zoo/quant_zoo.sh\`)."
  echo "The rule \`tests/quant_zoo/check_quant_zoo.py\` holds every variant to, in \`scripts/test\`:"
  echo "\`run\` matches onnxruntime's outputs (within the variant's rtol/atol: int8 graphs 1e-2 and"
  echo "1e-2 x max |reference|, float16 1e-2 and 5e-3 x max, int4 weight-only 1e-3 and 1e-4 x max), or"
  echo "it exits 1 with a one-line error naming an op that \`analyze\` named before (a warning that"
  echo "\`run\` will refuse it, or its one-line error where the op's outputs have no size it can know);"
  echo "never a crash, a hang, or exit 0 with outputs that differ. The check took ${checked} s."
  echo
  cat "$table"
  echo
  echo "A first look (\`bench/quant_first_look.py\`, no tuning): analyze's predicted weights and total"
  echo "peak beside the float32 model's (in parentheses), and onnxruntime's latency, median of 10"
  echo "runs at one thread on the same inputs. The machine is shared: latencies are noisy."
  echo
  cat "$looks"
} | bench/write_section.py docs/BENCHMARKS.md "## Quantized zoo (issue 37)"
echo "quant_zoo_table: docs/BENCHMARKS.md updated" >&2
