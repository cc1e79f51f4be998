"""QLinearMatMul's scales as opset 21 allows them: float32, float16 or bfloat16 (all three of one
dtype). The product requantized with float16 scales is the one numpy's reading of the spec gives
(saturating), and a scale of 0 is refused naming the input."""

import numpy as np
import pytest

import footprint


def qlinear_matmul(scale_dtype, a, b, scales, zeros):
    b_ = footprint.GraphBuilder(opset=21)
    ins = [b_.input("a", "uint8", list(a.shape)),
           b_.input("sa", scale_dtype, []), b_.input("za", "uint8", []),
           b_.input("b", "uint8", list(b.shape)),
           b_.input("sb", scale_dtype, []), b_.input("zb", "uint8", []),
           b_.input("sy", scale_dtype, []), b_.input("zy", "uint8", [])]
    (y,) = b_.op("QLinearMatMul", ins, {}, outputs=1)
    b_.output(y, "y")
    sa, sb, sy = (np.array(s, dtype=scale_dtype) for s in scales)
    za, zb, zy = (np.array(z, dtype=np.uint8) for z in zeros)
    feeds = {"a": a, "sa": sa, "za": za, "b": b, "sb": sb, "zb": zb, "sy": sy, "zy": zy}
    return footprint.Session(b_.to_model()).run(feeds)["y"]


def reference(a, b, scales, zeros):
    sa, sb, sy = (np.float32(s) for s in scales)
    za, zb, zy = zeros
    acc = (a.astype(np.int32) - za) @ (b.astype(np.int32) - zb)
    y = np.rint(acc.astype(np.float32) * (sa * sb / sy)) + zy
    return np.clip(y, 0, 255).astype(np.uint8)


def test_float16_scales_requantize_as_float32_ones_of_the_same_values():
    rng = np.random.default_rng(7)
    a = rng.integers(0, 256, (6, 40), dtype=np.uint8)
    b = rng.integers(0, 256, (40, 24), dtype=np.uint8)
    # Values float16 holds exactly, so both dtypes scale by the same numbers.
    scales = (np.float16(0.0625), np.float16(0.03125), np.float16(4.0))
    zeros = (128, 120, 100)
    y16 = qlinear_matmul("float16", a, b, scales, zeros)
    y32 = qlinear_matmul("float32", a, b, scales, zeros)
    want = reference(a, b, scales, zeros)
    assert np.array_equal(y16, want)
    assert np.array_equal(y32, want)
    assert len(np.unique(want)) > 20, "a varied output, not a saturated one"


def test_a_zero_float16_scale_is_refused_naming_the_input():
    a = np.zeros((2, 3), dtype=np.uint8)
    b = np.zeros((3, 2), dtype=np.uint8)
    with pytest.raises(footprint.ModelError, match="b_scale.*positive"):
        qlinear_matmul("float16", a, b, (1.0, 0.0, 1.0), (0, 0, 0))
