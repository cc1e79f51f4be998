"""Einsum run by footprint against numpy.einsum: products, transposes, diagonals, sums, implicit
outputs, ellipses that broadcast (right-aligned, of different lengths), size-1 axes that
broadcast, three operands, integer and 16-bit types, and the equations refused by name."""

import numpy as np
import pytest

import footprint

CASES = [
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 2)]),
    ("ij->ji", [(4, 6)]),
    ("ii->i", [(5, 5)]),
    ("bii->b", [(2, 4, 4)]),
    ("ij->", [(3, 7)]),
    ("ij,jk", [(3, 4), (4, 2)]),  # implicit: ik
    ("ba,ca", [(3, 4), (2, 4)]),  # implicit: bc
    ("...ij,...jk->...ik", [(2, 3, 4, 5), (3, 5, 6)]),
    ("...i,i->...", [(2, 3, 4), (4,)]),
    ("i,j->ij", [(3,), (5,)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 8), (2, 3, 5, 8)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,ij->i", [(4, 1), (4, 6)]),  # a size-1 axis broadcasts
    ("...ii->...i", [(2, 3, 3)]),
]


def run(equation, arrays):
    b = footprint.GraphBuilder(opset=17)
    vs = [b.input(f"x{i}", a.dtype, list(a.shape)) for i, a in enumerate(arrays)]
    (y,) = b.op("Einsum", vs, {"equation": equation})
    b.output(y, "y")
    return footprint.Session(b.to_model()).run(
        {f"x{i}": a for i, a in enumerate(arrays)})["y"]


@pytest.mark.parametrize("equation,shapes", CASES)
def test_einsum_matches_numpy(equation, shapes):
    rng = np.random.default_rng(len(equation))
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    want = np.einsum(equation, *[a.astype(np.float64) for a in arrays])
    got = run(equation, arrays)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64, np.float16])
def test_einsum_other_types(dtype):
    rng = np.random.default_rng(4)
    a = rng.integers(-5, 6, size=(3, 4)).astype(dtype)
    b = rng.integers(-5, 6, size=(4, 2)).astype(dtype)
    got = run("ij,jk->ik", [a, b])
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.einsum("ij,jk->ik", a.astype(np.int64),
                                                 b.astype(np.int64)).astype(dtype))


def test_einsum_refuses_what_numpy_refuses():
    x = np.zeros((2, 3), dtype=np.float32)
    with pytest.raises(footprint.FootprintError, match="output letter 'k' is not an input's"):
        run("ij->k", [x])
    with pytest.raises(footprint.FootprintError, match="term 0 has 3 letters for 2 axes"):
        run("ijk->i", [x])
    with pytest.raises(footprint.FootprintError, match="2 terms for 1 inputs"):
        run("ij,jk->ik", [x])
    with pytest.raises(footprint.FootprintError, match="dims 3 and 4 do not broadcast"):
        run("ij,ij->i", [x, np.zeros((2, 4), dtype=np.float32)])
