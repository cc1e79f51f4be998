#!/usr/bin/env python3
"""The Python package's figures (issue 18): what loading a >= 500 MB model costs from a path and
from a bytes object, and what a Session.run call adds over the C++ run. Writes the section
"## Python package (issue 18)" of docs/BENCHMARKS.md (NO_DOC=1 prints it only).

    bench/python_figures.py            # after a release build (footprint_python, make_big_model)

Environment: BUILD_DIR=build/release, MODEL (default: build/bench/big/model.onnx, generated
with make_big_model --mb 512 --layers 12 --seed 1 as bench/load_big_model.sh does), RUNS=200.

Heap figures are glibc's own totals (mallinfo2: bytes handed out and not returned, every
arena, mmapped blocks included; footprint.heap_in_use) read before and after the call in a
fresh interpreter; the counting allocator of the footprint binary cannot be interposed into a
running interpreter. mallinfo2 gives what is held, not a peak. RSS is VmRSS from
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
EXAMPLE = BUILD / "examples" / "mobilenet_v2"
ENV = dict(os.environ, PYTHONPATH=str(BUILD / "python"))


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

kind, path = sys.argv[1], sys.argv[2]
source = path if kind == "path" else open(path, "rb").read()
heap0, rss0 = footprint.heap_in_use(), rss()
model = footprint.load(source)
info = model.info()
print(json.dumps({"heap": footprint.heap_in_use() - heap0, "rss": rss() - rss0,
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
print(json.dumps({"wall_ms": statistics.median(wall), "run_ms": statistics.median(inside),
                  "copied": session.stats["measured"]["input_copied_bytes"]}))
"""


def python(code, *args):
    out = subprocess.run([PYTHON, "-c", code, *map(str, args)], env=ENV, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


def ensure_model():
    if MODEL.exists():
        return
    MODEL.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(BUILD / "bin" / "make_big_model"), str(MODEL), "--mb", "512",
                    "--layers", "12", "--seed", "1"], check=True, stdout=subprocess.DEVNULL)


def cli_median_ms():
    out = subprocess.run([str(BUILD / "bin" / "footprint"), "run", str(EXAMPLE / "model.onnx"),
                          "--data-dir", str(EXAMPLE), "--warmup", "10", "--repeat", str(RUNS),
                          "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["latency_ms"]["median"]


def main():
    ensure_model()
    size = MODEL.stat().st_size
    loads = {kind: python(LOAD_PROBE, kind, MODEL) for kind in ("path", "bytes")}
    cli = cli_median_ms()
    py = python(OVERHEAD_PROBE, EXAMPLE / "model.onnx", EXAMPLE / "input_0.pb", RUNS)
    mib = 1024 * 1024
    lines = [
        "## Python package (issue 18)",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on "
        f"{os.cpu_count()} CPUs, Linux {platform.release()}, {PYTHON}"
        f"; build: {BUILD.relative_to(ROOT) if BUILD.is_relative_to(ROOT) else BUILD}.",
        "",
        "Produced by `bench/python_figures.py` (heap: glibc's mallinfo2 totals before and after,"
        " what the load holds, not its peak; RSS: VmRSS; each in a fresh interpreter).",
        "",
        f"Loading {MODEL.name}: {size:,} B file, {loads['path']['weight_bytes']:,} B of "
        "initializers (bench/make_big_model --mb 512 --layers 12 --seed 1).",
        "",
        "| source | heap held after load + info() | % of file | RSS added | weights |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    ok = True
    for kind, r in loads.items():
        pct = 100 * r["heap"] / size
        ok = ok and pct <= 1 and r["rss"] <= 64 * mib
        where = ", ".join(f"{k.replace('_bytes', '')} {v:,} B" for k, v in r["weights"].items())
        lines.append(f"| {kind} | {r['heap']:,} B | {pct:.3f} % | {r['rss'] / mib:.1f} MiB | "
                     f"{where} |")
    overhead = py["wall_ms"] - cli
    lines += [
        "",
        f"- limits (heap <= 1 % of the file, RSS <= 64 MiB): {'PASS' if ok else 'FAIL'}."
        " The bytes object itself (the file read by Python) is outside both figures: it is"
        " read before the baseline.",
        "",
        f"Session.run on the example model (MobileNetV2, N=1, its input_0.pb), median of {RUNS}"
        " after 10 warm-up runs:",
        "",
        "| | ms |",
        "| --- | ---: |",
        f"| `footprint run --data-dir` median latency (CLI) | {cli:.4f} |",
        f"| Session.run wall time, Python call included | {py['wall_ms']:.4f} |",
        f"| the C++ run inside it (Session.stats latency) | {py['run_ms']:.4f} |",
        "",
        f"- Python call overhead over the CLI's median: {overhead:+.4f} ms = "
        f"{100 * overhead / cli:+.2f} % (limit 5 %): {'PASS' if overhead <= 0.05 * cli else 'FAIL'};"
        f" over the run measured inside the same call: {py['wall_ms'] - py['run_ms']:.4f} ms."
        f" Input bytes copied per call: {py['copied']}.",
    ]
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
