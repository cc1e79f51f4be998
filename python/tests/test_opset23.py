"""Opset 23's RMSNormalization and RotaryEmbedding (issue 39) as a Llama block uses them: built
with footprint.GraphBuilder, run by footprint.Session against numpy's reading of the ONNX spec
(ONNX's own node tests of both ops run in Conformance.Opset23OpsPassTheNewerOnnxNodeTests), in
float32 and float16, and the bad inputs a one-line error names."""

import numpy as np
import pytest

import footprint

HEADS, HEAD, SEQ, BATCH = 4, 16, 6, 2


def rms_norm(x, scale, axis=-1, eps=1e-5):
    x64 = x.astype(np.float64)
    axes = tuple(range(axis % x.ndim, x.ndim))
    return x64 / np.sqrt((x64 * x64).mean(axis=axes, keepdims=True) + eps) * scale


def rotary(x, cos, sin, pos, rotary_dim, interleaved):
    """x [batch, heads, seq, head]; cos/sin [positions, rotary_dim / 2]; pos [batch, seq]."""
    x = x.astype(np.float64)
    c, s = cos[pos][:, None], sin[pos][:, None]  # [batch, 1, seq, half]
    rot, rest = x[..., :rotary_dim], x[..., rotary_dim:]
    if interleaved:
        a, b = rot[..., 0::2], rot[..., 1::2]
    else:
        a, b = np.split(rot, 2, axis=-1)
    real, imag = a * c - b * s, a * s + b * c
    if interleaved:
        rot = np.stack([real, imag], axis=-1).reshape(rot.shape)
    else:
        rot = np.concatenate([real, imag], axis=-1)
    return np.concatenate([rot, rest], axis=-1)


def caches(rotary_dim, positions=32):
    inv = 1.0 / (10000 ** (np.arange(0, rotary_dim, 2) / rotary_dim))
    angles = np.arange(positions)[:, None] * inv[None]
    return np.cos(angles), np.sin(angles)


def block(dtype, rotary_dim, interleaved):
    """q = rotary(rms_norm(x) reshaped to heads): x [batch, seq, heads * head]."""
    b = footprint.GraphBuilder(opset=23)
    x = b.input("x", dtype, [BATCH, SEQ, HEADS * HEAD])
    pos = b.input("pos", "int64", [BATCH, SEQ])
    scale = b.const(np.linspace(0.5, 1.5, HEADS * HEAD).astype(dtype))
    cos, sin = caches(rotary_dim)
    normed = b.op("RMSNormalization", [x, scale], {"epsilon": 1e-5})[0]
    heads = b.op("Transpose", [b.reshape(normed, b.const(np.array([BATCH, SEQ, HEADS, HEAD])))],
                 {"perm": [0, 2, 1, 3]})[0]
    q = b.op("RotaryEmbedding", [heads, b.const(cos.astype(dtype)), b.const(sin.astype(dtype)),
                                 pos],
             {"rotary_embedding_dim": rotary_dim, "interleaved": int(interleaved)})[0]
    b.output(q, "q")
    return b.to_model()


@pytest.mark.parametrize("rotary_dim,interleaved", [(HEAD, False), (HEAD, True), (8, False)])
@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("float16", 2e-3)])
def test_a_llama_block_matches_the_spec(dtype, tol, rotary_dim, interleaved):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SEQ, HEADS * HEAD)).astype(dtype)
    pos = np.array([[0, 1, 2, 3, 4, 5], [7, 9, 11, 13, 15, 31]], dtype=np.int64)
    model = block(dtype, rotary_dim, interleaved)
    q = footprint.Session(model).run({"x": x, "pos": pos})["q"]
    scale = np.linspace(0.5, 1.5, HEADS * HEAD).astype(dtype).astype(np.float64)
    normed = rms_norm(x, scale).astype(dtype)  # each node's output stored in dtype
    heads = normed.reshape(BATCH, SEQ, HEADS, HEAD).transpose(0, 2, 1, 3)
    cos, sin = (c.astype(dtype).astype(np.float64) for c in caches(rotary_dim))
    want = rotary(heads, cos, sin, pos, rotary_dim, interleaved)
    assert q.dtype == np.dtype(dtype) and q.shape == (BATCH, HEADS, SEQ, HEAD)
    np.testing.assert_allclose(q.astype(np.float64), want, rtol=tol, atol=tol)
    # Counted in the types they are stored in: no float32 copy of a float16 model.
    fig = footprint.analyze(model).to_json()
    assert not [w for w in fig["warnings"] if "will refuse" in w], fig["warnings"]


def test_bad_inputs_are_one_line_errors_naming_the_node():
    model = block("float32", HEAD, False)
    x = np.zeros((BATCH, SEQ, HEADS * HEAD), dtype=np.float32)
    pos = np.zeros((BATCH, SEQ), dtype=np.int64)
    pos[1, 2] = 32  # the caches hold positions 0..31
    with pytest.raises(footprint.FootprintError,
                       match=r"RotaryEmbedding.*position_ids\[8\] = 32 is outside the caches' "
                             r"32 positions") as e:
        footprint.Session(model).run({"x": x, "pos": pos})
    assert "\n" not in str(e.value)
    b = footprint.GraphBuilder(opset=23)
    x = b.input("x", "float32", [1, 3, 10])  # 10 is not 4 heads of one size
    c = b.const(np.zeros((4, 1), dtype=np.float32))
    with pytest.raises(footprint.FootprintError, match=r"X's last axis \(10\) is not num_heads"):
        b.op("RotaryEmbedding", [x, c, c, b.const(np.zeros((1, 3), dtype=np.int64))],
             {"num_heads": 4})
    with pytest.raises(footprint.FootprintError, match=r"rotary_embedding_dim 12 is above"):
        b.op("RotaryEmbedding", [b.input("h", "float32", [1, 2, 3, 8]), c, c],
             {"rotary_embedding_dim": 12})
    with pytest.raises(footprint.FootprintError, match=r"axis 2 is out of range|axis"):
        b.op("RMSNormalization", [b.input("r", "float32", [2, 2]),
                                  b.const(np.ones(2, dtype=np.float32))], {"axis": 2})


def test_models_of_opset_23_are_read_without_the_newer_opset_warning():
    fig = footprint.analyze(block("float32", HEAD, False)).to_json()
    assert not [w for w in fig["warnings"] if "knows opsets" in w], fig["warnings"]


@pytest.mark.parametrize("opset,attrs,inputs,shape", [
    # opset 17: the axis an attribute, default 1
    (17, {"onesided": 1}, 0, [2, 5, 6, 2]),
    # opset 20: the axis an input, default -2 (the last signal axis)
    (20, {"onesided": 1}, 0, [2, 8, 4, 2]),
    (20, {}, 2, [2, 10, 6, 2]),  # dft_length 10 along axis 1, given as input 2
    # opset 20's inverse onesided transform (IRFFT): real, dft_length along the axis
    (20, {"onesided": 1, "inverse": 1}, 1, [2, 8, 10, 1]),
])
def test_dft_reads_its_axis_as_its_opset_defines_it(opset, attrs, inputs, shape):
    b = footprint.GraphBuilder(opset=opset)
    x = b.input("x", "float32", [2, 8, 6, 1])
    args = [x]
    if inputs >= 1:
        args.append(b.const(np.array(10, dtype=np.int64)))
    if inputs >= 2:
        args.append(b.const(np.array(1, dtype=np.int64)))
    y = b.op("DFT", args, attrs)[0]
    assert y.shape == "[" + ",".join(map(str, shape)) + "]"


def attention_ref(q, k, v, past_k=None, past_v=None, causal=False, softcap=0.0):
    """The current ONNX spec (and onnxruntime 1.32) on 4-D Q [b, hq, s, d], K/V [b, hkv, s, d]:
    grouped heads, the cache before the keys, softcap before the causal mask."""
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    if past_k is not None:
        k = np.concatenate([past_k.astype(np.float64), k], axis=2)
        v = np.concatenate([past_v.astype(np.float64), v], axis=2)
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if softcap:
        s = softcap * np.tanh(s / softcap)
    if causal:
        past = k.shape[2] - q.shape[2]
        i, j = np.arange(q.shape[2])[:, None], np.arange(k.shape[2])[None]
        s = np.where(j <= i + past, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v, k[:, ::group], v[:, ::group]


@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("float16", 2e-3)])
def test_attention_decodes_with_grouped_heads_a_cache_and_the_causal_mask(dtype, tol):
    """A GQA decode step as exporters write it at opset 23: 3-D Q, K and V (8 query heads over
    2 key/value heads), a 5-token cache, 3 new tokens, causal, softcap."""
    rng = np.random.default_rng(0)
    b_, hq, hkv, d, past, s = 2, 8, 2, 16, 5, 3
    q = rng.standard_normal((b_, s, hq * d)).astype(dtype)
    k = rng.standard_normal((b_, s, hkv * d)).astype(dtype)
    v = rng.standard_normal((b_, s, hkv * d)).astype(dtype)
    pk = rng.standard_normal((b_, hkv, past, d)).astype(dtype)
    pv = rng.standard_normal((b_, hkv, past, d)).astype(dtype)
    b = footprint.GraphBuilder(opset=23)
    ins = [b.input(n, dtype, list(a.shape)) for n, a in
           (("q", q), ("k", k), ("v", v))]
    caches = [b.input(n, dtype, list(a.shape)) for n, a in (("pk", pk), ("pv", pv))]
    y, present_k, present_v = b.op("Attention", ins + [None] + caches,
                                   {"q_num_heads": hq, "kv_num_heads": hkv, "is_causal": 1,
                                    "softcap": 3.0}, outputs=3)
    for var, name in ((y, "y"), (present_k, "present_k"), (present_v, "present_v")):
        b.output(var, name)
    got = footprint.Session(b.to_model()).run({"q": q, "k": k, "v": v, "pk": pk, "pv": pv})
    heads = lambda t, h: t.reshape(b_, s, h, d).transpose(0, 2, 1, 3)  # noqa: E731
    want_y, want_k, want_v = attention_ref(heads(q, hq), heads(k, hkv), heads(v, hkv), pk, pv,
                                           causal=True, softcap=3.0)
    want_y = want_y.transpose(0, 2, 1, 3).reshape(b_, s, hq * d)
    assert got["y"].dtype == np.dtype(dtype) and got["y"].shape == (b_, s, hq * d)
    np.testing.assert_allclose(got["y"].astype(np.float64), want_y, rtol=tol, atol=tol)
    np.testing.assert_array_equal(got["present_k"].astype(np.float64), want_k)  # copies
    np.testing.assert_array_equal(got["present_v"].astype(np.float64), want_v)


def test_attention_bad_inputs_are_one_line_errors_naming_the_node():
    b = footprint.GraphBuilder(opset=23)
    q = b.input("q", "float32", [1, 6, 3, 8])
    k = b.input("k", "float32", [1, 4, 3, 8])  # 6 query heads over 4 key/value heads
    with pytest.raises(footprint.FootprintError, match=r"q heads \(6\) are not a multiple of kv "
                                                       r"heads \(4\)"):
        b.op("Attention", [q, k, k])
    with pytest.raises(footprint.FootprintError, match=r"Attention takes all 3-D or all 4-D"):
        b.op("Attention", [q, b.input("k3", "float32", [1, 3, 32]), k])
    with pytest.raises(footprint.FootprintError, match=r"past_key and past_value are given "
                                                       r"together"):
        b.op("Attention", [q, q, q, None, b.input("pk", "float32", [1, 6, 2, 8])])
