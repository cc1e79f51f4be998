"""footprint.GraphBuilder: inference, propagation, export; propagated values die with their
handles (the builder issue's memory test, measured from Python)."""

import gc
import tracemalloc

import numpy as np
import pytest

import footprint

VALUE_BYTES = 10000 * 8  # zeros(10000) as float64


def chain(n):
    """a = const(zeros(10000), float64); a = mul(a, a) n times; returns the builder and a."""
    b = footprint.GraphBuilder()
    a = b.const(np.zeros(10000, dtype=np.float64))
    for _ in range(n):
        a = b.mul(a, a)
    return b, a


@pytest.mark.parametrize("n", [10, 100])
def test_propagated_values_die_with_their_handles(n):
    chain(3)  # the registry, kernels and allocator warmed up
    gc.collect()
    tracemalloc.start()
    native_before = footprint.heap_in_use()
    b, a = chain(n)
    gc.collect()
    native_held = footprint.heap_in_use() - native_before
    python_held, _ = tracemalloc.get_traced_memory()
    assert a.value is not None and a.value.shape == (10000,) and not a.value.any()
    assert b.node_count == n
    # Alive: the constant (part of the graph) and the last value; the n - 1 values between
    # them are gone. Kept, they would be n * 80 kB (8 MB for n = 100). The rest is the graph's
    # names, types and shapes (about 600 bytes a node, measured).
    assert native_held < 2 * VALUE_BYTES + 1024 * n + 64 * 1024, native_held
    assert python_held < 64 * 1024, python_held  # no Python objects per step beyond the Var
    value = a.value
    del a
    gc.collect()
    assert value.shape == (10000,)  # a numpy view keeps the last value alive by itself
    del value, b
    gc.collect()
    assert footprint.heap_in_use() - native_before < 64 * 1024
    tracemalloc.stop()


def test_values_and_types(tmp_path):
    b = footprint.GraphBuilder()
    x = b.input("x", "float32", ["N", 4])
    w = b.const(np.arange(8, dtype=np.float32).reshape(4, 2))
    y = b.relu(b.matmul(x, w))
    assert (y.dtype, y.shape, y.value) == ("float", "[N,2]", None)  # x has no value
    two = b.add(w, w)
    np.testing.assert_array_equal(two.value, 2 * np.arange(8, dtype=np.float32).reshape(4, 2))
    assert not two.value.flags.writeable
    b.output(y, "y")
    model = b.to_model()
    assert model.info()["graph_outputs"][0]["name"] == "y"
    a = footprint.analyze(model, dims={"N": 3})
    assert a.inputs == 3 * 4 * 4
    b.write_onnx(tmp_path / "net.onnx")
    assert footprint.load(tmp_path / "net.onnx").info()["nodes"] == model.info()["nodes"]


def test_inference_errors_name_the_op():
    b = footprint.GraphBuilder()
    p = b.const(np.zeros((2, 3), dtype=np.float32))
    q = b.const(np.zeros((4, 5), dtype=np.float32))
    with pytest.raises(footprint.ModelError) as e:
        b.matmul(p, q)
    assert "MatMul" in str(e.value) and e.value.node == "MatMul_0"
    with pytest.raises(footprint.ModelError):
        b.op("NoSuchOp", [p])
