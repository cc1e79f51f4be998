"""What a hostile or careless caller does to the Python side: no crash, no lost file. Thread
counts out of range are refused by name, a Session shared between threads runs one call at a
time with the right answers, integer division's undefined corners give defined values, and no
call writes over the model or trace it reads."""

import os
import threading

import numpy as np
import pytest

import footprint
from conftest import ROOT


@pytest.mark.parametrize("threads", [0, -3, 257, 100000])
def test_thread_counts_outside_the_range_are_refused(mobilenet, threads):
    with pytest.raises(footprint.UsageError, match=f"threads: {threads} is not a thread count"):
        footprint.Session(mobilenet, threads=threads)
    with pytest.raises(footprint.UsageError, match="threads"):
        footprint.GraphBuilder(threads=threads)


def test_a_session_shared_by_eight_threads_runs_one_call_at_a_time(mobilenet):
    x = footprint.read_tensor(mobilenet.parent / "input_0.pb")
    session = footprint.Session(mobilenet)
    expected = session.run({"x": x})["logits"].copy()
    results, errors = [], []

    def worker():
        try:
            for _ in range(5):
                results.append(session.run({"x": x})["logits"])
                assert session.stats["measured"]["arena_bytes"] > 0
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == 40
    for r in results:
        np.testing.assert_array_equal(r, expected)


def int_div_model(dtype):
    b = footprint.GraphBuilder()
    x = b.input("x", dtype, [4])
    y = b.input("y", dtype, [4])
    b.output(b.div(x, y), "q")
    b.output(b.op("Mod", [x, y])[0], "r")
    return b.to_model()


@pytest.mark.parametrize("dtype, np_type", [("int32", np.int32), ("int64", np.int64)])
def test_integer_division_corners_are_values_not_signals(dtype, np_type):
    lo = np.iinfo(np_type).min
    x = np.array([lo, lo, 7, -7], dtype=np_type)
    y = np.array([-1, 0, 0, -1], dtype=np_type)
    out = footprint.Session(int_div_model(dtype)).run({"x": x, "y": y})
    np.testing.assert_array_equal(out["q"], np.array([lo, 0, 0, 7], dtype=np_type))
    np.testing.assert_array_equal(out["r"], np.zeros(4, dtype=np_type))
    # The builder's value propagation runs the same kernels on constants.
    b = footprint.GraphBuilder()
    q = b.div(b.const(x), b.const(y))
    np.testing.assert_array_equal(q.value, np.array([lo, 0, 0, 7], dtype=np_type))


def test_report_never_writes_over_its_model_or_trace(tmp_path, mobilenet):
    model = tmp_path / "m.onnx"
    model.write_bytes(mobilenet.read_bytes())
    before = model.read_bytes()
    with pytest.raises(footprint.UsageError, match="never writes over its input"):
        footprint.report(footprint.load(model), model)
    with pytest.raises(footprint.UsageError, match="never writes over its input"):
        footprint.report(model, model)
    assert model.read_bytes() == before
    trace = tmp_path / "t.json"
    trace.write_text((ROOT / "examples" / "traces" / "seed_mul_list.json").read_text())
    text = trace.read_text()
    with pytest.raises(footprint.UsageError, match="never writes over its input"):
        footprint.report(trace, trace)
    assert trace.read_text() == text


def test_read_only_outputs_are_refused(tmp_path, mobilenet):
    out = tmp_path / "kept.html"
    out.write_text("precious")
    os.chmod(out, 0o444)
    with pytest.raises(footprint.FootprintError, match="read-only"):
        footprint.report(mobilenet, out)
    assert out.read_text() == "precious"
    assert (os.stat(out).st_mode & 0o777) == 0o444


def test_big_endian_constants_are_read_as_their_values():
    b = footprint.GraphBuilder()
    c = b.const(np.arange(3, dtype=">f4"))
    np.testing.assert_array_equal(c.value, np.arange(3, dtype=np.float32))
    doubled = b.add(c, c)
    np.testing.assert_array_equal(doubled.value, 2 * np.arange(3, dtype=np.float32))
    # Session inputs likewise (converted once, read as native).
    x = b.input("x", "float32", [3])
    b.output(b.add(x, c), "y")
    y = footprint.Session(b.to_model()).run({"x": np.ones(3, dtype=">f4")})["y"]
    np.testing.assert_array_equal(y, 1 + np.arange(3, dtype=np.float32))
