#!/usr/bin/env python3
"""onnxruntime's QGemm, MatMulIntegerToFloat and DynamicQuantizeMatMul (com.microsoft) against footprint on single-node
models: QGemm over transA and transB, a quantized (uint8) and a float output (alpha 0.75),
uint8 and int8 operands, per-column B scales and zero points, an int32 C; MatMulIntegerToFloat
with batches, zero points and a bias; DynamicQuantizeMatMul with per-column and per-tensor B
parameters, with and without zero points and a bias. Each model's inputs and onnxruntime's outputs are written
beside it, then `footprint run --data-dir` compares; prints one line per model and exits 1
unless every output is onnxruntime's bit for bit.

    scripts/quant bench/contrib_products_vs_ort.py FOOTPRINT [OUT_DIR]
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from ort_cases import save_case

M, K, N = 37, 70, 53


def tensor_type(t):
    return TensorProto.UINT8 if t == np.uint8 else TensorProto.INT8


def random_ints(rng, t, shape):
    info = np.iinfo(t)
    return rng.integers(info.min, info.max + 1, size=shape).astype(t)


def models(out):
    rng = np.random.default_rng(0)
    init = numpy_helper.from_array
    made = []
    for ta in (0, 1):
        for tb in (0, 1):
            for quantized in (True, False):
                for at, bt in ((np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8)):
                    if quantized and at == np.int8:
                        continue  # onnxruntime has no QGemm of an int8 A with a uint8 Y
                    a = random_ints(rng, at, (K, M) if ta else (M, K))
                    b = random_ints(rng, bt, (N, K) if tb else (K, N))
                    bz = (rng.integers(-5, 5, size=N) if bt == np.int8
                          else rng.integers(120, 136, size=N)).astype(bt)
                    inits = [init(np.array(0.02, np.float32), "a_s"),
                             init(np.array(3 if at == np.uint8 else -2, at), "a_z"),
                             init(b, "B"),
                             init(rng.uniform(0.001, 0.01, size=N).astype(np.float32), "b_s"),
                             init(bz, "b_z"),
                             init(rng.integers(-3000, 3000, size=N).astype(np.int32), "C")]
                    inputs = ["A", "a_s", "a_z", "B", "b_s", "b_z", "C"]
                    y_type = TensorProto.FLOAT
                    if quantized:
                        inits += [init(np.array(0.05, np.float32), "y_s"),
                                  init(np.array(128, np.uint8), "y_z")]
                        inputs += ["y_s", "y_z"]
                        y_type = TensorProto.UINT8
                    node = helper.make_node("QGemm", inputs, ["Y"], domain="com.microsoft",
                                            transA=ta, transB=tb,
                                            alpha=1.0 if quantized else 0.75)
                    graph = helper.make_graph(
                        [node], "g", [helper.make_tensor_value_info("A", tensor_type(at), a.shape)],
                        [helper.make_tensor_value_info("Y", y_type, None)], inits)
                    name = (f"qgemm_ta{ta}_tb{tb}_{'q' if quantized else 'f'}_"
                            f"{np.dtype(at).name}_{np.dtype(bt).name}")
                    made.append(save_case(out, name, graph, {"A": a}))
    for bt in (np.int8, np.uint8):
        a = rng.integers(0, 256, size=(2, M, K)).astype(np.uint8)
        b = random_ints(rng, bt, (K, N))
        inits = [init(b, "B"), init(rng.uniform(0.001, 0.01, size=N).astype(np.float32), "b_s"),
                 init(rng.integers(0, 3, size=N).astype(bt), "b_z"),
                 init(rng.standard_normal(N).astype(np.float32), "bias")]
        node = helper.make_node("MatMulIntegerToFloat",
                                ["A", "B", "a_s", "b_s", "a_z", "b_z", "bias"], ["Y"],
                                domain="com.microsoft")
        graph = helper.make_graph(
            [node], "g",
            [helper.make_tensor_value_info("A", TensorProto.UINT8, a.shape),
             helper.make_tensor_value_info("a_s", TensorProto.FLOAT, []),
             helper.make_tensor_value_info("a_z", TensorProto.UINT8, [])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
        feeds = {"A": a, "a_s": np.array(0.013, np.float32), "a_z": np.array(131, np.uint8)}
        made.append(save_case(out, f"matmul_integer_to_float_{np.dtype(bt).name}", graph, feeds))
    for bt, per_column, extras in ((np.int8, True, True), (np.uint8, False, True),
                                   (np.int8, True, False)):
        a = rng.standard_normal((2, M, K)).astype(np.float32)
        b = random_ints(rng, bt, (K, N))
        count = N if per_column else 1
        shape = [N] if per_column else []
        inits = [init(b, "B"),
                 init(rng.uniform(0.001, 0.01, size=count).astype(np.float32).reshape(shape),
                      "b_s")]
        inputs = ["A", "B", "b_s"]
        if extras:
            zb = (rng.integers(-3, 3, size=count) if bt == np.int8
                  else rng.integers(125, 131, size=count)).astype(bt).reshape(shape)
            inits += [init(zb, "b_z"), init(rng.standard_normal(N).astype(np.float32), "bias")]
            inputs += ["b_z", "bias"]
        node = helper.make_node("DynamicQuantizeMatMul", inputs, ["Y"], domain="com.microsoft")
        graph = helper.make_graph(
            [node], "g", [helper.make_tensor_value_info("A", TensorProto.FLOAT, a.shape)],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
        name = (f"dynamic_quantize_matmul_{np.dtype(bt).name}_"
                f"{'per_column' if per_column else 'per_tensor'}{'' if extras else '_plain'}")
        made.append(save_case(out, name, graph, {"A": a}))
    return made


def main():
    footprint = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="contrib_products_")
    failed = 0
    for d in models(out):
        run = subprocess.run([footprint, "run", "--json", "--data-dir", d,
                              os.path.join(d, "model.onnx")], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"{os.path.basename(d):40s} FAIL {run.stderr.strip()}")
            failed += 1
            continue
        j = json.loads(run.stdout)
        exact = j.get("match") and j.get("max_abs_error") == 0
        failed += 0 if exact else 1
        print(f"{os.path.basename(d):40s} {'exact' if exact else 'DIFFERS'} "
              f"max abs error {j.get('max_abs_error')}")
    print(f"onnxruntime {ort.__version__}; {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
