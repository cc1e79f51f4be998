"""MeanVarianceNormalization against numpy over its default and other axes, and MelWeightMatrix's
filters: triangles that rise to 1 and fall, one row per spectrogram bin. (Their ONNX node tests
run in the C++ conformance suite.)"""

import numpy as np
import pytest

import footprint


def run(op, inputs, attrs, feeds=None):
    b = footprint.GraphBuilder(opset=17)
    vs = [b.input(f"i{k}", a.dtype, list(a.shape)) if feeds is None else b.const(a)
          for k, a in enumerate(inputs)]
    (y,) = b.op(op, vs, attrs)
    b.output(y, "y")
    return footprint.Session(b.to_model()).run(
        {f"i{k}": a for k, a in enumerate(inputs)} if feeds is None else {})["y"]


@pytest.mark.parametrize("axes", [None, [1], [0, 1, 2, 3], [-1, -2]])
def test_mean_variance_normalization_matches_numpy(axes):
    x = np.random.default_rng(3).standard_normal((2, 3, 4, 5)).astype(np.float32) * 3 + 1
    got = run("MeanVarianceNormalization", [x], {} if axes is None else {"axes": axes})
    a = tuple(axes or [0, 2, 3])
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=a, keepdims=True)
    sd = np.sqrt((x64 ** 2).mean(axis=a, keepdims=True) - mean ** 2)
    np.testing.assert_allclose(got, (x64 - mean) / (sd + 1e-9), rtol=1e-5, atol=1e-5)


def test_mel_weight_matrix_holds_triangular_filters():
    inputs = [np.array(8, dtype=np.int64), np.array(64, dtype=np.int64),
              np.array(8000, dtype=np.int64), np.array(0.0, dtype=np.float32),
              np.array(4000.0, dtype=np.float32)]
    w = run("MelWeightMatrix", inputs, {}, feeds={})
    assert w.shape == (33, 8) and w.dtype == np.float32
    assert np.all(w >= 0) and np.all(w <= 1)
    for i in range(8):
        col = w[:, i]
        assert col.max() == 1.0, i  # each filter peaks at its centre bin
        top = int(np.argmax(col))
        assert np.all(np.diff(col[:top + 1]) >= 0) and np.all(np.diff(col[top:]) <= 0), i
    # centres rise with the filter index (the mel scale spreads them apart)
    assert list(np.argmax(w, axis=0)) == sorted(np.argmax(w, axis=0))
