#!/usr/bin/env python3
"""Time and peak RSS of `analyze`, `plan --algo auto` and `report` on JSON traces
against their number of buffers, per shape (issue 44, item 1).

Shapes, each at 10^3 ... 10^max ops:
  chain    op i reads t(i-1) and writes t(i): two buffers alive at a time
  fan      n ops read x, each writing a buffer, and one last op reads all n: all alive at once
  views    one buffer, then n ops each making a view of the previous view (a nest n deep),
           and one op reading the last
  train    a training step: n/4 forward ops each saving its output for the backward ops,
           which free them in reverse, with a gradient and a temporary per layer

    bench/scale_traces.py --footprint build/release/bin/footprint --max 6 \\
        | bench/write_section.py docs/BENCHMARKS.md "## Scale: traces by shape (issue 44)"

Prints the section: a table of wall time, CPU time and peak RSS per command, shape and size, the
ratio of each CPU time to the one a decade below (linear work is ~10x), and auto's arena over the
lower bound. Every plan comes from `plan --json`, so it has passed footprint's validator.
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale_shapes import load_average, measure  # noqa: E402  (one way to time a command)


def tensor(f, first, name, size, kind=None, view_of=None):
    t = {"name": name, "dtype": "float32", "shape": [size]}
    if kind:
        t["kind"] = kind
    if view_of:
        t = {"name": name, "bytes": 0, "view_of": view_of}
    f.write(("" if first else ",\n") + json.dumps(t))


def op(f, first, name, inputs, outputs, free=None):
    o = {"name": name, "inputs": inputs, "outputs": outputs}
    if free:
        o["free"] = free
    f.write(("" if first else ",\n") + json.dumps(o))


def write_trace(path, tensors, ops):
    """A trace from two generators of (args) tuples, streamed: 10^6 ops never sit in a list."""
    with open(path, "w") as f:
        f.write('{"format": "footprint-trace/1", "tensors": [\n')
        for i, t in enumerate(tensors):
            tensor(f, i == 0, *t)
        f.write('],\n"ops": [\n')
        for i, o in enumerate(ops):
            op(f, i == 0, *o)
        f.write("]}\n")


def chain(path, n):
    names = ["x"] + [f"t{i}" for i in range(n - 1)] + ["y"]
    tensors = [("x", 16, "input")] + [(f"t{i}", 16) for i in range(n - 1)]
    tensors.append(("y", 16, "output"))
    write_trace(path, tensors, ((f"op{i}", [names[i]], [names[i + 1]]) for i in range(n)))


def fan(path, n):
    tensors = [("x", 16, "input")] + [(f"t{i}", 16 + i % 7) for i in range(n - 1)]
    tensors.append(("y", 16, "output"))
    ops = [(f"op{i}", ["x"], [f"t{i}"]) for i in range(n - 1)]
    ops.append(("sum", [f"t{i}" for i in range(n - 1)], ["y"]))
    write_trace(path, tensors, ops)


def views(path, n):
    def tensors():
        yield ("x", 16, "input")
        yield ("v0", 16)
        for i in range(1, n - 1):
            yield (f"v{i}", 0, None, f"v{i - 1}")
        yield ("y", 16, "output")

    def ops():
        yield ("first", ["x"], ["v0"])
        for i in range(1, n - 1):
            yield (f"view{i}", [f"v{i - 1}"], [f"v{i}"])
        yield ("last", [f"v{n - 2}"], ["y"])

    write_trace(path, tensors(), ops())


def train(path, n):
    """Layers of 4 ops (forward, backward, a temporary's maker and its reader): forward outputs
    kept until the backward op of their layer frees them, in reverse; sizes vary per layer."""
    layers = max(1, n // 4)
    size = [64 + (i * 7919) % 4096 for i in range(layers)]

    def tensors():
        yield ("x", 256, "input")
        for i in range(layers):
            yield (f"a{i}", size[i])
            yield (f"g{i}", size[i])
            yield (f"s{i}", size[i] // 2)
        yield ("loss", 1, "output")

    def ops():
        prev = "x"
        for i in range(layers):
            yield (f"fwd{i}", [prev], [f"a{i}"])
            prev = f"a{i}"
        grad = prev
        for i in reversed(range(layers)):
            yield (f"tmp{i}", [grad, f"a{i}"], [f"s{i}"])
            frees = [f"a{i}", f"s{i}"] + ([grad] if grad != f"a{layers - 1}" else [])
            yield (f"bwd{i}", [grad, f"s{i}"], [f"g{i}"], frees)
            grad = f"g{i}"
        yield ("loss", [grad], ["loss"], [grad])

    write_trace(path, tensors(), ops())


SHAPES = {"chain": chain, "fan": fan, "views": views, "train": train}
COMMANDS = ("analyze", "plan", "report")


def cell(m, timeout):
    if m is None:
        return f"> {timeout} s"
    return f"{m[0]:.2f} s ({m[1]:.2f} s CPU), {m[2]:.0f} MiB"


def ratio(hi, lo):
    if hi is None or lo is None or lo[1] <= 0:
        return "-"
    return f"{hi[1] / lo[1]:.1f}x"


def plan_ratio(m):
    if m is None:
        return "-"
    p = json.loads(m[3])
    lower = p.get("lower_bound_bytes") or 0
    arena = p.get("arena_bytes") or 0
    return f"{arena / lower:.4f}" if lower else "- (no arena)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--footprint", required=True)
    ap.add_argument("--max", type=int, default=6, help="largest size, as a power of ten")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per command")
    a = ap.parse_args()
    figures = {}
    loads = [load_average()]
    with tempfile.TemporaryDirectory(prefix="footprint-scale-traces-") as d:
        for shape, make in SHAPES.items():
            for e in range(3, a.max + 1):
                path = os.path.join(d, f"{shape}_{e}.json")
                make(path, 10 ** e)
                cmds = {"analyze": ["analyze", path],
                        "plan": ["plan", path, "--algo", "auto", "--json"],
                        "report": ["report", path, "-o", os.path.join(d, "report.html")]}
                for c in COMMANDS:
                    m = measure(a.footprint, cmds[c], a.timeout)
                    figures[(shape, e, c)] = m
                    print(f"{shape} 10^{e} {c}: {cell(m, a.timeout)}", file=sys.stderr)
                os.remove(path)
    loads.append(load_average())
    print("## Scale: traces by shape (issue 44)\n")
    print(f"`bench/scale_traces.py --footprint build/release/bin/footprint --max {a.max}` "
          "(release build, one run each; 1-minute load average "
          f"{loads[0]} at the start and {loads[1]} at the end, on {os.cpu_count()} cores shared "
          "with other work): wall time (with its CPU time, user + system) and peak RSS "
          "(`/usr/bin/time`) of `analyze`, `plan --algo auto --json` and `report -o` on JSON "
          "traces of "
          f"10^3 ... 10^{a.max} ops. Shapes: **chain** (each op reads the previous op's "
          "output), **fan** (n ops read one input and one op reads all their outputs: "
          "everything alive at once), **views** (a nest of views n deep over one buffer), "
          "**train** (forward outputs freed in reverse by the backward ops, explicit frees).\n")
    print("| shape | ops | analyze | plan (auto) | auto / lower bound | report |")
    print("| --- | --- | --- | --- | --- | --- |")
    for shape in SHAPES:
        for e in range(3, a.max + 1):
            an, pl, rp = (figures[(shape, e, c)] for c in COMMANDS)
            print(f"| {shape} | 10^{e} | {cell(an, a.timeout)} | {cell(pl, a.timeout)} | "
                  f"{plan_ratio(pl)} | {cell(rp, a.timeout)} |")
    print("\nCPU time over the one a decade below (linear is 10x):\n")
    print("| shape | decade | analyze | plan (auto) | report |")
    print("| --- | --- | --- | --- | --- |")
    for shape in SHAPES:
        for e in range(5, a.max + 1):
            cells = [ratio(figures[(shape, e, c)], figures[(shape, e - 1, c)]) for c in COMMANDS]
            print(f"| {shape} | 10^{e - 1} -> 10^{e} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
