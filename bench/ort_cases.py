"""Single-node models checked against onnxruntime (the bench/contrib_*_vs_ort.py scripts): each
case a folder holding model.onnx, its inputs and onnxruntime's outputs as input_*.pb and
output_*.pb, which `footprint run --data-dir` compares against.

    d = save_case(out, "name", graph, feeds)          # onnxruntime runs it here
    ok, line = footprint_matches(footprint, d, rtol=1e-5, atol=1e-6)
"""
import os
import subprocess

import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper


def save_case(out, name, graph, feeds):
    """The graph as a model (opset 17 and com.microsoft 1) in out/name with its inputs and
    onnxruntime's outputs; returns the folder."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    session = ort.InferenceSession(os.path.join(d, "model.onnx"),
                                   providers=["CPUExecutionProvider"])
    results = session.run(None, feeds)
    for i, (k, v) in enumerate(feeds.items()):
        with open(os.path.join(d, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(v, k).SerializeToString())
    for i, v in enumerate(results):
        with open(os.path.join(d, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(v, session.get_outputs()[i].name).SerializeToString())
    return d


def footprint_matches(footprint, d, rtol, atol, extra=()):
    """Whether `footprint run` on the folder gives its outputs within rtol/atol, and the line it
    printed about them (its `match` line, or its error)."""
    r = subprocess.run([footprint, "run", os.path.join(d, "model.onnx"), "--data-dir", d,
                        "--rtol", str(rtol), "--atol", str(atol), *extra],
                       capture_output=True, text=True)
    lines = [ln for ln in (r.stdout + r.stderr).splitlines()
             if ln.startswith(("match", "footprint: error"))]
    return r.returncode == 0, lines[0] if lines else r.stderr.strip()[:200]


def check_all(footprint, folders, extra=(), same="matches"):
    """footprint_matches over (folder, rtol, atol) triples: a line per folder, the count, and
    the exit status (0 when every one matches)."""
    good = total = 0
    for d, rtol, atol in folders:
        ok, line = footprint_matches(footprint, d, rtol, atol, extra)
        print(f"{os.path.basename(d):40s} {same if ok else 'DIFFERS'}  {line}")
        good += ok
        total += 1
    print(f"{good} of {total} models: footprint gives onnxruntime {ort.__version__}'s outputs"
          f"{' bit for bit' if same == 'bit for bit' else ''}")
    return 0 if good == total else 1


def zero_one_mask(rng, shape):
    """An int32 0/1 mask of `shape` keeping about 70 % of the keys, and always the first (a row
    with no key kept is each runtime's own convention)."""
    import numpy as np
    m = (rng.uniform(size=shape) > 0.3).astype(np.int32)
    m[..., 0] = 1
    return m


def float_tolerances(dtype):
    """The rtol, atol a float32 or float16 case is held to."""
    return (1e-5, 1e-6) if dtype == "float32" else (1e-3, 1e-3)
