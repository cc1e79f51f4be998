#!/usr/bin/env bash
# Writes "## Fusion patterns and layouts: what analysis sees (issue 16)" into docs/BENCHMARKS.md:
# for every zoo model (tests/zoo/) and the shared caffe2 models, `footprint analyze` with fusion
# (the default) and with --no-fuse at the inputs' extents: the steps run, the patterns rewritten
# into one op (LayerNormalization, Gelu, footprint::MatMulAdd, footprint::Attention,
# footprint::ChannelShuffle, HardSwish, footprint::SqueezeExcite, footprint::Elementwise) or folded into the parameters before them (Conv+BatchNormalization), the
# activations folded into the node before them, the layout changes, and the arena's lower bound.
# Also the zoo's BERT at seq 512, where attention's scores dominate the arena.
#
#   bench/fusion_patterns.sh        # raw results in build/release/fusion_patterns/
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
build_preset release footprint >/dev/null
zoo=$(tests/zoo/zoo.sh)
OUT=build/release/fusion_patterns
rm -rf "$OUT" && mkdir -p "$OUT"
CLI=build/release/bin/footprint
for d in "$zoo"/*/ ../shared/models/light/*/; do
  d=${d%/}
  [[ -f $d/model.onnx ]] || continue
  label=zoo/$(basename "$d")
  [[ $d == ../shared/* ]] && label=$(basename "$(dirname "$d")")/$(basename "$d")
  name=${label//\//__}
  for mode in fused apart; do
    flag=()
    [[ $mode == apart ]] && flag=(--no-fuse)
    "$CLI" analyze --json --data-dir "$d" "${flag[@]}" "$d/model.onnx" >"$OUT/$name.$mode.json" \
      2>/dev/null || { echo "fusion_patterns: $label ($mode) failed" >&2; continue 2; }
  done
  echo "$label" >>"$OUT/labels"
done
for mode in fused apart; do
  flag=()
  [[ $mode == apart ]] && flag=(--no-fuse)
  "$CLI" analyze --json --dim batch=1 --dim seq=512 "${flag[@]}" "$zoo/bert_mini/model.onnx" \
    >"$OUT/bert_512.$mode.json"
done
echo "zoo/bert_mini at seq 512" >"$OUT/bert_label"

/usr/bin/python3 - "$OUT" <<'EOF' | python3 bench/write_section.py docs/BENCHMARKS.md \
  "## Fusion patterns and layouts: what analysis sees (issue 16)"
import collections, datetime, json, sys
out = sys.argv[1]
w = print
w("## Fusion patterns and layouts: what analysis sees (issue 16)")
w("")
w(f"Measured {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC by `bench/fusion_patterns.sh`: "
  "`footprint analyze --json --data-dir DIR` on each model, with fusion (the default) and with "
  "`--no-fuse`. Patterns: the exporters' multi-node forms rewritten into one registry row "
  "(LN = LayerNormalization, GELU = Gelu, Linear = footprint::MatMulAdd, Attention = "
  "footprint::Attention, Shuffle = footprint::ChannelShuffle, Eltwise = footprint::Elementwise, a "
  "run of elementwise ops in one pass, SE = footprint::SqueezeExcite; Conv+BatchNormalization, "
  "Conv+Mul, "
  "... = a per-channel affine map folded into the parameters of the node before it, computed "
  "once while preparing); folded: activations run as epilogues of the node before them; layout "
  "changes: ToChannelsLast/FromChannelsLast steps. The lower bound is the arena no plan of that "
  "order can undercut (64-byte buffers), what `run` then obtains.")
w("")
w("| model | steps fused / apart | patterns | folded | layout changes | arena lower bound fused / apart (KiB) |")
w("| --- | ---: | --- | ---: | ---: | ---: |")
short = {"LayerNormalization": "LN", "Gelu": "GELU", "footprint::MatMulAdd": "Linear",
         "footprint::Attention": "Attention", "footprint::ChannelShuffle": "Shuffle",
         "footprint::Elementwise": "Eltwise", "footprint::SqueezeExcite": "SE"}
labels = open(f"{out}/labels").read().split()
def row(label, name):
    f = json.load(open(f"{out}/{name}.fused.json"))
    a = json.load(open(f"{out}/{name}.apart.json"))
    kinds = collections.Counter(p.split(" ")[0] for p in f.get("patterns", []))
    pats = ", ".join(f"{short.get(k, k)} {n}" for k, n in sorted(kinds.items())) or "-"
    cl = f.get("channels_last", {})
    w(f"| {label} | {len(f['steps'])} / {len(a['steps'])} | {pats} | {len(f.get('fused', []))} | "
      f"{cl.get('layout_changes', 0)} | {f['lower_bound_arena_bytes'] / 1024:,.1f} / "
      f"{a['lower_bound_arena_bytes'] / 1024:,.1f} |")
for label in labels:
    row(label, label.replace("/", "__"))
row(open(f"{out}/bert_label").read().strip(), "bert_512")
EOF
echo "fusion_patterns: wrote the section to docs/BENCHMARKS.md"
