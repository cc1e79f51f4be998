#!/usr/bin/env python3
"""Checks footprint on every variant of the quantized zoo (tests/quant_zoo/quant_zoo.sh).

The rule, today and after every kernel lands (never a silent guess): for each variant either

  runs      `footprint run --data-dir` exits 0, its outputs match onnxruntime's within the
            variant's tolerances (meta.json: rtol, atol; see below), the planned arena is the
            one obtained,
            --check-shapes is clean and `analyze` predicted what the run planned (as
            tests/zoo/check_zoo.py checks the float zoo); or
  refused   `run` exits 1 with a one-line error naming an op, and `analyze` named that op
            before: a warning that `run` will refuse it (analyze exits 0 with its figures), or,
            where the op's outputs have no size footprint can know (an unknown com.microsoft op
            the model declares no type for), a one-line error naming that op.

The tolerances (tests/quant_zoo/make_quant_zoo.py: tolerances, ort_self_deviation): an rtol and
an atol scaled to the largest reference output per kind (int8 graphs 1e-2 and 1e-2 x max |ref|,
float16 1e-2 and 5e-3 x max, int4 weight-only 1e-3 and 1e-4 x max), raised where onnxruntime
does not reproduce itself that closely to twice its largest deviation from its own reference
with its graph optimisations off or its float inputs moved by one ulp (four seeded moves). In a
quantized graph one ulp of float difference rounds some intermediate to the next step, which
moves the outputs by whole quantization steps (the ViT variants: 0.02 on logits of 1.4);
footprint is held to what onnxruntime holds itself to, and a kernel that is wrong by a step
everywhere still fails (a wrong zero point or scale moves every output by far more).

Anything else fails the check: a crash (signal), a time-out, exit 0 with outputs that differ,
a refusal `analyze` did not announce, an error naming no op, `analyze` warning of a refusal
that `run` does not make. Variants onnxruntime itself cannot run (meta.json "ort_error") are
skipped with its reason.

    tests/quant_zoo/check_quant_zoo.py FOOTPRINT QUANT_ZOO_DIR [--table OUT.md] [--only NAME,...]
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "zoo"))
from check_zoo import check_prediction  # noqa: E402  (the float zoo's own prediction check)

# `node 'NAME' (OP)`, as footprint labels a node in warnings and errors.
NODE_OP = re.compile(r"node '.*?' \(([A-Za-z0-9_.]+)\)")
REFUSE_WARNING = "`run` will refuse this model"
UNKNOWN_OP = re.compile(r"whose op '(?:[A-Za-z0-9_.]+:)?([A-Za-z0-9_.]+)' is unknown to footprint")


def short(error):
    """An unknown-op error in a few words: the node and the op (the rest is the same on every
    such line)."""
    m = re.search(r"(node '.*?' \([^)]*\)), whose op '([^']+)' is unknown", error)
    return f"error: {m.group(1)}: op '{m.group(2)}' unknown, no declared type" if m else error


def execute(cmd, timeout):
    """(exit code or None on time-out, stdout, stderr lines)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", [f"timed out after {timeout} s"]
    return p.returncode, p.stdout, p.stderr.splitlines()


def errors_of(lines):
    """stderr without footprint's warnings: what a refusal must keep to one line."""
    return [line for line in lines if not line.startswith("footprint: warning: ")]


def died(code):
    if code is None:
        return "hung (time-out)"
    if code < 0:
        return f"crashed (signal {-code})"
    return ""


class Analyzed:
    """What `footprint analyze --json` said: figures and the ops it warned `run` refuses, or a
    one-line error and the unknown op it names."""

    def __init__(self, fp, folder, dims):
        cmd = [fp, "analyze", "--json", *dims, os.path.join(folder, "model.onnx")]
        code, out, err = execute(cmd, 300)
        self.failure = died(code)
        self.json, self.refused_ops, self.error, self.error_op = None, [], "", ""
        if self.failure:
            return
        if code == 0:
            try:
                self.json = json.loads(out)
            except json.JSONDecodeError as e:
                self.failure = f"analyze printed bad JSON: {e}"
                return
            for w in self.json.get("warnings", []):
                m = NODE_OP.search(w)
                if REFUSE_WARNING in w and m:
                    self.refused_ops.append(m.group(1))
            return
        errors = errors_of(err)
        if code != 1 or len(errors) != 1 or not errors[0].startswith("footprint: error: "):
            self.failure = f"analyze exit {code}: " + " / ".join(errors)[:300]
            return
        self.error = errors[0]
        m = UNKNOWN_OP.search(self.error)
        self.error_op = m.group(1) if m else ""

    def said(self):
        if self.json is not None:
            ops = sorted(set(self.refused_ops))
            return "warns `run` refuses " + ", ".join(ops) if ops else "no refusal warned"
        return short(self.error.removeprefix("footprint: error: "))


def check_variant(fp, folder, meta):
    """(status, analyze's words, run's words, failure or ""); status is runs/refused/FAIL."""
    dims = [f"--dim={k}={v}" for k, v in meta.get("dims", {}).items()]
    a = Analyzed(fp, folder, dims)
    if a.failure:
        return "FAIL", a.failure, "", a.failure
    cmd = [fp, "run", "--json", "--check-shapes", "--data-dir", folder, "--repeat", "1",
           "--warmup", "0", "--rtol", str(meta["rtol"]), "--atol", str(meta["atol"]),
           os.path.join(folder, "model.onnx")]
    code, out, err = execute(cmd, 600)
    failure = died(code)
    if failure:
        return "FAIL", a.said(), failure, "run " + failure
    if code == 0:
        try:
            j = json.loads(out)
        except json.JSONDecodeError as e:
            return "FAIL", a.said(), "bad JSON", f"run printed bad JSON: {e}"
        if not j.get("match"):
            why = f"exit 0 with outputs that differ: max abs error {j.get('max_abs_error')}"
            return "FAIL", a.said(), why, "run " + why
        said = f"match, max abs error {j['max_abs_error']:.3g}"
        if a.json is None:
            return "FAIL", a.said(), said, "analyze failed on a model that runs"
        if a.refused_ops:
            return "FAIL", a.said(), said, "analyze warned of a refusal that run does not make"
        planned, obtained = j["predicted"]["arena_bytes"], j["measured"]["arena_bytes"]
        if planned != obtained:
            return "FAIL", a.said(), said, f"planned arena {planned} B, obtained {obtained} B"
        shapes = j.get("check_shapes") or {"difference": "no check_shapes in run's JSON"}
        if shapes["difference"]:
            return "FAIL", a.said(), said, "check-shapes: " + shapes["difference"]
        differs = check_prediction(a.json, j)
        if differs:
            return "FAIL", a.said(), said, differs
        return "runs", a.said(), said, ""
    errors = errors_of(err)
    error = " / ".join(errors)
    if code != 1 or len(errors) != 1 or not errors[0].startswith("footprint: error: "):
        return "FAIL", a.said(), error[:300], f"run exit {code} without a one-line error"
    m = NODE_OP.search(errors[0])
    error = errors[0].removeprefix("footprint: error: ")
    if "outputs differ" in error:
        return "FAIL", a.said(), error, "run's outputs differ from onnxruntime's"
    if not m:
        return "FAIL", a.said(), error, "run's error names no op"
    op = m.group(1)
    if a.json is not None and op not in a.refused_ops:
        return "FAIL", a.said(), error, f"run refuses {op}; analyze did not warn of it"
    if a.json is None and op != a.error_op:
        return "FAIL", a.said(), error, f"run refuses {op}; analyze's error names no such op"
    return "refused", a.said(), short(error), ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("footprint")
    ap.add_argument("zoo")
    ap.add_argument("--table", help="write the per-variant table (Markdown) here")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    names = sorted(n for n in os.listdir(a.zoo) if os.path.isfile(
        os.path.join(a.zoo, n, "meta.json")))
    if a.only:
        names = [n for n in names if n in a.only.split(",")]
    if not names:
        sys.exit(f"check_quant_zoo: no variants in {a.zoo}")
    rows, failures, counts = [], [], {}
    for name in names:
        folder = os.path.join(a.zoo, name)
        meta = json.load(open(os.path.join(folder, "meta.json")))
        if "ort_error" in meta:
            status, analyzed, ran, failure = "skipped", "", "onnxruntime: " + meta["ort_error"], ""
        else:
            status, analyzed, ran, failure = check_variant(a.footprint, folder, meta)
        counts[status] = counts.get(status, 0) + 1
        line = f"quant zoo: {name:28} {status:8} analyze: {analyzed[:150]}; run: {ran[:200]}"
        if failure:
            line += f"  <- {failure}"
            failures.append(f"{name}: {failure}\n  reproduce: {a.footprint} analyze --json "
                            f"{folder}/model.onnx; {a.footprint} run --data-dir {folder} "
                            f"{folder}/model.onnx")
        print(line, file=sys.stderr)
        rows.append((name, meta, status, analyzed, ran, failure))
    if a.table:
        with open(a.table, "w") as f:
            f.write("| variant | made by | status | analyze | run |\n")
            f.write("| --- | --- | --- | --- | --- |\n")
            for name, meta, status, analyzed, ran, failure in rows:
                cell = f"**FAIL**: {failure}" if failure else status
                f.write(f"| {name} | {meta['notes']} | {cell} | {analyzed.replace('|', '/')} | "
                        f"{ran.replace('|', '/')} |\n")
    summary = ", ".join(f"{counts[k]} {k}" for k in ("runs", "refused", "skipped", "FAIL")
                        if k in counts)
    print(f"quant zoo: {len(rows)} variants: {summary}", file=sys.stderr)
    for f in failures:
        print(f"quant zoo: FAIL {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
