#!/usr/bin/env python3
"""The Python package's figures (issue 18): what loading a >= 500 MB model costs from a path and
from a bytes object, what a Session.run call adds over the C++ run, Session.run against
`footprint run -o` on every shared model, footprint.bench in nnbench's memory scenario (side by
side with nnbench itself, pinned in a venv under build/), a record made from a 1 GB array, and
the pytest marker on an injected 100 MB leak. Writes the section "## Python package (issue 18)"
of docs/BENCHMARKS.md (NO_DOC=1 prints it only).

    bench/python_figures.py            # after a release build (footprint_python, make_big_model)

Environment: BUILD_DIR=build/release, MODEL (default: build/bench/big/model.onnx, generated
with make_big_model --mb 512 --layers 12 --seed 1 as bench/load_big_model.sh does), RUNS=200
runs of the example model in ROUNDS=5 rounds (the CLI's and Session.run's alternate, so load
that comes and goes falls on both),
MATRICES=1024 (the scenario's family size), SHARED (default: ../shared next to the checkout),
NNBENCH=0.5.0 (the version installed into build/nnbench-venv; NNBENCH= skips it).

The load's heap figures are footprint's counting malloc, preloaded into a fresh interpreter
(LD_PRELOAD=build/release/lib/libfootprint_heap.so, read through its C entry points): the peak
during the load and what it still holds after, every allocation of the process counted. Beside
them, and for the other figures, glibc's own totals (mallinfo2: bytes handed out and not
returned; footprint.heap_in_use), which give what is held, not a peak. RSS is VmRSS from
/proc/self/status, read the same way.
"""

import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUILD = pathlib.Path(os.environ.get("BUILD_DIR", ROOT / "build" / "release"))
MODEL = pathlib.Path(os.environ.get("MODEL", ROOT / "build" / "bench" / "big" / "model.onnx"))
RUNS = int(os.environ.get("RUNS", "200"))
ROUNDS = int(os.environ.get("ROUNDS", "5"))  # CLI and Python runs alternate in this many rounds
EXAMPLE = BUILD / "examples" / "mobilenet_v2"
ENV = dict(os.environ, PYTHONPATH=str(BUILD / "python"))
MATRICES = int(os.environ.get("MATRICES", "1024"))
SHARED = pathlib.Path(os.environ.get("SHARED", ROOT.parent / "shared"))
NNBENCH = os.environ.get("NNBENCH", "0.5.0")
NNBENCH_VENV = ROOT / "build" / "nnbench-venv"
MIB = 1024 * 1024


def interpreter():
    """The Python the extension was built for (the build's Python_EXECUTABLE)."""
    for line in (BUILD / "CMakeCache.txt").read_text().splitlines():
        if line.startswith("Python_EXECUTABLE:"):
            return line.split("=", 1)[1]
    return sys.executable


PYTHON = interpreter()

# Run in a fresh interpreter per source: the figures are the load's alone.
LOAD_PROBE = r"""
import json, sys
import footprint

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024

# footprint's counting malloc, preloaded (LD_PRELOAD=.../libfootprint_heap.so): its current and
# peak bytes, every allocation of the process counted.
import ctypes
class Stats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("current", "peak", "allocations", "largest")]
process = ctypes.CDLL(None)
counted = hasattr(process, "footprint_heap_stats")
def counter():
    s = Stats()
    process.footprint_heap_stats(ctypes.byref(s))
    return s

kind, path = sys.argv[1], sys.argv[2]
source = path if kind == "path" else open(path, "rb").read()
heap0, rss0 = footprint.heap_in_use(), rss()
if counted:
    process.footprint_heap_reset_peak()
    before = counter().current
model = footprint.load(source)
info = model.info()
after = counter() if counted else None
print(json.dumps({"heap": footprint.heap_in_use() - heap0, "rss": rss() - rss0,
                  "counted_peak": after.peak - before if counted else None,
                  "counted_held": after.current - before if counted else None,
                  "weight_bytes": info["weight_bytes"], "weights": info["weights"],
                  "mapped": model.mapped}))
"""

OVERHEAD_PROBE = r"""
import json, statistics, sys, time
import footprint

model_path, input_path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
session = footprint.Session(model_path)
feeds = {"x": footprint.read_tensor(input_path)}
for _ in range(10):
    session.run(feeds)
wall, inside = [], []
for _ in range(runs):
    start = time.perf_counter()
    session.run(feeds)
    wall.append((time.perf_counter() - start) * 1000)
    inside.append(session.stats["measured"]["latency_ms"])
added = [w - i for w, i in zip(wall, inside)]  # what the Python call adds, per call
print(json.dumps({"wall_ms": statistics.median(wall), "run_ms": statistics.median(inside),
                  "wall_min_ms": min(wall), "added_ms": statistics.median(added),
                  "copied": session.stats["measured"]["input_copied_bytes"]}))
"""


def python(code, *args, exe=None, env=None):
    out = subprocess.run([exe or PYTHON, "-c", code, *map(str, args)], env=env or ENV,
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


# The counting malloc as a library to preload (a release build without sanitizers has it).
HEAP_LIB = BUILD / "lib" / "libfootprint_heap.so"


def ensure_model():
    if MODEL.exists():
        return
    MODEL.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(BUILD / "bin" / "make_big_model"), str(MODEL), "--mb", "512",
                    "--layers", "12", "--seed", "1"], check=True, stdout=subprocess.DEVNULL)


def cli_latency_ms(runs):
    out = subprocess.run([str(BUILD / "bin" / "footprint"), "run", str(EXAMPLE / "model.onnx"),
                          "--data-dir", str(EXAMPLE), "--warmup", "10", "--repeat", str(runs),
                          "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["latency_ms"]


def overhead_rounds():
    """Per round, the CLI's median and Session.run's (a fresh interpreter each), side by side."""
    rounds = []
    for _ in range(ROUNDS):
        cli = cli_latency_ms(RUNS // ROUNDS)
        py = python(OVERHEAD_PROBE, EXAMPLE / "model.onnx", EXAMPLE / "input_0.pb",
                    RUNS // ROUNDS)
        rounds.append({"cli": cli["median"], "cli_min": cli["min"], **py,
                       "ratio": py["wall_ms"] / cli["median"] - 1,
                       "overhead": py["added_ms"] / cli["median"]})
    return rounds


# Session.run against `footprint run -o` on one model folder (model.onnx, input_*.pb): every
# output compared byte for byte.
EQUAL_PROBE = r"""
import json, pathlib, subprocess, sys, tempfile
import footprint

cli, folder = sys.argv[1], pathlib.Path(sys.argv[2])
inputs = sorted(folder.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
model = footprint.load(folder / "model.onnx")
names = [i["name"] for i in model.info()["graph_inputs"]]
try:
    got = footprint.Session(model).run(
        {n: footprint.read_tensor(p) for n, p in zip(names, inputs)})
except footprint.FootprintError as e:
    print(json.dumps({"error": str(e)}))
    sys.exit(0)
with tempfile.TemporaryDirectory() as out:
    subprocess.run([cli, "run", str(folder / "model.onnx"), "--data-dir", str(folder),
                    "--repeat", "1", "--warmup", "0", "-o", out], check=True,
                   capture_output=True)
    files = sorted(pathlib.Path(out).glob("output_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
    expected = [footprint.read_tensor(f) for f in files]
pairs = list(zip(got.values(), expected))
print(json.dumps({"outputs": len(got), "cli_outputs": len(expected),
                  "bytes": sum(e.nbytes for e in expected),
                  "equal": len(got) == len(expected) and all(
                      g.dtype == e.dtype and g.shape == e.shape and g.tobytes() == e.tobytes()
                      for g, e in pairs)}))
"""

# nnbench's memory scenario: three benchmarks over a family of generated 1024x1024 int64
# matrices, with a fixed matrix `a`. A benchmark needs a, its b and the result: three matrices.
# The probe counts the generated matrices alive (finalizers) and reads tracemalloc's peak above
# the heap before `a` (for footprint.bench, the run's tracemalloc_peak_bytes: the runner resets
# tracemalloc's peak per case and folds each window into that figure).
SCENARIO_PROBE = r"""
import json, sys, time, tracemalloc, weakref
import numpy as np

N = 1024
framework, count, keep = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "keep"
live = {"now": 0, "most": 0}

def _gone():
    live["now"] -= 1

def matrix(i):
    b = np.full((N, N), i, dtype=np.int64)
    live["now"] += 1
    live["most"] = max(live["most"], live["now"])
    weakref.finalize(b, _gone)
    return {"b": b}

def add(a, b):
    return float((a + b).sum())

def mul(a, b):
    return float((a * b).sum())

def maximum(a, b):
    return float(np.maximum(a, b).sum())

def hwm():
    return next(int(l.split()[1]) * 1024 for l in open("/proc/self/status")
                if l.startswith("VmHWM:"))

if framework == "footprint":
    from footprint.bench import parametrize, run
else:
    import nnbench
tracemalloc.start()  # after the imports: the figures are the run's
base = tracemalloc.get_traced_memory()[0]
a = np.ones((N, N), dtype=np.int64)
start = time.perf_counter()
if framework == "footprint":
    benches = [parametrize(matrix(i) for i in range(count))(f) for f in (add, mul, maximum)]
    seen = []
    result = run(benches, params={"a": a}, repetitions=1, warmup=0, keep_records=keep,
                 on_record=lambda r: seen.append(bool(r.error)))
    peak, records, errors = result.tracemalloc_peak_bytes, len(seen), sum(seen)
else:
    benches = [nnbench.parametrize(matrix(i) for i in range(count))(f)
               for f in (add, mul, maximum)]
    result = nnbench.run(benches, params={"a": a})
    peak = tracemalloc.get_traced_memory()[1]
    records = len(result.benchmarks)
    errors = sum(bool(r["error_occurred"]) for r in result.benchmarks)
wall = time.perf_counter() - start
held = tracemalloc.get_traced_memory()[0] - base - a.nbytes
print(json.dumps({"records": records, "errors": errors, "peak": peak - base,
                  "most_alive": live["most"], "held_after": held, "hwm": hwm(),
                  "wall_s": wall}))
"""

# A record made from a 1 GiB array, passed as a run parameter and then dropped by the caller:
# is the array freed while the result (the records) lives on?
BIG_PROBE = r"""
import json, sys, weakref
import numpy as np
import footprint

framework = sys.argv[1]
heap0 = footprint.heap_in_use()
x = np.ones(1 << 27)  # 1 GiB of float64
ref = weakref.ref(x)

def touch(x):
    return float(x[0])

if framework == "footprint":
    from footprint.bench import benchmark, run
    result = run(benchmark(touch), params={"x": x}, repetitions=1, warmup=0)
    kept = result.records[0].params["x"]
    kept = {"type": kept.type, "dtype": kept.dtype, "shape": list(kept.shape),
            "bytes": kept.bytes, "hash": kept.hash}
else:
    import nnbench
    result = nnbench.run(nnbench.benchmark(touch), params={"x": x})
    kept = result.benchmarks[0]["parameters"]["x"][:60]
del x
print(json.dumps({"dead": ref() is None, "kept": kept,
                  "heap_after": footprint.heap_in_use() - heap0}))
"""

# The pytest marker on the same test with and without a 100 MB leak.
MARKER_TEST = """
import numpy as np
import pytest

kept = []

@pytest.mark.parametrize("leak", [True, False])
@pytest.mark.footprint_limit("64 MiB")
def test_marked(leak):
    assert np.ones(1_000_000, dtype=np.uint8).sum() == 1_000_000
    if leak:
        kept.append(np.ones(100_000_000, dtype=np.uint8))
"""


def ensure_nnbench():
    """The pinned nnbench in a venv beside the build (it sees Debian's numpy), or None."""
    if not NNBENCH:
        return None
    exe = NNBENCH_VENV / "bin" / "python"
    try:
        if not exe.exists():
            subprocess.run([PYTHON, "-m", "venv", "--system-site-packages", str(NNBENCH_VENV)],
                           check=True, capture_output=True)
        version = subprocess.run([str(exe), "-c", "import importlib.metadata as m; "
                                  "print(m.version('nnbench'))"], capture_output=True, text=True)
        if version.stdout.strip() != NNBENCH:
            subprocess.run([str(exe), "-m", "pip", "install", "-q", f"nnbench=={NNBENCH}"],
                           check=True, capture_output=True)
    except subprocess.CalledProcessError as e:
        print(f"python_figures: nnbench {NNBENCH} not installable: {e.stderr}", file=sys.stderr)
        return None
    return exe


def shared_folders():
    return sorted(p for kind in ("light", "random", "real") if (SHARED / "models" / kind).is_dir()
                  for p in (SHARED / "models" / kind).iterdir() if (p / "model.onnx").exists())


def equality_lines():
    lines = ["", "### Session.run against `footprint run -o`, every shared model", "",
             "Each model's input_*.pb fed to `footprint.Session(model).run(...)` and to "
             "`footprint run MODEL --data-dir DIR -o OUT`; every output compared byte for byte.",
             "", "| model | outputs | bytes compared | bit for bit |", "| --- | ---: | ---: | --- |"]
    ok, rows = True, 0
    for folder in shared_folders():
        r = python(EQUAL_PROBE, BUILD / "bin" / "footprint", folder)
        name = f"{folder.parent.name}/{folder.name}"
        if "error" in r:
            ok = False
            lines.append(f"| {name} | - | - | Session.run failed: {r['error']} |")
            continue
        equal = r["equal"] and r["outputs"] == r["cli_outputs"]
        ok, rows = ok and equal, rows + 1
        lines.append(f"| {name} | {r['outputs']} | {r['bytes']:,} | "
                     f"{'yes' if equal else 'NO'} |")
    lines += ["", f"- {rows} models, every output equal: {'PASS' if ok and rows else 'FAIL'}."]
    return lines, ok and rows > 0


def scenario_lines(nnbench):
    matrix = 1024 * 1024 * 8
    limit = 3 * matrix + MIB // 2
    runs = [("footprint.bench, records streamed (keep_records=False)", None, "stream"),
            ("footprint.bench, records kept (the default)", None, "keep")]
    if nnbench is not None:
        runs.append((f"nnbench {NNBENCH} (keeps its records)", nnbench, "keep"))
    lines = ["", "### footprint.bench: nnbench's memory scenario", "",
             f"Three benchmarks (a + b, a * b, maximum(a, b)) over one family each of {MATRICES} "
             "generated 1024x1024 int64 matrices (8 MiB each, made by a generator as the run "
             f"reaches them), with a fixed matrix a: {3 * MATRICES} cases, one repetition each. "
             "A case needs a, its b and the result: 3 matrices = 24 MiB. Peak: tracemalloc's, "
             "above the heap before a was made. Alive: generated matrices alive at once "
             "(finalizers). Held after: what the run still holds when it returns, a excluded "
             "(the records). Each in a fresh interpreter.", "",
             "| runner | cases | peak above baseline | generated alive at most | held after | "
             "VmHWM | wall s |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    ok, per = True, 0
    for label, exe, mode in runs:
        r = python(SCENARIO_PROBE, "nnbench" if exe else "footprint", MATRICES, mode, exe=exe)
        if mode == "keep" and exe is None:
            per = r["held_after"] // max(r["records"], 1)
        lines.append(f"| {label} | {r['records']} | {r['peak']:,} B = {r['peak'] / MIB:.2f} MiB"
                     f" | {r['most_alive']} | {r['held_after']:,} B | {r['hwm'] / MIB:.0f} MiB"
                     f" | {r['wall_s']:.1f} |")
        if mode == "stream":
            ok = r["peak"] <= limit and r["most_alive"] <= 1 and not r["errors"]
    lines += ["", f"- footprint.bench never holds more than 3 matrices (peak <= 24.5 MiB = "
                  f"{limit:,} B above the baseline, one generated matrix alive at a time): "
                  f"{'PASS' if ok else 'FAIL'}. A kept record costs about {per:,} B (the 'held after' "
                  f"column over the cases), so with records kept the peak also carries "
                  f"{per * 3 * MATRICES:,} B of records at the end; streamed "
                  f"(on_record), none are kept."]
    return lines, ok


def big_record_lines(nnbench):
    lines = ["", "### footprint.bench: a record made from a 1 GiB array", "",
             '`run(benchmark(touch), params={"x": x})` with x = np.ones(2**27) (1 GiB of '
             "float64), then `del x`: is the array freed while the run's records live on? "
             "Heap after: glibc's heap in use (footprint.heap_in_use) minus before x was made.",
             "", "| runner | x freed (weakref dead) | heap after | what the record keeps |",
             "| --- | --- | ---: | --- |"]
    ok = True
    for label, exe in [("footprint.bench", None)] + (
            [(f"nnbench {NNBENCH}", nnbench)] if nnbench is not None else []):
        r = python(BIG_PROBE, "nnbench" if exe else "footprint", exe=exe)
        if exe is None:
            ok = r["dead"] and r["kept"]["bytes"] == 1 << 30
        kept = json.dumps(r["kept"]).replace("|", "\\|")
        lines.append(f"| {label} | {'yes' if r['dead'] else 'NO'} | {r['heap_after']:,} B | "
                     f"`{kept}` |")
    lines += ["", f"- footprint.bench's record keeps dtype, shape, bytes and the xxHash3-128, and "
                  f"the array is freed: {'PASS' if ok else 'FAIL'}."]
    return lines, ok


def marker_lines(tmp):
    test = tmp / "test_marker_leak.py"
    test.write_text(MARKER_TEST)
    r = subprocess.run([PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                        "footprint.pytest_plugin", str(test)], env=ENV, capture_output=True,
                       text=True, cwd=tmp)
    failed = "test_marked[True]" in r.stdout and "FAILED" in r.stdout
    summary = r.stdout.strip().splitlines()[-1]
    peak = next((line.strip() for line in r.stdout.splitlines()
                 if "footprint: peak" in line), "")
    ok = failed and "1 failed, 1 passed" in summary
    return ["", "### The pytest marker on an injected 100 MB leak", "",
            'One test marked `@pytest.mark.footprint_limit("64 MiB")` (it sums a 1 MB array), '
            "with and without an injected leak (a 100 MB array kept in a module list).", "",
            f"- pytest: `{summary}`; the leaking case: `{peak[:160]}`. Fails with the leak and "
            f"passes without: {'PASS' if ok else 'FAIL'}."], ok



def load_and_overhead_lines():
    ensure_model()
    size = MODEL.stat().st_size
    counted_env = dict(ENV, LD_PRELOAD=str(HEAP_LIB)) if HEAP_LIB.exists() else None
    loads = {kind: python(LOAD_PROBE, kind, MODEL, env=counted_env) for kind in ("path", "bytes")}
    rounds = overhead_rounds()
    mib = 1024 * 1024
    lines = [
        "## Python package (issue 18)",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on "
        f"{os.cpu_count()} CPUs, Linux {platform.release()}, {PYTHON}"
        f"; build: {BUILD.relative_to(ROOT) if BUILD.is_relative_to(ROOT) else BUILD}; load "
        f"average at the start {os.getloadavg()[0]:.1f} (a shared machine: wall times are "
        "noisy, the memory figures are not).",
        "",
        "Produced by `bench/python_figures.py` (heap: footprint's counting malloc preloaded "
        "into the interpreter (`LD_PRELOAD=build/release/lib/libfootprint_heap.so`), its peak "
        "during the load and what the load still holds, every allocation of the process counted; "
        "beside it glibc's mallinfo2 totals; RSS: VmRSS; each in a fresh interpreter).",
        "",
        f"Loading {MODEL.name}: {size:,} B file, {loads['path']['weight_bytes']:,} B of "
        "initializers (bench/make_big_model --mb 512 --layers 12 --seed 1).",
        "",
        "| source | counted heap peak during load + info() | % of file | counted heap held | "
        "glibc heap held | RSS added | weights |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    ok = True
    for kind, r in loads.items():
        counted = r["counted_peak"] is not None
        peak = r["counted_peak"] if counted else r["heap"]
        pct = 100 * peak / size
        ok = ok and counted and pct <= 1 and r["rss"] <= 64 * mib
        where = ", ".join(f"{k.replace('_bytes', '')} {v:,} B" for k, v in r["weights"].items())
        held = f"{r['counted_held']:,} B" if counted else "not counted"
        lines.append(f"| {kind} | {peak:,} B{'' if counted else ' (glibc held)'} | {pct:.3f} % | "
                     f"{held} | {r['heap']:,} B | {r['rss'] / mib:.1f} MiB | {where} |")
    overhead = statistics.median(r["overhead"] for r in rounds)
    lines += [
        "",
        f"- limits (the counted heap peak <= 1 % of the file, RSS <= 64 MiB): "
        f"{'PASS' if ok else 'FAIL'}."
        " The bytes object itself (the file read by Python) is outside both figures: it is"
        " read before the baseline.",
        "",
        f"Session.run on the example model (MobileNetV2, N=1, its input_0.pb): {ROUNDS} rounds, "
        f"each `footprint run --data-dir --repeat {RUNS // ROUNDS}` then a fresh interpreter's "
        f"{RUNS // ROUNDS} Session.run calls, both after 10 warm-up runs. Per round: the CLI's "
        "median and min latency; Session.run's median wall time (the Python call included), "
        "the median of the C++ run inside each call (Session.stats latency), the median of "
        "what each call adds to its run (wall - inside), and the ratios to the CLI's median.",
        "",
        "| round | CLI median ms | CLI min ms | Session.run wall ms | min | C++ run inside ms | "
        "added by the call ms | wall / CLI | added / CLI |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [f"| {i + 1} | {r['cli']:.4f} | {r['cli_min']:.4f} | {r['wall_ms']:.4f} | "
              f"{r['wall_min_ms']:.4f} | {r['run_ms']:.4f} | {r['added_ms']:.4f} | "
              f"{100 * r['ratio']:+.2f} % | {100 * r['overhead']:+.2f} % |"
              for i, r in enumerate(rounds)]
    lines += [
        "",
        f"- Python call overhead (what a Session.run call adds to the C++ run inside it) over "
        f"the CLI's median latency, median over the rounds: {100 * overhead:+.2f} % (limit "
        f"5 %): {'PASS' if overhead <= 0.05 else 'FAIL'}. Whole call against the CLI's median, "
        f"median over the rounds: {100 * statistics.median(r['ratio'] for r in rounds):+.2f} %"
        f"; minimum against minimum: "
        f"{100 * (min(r['wall_min_ms'] for r in rounds) / min(r['cli_min'] for r in rounds) - 1):+.2f} %"
        " (the C++ run is the same code in both; between two processes on a loaded machine"
        " its medians differ by more than the call adds). Input bytes copied per call: "
        f"{max(r['copied'] for r in rounds)}.",
    ]
    return lines, ok and overhead <= 0.05


def main():
    import tempfile

    lines, ok = load_and_overhead_lines()
    nnbench = ensure_nnbench()
    with tempfile.TemporaryDirectory() as tmp:
        for more, passed in (equality_lines(), scenario_lines(nnbench),
                             big_record_lines(nnbench), marker_lines(pathlib.Path(tmp))):
            lines += more
            ok = ok and passed
    section = "\n".join(lines) + "\n"
    if os.environ.get("NO_DOC"):
        print(section)
        return 0
    subprocess.run([sys.executable, str(ROOT / "bench" / "write_section.py"),
                    str(ROOT / "docs" / "BENCHMARKS.md"), lines[0]], input=section, text=True,
                   check=True)
    print(section)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
