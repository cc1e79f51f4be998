#!/usr/bin/env python3
"""onnxruntime's com.microsoft RotaryEmbedding against footprint on single-node models: 3-D
([batch, sequence, hidden]) and 4-D ([batch, heads, sequence, head]) inputs, interleaved pairs
or halves, position_ids per token or one element (the first position), num_heads left out of a
3-D input, a partial rotation (rotary_embedding_dim), each in float32 and float16. Each model's
inputs and onnxruntime's output are written beside it, then `footprint run --data-dir` compares
at rtol 0, atol 0; prints one line per model and exits 1 unless every output is onnxruntime's
bit for bit.

    scripts/quant bench/contrib_rotary_vs_ort.py FOOTPRINT [OUT_DIR]
"""
import itertools
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper

from ort_cases import check_all, save_case

BATCH, SEQUENCE, HEADS, HEAD, POSITIONS = 2, 6, 4, 32, 50
FORMS = ("positions", "first position", "no num_heads", "partial")


def case(out, transposed, interleaved, form, dtype, rng):
    rotary = HEAD // 2 if form == "partial" else HEAD
    half = rotary // 2
    angles = np.arange(POSITIONS)[:, None] / (10000.0 ** (np.arange(half) / half))
    cos, sin = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    shape = ((BATCH, HEADS, SEQUENCE, HEAD) if transposed
             else (BATCH, SEQUENCE, HEADS * HEAD))
    x = rng.standard_normal(shape).astype(dtype)
    pos = (np.array([9], dtype=np.int64) if form == "first position"
           else rng.integers(0, POSITIONS, size=(BATCH, SEQUENCE)).astype(np.int64))
    attrs = {"interleaved": interleaved}
    if form != "no num_heads":
        attrs["num_heads"] = HEADS
    if form == "partial":
        attrs["rotary_embedding_dim"] = rotary
    t = TensorProto.FLOAT if dtype == "float32" else TensorProto.FLOAT16
    feeds = {"x": x, "pos": pos, "cos": cos, "sin": sin}
    inputs = [helper.make_tensor_value_info(k, TensorProto.INT64 if k == "pos" else t,
                                            list(v.shape)) for k, v in feeds.items()]
    node = helper.make_node("RotaryEmbedding", list(feeds), ["y"], domain="com.microsoft",
                            **attrs)
    graph = helper.make_graph([node], "rotary", inputs,
                              [helper.make_tensor_value_info("y", t, list(shape))])
    name = f"{'4d' if transposed else '3d'}-{'interleaved' if interleaved else 'halves'}-" \
           f"{form.replace(' ', '_')}-{dtype}"
    return name, save_case(out, name, graph, feeds)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    footprint = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="rotary_vs_ort_")
    rng = np.random.default_rng(5)
    folders = ((case(out, transposed, interleaved, form, dtype, rng)[1], 0, 0)
               for transposed, interleaved, form, dtype in itertools.product(
                   (False, True), (0, 1), FORMS, ("float32", "float16"))
               if not (form == "no num_heads" and transposed))  # a 4-D input names its heads
    sys.exit(check_all(footprint, folders, same="bit for bit"))


if __name__ == "__main__":
    main()
