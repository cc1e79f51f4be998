"""com.microsoft's fused transformer pieces that onnxruntime's transformers optimizer writes
(SkipLayerNormalization, SkipSimplifiedLayerNormalization, BiasGelu, FastGelu, Gelu, QuickGelu,
EmbedLayerNormalization, Attention with and without a cache) and SimplifiedLayerNormalization, run by footprint against numpy's reading of onnxruntime's
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
                          np.zeros((1, 1, 2, 2), dtype=np.int32)], {"num_heads": 2})


@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("float16", 3e-3)])
@pytest.mark.parametrize("form", ["prompt", "decode", "chunk bidirectional"])
def test_attention_with_a_cache_matches_the_reference(form, dtype, tol):
    """com.microsoft Attention with past [2, B, N, P, H] and present [2, B, N, P + S, H]: the
    past's keys and values, then the new tokens', and query i sees keys up to P + i when
    unidirectional (onnxruntime's CPU kernel runs float32 only: bench/contrib_attention_vs_ort.py
    holds that to onnxruntime; float16 here to the same arithmetic in float64, rounded once)."""
    rng = np.random.default_rng(21)
    heads, head = 4, 8
    d = heads * head
    seq, past_len = {"prompt": (5, 0), "decode": (1, 6), "chunk bidirectional": (3, 4)}[form]
    causal = form != "chunk bidirectional"
    x = rng.standard_normal((B, seq, d)).astype(dtype)
    w = (rng.standard_normal((d, 3 * d)) / 4).astype(dtype)
    bias = rng.standard_normal(3 * d).astype(dtype)
    past = rng.standard_normal((2, B, heads, past_len, head)).astype(dtype)
    b = footprint.GraphBuilder(opset=17)
    ins = [b.input("x", dtype, list(x.shape)), b.const(w), b.const(bias), None]
    feeds = {"x": x}
    if past_len:
        ins.append(b.input("past", dtype, list(past.shape)))
        feeds["past"] = past
    y, present = b.op("Attention", ins, {"num_heads": heads, "unidirectional": int(causal)},
                      outputs=2, domain=MS)
    b.output(y, "y")
    b.output(present, "present")
    got = footprint.Session(b.to_model()).run(feeds)

    qkv = x.astype(np.float64) @ w.astype(np.float64) + bias.astype(np.float64)
    q, k, v = (qkv[..., i * d:(i + 1) * d] for i in range(3))
    want_y, kh, vh = mha_reference(q, k, v, heads, past[0], past[1], causal=causal)
    assert got["present"].shape == (2, B, heads, past_len + seq, head)
    np.testing.assert_allclose(got["present"][0].astype(np.float64), kh, rtol=tol, atol=tol)
    np.testing.assert_allclose(got["present"][1].astype(np.float64), vh, rtol=tol, atol=tol)
    np.testing.assert_allclose(got["y"].astype(np.float64), want_y, rtol=tol, atol=tol)


def test_attention_cache_forms_it_does_not_run_are_refused():
    x = np.zeros((1, 2, 8), dtype=np.float32)
    w = np.zeros((8, 24), dtype=np.float32)
    past = np.zeros((2, 1, 2, 3, 4), dtype=np.float32)
    with pytest.raises(footprint.FootprintError, match=r"a past needs the present output"):
        run("Attention", [x, w, None, None, past], {"num_heads": 2})
    with pytest.raises(footprint.FootprintError, match=r"sharing one buffer"):
        run("Attention", [x, w, None, None, past], {"num_heads": 2,
                                                    "past_present_share_buffer": 1}, outputs=2)
    with pytest.raises(footprint.FootprintError, match=r"mask_index is int32"):
        run("Attention", [x, w, None, np.ones((1, 2), dtype=np.int32), past], {"num_heads": 2},
            outputs=2)


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


def gqa_reference(q, k, v, past_k, past_v, seqlens, total, heads, kv_heads, present_len,
                  cos=None, sin=None, interleaved=False, window=-1, softcap=0.0, smooth=False,
                  scale=0.0):
    """onnxruntime's GroupQueryAttention (CPU, 1.32) in float64: the present caches (past rows,
    then the new tokens, rotated where cos/sin are given, zeros after), then each query row's
    causal attention over its window of the present keys. k None: q packs query, key, value."""
    b_, s_, _ = q.shape
    if k is None:
        head = q.shape[2] // (heads + 2 * kv_heads)
        q, k, v = (q[..., :heads * head], q[..., heads * head:(heads + kv_heads) * head],
                   q[..., (heads + kv_heads) * head:])
    head = q.shape[2] // heads
    q = q.astype(np.float64).reshape(b_, s_, heads, head)
    k = k.astype(np.float64).reshape(b_, s_, kv_heads, head)
    v = v.astype(np.float64).reshape(b_, s_, kv_heads, head)
    first = s_ == total
    past = [0 if first else seqlens[b] + 1 - s_ for b in range(b_)]

    def turn(x, pos):
        if cos is None:
            return x
        half = cos.shape[1]
        c, sn = cos[pos].astype(np.float64), sin[pos].astype(np.float64)
        i = np.arange(half)
        a_i, b_i = (2 * i, 2 * i + 1) if interleaved else (i, i + half)
        y = x.copy()
        y[..., a_i] = x[..., a_i] * c - x[..., b_i] * sn
        y[..., b_i] = x[..., a_i] * sn + x[..., b_i] * c
        return y

    pk = np.zeros((b_, kv_heads, present_len, head))
    pv = np.zeros_like(pk)
    out = np.zeros((b_, s_, heads, head))
    for b in range(b_):
        p = past[b]
        if past_k is not None:
            pk[b, :, :p] = past_k[b, :, :p]
            pv[b, :, :p] = past_v[b, :, :p]
        for s in range(s_):
            pk[b, :, p + s] = turn(k[b, s], p + s)
            pv[b, :, p + s] = v[b, s]
        for h in range(heads):
            g = h // (heads // kv_heads)
            for s in range(s_):
                causal = p + s + 1
                start = causal - window if 0 < window < causal else 0
                x = pk[b, g, start:causal] @ turn(q[b, s, h], p + s)
                x *= scale or 1 / math.sqrt(head)
                if softcap > 0:
                    x = softcap * np.tanh(x / softcap)
                top = max(x.max(), 0.0) if smooth else x.max()
                e = np.exp(x - top)
                w = e / (e.sum() + (np.exp(-top) if smooth else 0))
                out[b, s, h] = w @ pv[b, g, start:causal]
    return out.reshape(b_, s_, heads * head), pk, pv


@pytest.mark.parametrize("form", ["prompt", "packed prompt", "decode", "decode in a buffer",
                                  "later prompt", "rotary prompt", "rotary decode interleaved",
                                  "window softcap", "smooth scale decode"])
def test_group_query_attention_matches_onnxruntimes_semantics(form):
    rng = np.random.default_rng(9)
    heads, kv_heads, head = 4, 2, 16
    batch, seq, past_len, seqlens, total = {
        "prompt": (2, 5, None, [4, 4], 5), "packed prompt": (2, 5, None, [4, 4], 5),
        "decode": (2, 1, 6, [6, 3], 7), "decode in a buffer": (2, 1, 12, [6, 3], 7),
        "later prompt": (1, 3, 4, [6], 7), "rotary prompt": (2, 4, None, [3, 3], 4),
        "rotary decode interleaved": (2, 1, 8, [7, 2], 8), "window softcap": (1, 7, None, [6], 7),
        "smooth scale decode": (2, 1, 5, [5, 1], 6)}[form]
    attrs = {"num_heads": heads, "kv_num_heads": kv_heads}
    extra = {}
    if "rotary" in form:
        attrs["do_rotary"] = 1
        angles = np.arange(16)[:, None] / (10000.0 ** (np.arange(head // 2) / (head // 2)))
        extra = {"cos": np.cos(angles).astype(np.float32), "sin": np.sin(angles).astype(np.float32)}
        if "interleaved" in form:
            attrs["rotary_interleaved"] = 1
            extra["interleaved"] = True
    if form == "window softcap":
        attrs.update(local_window_size=3, softcap=2.0)
        extra.update(window=3, softcap=2.0)
    if form == "smooth scale decode":
        attrs.update(smooth_softmax=1, scale=0.3)
        extra.update(smooth=True, scale=0.3)
    packed = form == "packed prompt"
    width = (heads + 2 * kv_heads) * head if packed else heads * head
    q = rng.standard_normal((batch, seq, width)).astype(np.float32)
    k = None if packed else rng.standard_normal((batch, seq, kv_heads * head)).astype(np.float32)
    v = None if packed else rng.standard_normal((batch, seq, kv_heads * head)).astype(np.float32)
    past = None if past_len is None else [
        rng.standard_normal((batch, kv_heads, past_len, head)).astype(np.float32)
        for _ in range(2)]
    b = footprint.GraphBuilder(opset=17)
    ins = [b.input("q", np.float32, list(q.shape)),
           None if packed else b.input("k", np.float32, list(k.shape)),
           None if packed else b.input("v", np.float32, list(v.shape)),
           None if past is None else b.input("pk", np.float32, list(past[0].shape)),
           None if past is None else b.input("pv", np.float32, list(past[1].shape)),
           b.const(np.array(seqlens, dtype=np.int32)), b.const(np.array(total, dtype=np.int32))]
    if "cos" in extra:
        ins += [b.const(extra["cos"]), b.const(extra["sin"])]
    outs = b.op("GroupQueryAttention", ins, attrs, outputs=3, domain=MS)
    for i, o in enumerate(outs):
        b.output(o, f"o{i}")
    feeds = {"q": q}
    if not packed:
        feeds.update(k=k, v=v)
    if past is not None:
        feeds.update(pk=past[0], pv=past[1])
    got = footprint.Session(b.to_model()).run(feeds)
    present_len = max(total, past_len or 0)
    want = gqa_reference(q, k, v, None if past is None else past[0],
                         None if past is None else past[1], seqlens, total, heads, kv_heads,
                         present_len, **extra)
    for i, w in enumerate(want):
        assert got[f"o{i}"].shape == w.shape
        np.testing.assert_allclose(got[f"o{i}"].astype(np.float64), w, rtol=2e-5, atol=2e-6)


def test_group_query_attention_refuses_what_it_does_not_run_yet():
    b = footprint.GraphBuilder(opset=17)
    q = b.input("q", np.float32, [1, 2, 64])
    lens = b.const(np.array([1], dtype=np.int32))
    total = b.const(np.array(2, dtype=np.int32))
    with pytest.raises(footprint.FootprintError, match="input position_ids is not supported yet"):
        b.op("GroupQueryAttention", [q, q, q, None, None, lens, total, None, None, lens],
             {"num_heads": 4, "kv_num_heads": 4}, outputs=3, domain=MS)
    with pytest.raises(footprint.FootprintError, match="not a multiple of kv_num_heads"):
        b.op("GroupQueryAttention", [q, q, q, None, None, lens, total],
             {"num_heads": 4, "kv_num_heads": 3}, outputs=3, domain=MS)
    # seqlens_k says 9 tokens were cached before this one, the past holds 4.
    b = footprint.GraphBuilder(opset=17)
    q = b.input("q", np.float32, [1, 1, 64])
    past = b.input("p", np.float32, [1, 4, 4, 16])
    outs = b.op("GroupQueryAttention",
                [q, q, q, past, past, b.const(np.array([9], dtype=np.int32)),
                 b.const(np.array(10, dtype=np.int32))],
                {"num_heads": 4, "kv_num_heads": 4}, outputs=3, domain=MS)
    for i, o in enumerate(outs):
        b.output(o, f"o{i}")
    x = np.zeros((1, 1, 64), dtype=np.float32)
    with pytest.raises(footprint.FootprintError, match=r"seqlens_k\[0\] = 9 does not fit"):
        footprint.Session(b.to_model()).run({"q": x, "p": np.zeros((1, 4, 4, 16), np.float32)})


def mha_reference(q, k, v, heads, past_k=None, past_v=None, causal=False, scale=None):
    """MultiHeadAttention in float64: q [B, S, N H], k and v [B, L, N H]; the past's rows before
    the new keys; a causal mask at onnxruntime's -10000."""
    b_, s_, d = q.shape
    head = d // heads
    split = lambda x: x.astype(np.float64).reshape(x.shape[0], x.shape[1], heads, -1).transpose(
        0, 2, 1, 3)  # noqa: E731
    qh, kh, vh = split(q), split(k), split(v)
    if past_k is not None:
        kh = np.concatenate([past_k.astype(np.float64), kh], axis=2)
        vh = np.concatenate([past_v.astype(np.float64), vh], axis=2)
    scores = qh @ kh.transpose(0, 1, 3, 2) * (scale or 1 / math.sqrt(head))
    total, past = kh.shape[2], kh.shape[2] - k.shape[1]
    if causal:
        later = np.arange(total)[None, :] > (past + np.arange(s_))[:, None]
        scores = scores + np.where(later, -10000.0, 0.0)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return (w @ vh).transpose(0, 2, 1, 3).reshape(b_, s_, -1), kh, vh


@pytest.mark.parametrize("form", ["bsd", "packed qkv", "packed kv", "past causal"])
def test_multihead_attention_forms_match_the_reference(form):
    rng = np.random.default_rng(12)
    heads, head = 4, 8
    b_, s_, l_ = 2, 5, (5 if form == "packed qkv" else 6)
    q = rng.standard_normal((b_, s_, heads * head)).astype(np.float32)
    k = rng.standard_normal((b_, l_, heads * head)).astype(np.float32)
    v = rng.standard_normal((b_, l_, heads * head)).astype(np.float32)
    past = [rng.standard_normal((b_, heads, 3, head)).astype(np.float32) for _ in range(2)]
    attrs = {"num_heads": heads}
    outputs = 1
    if form == "bsd":
        inputs = [q, k, v]
    elif form == "packed qkv":
        k, v = k[:, :s_], v[:, :s_]
        parts = [x.reshape(b_, s_, heads, 1, head) for x in (q, k, v)]
        inputs = [np.concatenate(parts, axis=3)]
    elif form == "packed kv":
        parts = [x.reshape(b_, l_, heads, 1, head) for x in (k, v)]
        inputs = [q, np.concatenate(parts, axis=3)]
    else:
        inputs = [q, k, v, None, None, None, past[0], past[1]]
        attrs["unidirectional"] = 1
        outputs = 3
    got = run("MultiHeadAttention", inputs, attrs, outputs=outputs)
    want = mha_reference(q, k, v, heads, *(past if form == "past causal" else [None, None]),
                         causal=form == "past causal")
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.astype(np.float64), w, rtol=1e-5, atol=1e-5)
