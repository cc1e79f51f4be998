#!/usr/bin/env bash
# Writes "## Elementwise runs: fused and apart (issue 16)" into docs/BENCHMARKS.md: the runs of
# bench/bench_elementwise.cpp (a Session over a graph of only those ops) with graph::fuse on, so
# they run as one footprint::Elementwise, and off, one node each, at 1 and 2 threads, medians
# over REPEATS repetitions measured in one process, fused and apart alternating.
#
#   REPEATS=9 bench/elementwise_runs.sh        # raw JSON in build/release/elementwise_runs.json
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
build_preset release bench_elementwise >/dev/null
REPEATS=${REPEATS:-9}
OUT=build/release/elementwise_runs.json
build/release/bin/bench_elementwise --benchmark_repetitions="$REPEATS" \
  --benchmark_enable_random_interleaving=true --benchmark_format=json >"$OUT"

/usr/bin/python3 - "$OUT" "$REPEATS" <<'EOF' | python3 bench/write_section.py docs/BENCHMARKS.md \
  "## Elementwise runs: fused and apart (issue 16)"
import datetime, json, os, statistics, subprocess, sys
data = json.load(open(sys.argv[1]))
repeats = sys.argv[2]
ctx = data["context"]
runs = {}
for b in data["benchmarks"]:
    if b.get("run_type") != "iteration":
        continue
    runs.setdefault(b["run_name"], []).append(b)
w = print
w("## Elementwise runs: fused and apart (issue 16)")
w("")
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                        text=True).stdout.strip()
w(f"Measured {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC (commit {commit}) on "
  f"{ctx.get('num_cpus')} CPUs "
  f"(load average {', '.join(f'{x:.2f}' for x in os.getloadavg())} at the end) by "
  f"`REPEATS={repeats} bench/elementwise_runs.sh`: `bench_elementwise` (Google Benchmark, "
  "random interleaving), a Session over a graph of only the run's ops, `SessionOptions::fuse` on "
  "(one footprint::Elementwise) and off (one node each); the median over the repetitions of each "
  "one's mean time per run. Arena: what the run obtained (the output is a graph output, outside "
  "the arena).")
w("")
w("| run | threads | fused us | apart us | fused / apart | arena fused / apart (KiB) |")
w("| --- | ---: | ---: | ---: | ---: | ---: |")
names = sorted({n.rsplit("/", 1)[0] for n in runs},
               key=lambda n: (n.split("/threads:")[0], int(n.split("/threads:")[1])))
for name in names:
    op, threads = name.split("/threads:")
    f = runs[name + "/fused"]
    a = runs[name + "/apart"]
    fm = statistics.median(x["real_time"] for x in f)
    am = statistics.median(x["real_time"] for x in a)
    w(f"| {op} | {threads} | {fm:.1f} | {am:.1f} | {fm / am:.2f} | "
      f"{f[0]['arena_bytes'] / 1024:,.0f} / {a[0]['arena_bytes'] / 1024:,.0f} |")
w("")
w("AddRelu: ResNet's residual Add and its Relu over channels-last [1, 56, 56, 64]; MulAdd: "
  "ConvNeXt's layer scale (a [96] vector) and residual over [1, 56, 56, 96]; SubMulAddSigmoid: "
  "(x - r) * 0.5 + 1 then Sigmoid over [1, 64, 56, 56].")
EOF
echo "elementwise_runs: wrote the section to docs/BENCHMARKS.md"
