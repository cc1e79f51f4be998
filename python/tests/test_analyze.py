"""footprint.analyze and sweep: the same figures as `footprint analyze --json`."""

import json

import numpy as np
import pytest

import footprint
from conftest import cli_json


def test_analyze_is_the_cli_json(mobilenet):
    a = footprint.analyze(footprint.load(mobilenet), dims={"N": 8})
    expected = cli_json("analyze", mobilenet, "--dim", "N=8")
    assert a.to_json() == expected
    assert a.total_peak == expected["bytes"]["total_peak"]
    assert a.lower_bound == expected["lower_bound_bytes"]
    assert a.peak_step == expected["peak_step"]


def test_alive_at_peak_records(mobilenet):
    a = footprint.analyze(mobilenet, dims={"N": 8})
    expected = cli_json("analyze", mobilenet, "--dim", "N=8")["alive_at_peak"]
    got = [{"tensor": t.tensor, "bytes": t.bytes, "producer": t.producer, "why": t.why}
           for t in a.alive_at_peak]
    assert got == [{k: e[k] for k in ("tensor", "bytes", "producer", "why")} for e in expected]
    assert sum(t.bytes for t in a.alive_at_peak) <= a.total_peak


def test_timeline_columns(mobilenet):
    a = footprint.analyze(mobilenet, dims={"N": 8})
    t = a.timeline
    # 100 nodes, 35 ReLU6 fused, and the layout changed before the first convolution and after
    # the last channels-last node (graph::to_channels_last).
    changes = a.to_json()["channels_last"]["layout_changes"]
    assert changes == 2
    assert len(t["node"]) == len(t["total_bytes"]) == 65 + changes
    assert t["total_bytes"].dtype == np.uint64
    assert int(t["total_bytes"].max()) == a.total_peak
    assert int(np.argmax(t["total_bytes"])) == a.peak_step
    assert int(t["live_bytes"].max()) == a.lower_bound


@pytest.mark.parametrize("inputs,order", [("donated", "stored"), ("caller", "memory")])
def test_options_match_the_cli(mobilenet, inputs, order):
    a = footprint.analyze(mobilenet, dims={"N": 2}, inputs=inputs, order=order)
    assert a.to_json() == cli_json("analyze", mobilenet, "--dim", "N=2", "--inputs", inputs,
                                   "--order", order)


def test_fuse_false_is_no_fuse(mobilenet):
    a = footprint.analyze(mobilenet, dims={"N": 2}, fuse=False)
    assert a.to_json() == cli_json("analyze", mobilenet, "--dim", "N=2", "--no-fuse")
    assert len(a.timeline["node"]) == 100 and a.to_json()["fused"] == []
    assert len(footprint.analyze(mobilenet, dims={"N": 2}).to_json()["fused"]) == 35


def test_sweep_is_the_cli_sweep(mobilenet):
    got = footprint.sweep(mobilenet, "N", [1, 8, 32])
    expected = cli_json("analyze", mobilenet, "--sweep", "N=1,8,32")["sweep"]
    assert got == expected
    assert got["total_peak"]["linear"]
    # The law is the CLI's too. Whether the peak is a polynomial in N depends on the workspaces
    # oneDNN picks for this CPU (with AVX2 and AVX-512 alike: 6693352 + 663552*N; a blocked 1x1
    # convolution's scratch would step by thresholds): either the exact law, or why there is none.
    values = [1, 2, 4, 8, 32]
    swept = footprint.sweep(mobilenet, "N", values)
    law = swept["total_peak_law"]
    assert law == cli_json("analyze", mobilenet, "--sweep", "N=1,2,4,8,32")["sweep"]["total_peak_law"]
    if law["exact"]:  # the dominant step's polynomial is the peak for large enough N
        poly = law["dominant"]["polynomial"]
        last = swept["points"][-1]
        assert eval(poly.replace("^", "**"), {"N": last["value"]}) == last["total_peak_bytes"]
    else:
        assert "workspace" in law["why_not"] and "no polynomial" in law["why_not"]


def test_a_trace_from_a_file_and_a_dict(tmp_path):
    trace = {
        "name": "two ops",
        "tensors": [
            {"name": "x", "bytes": 1000, "kind": "input"},
            {"name": "a", "bytes": 4000},
            {"name": "y", "bytes": 2000, "kind": "output"},
        ],
        "ops": [
            {"name": "f", "op": "f", "inputs": ["x"], "outputs": ["a"], "workspace": 256},
            {"name": "g", "op": "g", "inputs": ["a"], "outputs": ["y"]},
        ],
    }
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    a = footprint.analyze(path)
    assert a.to_json() == cli_json("analyze", path)
    # f: x + a + workspace; g: x + a + y (the caller holds x).
    assert a.total_peak == 7000 and a.peak_step == 1
    assert footprint.analyze(trace).total_peak == a.total_peak
    assert footprint.analyze(trace, inputs="donated").total_peak == 6000


def test_bad_options_are_usage_errors(mobilenet):
    with pytest.raises(footprint.UsageError):
        footprint.analyze(mobilenet, inputs="borrowed")
    with pytest.raises(footprint.UsageError):
        footprint.analyze(mobilenet, order="fastest")


def test_shapes_bind_whole_inputs_as_the_cli_does(tiny_cnn):
    # tiny_cnn's input is x: float[N,1,8,8]; its shape binds N as well.
    a = footprint.analyze(tiny_cnn, shapes={"x": (3, 1, 8, 8)})
    assert a.to_json() == cli_json("analyze", tiny_cnn, "--shape", "x=3x1x8x8")
    assert a.to_json()["bytes"]["inputs"] == 3 * 8 * 8 * 4
    with pytest.raises(footprint.UsageError, match="--shape nope: the graph has no input"):
        footprint.analyze(tiny_cnn, shapes={"nope": (1,)})


def test_data_dir_gives_the_files_extents_as_the_cli_does(tiny_cnn, tmp_path):
    footprint.write_tensor(tmp_path / "input_0.pb", np.zeros((3, 1, 8, 8), np.float32))
    a = footprint.analyze(tiny_cnn, data_dir=tmp_path)
    assert a.to_json() == cli_json("analyze", tiny_cnn, "--data-dir", str(tmp_path))
    assert a.to_json()["bytes"]["inputs"] == 3 * 8 * 8 * 4
    assert a.to_json() == footprint.analyze(tiny_cnn, shapes={"x": (3, 1, 8, 8)}).to_json()
    with pytest.raises(footprint.UsageError, match="given by shapes and by data_dir"):
        footprint.analyze(tiny_cnn, shapes={"x": (3, 1, 8, 8)}, data_dir=tmp_path)
    with pytest.raises(footprint.ModelError, match="no input_0.pb"):
        footprint.analyze(tiny_cnn, data_dir=tmp_path / "missing")


def test_fit_is_the_cli_fit(tiny_cnn):
    got = footprint.fit(tiny_cnn, "64KiB", "N")
    expected = cli_json("fit", tiny_cnn, "--budget", "65536", "--solve", "N")
    got["model"] = expected["model"]  # a path here, the loaded model's name there
    assert got == expected
    assert got["bytes_at_largest"] <= 65536 < got["bytes_above"]
    assert footprint.fit(tiny_cnn, 65536, "N", figure="arena")["figure"] == "arena lower bound"
    with pytest.raises(footprint.UsageError, match="not a byte count"):
        footprint.fit(tiny_cnn, "64 parsecs", "N")
    # SI units as the CLI reads them: "64MB" is 64,000,000 B, "64MiB" 67,108,864 B.
    assert footprint.fit(tiny_cnn, "64MB", "N") == footprint.fit(tiny_cnn, 64_000_000, "N")
    with pytest.raises(footprint.UsageError, match="the dim solved for"):
        footprint.fit(tiny_cnn, 65536, "N", dims={"N": 2})
    with pytest.raises(footprint.UsageError, match="no input of the model has a dim of that name"):
        footprint.fit(tiny_cnn, 65536, "seq")


def test_a_dtype_run_will_refuse_is_named_by_analyze():
    """A float64 product: its figures are counted in float64 and the warning names the node
    whose kernel runs float and the 16-bit floats only, as `run` would refuse it; the float32
    and float16 models have no warning (float16 runs through float32 copies)."""
    def product(dtype, np_type):
        b = footprint.GraphBuilder()
        x = b.input("x", dtype, ["N", 64])
        w = b.const(np.ones((64, 64), dtype=np_type))
        b.output(b.matmul(x, w), "y")
        return b.to_model()

    wide = footprint.analyze(product("float64", np.float64), dims={"N": 4}).to_json()
    [warning] = [w for w in wide["warnings"] if "will refuse" in w]
    assert "MatMul" in warning and "runs float, float16, bfloat16, not double" in warning, warning
    assert wide["bytes"]["weights"] == 64 * 64 * 8
    for dtype, np_type in (("float32", np.float32), ("float16", np.float16)):
        ok = footprint.analyze(product(dtype, np_type), dims={"N": 4}).to_json()
        assert not [w for w in ok["warnings"] if "will refuse" in w], dtype
    with pytest.raises(footprint.FootprintError, match="double"):
        footprint.Session(product("float64", np.float64)).run(
            {"x": np.ones((4, 64), dtype=np.float64)})
    # float16 runs: 64 ones summed in float32, then rounded to half (64.0 exactly).
    y = footprint.Session(product("float16", np.float16)).run(
        {"x": np.ones((4, 64), dtype=np.float16)})["y"]
    assert y.dtype == np.float16 and (y == 64).all()


def test_data_dir_gives_the_values_extents_depend_on(tmp_path):
    """An extent that depends on an input's value (a Range to n, n an input) is computed for the
    value data_dir's file holds, as `analyze --data-dir` computes it, and named in the figures;
    without the file it is an error naming the extent, never a guess."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Range", ["zero", "n", "one"], ["r"]),
         helper.make_node("Cast", ["r"], ["y"], to=TensorProto.FLOAT)],
        "range_to_n", [helper.make_tensor_value_info("n", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("zero", TensorProto.INT64, [], [0]),
         helper.make_tensor("one", TensorProto.INT64, [], [1])])
    model = tmp_path / "range.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    data = tmp_path / "data"
    data.mkdir()
    footprint.write_tensor(data / "input_0.pb", np.array(1000, np.int64))
    a = footprint.analyze(model, data_dir=data)
    assert a.to_json() == cli_json("analyze", model, "--data-dir", str(data))
    assert a.to_json()["planned_for_values_of"] == ["n"]
    assert a.total_peak >= 1000 * 4  # y (float32) for n = 1000
    smaller = tmp_path / "smaller"
    smaller.mkdir()
    footprint.write_tensor(smaller / "input_0.pb", np.array(10, np.int64))
    assert footprint.analyze(model, data_dir=smaller).total_peak < a.total_peak
    with pytest.raises(footprint.ModelError, match="known only when running"):
        footprint.analyze(model)
