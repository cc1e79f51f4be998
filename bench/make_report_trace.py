#!/usr/bin/env python3
"""Writes a synthetic memory trace (docs/TRACE_FORMAT.md) with STEPS ops, for sizing the HTML report.

    bench/make_report_trace.py 100000 > big.json
    footprint report big.json -o big.html

The trace looks like a deep network: a chain of ops in stages whose activations shrink stage by
stage, every op reading the previous activation and one of a few weights, one op in five also
reading an activation from up to 64 steps back (a skip connection, so lifetimes overlap), and one
in eight taking scratch. The same STEPS and --seed give the same file.
"""
import argparse
import json
import random
import sys


def make_trace(steps: int, seed: int) -> dict:
    rnd = random.Random(seed)
    tensors = [{"name": "x", "bytes": 1 << 20, "kind": "input"}]
    weights = [f"w{k}" for k in range(16)]
    tensors += [{"name": w, "bytes": rnd.randrange(1 << 12, 1 << 20), "kind": "weight"}
                for w in weights]
    stages = 8
    ops = []
    for i in range(steps):
        stage = i * stages // max(steps, 1)
        base = (4 << 20) >> stage  # 4 MiB in the first stage, halving each stage
        size = max(64, base // rnd.choice([1, 1, 2, 4]) + rnd.randrange(0, 4096))
        kind = "output" if i == steps - 1 else "activation"
        tensors.append({"name": f"t{i}", "bytes": size, "kind": kind})
        inputs = ["x" if i == 0 else f"t{i - 1}", weights[i % len(weights)]]
        if i >= 2 and rnd.random() < 0.2:
            inputs.append(f"t{i - rnd.randrange(2, min(i, 64) + 1)}")
        op = {"name": f"op{i}", "op": rnd.choice(["conv", "add", "matmul", "norm", "relu"]),
              "inputs": inputs, "outputs": [f"t{i}"]}
        if rnd.random() < 0.125:
            op["workspace"] = rnd.randrange(1 << 10, base)
        ops.append(op)
    return {"format": "footprint-trace/1", "name": f"synthetic_{steps}",
            "description": f"bench/make_report_trace.py {steps} --seed {seed}",
            "arguments": "caller", "tensors": tensors, "ops": ops}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("steps", type=int)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.steps < 1:
        parser.error("steps must be at least 1")
    json.dump(make_trace(args.steps, args.seed), sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
