#!/usr/bin/env python3
"""footprint.torch on a long program (issue 38's "a 10^6-op program"): N tiny aten ops recorded
on the CPU, then their figures; the time and the process's memory (VmRSS, VmHWM) after each.

    PYTHONPATH=build/release/python python3 bench/torch_long_program.py [N]   # default 10^6
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
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10 ** 6

    def step():
        x = torch.zeros(4)
        for _ in range(n // 2):
            x = x + 1
            x = x * 1
        return x

    base = status("VmRSS")
    t0 = time.perf_counter()
    with ft.record() as rec:
        step()
    recorded_s = time.perf_counter() - t0
    after_record = status("VmRSS")
    t0 = time.perf_counter()
    fig = rec.figures()
    figures_s = time.perf_counter() - t0
    print(f"`PYTHONPATH=build/release/python python3 bench/torch_long_program.py {n}`: "
          f"torch {torch.__version__}; {len(rec.ops):,} ops recorded in {recorded_s:.1f} s, "
          f"holding {(after_record - base) / 1e9:.2f} GB; figures in {figures_s:.1f} s "
          f"(peak {fig['peak']:,} B), the process's VmHWM {status('VmHWM') / 1e9:.2f} GB.")


if __name__ == "__main__":
    main()
