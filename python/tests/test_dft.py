"""DFT and STFT run by footprint against numpy's fft: real and complex signals, along any signal
axis, cut or padded to dft_length, inverse, onesided; STFT frames with and without a window and
frame_length; and an inverse onesided DFT (IRFFT) refused by name. (The ONNX node tests, 13
cases, run in the C++ conformance suite.)"""

import numpy as np
import pytest

import footprint


def run(op, inputs, attrs, opset=20):
    b = footprint.GraphBuilder(opset=opset)
    vs = []
    for i, a in enumerate(inputs):
        if a is None:
            vs.append(None)
        elif i == 0:
            vs.append(b.input("x", a.dtype, list(a.shape)))
        else:
            vs.append(b.const(a))
    (y,) = b.op(op, vs, attrs)
    b.output(y, "y")
    return footprint.Session(b.to_model()).run({"x": inputs[0]})["y"]


def as_complex(x):
    return x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0]


def split(z):
    return np.stack([z.real, z.imag], axis=-1)


@pytest.mark.parametrize("axis,length", [(1, None), (2, None), (1, 12), (2, 5), (-2, 7)])
@pytest.mark.parametrize("parts,inverse,onesided", [(1, 0, 0), (2, 0, 0), (1, 1, 0), (2, 1, 0),
                                                    (1, 0, 1)])  # onesided: a real signal
def test_dft_matches_numpy(parts, axis, length, inverse, onesided):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 9, 6, parts)).astype(np.float32)
    inputs = [x, None if length is None else np.array(length, dtype=np.int64),
              np.array(axis, dtype=np.int64)]
    got = run("DFT", inputs, {"inverse": inverse, "onesided": onesided})
    signal_axis = axis % 4
    z = as_complex(x.astype(np.float64))
    fft = np.fft.ifft if inverse else np.fft.fft
    want = fft(z, n=length, axis=signal_axis)
    if onesided:
        n = length or x.shape[signal_axis]
        want = np.take(want, range(n // 2 + 1), axis=signal_axis)
    np.testing.assert_allclose(got, split(want), rtol=1e-4, atol=1e-5)


def test_dft_axis_attribute_before_opset_20():
    x = np.random.default_rng(3).standard_normal((3, 8, 1)).astype(np.float32)
    got = run("DFT", [x], {"axis": 1}, opset=17)
    np.testing.assert_allclose(got, split(np.fft.fft(x[..., 0].astype(np.float64), axis=1)),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("window", [False, True])
@pytest.mark.parametrize("onesided", [0, 1])
def test_stft_matches_numpy(window, onesided):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 40, 1)).astype(np.float32)
    n, step = 8, 3
    w = np.hanning(n).astype(np.float32) if window else None
    inputs = [x, np.array(step, dtype=np.int64), w,
              None if window else np.array(n, dtype=np.int64)]
    got = run("STFT", inputs, {"onesided": onesided}, opset=17)
    frames = (40 - n) // step + 1
    segments = np.stack([x[:, f * step:f * step + n, 0] for f in range(frames)], axis=1)
    spectrum = np.fft.fft(segments.astype(np.float64) * (1 if w is None else w), axis=-1)
    if onesided:
        spectrum = spectrum[..., :n // 2 + 1]
    np.testing.assert_allclose(got, split(spectrum), rtol=1e-4, atol=1e-5)


def test_inverse_onesided_dft_is_refused():
    x = np.zeros((1, 5, 2), dtype=np.float32)
    with pytest.raises(footprint.FootprintError, match=r"IRFFT\) is not supported yet"):
        run("DFT", [x, np.array(8, dtype=np.int64)], {"inverse": 1, "onesided": 1})
