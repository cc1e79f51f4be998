#!/usr/bin/env python3
"""A first look at the quantized zoo's footprint: for each variant beside its float32 model, the
file size, `footprint analyze`'s predicted weights and total peak, and onnxruntime's latency
(median of --repeat runs after one warm-up, one thread, CPU). No tuning; a Markdown table on
stdout.

    scripts/quant bench/quant_first_look.py FOOTPRINT QUANT_ZOO_DIR [--repeat 10]

bench/quant_zoo_table.sh writes its table into docs/BENCHMARKS.md.
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

MIB = 1024.0 * 1024.0


def analyze(fp, folder, dims):
    p = subprocess.run([fp, "analyze", "--json", *[f"--dim={k}={v}" for k, v in dims.items()],
                        os.path.join(folder, "model.onnx")], capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["?"])[-1]
    j = json.loads(p.stdout)
    return j["bytes"], ""


def latency_ms(folder, repeat):
    feeds = {}
    for path in glob.glob(os.path.join(folder, "input_*.pb")):
        t = onnx.load_tensor(path)
        feeds[t.name] = numpy_helper.to_array(t)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    s = ort.InferenceSession(os.path.join(folder, "model.onnx"), so,
                             providers=["CPUExecutionProvider"])
    s.run(None, feeds)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        s.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def mib(b):
    return f"{b / MIB:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("footprint")
    ap.add_argument("zoo")
    ap.add_argument("--repeat", type=int, default=10)
    a = ap.parse_args()
    ort.set_default_logger_severity(3)
    floats = {}
    print("| variant | file MiB (float32) | analyze: weights MiB (float32) | analyze: total peak "
          "MiB (float32) | onnxruntime ms, 1 thread (float32) | latency ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name in sorted(os.listdir(a.zoo)):
        folder = os.path.join(a.zoo, name)
        if not os.path.isfile(os.path.join(folder, "meta.json")):
            continue
        meta = json.load(open(os.path.join(folder, "meta.json")))
        src = meta["source_dir"]
        if src not in floats:
            fb, _ = analyze(a.footprint, src, meta["dims"])
            floats[src] = (os.path.getsize(os.path.join(src, "model.onnx")), fb,
                           latency_ms(src, a.repeat))
        f_size, f_bytes, f_ms = floats[src]
        size = os.path.getsize(os.path.join(folder, "model.onnx"))
        vb, why = analyze(a.footprint, folder, meta["dims"])
        if vb is None:
            op = re.search(r"whose op '([^']+)' is unknown", why)
            weights = peak = f"error: {op.group(1)} unknown" if op else "error"
        else:
            weights = f"{mib(vb['weights'])} ({mib(f_bytes['weights'])})"
            peak = f"{mib(vb['total_peak'])} ({mib(f_bytes['total_peak'])})"
        if "ort_error" in meta:
            ms, ratio = "cannot run", ""
        else:
            v_ms = latency_ms(folder, a.repeat)
            ms, ratio = f"{v_ms:.2f} ({f_ms:.2f})", f"{v_ms / f_ms:.2f}"
        print(f"| {name} | {mib(size)} ({mib(f_size)}) | {weights} | {peak} | {ms} | {ratio} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
