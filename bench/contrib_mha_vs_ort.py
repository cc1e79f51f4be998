#!/usr/bin/env python3
"""onnxruntime's com.microsoft MultiHeadAttention against footprint on single-node models:
query/key/value [batch, sequence, hidden] with and without bias, cross-attention (other key
lengths; key/value already [batch, heads, length, head]), past and
present, unidirectional, key_padding_mask as lengths, [batch, total] and [batch, sequence,
total], attention_bias, a given scale, float32 and float16, with and without present outputs.
(onnxruntime's CPU kernel runs neither packed QKV nor packed KV: python/tests/test_contrib_transformer.py
holds those forms to the same values unpacked.)
Each model's inputs and onnxruntime's outputs are written beside it, then `footprint run
--data-dir` compares at rtol 1e-5, atol 1e-6 (float16: 1e-3, 1e-3); prints one line per model
and exits 1 unless every one matches.

    scripts/quant bench/contrib_mha_vs_ort.py FOOTPRINT [OUT_DIR]
"""
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper

from ort_cases import check_all, float_tolerances, save_case, zero_one_mask

HEADS, HEAD = 4, 16
D = HEADS * HEAD

# name, batch, seq, kv length, past length, layout, attributes, extras
CASES = [
    ("self", 2, 5, 5, 0, "bsd", {}, ()),
    ("self-bias", 2, 5, 5, 0, "bsd", {}, ("bias",)),
    ("cross", 2, 3, 7, 0, "bsd", {}, ("bias",)),
    ("cross-bnsh", 2, 3, 7, 0, "bnsh", {}, ()),
    ("decoder-past", 2, 1, 1, 6, "bsd", {"unidirectional": 1}, ("bias", "present")),
    ("prompt-causal", 1, 6, 6, 0, "bsd", {"unidirectional": 1}, ("present",)),
    ("lengths", 2, 5, 5, 0, "bsd", {}, ("lengths",)),
    ("mask-2d", 2, 5, 5, 0, "bsd", {}, ("mask2d",)),
    ("mask-3d", 2, 5, 5, 0, "bsd", {}, ("mask3d",)),
    ("attention-bias-scale", 2, 5, 5, 3, "bsd", {"scale": 0.2}, ("bias_add", "present")),
]


def case(out, name, batch, seq, kv_len, past, layout, attrs, extras, dtype, rng):
    t = TensorProto.FLOAT if dtype == "float32" else TensorProto.FLOAT16
    total = past + kv_len
    feeds, names = {}, []
    rand = lambda *s: rng.standard_normal(s).astype(dtype)  # noqa: E731
    if layout == "qkv":
        feeds["query"] = rand(batch, seq, HEADS, 3, HEAD)
        names = ["query", "", ""]
    else:
        feeds["query"] = rand(batch, seq, D)
        if layout == "kv":
            feeds["key"] = rand(batch, kv_len, HEADS, 2, HEAD)
            names = ["query", "key", ""]
        elif layout == "bnsh":
            feeds["key"] = rand(batch, HEADS, kv_len, HEAD)
            feeds["value"] = rand(batch, HEADS, kv_len, HEAD)
            names = ["query", "key", "value"]
        else:
            feeds["key"] = rand(batch, kv_len, D)
            feeds["value"] = rand(batch, kv_len, D)
            names = ["query", "key", "value"]
    names += ["", "", "", "", ""]
    if "bias" in extras:
        feeds["bias"] = rand(3 * D)
        names[3] = "bias"
    if "lengths" in extras:
        feeds["mask"] = np.array([3, 5][:batch], dtype=np.int32)
        names[4] = "mask"
    if "mask2d" in extras:
        feeds["mask"] = zero_one_mask(rng, (batch, total))
        names[4] = "mask"
    if "mask3d" in extras:
        feeds["mask"] = zero_one_mask(rng, (batch, seq, total))
        names[4] = "mask"
    if "bias_add" in extras:
        feeds["attention_bias"] = rand(1, HEADS, seq, total)
        names[5] = "attention_bias"
    if past:
        feeds["past_key"] = rand(batch, HEADS, past, HEAD)
        feeds["past_value"] = rand(batch, HEADS, past, HEAD)
        names[6], names[7] = "past_key", "past_value"
    while names and names[-1] == "":
        names.pop()
    outputs = ["output"] + (["present_key", "present_value"] if "present" in extras else [])
    node = helper.make_node("MultiHeadAttention", names, outputs, domain="com.microsoft",
                            num_heads=HEADS, **attrs)
    graph = helper.make_graph(
        [node], "mha",
        [helper.make_tensor_value_info(k, TensorProto.INT32 if k == "mask" else t, list(v.shape))
         for k, v in feeds.items()],
        [helper.make_tensor_value_info(o, t, None) for o in outputs])
    return save_case(out, f"{name}-{dtype}", graph, feeds)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    footprint = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="mha_vs_ort_")
    rng = np.random.default_rng(13)
    folders = ((case(out, *c, dtype, rng), *float_tolerances(dtype))
               for c in CASES for dtype in ("float32", "float16"))
    sys.exit(check_all(footprint, folders, ["--check-shapes"]))


if __name__ == "__main__":
    main()
