#!/usr/bin/env python3
"""onnxruntime's com.microsoft Attention against footprint on single-node models: input
[batch, sequence, hidden] projected by one weight matrix (with and without bias,
qkv_hidden_sizes), then with and without a key/value cache: past [2, batch, heads, past, head] and
present [2, batch, heads, past + sequence, head], unidirectional (a prompt, a decoding step),
mask_index as end positions [batch], [batch, total] and [batch, sequence, total] 0/1 masks,
attention_bias (without a past: onnxruntime takes not both), a given scale and mask_filter_value. float32 (onnxruntime's CPU kernel runs
no other type for this op). Each model's inputs and onnxruntime's outputs are written beside it,
then `footprint run --data-dir --check-shapes` compares at rtol 1e-5, atol 1e-6; prints one
line per model and exits 1 unless every one matches.

    scripts/quant bench/contrib_attention_vs_ort.py FOOTPRINT [OUT_DIR]
"""
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper

from ort_cases import check_all, float_tolerances, save_case, zero_one_mask

HEADS, HEAD = 4, 16
D = HEADS * HEAD

# name, batch, seq, past length, attributes, extras
CASES = [
    ("plain", 2, 5, 0, {}, ("bias",)),
    ("no-bias", 2, 5, 0, {}, ()),
    ("hidden-sizes", 2, 5, 0, {"qkv_hidden_sizes": [D, D, D // 2]}, ("bias",)),
    ("prompt-present", 2, 6, 0, {"unidirectional": 1}, ("bias", "present")),
    ("decode-past", 2, 1, 7, {"unidirectional": 1}, ("bias", "present")),
    ("chunk-past", 1, 3, 5, {"unidirectional": 1}, ("bias", "present")),
    ("past-bidirectional", 2, 2, 4, {}, ("bias", "present")),
    ("past-mask-2d", 2, 1, 6, {"unidirectional": 1}, ("bias", "present", "mask2d")),
    ("past-mask-3d", 2, 3, 4, {}, ("bias", "present", "mask3d")),
    ("end-positions", 2, 5, 0, {}, ("bias", "lengths")),
    ("past-end-positions", 2, 2, 5, {"unidirectional": 1}, ("bias", "present", "lengths")),
    ("attention-bias-scale", 2, 3, 0, {"scale": 0.2, "mask_filter_value": -1000.0},
     ("bias", "present", "bias_add", "mask2d")),
]


def case(out, name, batch, seq, past, attrs, extras, dtype, rng):
    t = TensorProto.FLOAT
    total = past + seq
    sizes = attrs.get("qkv_hidden_sizes", [D, D, D])
    rand = lambda *s: rng.standard_normal(s).astype(dtype)  # noqa: E731
    feeds = {"input": rand(batch, seq, D)}
    inits = [helper.make_tensor("weights", t, [D, sum(sizes)],
                                (rng.standard_normal((D, sum(sizes))) * 0.2).astype(dtype).ravel())]
    names = ["input", "weights", "", "", "", "", ""]
    if "bias" in extras:
        inits.append(helper.make_tensor("bias", t, [sum(sizes)],
                                        rng.standard_normal(sum(sizes)).astype(dtype)))
        names[2] = "bias"
    if "lengths" in extras:
        feeds["mask_index"] = np.array([total - 1, total][:batch], dtype=np.int32)
        names[3] = "mask_index"
    if "mask2d" in extras:
        feeds["mask_index"] = zero_one_mask(rng, (batch, total))
        names[3] = "mask_index"
    if "mask3d" in extras:
        feeds["mask_index"] = zero_one_mask(rng, (batch, seq, total))
        names[3] = "mask_index"
    if past:
        feeds["past"] = rand(2, batch, HEADS, past, sizes[1] // HEADS)
        names[4] = "past"
    if "bias_add" in extras:
        feeds["attention_bias"] = rand(1, HEADS, seq, total)
        names[5] = "attention_bias"
    while names and names[-1] == "":
        names.pop()
    outputs = ["output"] + (["present"] if "present" in extras else [])
    node = helper.make_node("Attention", names, outputs, domain="com.microsoft",
                            num_heads=HEADS, **attrs)
    graph = helper.make_graph(
        [node], "attention",
        [helper.make_tensor_value_info(k, TensorProto.INT32 if k == "mask_index" else t,
                                       list(v.shape)) for k, v in feeds.items()],
        [helper.make_tensor_value_info(o, t, None) for o in outputs], inits)
    return save_case(out, f"{name}-{dtype}", graph, feeds)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    footprint = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="attention_vs_ort_")
    rng = np.random.default_rng(17)
    folders = ((case(out, *c, "float32", rng), *float_tolerances("float32")) for c in CASES)
    sys.exit(check_all(footprint, folders, ["--check-shapes"]))


if __name__ == "__main__":
    main()
