#!/usr/bin/env python3
"""Checks footprint on every model of the zoo (tests/zoo/zoo.sh) and prints a table.

For each model, with the dims its meta.json binds:
  analyze   `footprint analyze --json` exits 0, reports no size it does not know, and (when the
            run works) predicts the lower bound, activation and workspace peaks that the run
            planned from the real inputs
  run       `footprint run --data-dir` exits 0, the outputs match onnxruntime-node's within the
            model's tolerances (meta.json: rtol, atol), and the planned arena equals the arena
            the executor obtained

A check listed in tests/zoo/known_failures.txt ("MODEL CHECK  reason") is expected to fail; the
run fails on any other failure, and also when a listed check passes (so the list only shrinks).

    tests/zoo/check_zoo.py FOOTPRINT ZOO_DIR [--table OUT.md] [--only NAME,...]
        [--known LIST] [--label PREFIX]      (the dynamo zoo: tests/dynamo_zoo/)
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKS = ("analyze", "run")


def known_failures(path):
    out = {}
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split(None, 2)
        if len(parts) < 3 or parts[1] not in CHECKS:
            sys.exit(f"{path}: expected 'MODEL CHECK reason', got {line!r}")
        out[(parts[0], parts[1])] = parts[2]
    return out


def run_json(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    err = (p.stderr.strip().splitlines() or [""])[-1]
    if p.returncode != 0:
        return None, err or f"exit {p.returncode}"
    try:
        return json.loads(p.stdout), ""
    except json.JSONDecodeError as e:
        return None, f"bad JSON: {e}"


def check_analyze(fp, folder, dims):
    j, err = run_json([fp, "analyze", "--json", *dims, os.path.join(folder, "model.onnx")], 300)
    if j is None:
        return False, err, None
    # An unknown size is an error (exit 1, above); a data-dependent one is counted at its bound.
    if j.get("bounded"):
        n = len(j["bounded_tensors"])
        return True, f"total peak <= {j['bytes']['total_peak']} B ({n} tensors bounded)", j
    return True, f"total peak {j['bytes']['total_peak']} B", j


def check_prediction(analyzed, ran):
    """analyze's figures at the model's dims equal what the run planned from its real inputs."""
    if analyzed is None or ran is None:
        return None
    pairs = [("lower bound (64-byte buffers)", analyzed["lower_bound_arena_bytes"],
              ran["predicted"]["lower_bound_bytes"]),
             ("activations peak", analyzed["bytes"]["activations_peak"],
              ran["predicted"]["activations_peak_bytes"]),
             ("workspace peak", analyzed["bytes"]["workspace_peak"],
              ran["predicted"]["workspace_peak_bytes"]),
             # measured by the run: what its kernels' prepared states hold
             ("packed weights", analyzed["bytes"]["packed"],
              ran["measured"]["packed_weights_bytes"]),
             # the buffers preparing allocated and released, at their peak together and after
             ("prepare buffers' peak", analyzed["prepare"]["peak_bytes"],
              ran["measured"]["prepare_buffers_peak_bytes"]),
             ("prepare buffers kept", analyzed["prepare"]["kept_bytes"],
              ran["measured"]["prepare_buffers_kept_bytes"])]
    for what, a, r in pairs:
        if a != r:
            return f"analyze predicts {what} {a} B, the run planned {r} B"
    return ""


def check_run(fp, folder, dims, meta):
    cmd = [fp, "run", "--json", "--check-shapes", "--data-dir", folder, "--repeat", "1",
           "--warmup", "0",
           "--rtol", str(meta.get("rtol", 1e-3)), "--atol", str(meta.get("atol", 1e-5)),
           os.path.join(folder, "model.onnx")]
    j, err = run_json(cmd, 600)
    if j is None:
        return False, err, None
    if not j.get("match"):
        return False, f"outputs differ: max abs error {j.get('max_abs_error')}", j
    planned, obtained = j["predicted"]["arena_bytes"], j["measured"]["arena_bytes"]
    if planned != obtained:
        return False, f"planned arena {planned} B, obtained {obtained} B", j
    shapes = j.get("check_shapes")
    if shapes is None:
        return False, "no check_shapes in the run's JSON", j
    if shapes["difference"]:
        return False, "check-shapes: " + shapes["difference"], j
    return True, (f"match, max abs error {j['max_abs_error']:.3g}; check-shapes clean over "
                  f"{shapes['values']} values"), j


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("footprint")
    ap.add_argument("zoo")
    ap.add_argument("--table")
    ap.add_argument("--only", default="")
    ap.add_argument("--known", default=os.path.join(HERE, "known_failures.txt"))
    ap.add_argument("--label", default="zoo", help="the prefix of every line printed")
    a = ap.parse_args()
    known = known_failures(a.known)
    names = sorted(n for n in os.listdir(a.zoo) if os.path.isfile(
        os.path.join(a.zoo, n, "meta.json")))
    if a.only:
        names = [n for n in names if n in a.only.split(",")]
    if not names:
        sys.exit(f"check_zoo: no models in {a.zoo}")
    rows, surprises = [], []
    for name in names:
        folder = os.path.join(a.zoo, name)
        meta = json.load(open(os.path.join(folder, "meta.json")))
        dims = [f"--dim={k}={v}" for k, v in meta["dims"].items()]
        analyze_ok, analyze_why, analyzed = check_analyze(a.footprint, folder, dims)
        run_ok, run_why, ran = check_run(a.footprint, folder, dims, meta)
        if analyze_ok and run_ok:
            differs = check_prediction(analyzed, ran)
            if differs:
                analyze_ok, analyze_why = False, differs
            else:
                analyze_why += ", = the run's plan"
        results = {"analyze": (analyze_ok, analyze_why), "run": (run_ok, run_why)}
        for check, (ok, why) in results.items():
            expected_fail = (name, check) in known
            status = "pass" if ok else ("known failure" if expected_fail else "FAIL")
            if ok and expected_fail:
                status = "PASSES (listed as known failure)"
                surprises.append(f"{name} {check}: passes; remove it from {a.known}")
            elif not ok and not expected_fail:
                surprises.append(f"{name} {check}: {why}")
            print(f"{a.label}: {name:30} {check:8} {status}: {why}", file=sys.stderr)
        rows.append((name, meta, results))
    if a.table:
        with open(a.table, "w") as f:
            f.write("| model | what it exercises | parameters | analyze | run vs onnxruntime-node |\n")
            f.write("| --- | --- | ---: | --- | --- |\n")
            for name, meta, res in rows:
                cells = []
                for check in CHECKS:
                    ok, why = res[check]
                    cells.append(("ok: " if ok else "**fails**: ") + why.replace("|", "/"))
                f.write(f"| {name} | {meta['notes']} | {meta['parameters']:,} | "
                        f"{cells[0]} | {cells[1]} |\n")
    passed = sum(ok for _, _, res in rows for ok, _ in res.values())
    total = len(rows) * len(CHECKS)
    print(f"{a.label}: {passed} of {total} checks pass over {len(rows)} models; "
          f"{len(surprises)} unexpected", file=sys.stderr)
    for s in surprises:
        print(f"{a.label}: unexpected: {s}", file=sys.stderr)
    return 1 if surprises else 0


if __name__ == "__main__":
    sys.exit(main())
