#!/usr/bin/env python3
"""footprint.torch on a long program (issue 38's "a 10^6-op program"): N tiny aten ops recorded
on the CPU, then their figures; the time and the process's memory (VmRSS, VmHWM) after each.

    PYTHONPATH=build/release/python python3 bench/torch_long_program.py [N] [--predict]

N defaults to 10^6; --predict records the same program on meta with predict (its engine below
Python) instead of record on the CPU (the dispatch mode).
"""
import sys
import time

import torch

import footprint.torch as ft


def status(key):
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 10 ** 6
    predict = "--predict" in sys.argv

    def step(device="cpu"):
        x = torch.zeros(4, device=device)
        for _ in range(n // 2):
            x = x + 1
            x = x * 1
        return x

    base = status("VmRSS")
    t0 = time.perf_counter()
    if predict:
        rec = ft.predict(step)
    else:
        with ft.record() as rec:
            step()
    recorded_s = time.perf_counter() - t0
    after_record = status("VmRSS")
    t0 = time.perf_counter()
    fig = rec.figures()
    figures_s = time.perf_counter() - t0
    how = "predicted (engine)" if predict else "recorded"
    # (the engine's count: len(rec.ops) would make a Python dict per op)
    ops = rec._engine.op_count() if hasattr(rec, "_engine") else len(rec.ops)
    print(f"`PYTHONPATH=build/release/python python3 bench/torch_long_program.py {n}"
          f"{' --predict' if predict else ''}`: torch {torch.__version__}; {ops:,} ops "
          f"{how} in {recorded_s:.1f} s, "
          f"holding {(after_record - base) / 1e9:.2f} GB; figures in {figures_s:.1f} s "
          f"(peak {fig['peak']:,} B), the process's VmHWM {status('VmHWM') / 1e9:.2f} GB.")


if __name__ == "__main__":
    main()
