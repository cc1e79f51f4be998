#!/usr/bin/env bash
# Writes "## HTML report: render time (issue 8)" into docs/BENCHMARKS.md: how long headless
# Chromium takes to load and draw `footprint report` pages of synthetic traces with 10^3, 10^4
# and 10^5 steps (bench/make_report_trace.py), and of the shared models and the seed trace, with
# each page's size.
#
#   bench/report_render.sh            # raw results in $BUILD/report_render/
#
# Render time is what the page's own script records in <html data-render-ms> once everything is
# drawn and laid out: performance.now(), i.e. milliseconds since navigation started, so it covers
# reading and parsing the file, JSON.parse, drawing the SVG and the canvas, building the tables
# and layout (not the final paint). It is read back with `chromium --headless --dump-dom`; the
# median of RUNS runs is reported, beside the median wall time of the whole chromium process
# (browser start-up included) and the same figures for an empty page, the browser's floor.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${FOOTPRINT_SHARED:-../shared}
RUNS=${RUNS:-5}
BUILD=${BUILD:-build/release}
CHROMIUM=${CHROMIUM:-chromium}
command -v "$CHROMIUM" >/dev/null || { echo "report_render: $CHROMIUM not found (apt-get install chromium)" >&2; exit 1; }

if [ "$BUILD" = build/release ]; then
  # Another build may hold the release tree's lock: retry a few times.
  for attempt in 1 2 3 4 5; do
    if cmake --preset release >/dev/null && cmake --build --preset release -j2 --target footprint; then
      break
    fi
    [ "$attempt" = 5 ] && { echo "report_render: the release build failed" >&2; exit 1; }
    sleep 30
  done
else
  cmake --build "$BUILD" -j2 --target footprint
fi
CLI=$BUILD/bin/footprint
OUT=$BUILD/report_render
rm -rf "$OUT" && mkdir -p "$OUT"

# name|input|flags: the pages to time.
PAGES=()
for n in 1000 10000 100000; do
  bench/make_report_trace.py "$n" >"$OUT/synthetic_$n.json"
  PAGES+=("synthetic, $n steps|$OUT/synthetic_$n.json|")
done
PAGES+=("seed trace (seed_mul_list)|examples/traces/seed_mul_list.json|")
PAGES+=("light/densenet121|$SHARED/models/light/densenet121/model.onnx|")
PAGES+=("real/ppocr_mobile_v2_cls (1x3x48x192)|$SHARED/models/real/ppocr_mobile_v2_cls/model.onnx|--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=48 --dim p2o.DynamicDimension.2=192")

# The floor: a page that only records the same timestamp.
cat >"$OUT/empty.html" <<'HTML'
<!doctype html><html><body><script>
document.documentElement.setAttribute("data-render-ms", performance.now().toFixed(1));
</script></body></html>
HTML

# One chromium run, with a profile of its own: prints "render_ms wall_ms".
render_once() {
  local profile start end dom ms
  profile=$(mktemp -d)
  start=$(date +%s%N)
  dom=$("$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$profile" \
    --dump-dom "file://$(realpath "$1")" 2>/dev/null)
  end=$(date +%s%N)
  rm -rf "$profile"
  ms=$(grep -o 'data-render-ms="[0-9.]*"' <<<"$dom" | head -1 | tr -dc '0-9.')
  echo "${ms:-nan} $(((end - start) / 1000000))"
}

time_page() {  # name html -> one JSON line of runs
  local name=$1 html=$2 runs=()
  for _ in $(seq "$RUNS"); do runs+=("$(render_once "$html")"); done
  printf '%s\n' "${runs[@]}" | python3 -c '
import json, sys
runs = [l.split() for l in sys.stdin if l.strip()]
print(json.dumps({"name": sys.argv[1], "html": sys.argv[2],
                  "render_ms": [float(r[0]) for r in runs], "wall_s": [int(r[1]) / 1000 for r in runs]}))
' "$name" "$html"
}

time_page "empty page" "$OUT/empty.html" >>"$OUT/timings.jsonl"
for page in "${PAGES[@]}"; do
  IFS='|' read -r name input flags <<<"$page"
  [ -e "$input" ] || { echo "report_render: $input not found, skipped" >&2; continue; }
  html="$OUT/$(echo "$name" | tr -c 'a-zA-Z0-9_\n' '_').html"
  start=$(date +%s%N)
  # shellcheck disable=SC2086  # flags is a list
  "$CLI" report --json $flags "$input" -o "$html" 2>/dev/null >"$OUT/summary.json"
  end=$(date +%s%N)
  # The analysis alone (no plan, no page), to tell where the command's time goes.
  # shellcheck disable=SC2086
  "$CLI" analyze --json $flags "$input" >/dev/null 2>&1
  end2=$(date +%s%N)
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j["name"]=sys.argv[2]; j["flags"]=sys.argv[3]; j["report_s"]=float(sys.argv[4]); j["analyze_s"]=float(sys.argv[5]); print(json.dumps(j))' \
    "$OUT/summary.json" "$name" "$flags" "$(((end - start) / 1000000))e-3" "$(((end2 - end) / 1000000))e-3" >>"$OUT/results.jsonl"
  time_page "$name" "$html" >>"$OUT/timings.jsonl"
  echo "report_render: $name done" >&2
done

python3 - "$OUT/results.jsonl" "$OUT/timings.jsonl" "$RUNS" >"$OUT/section.md" <<'PY'
import datetime, json, os, platform, statistics, subprocess, sys

reports = {r["name"]: r for r in map(json.loads, open(sys.argv[1]))}
timings = [json.loads(l) for l in open(sys.argv[2])]
runs = sys.argv[3]
version = subprocess.run(["chromium", "--version"], capture_output=True, text=True).stdout.strip()
mib = lambda b: f"{b / 1048576:.2f} MiB" if b >= 1048576 else f"{b / 1024:.1f} KiB"

out = ["## HTML report: render time (issue 8)", ""]
out.append(f"`bench/report_render.sh` on {datetime.date.today()}, {platform.machine()}, "
           f"{os.cpu_count()} cores shared with other work, {version} "
           "(`--headless --no-sandbox --disable-gpu`), release build. Render time is the page's "
           "own `performance.now()` once everything is drawn and laid out (since navigation "
           "start: reading the file, `JSON.parse`, SVG, canvas, tables), read back with "
           f"`--dump-dom`; medians of {runs} runs, with the whole chromium process's wall time "
           "(start-up included). Synthetic traces come from `bench/make_report_trace.py N`; the "
           "timeline draws at most ~2 points per 1/2000 of the steps (every peak exact), the "
           "layout every buffer on one canvas.")
out.append("")
out.append("| page | steps | buffers | points drawn | HTML | render ms (median) | chromium wall s | `footprint report` s | of which `analyze` s |")
out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for t in timings:
    r = reports.get(t["name"])
    ms = statistics.median(t["render_ms"])
    wall = statistics.median(t["wall_s"])
    if r is None:
        out.append(f"| {t['name']} | | | | {mib(os.path.getsize(t['html']))} | {ms:.0f} | {wall:.2f} | | |")
        continue
    out.append(f"| {t['name']} | {r['steps']:,} | {r['buffers']:,} | {r['points_drawn']:,} | "
               f"{mib(r['html_bytes'])} | {ms:.0f} | {wall:.2f} | {r['report_s']:.2f} | "
               f"{r['analyze_s']:.2f} |")
out.append("")
out.append("`footprint report` s is the whole command (analysis, memory-aware order search for "
           "models, plan, page); the last column times `footprint analyze --json` on the same "
           "input: at 10^5 steps most of the command is the analysis, whose timeline visits every "
           "buffer at every step. The page itself is written in well under a second.")
out.append("")
out.append("All render times in ms, per run: " + "; ".join(
    f"{t['name']}: " + ", ".join(f"{v:.0f}" for v in t["render_ms"]) for t in timings) + ".")
print("\n".join(out))
PY
bench/write_section.py docs/BENCHMARKS.md "## HTML report: render time (issue 8)" <"$OUT/section.md"
echo "report_render: wrote docs/BENCHMARKS.md" >&2
