#!/usr/bin/env bash
# `footprint bench` over several models holds one model at a time (issue 7): each model is a
# memo created right before its first benchmark and evicted right after its last. Each model
# runs at every batch size of DIMS (the light models are stored at batch 1 and re-batched:
# graph::rebatch). Measures the whole-process peak RSS (/usr/bin/time -v, and the runner's own
# VmHWM figure) of
#   - each model benchmarked alone (at the same batch sizes), in a process of its own;
#   - all of them in one `footprint bench` run (eviction on, the default), in the given order and
#     reversed;
#   - all of them with --no-evict (every model kept until the end),
# and writes the section "## Bench: models as memos (issue 7)" of docs/BENCHMARKS.md through
# bench/write_section.py (NO_DOC=1 prints it instead).
#
#   bench/bench_memos.sh
#
# Environment (all optional):
#   MODELS="light/vgg19 light/zfnet512 light/bvlc_alexnet random/densenet121"  (under MODELS_DIR)
#   MODELS_DIR=../shared/models   REPEAT=3 (timed runs per benchmark)
#   DIMS=batch=1,2,4 (the --dim grid of every run; empty: each model at its stored size)
#   FOOTPRINT=build/release/bin/footprint   RESULTS=build/bench/bench_memos   DOC=docs/BENCHMARKS.md
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
MODELS=${MODELS:-"light/vgg19 light/zfnet512 light/bvlc_alexnet random/densenet121"}
MODELS_DIR=${MODELS_DIR:-../shared/models}
REPEAT=${REPEAT:-3}
DIMS=${DIMS-batch=1,2,4}
FOOTPRINT=${FOOTPRINT:-build/release/bin/footprint}
RESULTS=${RESULTS:-build/bench/bench_memos}
DOC=${DOC:-docs/BENCHMARKS.md}
mkdir -p "$RESULTS"

paths=()
for m in $MODELS; do paths+=("$MODELS_DIR/$m/model.onnx"); done

dim_args=()
if [ -n "$DIMS" ]; then dim_args=(--dim "$DIMS"); fi

# run NAME ARGS...: one process; keeps its JSON and /usr/bin/time -v output (stderr: the
# re-batching notes too).
run() {
  local name=$1
  shift
  /usr/bin/time -v "$FOOTPRINT" bench --json --repeat "$REPEAT" ${dim_args[@]+"${dim_args[@]}"} \
    "$@" >"$RESULTS/$name.json" 2>"$RESULTS/$name.time"
}

for m in $MODELS; do run "alone_${m//\//_}" "$MODELS_DIR/$m/model.onnx"; done
run together "${paths[@]}"
reversed=()
for ((i = ${#paths[@]} - 1; i >= 0; i--)); do reversed+=("${paths[$i]}"); done
run reversed "${reversed[@]}"
run no_evict --no-evict "${paths[@]}"

LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$RESULTS" "$MODELS" "$REPEAT" "$LOAD" "$DIMS" <<'PY' >"$RESULTS/section.md"
import datetime, json, re, sys
results, models, repeat, load, dims = sys.argv[1], sys.argv[2].split(), sys.argv[3], sys.argv[4], sys.argv[5]

def maxrss(name):
    text = open(f"{results}/{name}.time").read()
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) * 1024

def run(name):
    return json.load(open(f"{results}/{name}.json"))

mib = lambda b: f"{b / 2**20:.1f}"
dim_flag = f" --dim {dims}" if dims else ""
batches = dims.split("=", 1)[1].replace(",", ", ") if dims else ""
print("## Bench: models as memos (issue 7)\n")
print("`footprint bench` loads each model right before its first benchmark and evicts it (model,")
print("prepared sessions, constants) right after its last, so a run over several models peaks at")
print("about the heaviest one; `--no-evict` keeps them all and peaks near the sum.", end="")
if dims:
    print(f" Every model runs at\nbatch {batches} (`--dim {dims}`): the light models are stored at batch 1 and are")
    print("re-batched (`graph::rebatch`: the inputs' leading dim and the flattening Reshape's batch")
    print("entry become `batch`; `bench` notes it), so each is three prepared sessions of one memo'd")
    print("model, all evicted after the model's last batch size.", end="")
print(" Peak RSS is `/usr/bin/time -v`'s maximum\nresident set of the whole process.\n")
print(f"Command: `bench/bench_memos.sh` (each row one process: `footprint bench --json --repeat {repeat}{dim_flag} ...`), "
      f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC. Latencies are medians on a shared 2-core "
      f"machine (load average {load} when the script ended) and vary from row to row; the memory "
      f"figures are what this section is about.\n")
print("| run | process peak RSS (MiB) | runner's VmHWM (MiB) | median latency per case (ms) | predicted peak per case (MiB) |")
print("| --- | ---: | ---: | --- | --- |")
lat = lambda j: ", ".join(f"{r['wall_ms']['median']:.1f}" for r in j["records"])
pred = lambda j: ", ".join(mib(r["memory"]["predicted_peak_bytes"]) for r in j["records"])
alone = {}
for m in models:
    name = "alone_" + m.replace("/", "_")
    j = run(name)
    alone[m] = maxrss(name)
    print(f"| {m} alone | {mib(alone[m])} | {mib(j['peak_rss_bytes'])} | {lat(j)} | {pred(j)} |")
heaviest_model = max(alone, key=alone.get)
heaviest = alone[heaviest_model]
for name, label in (("together", "all, evicting (default)"),
                    ("reversed", "all, evicting, heaviest last"),
                    ("no_evict", "all, `--no-evict`")):
    j = run(name)
    print(f"| {label} | {mib(maxrss(name))} | {mib(j['peak_rss_bytes'])} | {lat(j)} | |")
together = max(maxrss("together"), maxrss("reversed"))
no_evict = maxrss("no_evict")
# What --no-evict keeps: every prepared session (one per model and batch size), each with its own
# evaluated constants, as predicted.
kept = run("no_evict")["records"]
sessions = sum(r["memory"]["predicted_peak_bytes"] for r in kept)
at = f" at batch {batches}" if dims else ""
print()
print(f"Evicting (the larger of the two orders): {together / heaviest:.3f}x the heaviest model alone "
      f"({heaviest_model}{at}: {mib(heaviest)} MiB; the bound is 1.15x). `--no-evict` keeps every "
      f"model and every prepared session ({len(kept)}, each with its own evaluated constants: the "
      f"light models' weights are `ConstantOfShape` outputs computed when a session is prepared): "
      f"{mib(no_evict)} MiB against a sum of {mib(sessions)} MiB over the sessions' predicted peaks "
      f"({no_evict / sessions:.3f}x). The separate processes, which hold one session at a time and "
      f"each count the process's own baseline (binary, oneDNN, libraries), sum to "
      f"{mib(sum(alone.values()))} MiB.")
PY

if [ "${NO_DOC:-0}" = 1 ]; then
  cat "$RESULTS/section.md"
else
  python3 bench/write_section.py "$DOC" "## Bench: models as memos (issue 7)" <"$RESULTS/section.md"
  cat "$RESULTS/section.md"
fi
