#!/usr/bin/env bash
# The runtime side by side (issue 5, item 6): `footprint run` beside onnxruntime-node on the same
# models, the same inputs (each folder's input_*.pb) and the same thread count, every run in a
# fresh process of its own. Writes the section "## Runtime: footprint run vs onnxruntime-node" of
# docs/BENCHMARKS.md (replaced if present, other sections kept) through bench/write_section.py.
#
#   bench/runtime_compare.sh            # every folder of ../shared/models/{light,random,real}/*,
#                                       # 1 and 2 threads, REPEATS fresh processes each
#   bench/runtime_compare.sh --quick    # smoke test: light/squeezenet and random/squeezenet,
#                                       # 1 thread; prints the section, does not write the doc
#   bench/runtime_compare.sh --report-only   # the tables again from the raw results of the last
#                                       # measurement (RESULTS), with its command line and date
#
# Environment (all optional):
#   MODELS="light/squeezenet real/*"   model folders (relative to MODELS_DIR, globs allowed, or
#                                       absolute paths); default: light/* random/* real/*
#   MODELS_DIR=../shared/models        relative to the repository root
#   MODELS=""                          no shared models (with ZOO=1 or QUANT=1: only theirs)
#   ZOO=1                              adds every model of the PyTorch-exported zoo (the folder
#                                       tests/zoo/zoo.sh prints: made and cached on first use),
#                                       labelled zoo/NAME
#   QUANT=1 QUANT_ONLY=NAME,...        adds the quantized zoo's variants (tests/quant_zoo/quant_zoo.sh,
#                                       made and cached on first use; QUANT_ONLY keeps those named),
#                                       labelled quant/NAME, each compared at the rtol/atol of its
#                                       meta.json by both runtimes; the summary is given per kind
#                                       (int8 dynamic, int8 static, float16, int4 weight-only)
#   LABEL_GROUP=wide                   labels folders outside MODELS_DIR GROUP/NAME
#   HEADING="## ..."                   the section of DOC written (default: the one below)
#   THREADS="1 2"                      thread counts (intra-op threads of both runtimes)
#   REPEATS=3                          fresh-process repetitions per model and thread count;
#                                       RSS and latency figures are medians over them
#   RUNS=10 WARMUP=1                   timed runs (after WARMUP untimed ones) inside each process
#   FOOTPRINT=build/release/bin/footprint   the binary (BUILD=1 builds the release preset first)
#   ORT_DIR=~/.cache/footprint/ort ORT_VERSION=1.30.0   onnxruntime-node, installed from npm
#   PROCESS_TIMEOUT=900                seconds one process may run before it is killed
#   RESULTS=build/bench/runtime_compare   raw outputs (JSON, stderr, /usr/bin/time -v) per run
#   DOC=docs/BENCHMARKS.md  NO_DOC=1   NO_DOC=1 prints the section without writing it
#   INSN=1 INSN_RUNS=2 INSN_TIMEOUT=300   also counts footprint's instructions per run of each
#                                       model (valgrind --tool=callgrind, one process of INSN_RUNS
#                                       runs at 1 thread, collecting inside Session::run only): a
#                                       figure the shared machine's load does not move. Under
#                                       valgrind the kernels take their AVX2 paths (it has no
#                                       AVX-512) and run ~50x slower: AlexNet's 2 runs take a
#                                       minute or two; a model past INSN_TIMEOUT s gets no count.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

log() { printf '[runtime_compare] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

QUICK=0
REPORT_ONLY=0
for a in "$@"; do
  case $a in
    --quick) QUICK=1 ;;
    --report-only) REPORT_ONLY=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$a' (see --help)" ;;
  esac
done

# The command as run, with the settings that change the figures when they were given.
COMMAND_LINE=""
# A wrapper (bench/quant_compare.sh) names itself in BENCH_COMMAND and its fixed settings in
# BENCH_FIXED, so the line printed reruns it.
for v in MODELS MODELS_DIR ZOO QUANT QUANT_ONLY THREADS REPEATS RUNS WARMUP FOOTPRINT ORT_VERSION BUILD INSN INSN_RUNS \
  INSN_TIMEOUT; do
  [[ " ${BENCH_FIXED:-} " == *" $v "* ]] && continue
  [[ -n ${!v:-} ]] && COMMAND_LINE+="$v=$(printf '%q' "${!v}") "
done
COMMAND_LINE+="${BENCH_COMMAND:-bench/runtime_compare.sh}${*:+ $*}"

NO_DOC_GIVEN=${NO_DOC+1}
if ((QUICK)); then
  MODELS=${MODELS:-light/squeezenet random/squeezenet}
  THREADS=${THREADS:-1}
  NO_DOC=${NO_DOC:-1}
fi
MODELS_DIR=${MODELS_DIR:-../shared/models}
# ORT_DIR, ORT_VERSION and ort_install.
source bench/ort_install.sh
MODELS=${MODELS-light/* random/* real/*}
THREADS=${THREADS:-1 2}
REPEATS=${REPEATS:-3}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-1}
FOOTPRINT=${FOOTPRINT:-build/release/bin/footprint}
PROCESS_TIMEOUT=${PROCESS_TIMEOUT:-900}
RESULTS=${RESULTS:-build/bench/runtime_compare}
DOC=${DOC:-docs/BENCHMARKS.md}
NO_DOC=${NO_DOC:-}
[[ $NO_DOC == 0 ]] && NO_DOC=""
TIME=/usr/bin/time

for v in REPEATS RUNS WARMUP PROCESS_TIMEOUT; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, not '${!v}'"
done
((REPEATS >= 1)) || die "REPEATS must be at least 1"
((RUNS >= 10)) || log "warning: RUNS=$RUNS is below the 10 timed runs the comparison asks for"
for t in $THREADS; do [[ $t =~ ^[1-9][0-9]*$ ]] || die "THREADS holds '$t', not a thread count"; done
[[ -x $TIME ]] || die "$TIME not found (Debian package 'time')"
for c in python3 node npm timeout; do command -v "$c" >/dev/null || die "$c not found"; done
INSN=${INSN:-0}
INSN_RUNS=${INSN_RUNS:-2}  # the first, checked run and INSN_RUNS - 1 timed ones
INSN_TIMEOUT=${INSN_TIMEOUT:-300}
# `run --repeat` takes at least 1 timed run after the first.
[[ $INSN_RUNS =~ ^([2-9]|[1-9][0-9]+)$ ]] || die "INSN_RUNS must be at least 2, not '$INSN_RUNS'"
[[ $INSN_TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "INSN_TIMEOUT must be whole seconds, not '$INSN_TIMEOUT'"
if [[ $INSN == 1 ]] && ! ((REPORT_ONLY)); then
  command -v valgrind >/dev/null || die "INSN=1 needs valgrind (Debian package 'valgrind')"
fi

SETTINGS=$RESULTS/settings.sh
MANIFEST=$RESULTS/manifest.tsv
if ((REPORT_ONLY)); then
  [[ -f $SETTINGS && -f $MANIFEST ]] ||
    die "--report-only: no measurement in $RESULTS (settings.sh, manifest.tsv); run without it first"
  # The settings of the measurement, not of this call (DOC and NO_DOC excepted).
  # shellcheck source=/dev/null
  source "$SETTINGS"
  ((QUICK)) && [[ -z ${NO_DOC_GIVEN:-} ]] && NO_DOC=1
  log "tables from the measurement of $MEASURED_AT in $RESULTS"
else
# ---- 1. footprint -----------------------------------------------------------------------------
if [[ ${BUILD:-0} == 1 ]]; then
  log "building the release preset"
  cmake --preset release >/dev/null
  cmake --build --preset release -j "${JOBS:-2}" --target footprint >&2
fi
[[ -x $FOOTPRINT ]] || die "$FOOTPRINT not found: build it (cmake --preset release && cmake --build --preset release), run with BUILD=1, or set FOOTPRINT=/path/to/footprint"
# An old binary without the subcommand treats "run" as a stray argument; ask its help instead.
"$FOOTPRINT" --help 2>/dev/null | grep -qE '^[[:space:]]+run[[:space:]]' ||
  die "$FOOTPRINT has no 'run' subcommand (an old build?): rebuild it, run with BUILD=1, or set FOOTPRINT="
FP_VERSION=$("$FOOTPRINT" --version 2>/dev/null | head -1 || true)

# ---- 2. onnxruntime-node ----------------------------------------------------------------------
ort_install || die "no onnxruntime-node@$ORT_VERSION"

# ---- 3. The model folders ---------------------------------------------------------------------
[[ -d $MODELS_DIR ]] || die "MODELS_DIR=$MODELS_DIR is not a folder"
MODEL_DIRS=()
for m in $MODELS; do
  if [[ $m == /* ]]; then pattern=$m; else pattern=$MODELS_DIR/$m; fi
  matched=0
  while IFS= read -r d; do
    [[ -d $d ]] || continue
    matched=1
    if [[ ! -f $d/model.onnx || ! -f $d/input_0.pb ]]; then
      log "skipping $d: no model.onnx or no input_0.pb"
      continue
    fi
    MODEL_DIRS+=("${d%/}")
  done < <(compgen -G "$pattern" | sort)
  ((matched)) || log "warning: MODELS entry '$m' matches no folder under $MODELS_DIR"
done
if [[ ${ZOO:-0} == 1 ]]; then
  zoo=$("$ROOT/tests/zoo/zoo.sh") || die "tests/zoo/zoo.sh could not make the model zoo"
  for d in "$zoo"/*/; do
    [[ -f $d/model.onnx && -f $d/input_0.pb ]] && MODEL_DIRS+=("${d%/}")
  done
fi
if [[ ${QUANT:-0} == 1 ]]; then
  quant_zoo=$("$ROOT/tests/quant_zoo/quant_zoo.sh") ||
    die "tests/quant_zoo/quant_zoo.sh could not make the quantized zoo"
  for d in "$quant_zoo"/*/; do
    name=$(basename "$d")
    [[ -z ${QUANT_ONLY:-} || ,$QUANT_ONLY, == *,$name,* ]] || continue
    [[ -f $d/model.onnx && -f $d/input_0.pb ]] && MODEL_DIRS+=("${d%/}")
  done
fi
((${#MODEL_DIRS[@]})) || die "no model folders to run (MODELS='$MODELS', MODELS_DIR=$MODELS_DIR)"

rm -rf "$RESULTS"
mkdir -p "$RESULTS"
: >"$MANIFEST"

# Runs "$@" in a fresh process under /usr/bin/time -v and PROCESS_TIMEOUT; $1 is the prefix of
# the files it leaves: .json (stdout), .err, .time, .rc. Never fails.
measure() {
  local out=$1; shift
  local rc=0
  "$TIME" -v -o "$out.time" timeout -k 10 "$PROCESS_TIMEOUT" "$@" >"$out.json" 2>"$out.err" || rc=$?
  echo "$rc" >"$out.rc"
  return 0
}

# The label of a folder: group/name when it is under MODELS_DIR, zoo/name for a zoo model (its
# meta.json names the torch that exported it), else its path.
label_of() {
  local d=$1 base
  base=$(cd "$MODELS_DIR" && pwd)
  d=$(cd "$d" && pwd)
  if [[ $d == "$base"/* ]]; then
    echo "${d#"$base"/}"
  elif [[ -n ${LABEL_GROUP:-} ]]; then
    echo "$LABEL_GROUP/$(basename "$d")"
  elif [[ -f $d/meta.json ]] && grep -q '"calibration_samples"' "$d/meta.json"; then
    echo "quant/$(basename "$d")"
  elif [[ -f $d/meta.json ]] && grep -q '"torch"' "$d/meta.json"; then
    echo "zoo/$(basename "$d")"
  else
    echo "$d"
  fi
}

total=$((${#MODEL_DIRS[@]} * $(wc -w <<<"$THREADS") * REPEATS))
n=0
START=$(date +%s)
for d in "${MODEL_DIRS[@]}"; do
  label=$(label_of "$d")
  # A generated model's own tolerances (meta.json: rtol, atol; the zoo's scale atol with its
  # outputs' magnitude), for both runtimes alike.
  tolerance=()
  if [[ -f $d/meta.json ]]; then
    read -r -a tolerance < <(python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
print("--rtol %r --atol %r" % (m["rtol"], m["atol"]) if "rtol" in m and "atol" in m else "")' \
      "$d/meta.json")
  fi
  printf '%s\t%s\n' "$label" "${tolerance[*]:-}" >>"$RESULTS/tolerances.tsv"
  for t in $THREADS; do
    dir=$RESULTS/${label//\//__}/t$t
    mkdir -p "$dir"
    printf '%s\t%s\t%s\t%s\n' "$label" "$d" "$t" "$dir" >>"$MANIFEST"
    for r in $(seq 1 "$REPEATS"); do
      n=$((n + 1))
      log "[$n/$total] $label, $t thread(s), repetition $r/$REPEATS"
      measure "$dir/fp_$r" "$FOOTPRINT" run "$d/model.onnx" --data-dir "$d" --threads "$t" \
        --repeat "$RUNS" --warmup "$WARMUP" --json "${tolerance[@]}"
      measure "$dir/ort_$r" node bench/ort_run.js "$d/model.onnx" --data-dir "$d" --threads "$t" \
        --repeat "$RUNS" --warmup "$WARMUP" "${tolerance[@]}"
      for k in fp ort; do
        rc=$(cat "$dir/${k}_$r.rc")
        if [[ $rc != 0 ]]; then
          msg=$(grep -E 'error|Error' "$dir/${k}_$r.err" | head -1 || true)
          log "  $k exited with $rc${msg:+: $msg}"
        fi
      done
    done
  done
done
if [[ $INSN == 1 ]]; then
  # One process a model at 1 thread: the instructions executed inside Session::run, over
  # INSN_RUNS runs (the first, checked run and INSN_RUNS - 1 timed ones).
  i=0
  for d in "${MODEL_DIRS[@]}"; do
    i=$((i + 1))
    label=$(label_of "$d")
    out=$RESULTS/${label//\//__}/insn
    mkdir -p "$(dirname "$out")"
    log "[$i/${#MODEL_DIRS[@]}] $label: instructions under callgrind"
    rc=0
    timeout -k 10 "$INSN_TIMEOUT" valgrind --tool=callgrind --callgrind-out-file="$out.cg" \
      --toggle-collect='footprint::runtime::Session::run*' "$FOOTPRINT" run "$d/model.onnx" \
      --data-dir "$d" --threads 1 --repeat $((INSN_RUNS - 1)) --warmup 0 >/dev/null 2>"$out.err" || rc=$?
    total=$(callgrind_annotate "$out.cg" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
    if [[ $rc == 0 && -n $total ]]; then
      echo $((total / INSN_RUNS)) >"$out.txt"
    else
      log "  callgrind exited with $rc$( ((rc == 124)) && echo " (past INSN_TIMEOUT=$INSN_TIMEOUT s)")"
    fi
    rm -f "$out.cg"
  done
fi
log "measured in $(($(date +%s) - START)) s; raw results in $RESULTS"
FP_CMD="$FOOTPRINT run DIR/model.onnx --data-dir DIR --threads T --repeat $RUNS --warmup $WARMUP --json"
ORT_CMD="node bench/ort_run.js DIR/model.onnx --data-dir DIR --threads T --repeat $RUNS --warmup $WARMUP"
MEASURED_AT=$(date -u '+%Y-%m-%d %H:%M UTC')
LOADAVG=$(cut -d' ' -f1-3 /proc/loadavg)
# What --report-only needs to write the same section again.
for v in COMMAND_LINE FP_CMD ORT_CMD FP_VERSION ORT_VERSION REPEATS RUNS WARMUP QUICK \
  PROCESS_TIMEOUT MEASURED_AT LOADAVG INSN INSN_RUNS; do
  printf '%s=%q\n' "$v" "${!v}"
done >"$SETTINGS"
fi

# ---- 4. Tables and the docs section -----------------------------------------------------------
export RESULTS MANIFEST REPEATS RUNS WARMUP COMMAND_LINE FP_CMD ORT_CMD FP_VERSION ORT_VERSION PROCESS_TIMEOUT \
  QUICK MEASURED_AT LOADAVG INSN INSN_RUNS
HEADING=${HEADING:-"## Runtime: footprint run vs onnxruntime-node"}
SECTION=$RESULTS/section.md
HEADING=$HEADING python3 - >"$SECTION" <<'PY'
import datetime, json, os, platform, re, statistics, subprocess

R = os.environ["RESULTS"]
repeats = int(os.environ["REPEATS"])


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def time_rss(path):
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", read(path))
    return int(m.group(1)) * 1024 if m else None


def error_line(prefix, rc):
    err = read(prefix + ".err").strip().splitlines()
    if rc == 124:
        return f"timed out after {os.environ.get('PROCESS_TIMEOUT', '?')} s"
    for line in err:
        if re.search(r"error|Error|terminate|Assertion|Segmentation", line):
            return line.strip()
    if rc > 128:  # timeout passes a signal on as 128 + its number
        names = {6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL: out of memory or the timeout's kill",
                 11: "SIGSEGV"}
        sig = rc - 128
        return (f"killed by signal {sig} ({names.get(sig, '?')})" +
                (f"; last stderr line: {err[-1].strip()}" if err else ""))
    if err:
        return err[-1].strip()
    return f"exit status {rc}"


def one(prefix):
    """One process: its JSON (when it printed one), exit status, error line, time -v RSS."""
    rc = int(read(prefix + ".rc").strip() or -1)
    j = None
    out = read(prefix + ".json").strip()
    if out:
        try:
            j = json.loads(out)
        except ValueError:
            j = None
    # footprint prints its JSON and then exits 1 when the outputs differ: the figures stand.
    ok = j is not None and "latency_ms" in j
    return {"rc": rc, "json": j if ok else None, "error": None if ok else error_line(prefix, rc),
            "time_rss": time_rss(prefix + ".time")}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def MiB(b):
    return "–" if b is None else f"{b / 1048576:.1f} MiB"


def ms(x):
    if x is None:
        return "–"
    return f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 100 else f"{x:.0f}"


def esc(s, n=110):
    s = s.replace("|", "\\|").replace("\n", " ")
    return s if len(s) <= n else s[: n - 1] + "…"


def match_word(runs):
    js = [r["json"] for r in runs if r["json"]]
    if not js:
        return "–"
    vals = {j.get("match") for j in js}
    if vals == {True}:
        return "yes"
    if vals == {None}:
        return "n/a"
    return "**no**" if True not in vals else "mixed"


KINDS = {"dyn": "int8 dynamic", "qdq": "int8 static", "qop": "int8 static", "fp16": "float16",
         "fp16io": "float16", "int4": "int4 weight-only"}


def quant_kind(label, folder):
    """A quantized zoo variant's kind as the summary groups it (None for other models)."""
    if not label.startswith("quant/"):
        return None
    try:
        with open(os.path.join(folder, "meta.json")) as f:
            return KINDS.get(json.load(f).get("kind"), "other")
    except (OSError, ValueError):
        return "other"


rows = {}  # threads -> list of row dicts
cross = []  # (label, threads, tool, median own VmHWM, median time -v) for the RSS cross-check
notes = []
with open(os.environ["MANIFEST"]) as f:
    for line in f:
        label, folder, threads, d = line.rstrip("\n").split("\t")
        fp = [one(f"{d}/fp_{r}") for r in range(1, repeats + 1)]
        ort = [one(f"{d}/ort_{r}") for r in range(1, repeats + 1)]
        fj = [r["json"] for r in fp if r["json"]]
        oj = [r["json"] for r in ort if r["json"]]
        row = {"label": label, "kind": quant_kind(label, folder)}
        if fj:
            row["fp_rss"] = med([j.get("measured", {}).get("peak_rss_bytes") for j in fj])
            row["fp_lat"] = med([j["latency_ms"]["median"] for j in fj])
            row["fp_best"] = min(j["latency_ms"]["median"] for j in fj)
            row["fp_min"] = min(j["latency_ms"]["min"] for j in fj)
            # Older builds lack some fields: a missing one reads "–".
            row["fp_lp"] = med([j["load_ms"] + j["prepare_ms"] for j in fj
                                if j.get("load_ms") is not None and j.get("prepare_ms") is not None])
            p = fj[0].get("predicted", {})
            row["floor"] = (p["weights_bytes"] + p["lower_bound_bytes"]
                            if "weights_bytes" in p and "lower_bound_bytes" in p else None)
            row["fp_match"] = match_word(fp)
            bad = [j for j in fj if j.get("match") is False]
            if bad:
                notes.append(f"{label}, {threads} thread(s): footprint's outputs differ "
                             f"(max abs error {bad[0].get('max_abs_error', float('nan')):.3g}"
                             f"{'; ' + esc(bad[0]['mismatch'], 200) if bad[0].get('mismatch') else ''}).")
            cross.append((label, threads, "footprint", row["fp_rss"], med([r["time_rss"] for r in fp if r["json"]])))
        else:
            row["fp_error"] = fp[0]["error"]
        if oj:
            row["ort_rss"] = med([j["peak_rss_bytes"] for j in oj])
            row["ort_lat"] = med([j["latency_ms"]["median"] for j in oj])
            row["ort_best"] = min(j["latency_ms"]["median"] for j in oj)
            row["ort_min"] = min(j["latency_ms"]["min"] for j in oj)
            row["ort_s"] = med([j["session_ms"] for j in oj])
            row["ort_base"] = med([j.get("rss_hwm_before_session_bytes") for j in oj])
            row["ort_match"] = match_word(ort)
            bad = [j for j in oj if j.get("match") is False]
            if bad:
                notes.append(f"{label}, {threads} thread(s): onnxruntime-node's outputs differ from "
                             f"output_*.pb ({esc(bad[0].get('mismatch', ''), 200)}).")
            cross.append((label, threads, "onnxruntime-node", row["ort_rss"], med([r["time_rss"] for r in ort if r["json"]])))
        else:
            row["ort_error"] = ort[0]["error"]
        for tool, runs in (("footprint", fp), ("onnxruntime-node", ort)):
            failed = [r for r in runs if not r["json"]]
            if failed and len(failed) < len(runs):
                notes.append(f"{label}, {threads} thread(s): {tool} failed in {len(failed)} of "
                             f"{len(runs)} processes ({esc(failed[0]['error'], 200)}); medians over the rest.")
        rows.setdefault(int(threads), []).append(row)


def table(rs):
    t = ["| model | footprint peak RSS | ORT peak RSS | ratio fp/ORT (target ≤ 0.7) | floor (weights + lower bound) "
         "| footprint latency median (min) ms | ORT latency median (min) ms | ratio fp/ORT (target ≤ 1.3) "
         "| ratio of the best processes | footprint load+prepare ms | ORT session ms | outputs match (fp / ORT) |",
         "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: |"]
    for r in rs:
        has_fp, has_ort = "fp_lat" in r, "ort_lat" in r
        rr = lr = br = "–"
        if has_fp and has_ort:
            if r["fp_best"] is not None and r["ort_best"]:
                br = f"{r['fp_best'] / r['ort_best']:.2f}"
            if r["fp_rss"] and r["ort_rss"]:
                rss_ratio = r["fp_rss"] / r["ort_rss"]
                rr = f"{rss_ratio:.2f}" + (" ✓" if rss_ratio <= 0.7 else " ✗")
            if r["fp_lat"] is not None and r["ort_lat"]:
                lat_ratio = r["fp_lat"] / r["ort_lat"]
                lr = f"{lat_ratio:.2f}" + (" ✓" if lat_ratio <= 1.3 else " ✗")
        ort_cells = ([MiB(r["ort_rss"])], [f"{ms(r['ort_lat'])} ({ms(r['ort_min'])})", ms(r["ort_s"])]) \
            if has_ort else (["–"], ["–", "–"])
        if has_fp:
            t.append(f"| {r['label']} | {MiB(r['fp_rss'])} | {ort_cells[0][0]} | {rr} | {MiB(r['floor'])} | "
                     f"{ms(r['fp_lat'])} ({ms(r['fp_min'])}) | {ort_cells[1][0]} | {lr} | {br} | {ms(r['fp_lp'])} | "
                     f"{ort_cells[1][1]} | {r['fp_match']} / {r.get('ort_match', '–')} |")
        else:
            # footprint failed: its error line in place of its figures.
            t.append(f"| {r['label']} | footprint failed: `{esc(r['fp_error'])}` | {ort_cells[0][0]} | – | – | – | "
                     f"{ort_cells[1][0]} | – | – | – | {ort_cells[1][1]} | – / {r.get('ort_match', '–')} |")
        if not has_ort:
            notes.append(f"{r['label']}: onnxruntime-node failed: `{esc(r['ort_error'], 300)}`.")
    return t


def summary(rs):
    both = [r for r in rs if "fp_lat" in r and "ort_lat" in r]
    if not both:
        return []
    rss = [r["fp_rss"] / r["ort_rss"] for r in both if r["fp_rss"] and r["ort_rss"]]
    lat = [r["fp_lat"] / r["ort_lat"] for r in both if r["fp_lat"] is not None and r["ort_lat"]]
    best = [r["fp_best"] / r["ort_best"] for r in both if r["fp_best"] is not None and r["ort_best"]]
    geo = lambda xs: f"{statistics.geometric_mean(xs):.2f}" if xs else "–"
    top = lambda xs: f"{max(xs):.2f}" if xs else "–"
    return [f"Of {len(rs)} models, footprint ran {sum('fp_lat' in r for r in rs)} and onnxruntime-node "
            f"{sum('ort_lat' in r for r in rs)}; of the {len(both)} both ran: peak RSS ratio ≤ 0.7 on "
            f"{sum(x <= 0.7 for x in rss)} of {len(rss)}, latency ratio ≤ 1.3 on {sum(x <= 1.3 for x in lat)} "
            f"of {len(lat)} (geometric means of the ratios: RSS {geo(rss)}, latency {geo(lat)}; the largest "
            f"latency ratio {top(lat)}). Of the best processes: latency ratio geometric mean {geo(best)}, "
            f"the largest {top(best)}."]


cpu = "unknown"
for line in read("/proc/cpuinfo").splitlines():
    if line.startswith("model name"):
        cpu = line.split(":", 1)[1].strip()
        break
mem_total = "?"
for line in read("/proc/meminfo").splitlines():
    if line.startswith("MemTotal"):
        mem_total = f"{int(line.split()[1]) / 1048576:.1f} GiB"
nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
node_v = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
load = [float(x) for x in os.environ["LOADAVG"].split()]
now = os.environ["MEASURED_AT"]

s = [os.environ["HEADING"], ""]
s.append(f"Measured {now} on {nproc} × {cpu} (nproc {nproc}), {mem_total} RAM, {platform.system()} "
         f"{platform.release()}; node {node_v}, onnxruntime-node {os.environ['ORT_VERSION']}; "
         f"{os.environ.get('FP_VERSION') or 'footprint'}. Load average at the end: "
         f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (the machine is shared, so latencies are noisy)."
         + (" **Smoke test (`--quick`).**" if os.environ.get("QUICK") == "1" else ""))
s += ["", "Produced by:", "", "```sh", os.environ["COMMAND_LINE"], "```", "",
      f"which runs, for every model folder DIR and thread count T, {repeats} times each, every run a fresh "
      f"process under `/usr/bin/time -v`:", "", "```sh", os.environ["FP_CMD"],
      os.environ["ORT_CMD"] + "   # NODE_PATH=<ORT_DIR>/node_modules", "```", ""]
for threads in sorted(rows):
    s.append(f"### {threads} thread{'s' if threads != 1 else ''}")
    s.append("")
    s += table(rows[threads])
    s.append("")
    s += summary(rows[threads])
    if summary(rows[threads]):
        s.append("")
    for kind in sorted({r["kind"] for r in rows[threads] if r["kind"]}):
        part = summary([r for r in rows[threads] if r["kind"] == kind])
        if part:
            s += [f"{kind.capitalize()} variants: " + part[0][0].lower() + part[0][1:], ""]

def scaling(rows):
    """footprint's and ORT's latency at 1 thread over their latency at the most threads."""
    most = max(rows)
    by_label = {r["label"]: r for r in rows[most]}
    t = [f"| model | footprint 1 / {most} threads ms | speed-up | ORT 1 / {most} threads ms | speed-up |",
         "| --- | ---: | ---: | ---: | ---: |"]
    ups = {"fp": [], "ort": []}
    for r1 in rows[1]:
        rn = by_label.get(r1["label"])
        if rn is None:
            continue
        cells = []
        for k in ("fp", "ort"):
            a, b = r1.get(f"{k}_lat"), rn.get(f"{k}_lat")
            if a and b:
                ups[k].append(a / b)
                cells += [f"{ms(a)} / {ms(b)}", f"{a / b:.2f}"]
            else:
                cells += ["–", "–"]
        t.append(f"| {r1['label']} | " + " | ".join(cells) + " |")
    geo = lambda xs: f"{statistics.geometric_mean(xs):.2f}" if xs else "–"
    t += ["", f"Speed-up from 1 to {most} threads (median latencies above), geometric mean: footprint "
          f"{geo(ups['fp'])}, onnxruntime-node {geo(ups['ort'])}; footprint's above 1.5 on "
          f"{sum(x > 1.5 for x in ups['fp'])} of {len(ups['fp'])} models."]
    return t


if 1 in rows and len(rows) > 1:
    s += [f"### Threads: the speed-up per model", ""] + scaling(rows) + [""]

if os.environ.get("INSN") == "1":
    t = ["### Instructions per run (callgrind)", "",
         f"Instructions footprint executes inside `Session::run`, averaged over the {os.environ['INSN_RUNS']} runs "
         "of one process at 1 thread under `valgrind --tool=callgrind --toggle-collect='footprint::runtime::Session::run*'` "
         "(the kernels' AVX2 paths: valgrind has no AVX-512), beside the same model's least latency at 1 thread: "
         "a figure the shared machine's load does not move, for comparing builds.", "",
         "| model | instructions per run (M) | footprint min ms (1 thread) |", "| --- | ---: | ---: |"]
    seen = set()
    with open(os.environ["MANIFEST"]) as f:
        for line in f:
            label, folder, threads, d = line.rstrip("\n").split("\t")
            if label in seen:
                continue
            seen.add(label)
            insn = read(os.path.join(os.path.dirname(d), "insn.txt")).strip()
            lat = next((r.get("fp_min") for r in rows.get(1, []) if r["label"] == label), None)
            t.append(f"| {label} | {int(insn) / 1e6:,.1f} | {ms(lat)} |" if insn else f"| {label} | – | {ms(lat)} |")
    s += t + [""]

base = med([r.get("ort_base") for rs in rows.values() for r in rs])
s.append("Columns: peak RSS is the whole process's VmHWM (footprint: `measured.peak_rss_bytes` of `--json`; "
         "ORT: `/proc/self/status` VmHWM read by node at the end), the median over the fresh processes. "
         "Floor is footprint's prediction `predicted.weights_bytes + predicted.lower_bound_bytes`: the weights "
         "plus the smallest arena any plan can have, what a runtime must hold at least. Latency is the median "
         f"(and, in brackets, the least) of {os.environ['RUNS']} timed runs after {os.environ['WARMUP']} untimed "
         "one(s) and the first (checked) run, the median of those medians over the processes. The ratio of the "
         "best processes divides the least of footprint's process medians by the least of ORT's: on a host "
         "whose other tenants slow a whole process at a time (both runtimes' 2-thread processes are bimodal "
         "here), the figure each runtime's least disturbed process gives. footprint's load+prepare "
         "is `load_ms + prepare_ms`; ORT's is `InferenceSession.create`. Outputs are compared with output_*.pb at "
         "rtol 1e-3, atol 1e-5 by both (footprint's `match`; the same rule in bench/ort_run.js)"
         + (", a quantized variant's at the rtol and atol of its meta.json (tests/quant_zoo/make_quant_zoo.py "
            "says how they are set)" if any(r["kind"] for rs in rows.values() for r in rs) else "")
         + ". ORT runs with "
         "intraOpNumThreads=T, interOpNumThreads=1, executionMode 'sequential', graphOptimizationLevel 'all' and "
         "its defaults otherwise (CPU arena and memory patterns on)."
         + (f" node with onnxruntime-node loaded and no session already holds {MiB(base)} (VmHWM before "
            "the session, median), part of every ORT figure." if base else ""))
s.append("")
worst = max((abs(own - os_) / os_ for *_, own, os_ in cross if own and os_), default=None)
if worst is not None:
    s.append(f"RSS cross-check: each process's own VmHWM and `/usr/bin/time -v` \"Maximum resident set size\" "
             f"differ by at most {100 * worst:.1f} % over all rows.")
    s.append("")
if notes:
    s.append("Notes:")
    s.append("")
    s += [f"- {n}" for n in dict.fromkeys(notes)]
    s.append("")
print("\n".join(s).rstrip("\n"))
PY

cat "$SECTION"
if [[ -z $NO_DOC ]]; then
  python3 bench/write_section.py "$DOC" "$HEADING" <"$SECTION"
  log "wrote the section \"$HEADING\" of $DOC"
else
  log "NO_DOC set: $DOC not written (the section is in $SECTION)"
fi
