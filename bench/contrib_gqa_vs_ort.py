#!/usr/bin/env python3
"""onnxruntime's com.microsoft GroupQueryAttention against footprint on single-node models: a
first prompt (separate and packed query/key/value), token generation after a cache that grows
(past length P, present P + 1) and after one buffer of the maximum length (present = past
length), sequences of different lengths in one batch, a later prompt of several tokens, rotary
embeddings inside (halves and interleaved), a local window, softcap, smooth softmax, a given
scale, float32 and float16. seqlens_k and total_sequence_length are initializers (what a model
computes from its attention mask). Each model's inputs and onnxruntime's outputs are written
beside it, then `footprint run --data-dir` compares (output, present_key, present_value) at
rtol 1e-5, atol 1e-6 (float16: 1e-3, 1e-3); prints one line per model and exits 1 unless every
one matches.

    scripts/quant bench/contrib_gqa_vs_ort.py FOOTPRINT [OUT_DIR]
"""
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from ort_cases import check_all, float_tolerances, save_case

HEADS, KV_HEADS, HEAD = 8, 2, 32

CASES = [
    # name, batch, seq, past length (None: no past), seqlens_k, total, attributes, packed
    ("prompt", 2, 7, None, [6, 6], 7, {}, False),
    ("prompt-packed", 2, 7, None, [6, 6], 7, {}, True),
    ("decode-growing", 2, 1, 9, [9, 6], 10, {}, False),
    ("decode-buffer", 2, 1, 16, [8, 5], 9, {}, False),
    ("later-prompt", 1, 3, 5, [7], 8, {}, False),
    ("prompt-rotary", 2, 6, None, [5, 5], 6, {"do_rotary": 1}, False),
    ("decode-rotary-interleaved", 2, 1, 12, [10, 4], 11,
     {"do_rotary": 1, "rotary_interleaved": 1}, False),
    ("packed-rotary-decode", 2, 1, 12, [10, 4], 11, {"do_rotary": 1}, True),
    ("window-softcap", 1, 9, None, [8], 9, {"local_window_size": 3, "softcap": 2.0}, False),
    ("window-decode", 2, 1, 9, [9, 5], 10, {"local_window_size": 4}, False),
    ("smooth-scale-decode", 2, 1, 7, [7, 3], 8, {"smooth_softmax": 1, "scale": 0.3}, False),
]


def case(out, name, batch, seq, past, seqlens, total, attrs, packed, dtype, rng):
    t = TensorProto.FLOAT if dtype == "float32" else TensorProto.FLOAT16
    feeds = {}
    if packed:
        feeds["query"] = rng.standard_normal(
            (batch, seq, (HEADS + 2 * KV_HEADS) * HEAD)).astype(dtype)
    else:
        feeds["query"] = rng.standard_normal((batch, seq, HEADS * HEAD)).astype(dtype)
        feeds["key"] = rng.standard_normal((batch, seq, KV_HEADS * HEAD)).astype(dtype)
        feeds["value"] = rng.standard_normal((batch, seq, KV_HEADS * HEAD)).astype(dtype)
    if past is not None:
        feeds["past_key"] = rng.standard_normal((batch, KV_HEADS, past, HEAD)).astype(dtype)
        feeds["past_value"] = rng.standard_normal((batch, KV_HEADS, past, HEAD)).astype(dtype)
    inits = [numpy_helper.from_array(np.array(seqlens, dtype=np.int32), "seqlens_k"),
             numpy_helper.from_array(np.array(total, dtype=np.int32), "total_sequence_length")]
    names = ["query", "" if packed else "key", "" if packed else "value",
             "past_key" if past is not None else "", "past_value" if past is not None else "",
             "seqlens_k", "total_sequence_length"]
    if attrs.get("do_rotary"):
        half = HEAD // 2
        angles = np.arange(32)[:, None] / (10000.0 ** (np.arange(half) / half))
        inits += [numpy_helper.from_array(np.cos(angles).astype(dtype), "cos_cache"),
                  numpy_helper.from_array(np.sin(angles).astype(dtype), "sin_cache")]
        names += ["cos_cache", "sin_cache"]
    node = helper.make_node("GroupQueryAttention", names,
                            ["output", "present_key", "present_value"], domain="com.microsoft",
                            num_heads=HEADS, kv_num_heads=KV_HEADS, **attrs)
    present = max(total, past or 0)
    graph = helper.make_graph(
        [node], "gqa",
        [helper.make_tensor_value_info(k, t, list(v.shape)) for k, v in feeds.items()],
        [helper.make_tensor_value_info("output", t, [batch, seq, HEADS * HEAD]),
         helper.make_tensor_value_info("present_key", t, [batch, KV_HEADS, present, HEAD]),
         helper.make_tensor_value_info("present_value", t, [batch, KV_HEADS, present, HEAD])],
        inits)
    return save_case(out, f"{name}-{dtype}", graph, feeds)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    footprint = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="gqa_vs_ort_")
    rng = np.random.default_rng(11)
    folders = ((case(out, *c, dtype, rng), *float_tolerances(dtype))
               for c in CASES for dtype in ("float32", "float16"))
    sys.exit(check_all(footprint, folders, ["--check-shapes"]))


if __name__ == "__main__":
    main()
