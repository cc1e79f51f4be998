"""com.microsoft's fused transformer pieces that onnxruntime's transformers optimizer writes
(SkipLayerNormalization, SkipSimplifiedLayerNormalization, BiasGelu, FastGelu, Gelu, QuickGelu,
EmbedLayerNormalization, Attention) and SimplifiedLayerNormalization, run by footprint against numpy's reading of onnxruntime's
contrib op documentation. Whole models fused by the optimizer (the zoo's BERT, GPT-2 and ViT)
are checked against onnxruntime in the quantized zoo's `ortopt` variants."""

import math

import numpy as np
import pytest

import footprint

MS = "com.microsoft"
B, S, H = 2, 5, 64


def run(op, inputs, attrs=None, outputs=1, domain=MS):
    b = footprint.GraphBuilder(opset=17)
    vs = [b.input(f"i{k}", a.dtype, list(a.shape)) if a is not None else None
          for k, a in enumerate(inputs)]
    outs = b.op(op, vs, attrs or {}, outputs=outputs, domain=domain)
    for k, o in enumerate(outs):
        b.output(o, f"o{k}")
    feeds = {f"i{k}": a for k, a in enumerate(inputs) if a is not None}
    got = footprint.Session(b.to_model()).run(feeds)
    return [got[f"o{k}"] for k in range(outputs)]


def erf_gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def tanh_gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


@pytest.mark.parametrize("dtype,tol", [("float32", 2e-5), ("float16", 2e-3)])
def test_skip_layer_norms_and_the_gelus_match_their_definitions(dtype, tol):
    rng = np.random.default_rng(0)
    x, skip = (rng.standard_normal((B, S, H)).astype(dtype) for _ in range(2))
    gamma, beta, bias = (rng.standard_normal(H).astype(dtype) for _ in range(3))
    f = lambda *a: [t.astype(np.float64) for t in a]  # noqa: E731
    x64, skip64, g64, be64, bi64 = f(x, skip, gamma, beta, bias)

    s = x64 + skip64 + bi64
    mean = s.mean(-1, keepdims=True)
    inv = 1 / np.sqrt(((s - mean) ** 2).mean(-1, keepdims=True) + 1e-5)
    y, m, iv, total = run("SkipLayerNormalization", [x, skip, gamma, beta, bias],
                          {"epsilon": 1e-5}, outputs=4)
    np.testing.assert_allclose(y.astype(np.float64), (s - mean) * inv * g64 + be64, rtol=tol,
                               atol=tol)
    np.testing.assert_allclose(m, mean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(iv, inv, rtol=1e-4)
    np.testing.assert_allclose(total.astype(np.float64), s, rtol=tol, atol=tol)

    # RMS form, skip [S, H] repeated over the batch
    s = x64 + skip64[0] + bi64
    inv = 1 / np.sqrt((s * s).mean(-1, keepdims=True) + 1e-6)
    (y,) = run("SkipSimplifiedLayerNormalization", [x, skip[0], gamma, bias], {"epsilon": 1e-6})
    np.testing.assert_allclose(y.astype(np.float64), s * inv * g64, rtol=tol, atol=tol)
    # RMSNormalization's kernel, with the inverse root mean square as output 1
    y, iv = run("SimplifiedLayerNormalization", [x, gamma], {"epsilon": 1e-6}, outputs=2,
                domain="")
    inv = 1 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(y.astype(np.float64), x64 * inv * g64, rtol=tol, atol=tol)
    assert iv.dtype == np.float32 and iv.shape == (B, S, 1)
    np.testing.assert_allclose(iv, inv, rtol=1e-4)

    for op, inputs, want in (("BiasGelu", [x, bias], erf_gelu(x64 + bi64)),
                             ("FastGelu", [x, bias], tanh_gelu(x64 + bi64)),
                             ("FastGelu", [x], tanh_gelu(x64)),
                             ("Gelu", [x], erf_gelu(x64))):
        (y,) = run(op, inputs)
        np.testing.assert_allclose(y.astype(np.float64), want, rtol=tol, atol=tol, err_msg=op)
    (y,) = run("QuickGelu", [x], {"alpha": 1.5})
    np.testing.assert_allclose(y.astype(np.float64), x64 / (1 + np.exp(-1.5 * x64)), rtol=tol,
                               atol=tol)


def test_bad_inputs_are_one_line_errors_naming_the_node():
    x = np.zeros((B, S, H), dtype=np.float32)
    with pytest.raises(footprint.FootprintError,
                       match=r"SkipLayerNormalization.*gamma, beta and bias hold one value per "
                             r"element of the last axis \(64\)"):
        run("SkipLayerNormalization", [x, x, np.ones(63, dtype=np.float32)])
    with pytest.raises(footprint.FootprintError, match=r"skip \(30 elements\) does not repeat"):
        run("SkipLayerNormalization", [x, np.zeros((5, 6), dtype=np.float32),
                                       np.ones(64, dtype=np.float32)])
    with pytest.raises(footprint.FootprintError, match=r"BiasGelu.*the bias holds one value"):
        run("BiasGelu", [x, np.zeros(3, dtype=np.float32)])


def test_bert_embeddings_and_attention_as_onnxruntime_fuses_them():
    """EmbedLayerNormalization then com.microsoft Attention on its mask_index, against numpy
    (the zoo's BERT fused by onnxruntime's optimizer is checked against onnxruntime itself)."""
    rng = np.random.default_rng(1)
    vocab, positions, heads, seq = 30, 16, 4, 6
    ids = rng.integers(0, vocab, (B, seq)).astype(np.int32)
    mask = np.array([[1] * seq, [1] * 4 + [0] * 2], dtype=np.int32)  # right-padded
    words, pos = (rng.standard_normal(s).astype(np.float32) for s in ((vocab, H), (positions, H)))
    gamma, beta = rng.standard_normal(H).astype(np.float32), rng.standard_normal(H).astype(np.float32)
    w = (rng.standard_normal((H, 3 * H)) / 8).astype(np.float32)
    bias = rng.standard_normal(3 * H).astype(np.float32)
    b = footprint.GraphBuilder(opset=17)
    i_ids, i_mask = b.input("ids", "int32", [B, seq]), b.input("mask", "int32", [B, seq])
    c = b.const
    emb, index = b.op("EmbedLayerNormalization",
                      [i_ids, None, c(words), c(pos), None, c(gamma), c(beta), i_mask],
                      {"epsilon": 1e-12}, outputs=2, domain=MS)
    y = b.op("Attention", [emb, c(w), c(bias), index], {"num_heads": heads}, domain=MS)[0]
    b.output(y, "y")
    b.output(index, "index")
    got = footprint.Session(b.to_model()).run({"ids": ids, "mask": mask})

    e = (words[ids] + pos[np.arange(seq)][None]).astype(np.float64)
    e = (e - e.mean(-1, keepdims=True)) / np.sqrt(e.var(-1, keepdims=True) + 1e-12) * gamma + beta
    qkv = e @ w.astype(np.float64) + bias
    d = H // heads
    q, k, v = (qkv[..., i * H:(i + 1) * H].reshape(B, seq, heads, d).transpose(0, 2, 1, 3)
               for i in range(3))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + np.where(mask == 0, -10000.0, 0)[:, None, None]
    p = np.exp(s - s.max(-1, keepdims=True))
    want = ((p / p.sum(-1, keepdims=True)) @ v).transpose(0, 2, 1, 3).reshape(B, seq, H)
    np.testing.assert_array_equal(got["index"], mask.sum(1))
    np.testing.assert_allclose(got["y"], want, rtol=1e-4, atol=1e-4)


def test_embeddings_and_attention_refusals_name_the_node():
    ids = np.array([[0, 3]], dtype=np.int32)
    with pytest.raises(footprint.FootprintError,
                       match=r"EmbedLayerNormalization.*input_ids 3 is outside its table's 3 rows"):
        t = np.ones((3, 4), dtype=np.float32)
        g = np.ones(4, dtype=np.float32)
        run("EmbedLayerNormalization", [ids, None, t, t, None, g, g])
    x = np.zeros((1, 2, 8), dtype=np.float32)
    with pytest.raises(footprint.FootprintError, match=r"num_heads is required"):
        run("Attention", [x, np.zeros((8, 24), dtype=np.float32)])
    with pytest.raises(footprint.FootprintError, match=r"mask_index is int32 \[batch\]"):
        run("Attention", [x, np.zeros((8, 24), dtype=np.float32), None,
                          np.zeros((1, 2, 2), dtype=np.int32)], {"num_heads": 2})


def rotary_reference(x, pos, cos, sin, heads, rotary, interleaved, transposed):
    """onnxruntime's com.microsoft RotaryEmbedding written out in float64: per token and head the
    first `rotary` elements turned in pairs (i, i + rotary / 2), or (2i, 2i + 1) interleaved, by
    the cache rows of the token's position; the rest of the head copied."""
    x64 = x.astype(np.float64)
    if transposed:  # [B, N, S, H] -> [B, S, N, H]
        x64 = x64.transpose(0, 2, 1, 3)
    b, s = x64.shape[:2]
    x64 = x64.reshape(b, s, heads, -1)
    positions = (pos[0] + np.arange(s))[None, :].repeat(b, 0) if pos.size == 1 else pos
    half = rotary // 2
    y = x64.copy()
    for bi in range(b):
        for si in range(s):
            c = cos[positions[bi, si]].astype(np.float64)
            sn = sin[positions[bi, si]].astype(np.float64)
            first = np.arange(half) * 2 if interleaved else np.arange(half)
            second = first + 1 if interleaved else first + half
            a, bv = x64[bi, si, :, first], x64[bi, si, :, second]
            y[bi, si, :, first] = a * c[:, None] - bv * sn[:, None]
            y[bi, si, :, second] = a * sn[:, None] + bv * c[:, None]
    y = y.reshape(b, s, -1)
    if transposed:
        y = y.reshape(b, s, heads, -1).transpose(0, 2, 1, 3)
    return y


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("form", ["positions", "first position", "no num_heads", "partial"])
def test_microsoft_rotary_embedding_matches_onnxruntimes_formula(transposed, interleaved, form):
    rng = np.random.default_rng(3)
    heads, head, positions = 4, 16, 40
    rotary = 8 if form == "partial" else head
    half = rotary // 2
    angles = np.arange(positions)[:, None] / (10000.0 ** (np.arange(half) / half))
    cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    x = rng.standard_normal((B, heads, S, head) if transposed else (B, S, heads * head))
    x = x.astype(np.float32)
    pos = (np.array([7], dtype=np.int64) if form == "first position"
           else rng.integers(0, positions, size=(B, S)).astype(np.int64))
    attrs = {"interleaved": interleaved}
    if form != "no num_heads" or transposed:
        attrs["num_heads"] = heads
    if form == "partial":
        attrs["rotary_embedding_dim"] = rotary
    (y,) = run("RotaryEmbedding", [x, pos, cos, sin], attrs)
    want = rotary_reference(x, pos, cos, sin, heads, rotary, interleaved, transposed)
    np.testing.assert_allclose(y.astype(np.float64), want, rtol=1e-6, atol=1e-6)


def test_microsoft_rotary_embedding_refuses_positions_past_its_caches():
    x = np.zeros((1, S, 32), dtype=np.float32)
    cos = sin = np.zeros((8, 8), dtype=np.float32)
    with pytest.raises(footprint.FootprintError, match="reach past the caches' 8 positions"):
        run("RotaryEmbedding", [x, np.array([4], dtype=np.int64), cos, sin], {"num_heads": 2})
    with pytest.raises(footprint.FootprintError, match="rotary_embedding_dim needs num_heads"):
        run("RotaryEmbedding", [x, np.array([0], dtype=np.int64), cos, sin],
            {"rotary_embedding_dim": 8})
