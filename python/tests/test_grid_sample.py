"""GridSample run by footprint against PyTorch's grid_sample (Debian's python3-torch), the kernel
ONNX's reference follows: 2-D images sampled nearest, bilinear and bicubic, padded with zeros,
the border or reflections, with and without align_corners, at points inside and beyond [-1, 1];
3-D bilinear; float16; and a grid of the wrong width refused. (The ONNX node tests, 26 cases,
run in the C++ conformance suite.)"""

import numpy as np
import pytest

import footprint

torch = pytest.importorskip("torch")


def run(x, grid, **attrs):
    b = footprint.GraphBuilder(opset=20)
    vx = b.input("x", x.dtype, list(x.shape))
    vg = b.input("g", grid.dtype, list(grid.shape))
    (y,) = b.op("GridSample", [vx, vg], attrs)
    b.output(y, "y")
    return footprint.Session(b.to_model()).run({"x": x, "g": grid})["y"]


def reference(x, grid, mode, padding, align):
    return torch.nn.functional.grid_sample(
        torch.from_numpy(x.astype(np.float64)), torch.from_numpy(grid.astype(np.float64)),
        mode=mode, padding_mode=padding, align_corners=bool(align)).numpy()


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_grid_sample_2d_matches_pytorch(mode, padding, align):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    grid = rng.uniform(-1.4, 1.4, size=(2, 4, 7, 2)).astype(np.float32)
    onnx_mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    got = run(x, grid, mode=onnx_mode, padding_mode=padding, align_corners=align)
    ref_grid = grid
    if mode == "bicubic" and padding == "border":
        # ONNX's reference clamps a point beyond the border into the image before taking its
        # 16 pixels; PyTorch clamps each pixel instead. PyTorch given the clamped points
        # computes ONNX's values.
        ref_grid = grid.astype(np.float64).copy()
        for axis, extent in ((0, 6), (1, 5)):  # x along W, y along H
            n = ref_grid[..., axis]
            pix = (n + 1) / 2 * (extent - 1) if align else ((n + 1) * extent - 1) / 2
            lo, hi = (0.0, extent - 1.0) if align else (-0.5, extent - 0.5)
            pix = np.where((pix < lo) | (pix > hi), np.clip(pix, 0, extent - 1), pix)
            ref_grid[..., axis] = pix * 2 / (extent - 1) - 1 if align else (2 * pix + 1) / extent - 1
    np.testing.assert_allclose(got, reference(x, ref_grid, mode, padding, align), rtol=1e-4,
                               atol=1e-5)


def test_grid_sample_3d_bilinear_and_float16():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    grid = rng.uniform(-1.2, 1.2, size=(1, 2, 3, 4, 3)).astype(np.float32)
    got = run(x, grid, mode="linear", padding_mode="border", align_corners=0)
    np.testing.assert_allclose(got, reference(x, grid, "bilinear", "border", 0), rtol=1e-4,
                               atol=1e-5)
    x2 = rng.standard_normal((1, 2, 4, 4)).astype(np.float16)
    g2 = rng.uniform(-1, 1, size=(1, 3, 3, 2)).astype(np.float16)
    got = run(x2, g2, mode="linear")
    np.testing.assert_allclose(got.astype(np.float64),
                               reference(x2, g2, "bilinear", "zeros", 0), rtol=2e-3, atol=2e-3)


def test_grid_sample_refuses_a_grid_of_the_wrong_width():
    x = np.zeros((1, 1, 4, 4), dtype=np.float32)
    with pytest.raises(footprint.FootprintError, match=r"the grid is \[N, out..., 2\]"):
        run(x, np.zeros((1, 2, 2, 3), dtype=np.float32))
