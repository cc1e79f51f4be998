"""footprint.GraphBuilder: inference, propagation, export; propagated values die with their
handles (the builder issue's memory test, measured from Python with tracemalloc and the native
heap: footprint's counting malloc in the python_heap_tests ctest, glibc's totals otherwise)."""

import gc
import os
import tracemalloc

import numpy as np
import pytest

import footprint
from footprint._heap import heap_counter

VALUE_BYTES = 10000 * 8  # zeros(10000) as float64


def chain(n):
    """a = const(zeros(10000), float64); a = mul(a, a) n times; returns the builder and a."""
    b = footprint.GraphBuilder()
    a = b.const(np.zeros(10000, dtype=np.float64))
    for _ in range(n):
        a = b.mul(a, a)
    return b, a


def native_heap():
    """The native heap now and its peak since the last reset: footprint's counting malloc where
    it is preloaded (the python_heap_tests ctest), else glibc's totals (no peak)."""
    counter = heap_counter()
    if counter is None:
        if os.environ.get("FOOTPRINT_EXPECT_COUNTER"):
            pytest.fail("LD_PRELOAD did not bring footprint's counting malloc")
        return footprint.heap_in_use, lambda: None, lambda: None
    stats, reset = counter
    return (lambda: stats().current), (lambda: stats().peak), reset


@pytest.mark.parametrize("n", [10, 100])
def test_propagated_values_die_with_their_handles(n):
    current, peak, reset_peak = native_heap()
    chain(3)  # the registry, kernels and allocator warmed up
    gc.collect()
    tracemalloc.start()
    native_before = current()
    reset_peak()
    b, a = chain(n)
    gc.collect()
    native_held = current() - native_before
    native_peak = peak()
    python_held, _ = tracemalloc.get_traced_memory()
    if native_peak is not None:
        # While the chain grows, a step holds its input, its output and the constant: never
        # the n values a builder that kept them would (8 MB for n = 100).
        assert native_peak - native_before < 4 * VALUE_BYTES + 1024 * n + 64 * 1024, native_peak
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
    assert current() - native_before < 64 * 1024
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
