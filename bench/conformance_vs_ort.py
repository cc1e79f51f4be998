#!/usr/bin/env python3
"""footprint and onnxruntime on the same ONNX node tests (issue 44, item 4).

    scripts/quant bench/conformance_vs_ort.py --footprint build/release/bin/footprint \\
        /usr/share/libonnx-testdata/data/node "$(tests/quant_zoo/node_tests.sh)"

`footprint conformance FOLDER --json` says, per case, whether footprint passes and which ops the
case uses; onnxruntime (scripts/quant's pinned wheel, CPU provider, all optimisations) runs the
same model on the same inputs, checked by the same rule (|got - want| <= 1e-5 + 1e-3 |want| per
element, NaN where NaN is expected, equal shapes). Counted on the cases whose ops footprint
registers (every case but those footprint has no kernel for): how many each passes, and the
cases one passes and the other does not. Prints Markdown.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

ort.set_default_logger_severity(3)


def read_value(path, type_proto):
    """The value of one input_N.pb / output_N.pb, as the model declares it."""
    with open(path, "rb") as f:
        data = f.read()
    kind = type_proto.WhichOneof("value")
    if kind == "sequence_type":
        seq = onnx.SequenceProto()
        seq.ParseFromString(data)
        return numpy_helper.to_list(seq)
    if kind == "optional_type":
        opt = onnx.OptionalProto()
        opt.ParseFromString(data)
        return numpy_helper.to_optional(opt)
    if kind == "map_type":
        m = onnx.MapProto()
        m.ParseFromString(data)
        return numpy_helper.to_dict(m)
    t = onnx.TensorProto()
    t.ParseFromString(data)
    return numpy_helper.to_array(t)


def close(got, want):
    if want is None or got is None:
        return want is None and got is None
    if isinstance(want, (list, tuple)):
        return isinstance(got, (list, tuple)) and len(got) == len(want) and all(
            close(g, w) for g, w in zip(got, want))
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and all(
            close(got[k], want[k]) for k in want)
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if want.dtype.kind in "OUS":
        return bool(np.all(got.astype(str) == want.astype(str)))
    if want.dtype.kind == "b" or want.dtype.kind in "iu":
        return bool(np.array_equal(got.astype(want.dtype), want))
    g, w = got.astype(np.float64), want.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    ok = np.abs(g - w) <= 1e-5 + 1e-3 * np.abs(w)
    return bool(np.all(ok | both_nan))


def ort_passes(case):
    """Whether onnxruntime's outputs match the case's, and why not."""
    try:
        model = onnx.load(os.path.join(case, "model.onnx"))
        data = os.path.join(case, "test_data_set_0")
        graph = model.graph
        initializers = {i.name for i in graph.initializer}
        inputs = [v for v in graph.input if v.name not in initializers]
        feeds = {}
        for i, v in enumerate(inputs):
            path = os.path.join(data, f"input_{i}.pb")
            if os.path.exists(path):
                feeds[v.name] = read_value(path, v.type)
        want = [read_value(os.path.join(data, f"output_{i}.pb"), v.type)
                for i, v in enumerate(graph.output)
                if os.path.exists(os.path.join(data, f"output_{i}.pb"))]
        session = ort.InferenceSession(model.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
        got = session.run(None, feeds)
        if len(got) < len(want):
            return False, "fewer outputs"
        bad = [i for i, w in enumerate(want) if not close(got[i], w)]
        return (not bad), (f"output {bad[0]} differs" if bad else "")
    except Exception as e:  # noqa: BLE001 - onnxruntime's refusals come in many types
        return False, str(e).splitlines()[0][:160] if str(e) else type(e).__name__


def footprint_cases(footprint, folder):
    p = subprocess.run([footprint, "conformance", folder, "--json"], capture_output=True,
                       text=True, check=True)
    return json.loads(p.stdout)["suites"][0]["cases"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--footprint", required=True)
    ap.add_argument("folders", nargs="+")
    a = ap.parse_args()
    print(f"onnxruntime {ort.__version__} (CPU) and footprint on the same cases, each checked by "
          "|got - want| <= 1e-5 + 1e-3 |want|. *Registered*: the cases whose ops all have a "
          "footprint kernel (footprint's `no kernel` cases left out).\n")
    print("| suite | cases | registered | footprint passes | onnxruntime passes | only footprint "
          "| only onnxruntime |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    lists = []
    for folder in a.folders:
        cases = footprint_cases(a.footprint, folder)
        registered = [c for c in cases if c["outcome"] != "no kernel"]
        fp = ort_n = 0
        only_fp, only_ort = [], []
        for c in registered:
            ok, why = ort_passes(os.path.join(folder, c["name"]))
            mine = c["outcome"] == "pass"
            fp += mine
            ort_n += ok
            if mine and not ok:
                only_fp.append((c["name"], why))
            if ok and not mine:
                only_ort.append((c["name"], f'{c["outcome"]}: {c["reason"]}'[:200]))
        print(f"| {folder} | {len(cases)} | {len(registered)} | {fp} | {ort_n} | "
              f"{len(only_fp)} | {len(only_ort)} |")
        lists.append((folder, only_fp, only_ort))
    for folder, only_fp, only_ort in lists:
        print(f"\n### {folder}\n")
        print(f"Passed by onnxruntime only ({len(only_ort)}; footprint's outcome and reason):\n")
        for name, why in only_ort:
            print(f"- `{name}`: {why}")
        print(f"\nPassed by footprint only ({len(only_fp)}; onnxruntime's failure):\n")
        for name, why in only_fp:
            print(f"- `{name}`: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
