#!/usr/bin/env python3
"""Time and peak RSS of analyze / plan / run / report against graph and trace size (issue 20).

Graph shapes, each at 10^3 ... 10^max nodes (or steps):
  chain     x -> Relu -> Neg -> Relu -> ... (every step in place of the previous buffer)
  fanout    x read by n Relu nodes whose outputs all meet in one Sum (everything alive at once)
  views     x -> Relu -> Reshape -> Reshape -> ... -> Neg (one buffer behind a deep view chain)
  residual  h -> Relu -> Add(h, .) blocks of two nodes (a skip connection per block)
  trace     a JSON trace of n ops, each reading the previous op's output

    bench/scale_shapes.py --footprint build/release/bin/footprint --max 6 \\
        | bench/write_section.py docs/BENCHMARKS.md "## Scale: graph and trace size (issue 20)"

Prints the section: a table of wall time, CPU time and peak RSS per command, shape and size, then the
ratio of each CPU time and RSS to the one a decade below (linear work is ~10x per decade; the 10^3 figures
are mostly process start-up, so the ratios start at 10^4 -> 10^5).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "hostile"))
import onnx_bytes as ob  # noqa: E402

X = [ob.value_info("x", ob.FLOAT, [1, 16])]
Y = [ob.value_info("y", ob.FLOAT, [1, 16])]


def chain(n):
    nodes, prev = [], "x"
    for i in range(n):
        out = "y" if i == n - 1 else f"t{i}"
        nodes.append(ob.node("Relu" if i % 2 == 0 else "Neg", [prev], [out], name=f"n{i}"))
        prev = out
    return ob.model(nodes, X, Y)


def fanout(n):
    nodes = [ob.node("Relu", ["x"], [f"t{i}"], name=f"n{i}") for i in range(n - 1)]
    nodes.append(ob.node("Sum", [f"t{i}" for i in range(n - 1)], ["y"], name="sum"))
    return ob.model(nodes, X, Y)


def views(n):
    nodes, prev = [ob.node("Relu", ["x"], ["v0"], name="first")], "v0"
    for i in range(1, n - 1):
        nodes.append(ob.node("Reshape", [prev, "s"], [f"v{i}"], name=f"r{i}"))
        prev = f"v{i}"
    nodes.append(ob.node("Neg", [prev], ["y"], name="last"))
    return ob.model(nodes, X, Y, [ob.int64_tensor("s", [1, 16])])


def residual(n):
    nodes, h = [], "x"
    for b in range(n // 2):
        out = "y" if b == n // 2 - 1 else f"h{b}"
        nodes.append(ob.node("Relu", [h], [f"r{b}"], name=f"relu{b}"))
        nodes.append(ob.node("Add", [h, f"r{b}"], [out], name=f"add{b}"))
        h = out
    return ob.model(nodes, X, Y)


NESTING = 16  # Ifs nested in Ifs: about as deep as the reader's nesting limit (64 messages) allows


def nested(n):
    """An If whose then-branch holds a chain of Relu/Neg and the next If, NESTING deep; each
    else-branch is a Neg. The condition is a graph input, so no branch is folded away."""
    per = max(1, (n - 1) // NESTING)

    def attr_graph(name, g):
        return ob.vbytes(1, name) + ob.vint(20, 5) + ob.vbytes(6, g)

    def branch(level, h):
        nodes, prev = [], h
        for i in range(per):
            out = f"b{level}_{i}"
            nodes.append(ob.node("Relu" if i % 2 == 0 else "Neg", [prev], [out],
                                 name=f"l{level}n{i}"))
            prev = out
        if level + 1 < NESTING:
            nodes.append(if_node(level + 1, prev))
            prev = f"if{level + 1}"
        body = b"".join(ob.vbytes(1, x) for x in nodes) + ob.vbytes(2, f"then{level}")
        return body + ob.vbytes(12, ob.value_info(prev, ob.FLOAT, [1, 16]))

    def if_node(level, h):
        other = ob.node("Neg", [h], [f"e{level}"], name=f"else{level}")
        orelse = ob.vbytes(1, other) + ob.vbytes(2, f"else{level}")
        orelse += ob.vbytes(12, ob.value_info(f"e{level}", ob.FLOAT, [1, 16]))
        return ob.node("If", ["c"], [f"if{level}"], name=f"if{level}",
                       attrs=[attr_graph("then_branch", branch(level, h)),
                              attr_graph("else_branch", orelse)])

    nodes = [if_node(0, "x"), ob.node("Identity", ["if0"], ["y"], name="out")]
    return ob.model(nodes, X + [ob.value_info("c", 9, [])], Y)


def trace(n):
    tensors = [{"name": "x", "dtype": "float32", "shape": [16], "kind": "input"}]
    tensors += [{"name": f"t{i}", "dtype": "float32", "shape": [16]} for i in range(n - 1)]
    tensors.append({"name": "y", "dtype": "float32", "shape": [16], "kind": "output"})
    names = ["x"] + [f"t{i}" for i in range(n - 1)] + ["y"]
    ops = [{"name": f"op{i}", "inputs": [names[i]], "outputs": [names[i + 1]]} for i in range(n)]
    return json.dumps({"format": "footprint-trace/1", "tensors": tensors, "ops": ops})


SHAPES = {"chain": chain, "fanout": fanout, "views": views, "residual": residual, "nested": nested,
          "trace": trace}


COMMANDS = ("analyze", "plan", "run", "report")


def measure(footprint, args, timeout):
    """Wall seconds, CPU seconds (user + system), peak RSS (MiB) and stdout of one command, from
    /usr/bin/time; None past the timeout."""
    cmd = ["/usr/bin/time", "-f", "%e %U %S %M", footprint] + args
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {p.stderr.strip()[-400:]}")
    wall, user, system, kb = p.stderr.strip().splitlines()[-1].split()
    return float(wall), float(user) + float(system), int(kb) / 1024, p.stdout


def commands(shape, path, d):
    cmds = {"analyze": ["analyze", path],
            "report": ["report", path, "-o", os.path.join(d, "r.html")]}
    if shape != "trace":  # plan and run take models (plan's other input is a CSV)
        cmds["plan"] = ["plan", path, "--algo", "best-fit"]
        cmds["run"] = ["run", path, "--repeat", "1", "--warmup", "0"]
    return cmds


def cell(m, timeout):
    if m is None:
        return f"> {timeout} s"
    return "-" if m == "-" else f"{m[0]:.2f} s ({m[1]:.2f} s CPU), {m[2]:.0f} MiB"


def ratio(hi, lo):
    """'CPU x, RSS x' of a figure over the one a decade below; '-' where either is missing.
    CPU time, not wall time: on a loaded machine the wall time of one run is what the other
    processes left it, while its CPU time is the work it did."""
    if not isinstance(hi, tuple) or not isinstance(lo, tuple) or lo[1] <= 0 or lo[2] <= 0:
        return "-"
    return f"{hi[1] / lo[1]:.1f}x, {hi[2] / lo[2]:.1f}x"


def load_average():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--footprint", required=True)
    ap.add_argument("--max", type=int, default=6, help="largest size, as a power of ten")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per command")
    a = ap.parse_args()
    figures = {}  # (shape, exponent, command) -> (seconds, MiB), None past the timeout, or "-"
    loads = [load_average()]
    with tempfile.TemporaryDirectory(prefix="footprint-scale-") as d:
        for shape, make in SHAPES.items():
            for e in range(3, a.max + 1):
                path = os.path.join(d, f"{shape}_{e}." + ("json" if shape == "trace" else "onnx"))
                data = make(10 ** e)
                with open(path, "wb" if isinstance(data, bytes) else "w") as f:
                    f.write(data)
                del data
                cmds = commands(shape, path, d)
                for c in COMMANDS:
                    m = measure(a.footprint, cmds[c], a.timeout) if c in cmds else "-"
                    figures[(shape, e, c)] = m
                    print(f"{shape} 10^{e} {c}: {cell(m, a.timeout)}", file=sys.stderr)
                os.remove(path)
    loads.append(load_average())
    print("## Scale: graph and trace size (issue 20)\n")
    print(f"`bench/scale_shapes.py --footprint build/release/bin/footprint --max {a.max}` (release "
          "build, this machine, one run each; 1-minute load average "
          f"{loads[0]} at the start and {loads[1]} at the end, on {os.cpu_count()} cores shared "
          "with other work, so single figures are noisy and the curve is the point): wall time "
          "(with its CPU time, user + system) and peak RSS (`/usr/bin/time`) of each command on synthetic graphs of 10^3 ... "
          f"10^{a.max} nodes and traces of as many ops. `plan` uses `--algo best-fit`; `run` is "
          "load, prepare and one run. Shapes: **chain** (Relu/Neg alternating, in place), "
          "**fanout** (one input read by n Relus that meet in one Sum: everything alive at "
          "once), **views** (a chain of Reshapes, one buffer behind it), **residual** (Relu + "
          "Add blocks), **trace** (a JSON trace of n ops in a chain).\n")
    print("| shape | size | " + " | ".join(COMMANDS) + " |")
    print("| --- | --- |" + " --- |" * len(COMMANDS))
    for shape in SHAPES:
        for e in range(3, a.max + 1):
            cells = [cell(figures[(shape, e, c)], a.timeout) for c in COMMANDS]
            print(f"| {shape} | 10^{e} | " + " | ".join(cells) + " |")
    print("\nEach figure over the one a decade below (CPU time, peak RSS); linear is 10x:\n")
    print("| shape | decade | " + " | ".join(COMMANDS) + " |")
    print("| --- | --- |" + " --- |" * len(COMMANDS))
    for shape in SHAPES:
        for e in range(5, a.max + 1):
            cells = [ratio(figures[(shape, e, c)], figures[(shape, e - 1, c)]) for c in COMMANDS]
            print(f"| {shape} | 10^{e - 1} -> 10^{e} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
