"""Sequence and optional values (issue 39): graph::lower_sequences replaces each sequence by the
tensors it holds, so the ops run, their arena as analyze plans it, and a sequence the graph
takes or returns travels as a list of arrays (an optional as an array or None). Models written
with onnx.helper (Debian's python3-onnx), checked against numpy; the refusals name the node and
say why. ONNX's node tests of the same ops run in tests/runtime/conformance_test.cpp."""

import numpy as np
import pytest

import footprint

onnx = pytest.importorskip("onnx", reason="Debian's python3-onnx (scripts/test installs it first)")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def model(nodes, inputs, outputs, initializers=(), opset=18):
    graph = helper.make_graph(nodes, "seq", inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def tensor(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, value):
    return numpy_helper.from_array(np.asarray(value, dtype=np.int64), name)


def run(tmp_path, m, feeds):
    path = tmp_path / "model.onnx"
    onnx.save(m, path)
    session = footprint.Session(str(path))
    out = session.run(feeds)
    stats = session.stats
    assert stats["measured"]["arena_bytes"] == stats["predicted"]["arena_bytes"]
    return out, path


def test_split_at_erase_insert_and_concat_give_numpys_values(tmp_path):
    """x [3, 7] split into chunks of 3 (the last 1 wide), the middle one erased, x's first row
    inserted at the front, then concatenated along a new axis... of differing widths refused, so
    concatenated along axis 1 instead; the length and the element at -1 read out."""
    nodes = [
        helper.make_node("SplitToSequence", ["x", "three"], ["parts"], axis=1),
        helper.make_node("SequenceErase", ["parts", "one"], ["erased"]),
        helper.make_node("SequenceInsert", ["erased", "x", "zero"], ["inserted"]),
        helper.make_node("ConcatFromSequence", ["inserted"], ["cat"], axis=1),
        helper.make_node("SequenceLength", ["inserted"], ["n"]),
        helper.make_node("SequenceAt", ["inserted", "minus_one"], ["last"]),
        helper.make_node("Mul", ["last", "last"], ["last_squared"]),
    ]
    m = model(nodes, [tensor("x", [3, 7])],
              [tensor("cat", None), tensor("n", None, TensorProto.INT64),
               tensor("last_squared", None)],
              [const("three", 3), const("one", 1), const("zero", 0), const("minus_one", -1)])
    x = np.arange(21, dtype=np.float32).reshape(3, 7)
    out, _ = run(tmp_path, m, {"x": x})
    parts = [x[:, 0:3], x[:, 3:6], x[:, 6:7]]
    kept = [x, parts[0], parts[2]]
    np.testing.assert_array_equal(out["cat"], np.concatenate(kept, axis=1))
    assert out["n"] == 3 and out["n"].dtype == np.int64
    np.testing.assert_array_equal(out["last_squared"], parts[2] * parts[2])


def test_unbind_and_stack_as_pytorch_exports_them(tmp_path):
    """PyTorch writes unbind as a scalar split of 1 with keepdims 0 (onnxruntime drops the axis,
    though ONNX says a split given overrides keepdims), and stack as ConcatFromSequence with
    new_axis; the element read out had its shape declared with the axis, which inference
    corrects."""
    nodes = [
        helper.make_node("SplitToSequence", ["x", "one"], ["rows"], axis=0, keepdims=0),
        helper.make_node("SequenceAt", ["rows", "one"], ["row1"]),
        helper.make_node("ConcatFromSequence", ["rows"], ["stacked"], axis=-1, new_axis=1),
    ]
    m = model(nodes, [tensor("x", ["N", 5])],
              [tensor("row1", ["N", 5]), tensor("stacked", None)], [const("one", 1)])
    x = np.random.default_rng(3).standard_normal((4, 5), dtype=np.float32)
    out, path = run(tmp_path, m, {"x": x})
    np.testing.assert_array_equal(out["row1"], x[1])
    np.testing.assert_array_equal(out["stacked"], np.stack(list(x), axis=-1))
    # The sequence's length follows the bound dim: six rows, six elements, as analyze counts.
    a = footprint.analyze(str(path), dims={"N": 6})
    s = footprint.Session(str(path), dims={"N": 6})
    out = s.run({"x": np.ones((6, 5), dtype=np.float32)})
    assert out["stacked"].shape == (5, 6)
    assert a.lower_bound_arena == s.stats["predicted"]["lower_bound_bytes"]
    assert s.stats["measured"]["arena_bytes"] == s.stats["predicted"]["arena_bytes"]


def test_a_split_the_data_gives_is_read_when_running(tmp_path):
    nodes = [
        helper.make_node("SplitToSequence", ["x", "sizes"], ["parts"], axis=0),
        helper.make_node("SequenceAt", ["parts", "one"], ["second"]),
        helper.make_node("SequenceLength", ["parts"], ["n"]),
    ]
    m = model(nodes, [tensor("x", [6, 2]), tensor("sizes", [3], TensorProto.INT64)],
              [tensor("second", None), tensor("n", None, TensorProto.INT64)], [const("one", 1)])
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    out, path = run(tmp_path, m, {"x": x, "sizes": np.array([1, 4, 1], dtype=np.int64)})
    np.testing.assert_array_equal(out["second"], x[1:5])
    assert out["n"] == 3
    with pytest.raises(Exception, match="split sums to 5, the axis has 6"):
        footprint.Session(str(path)).run({"x": x, "sizes": np.array([1, 3, 1], dtype=np.int64)})


def test_optionals_hold_a_tensor_or_nothing(tmp_path):
    nodes = [
        helper.make_node("Optional", ["x"], ["some"]),
        helper.make_node("Optional", [], ["none"], type=helper.make_tensor_type_proto(
            TensorProto.FLOAT, [])),
        helper.make_node("OptionalHasElement", ["some"], ["has_some"]),
        helper.make_node("OptionalHasElement", ["none"], ["has_none"]),
        helper.make_node("OptionalGetElement", ["some"], ["got"]),
    ]
    m = model(nodes, [tensor("x", [2])],
              [tensor("has_some", [], TensorProto.BOOL), tensor("has_none", [], TensorProto.BOOL),
               tensor("got", [2])])
    x = np.array([1.5, -2], dtype=np.float32)
    out, _ = run(tmp_path, m, {"x": x})
    assert out["has_some"] and not out["has_none"]
    np.testing.assert_array_equal(out["got"], x)


def test_sequences_and_optionals_in_and_out_are_lists_and_none(tmp_path):
    """A sequence input is a list of arrays of any extents, a sequence output comes back as one,
    an optional input may be None, an optional output that holds nothing is None."""
    nodes = [
        helper.make_node("SequenceInsert", ["seq", "x"], ["longer"]),
        helper.make_node("SequenceAt", ["seq", "zero"], ["first"]),
        helper.make_node("OptionalHasElement", ["maybe"], ["has"]),
        helper.make_node("Optional", [], ["nothing"], type=helper.make_tensor_type_proto(
            TensorProto.FLOAT, [])),
    ]
    m = model(nodes,
              [helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, None),
               tensor("x", [2]),
               helper.make_value_info("maybe", helper.make_optional_type_proto(
                   helper.make_tensor_type_proto(TensorProto.FLOAT, [3])))],
              [helper.make_tensor_sequence_value_info("longer", TensorProto.FLOAT, None),
               tensor("first", None), tensor("has", [], TensorProto.BOOL),
               helper.make_value_info("nothing", helper.make_optional_type_proto(
                   helper.make_tensor_type_proto(TensorProto.FLOAT, [])))],
              [const("zero", 0)])
    path = tmp_path / "model.onnx"
    onnx.save(m, path)
    session = footprint.Session(str(path))
    a, b, x = (np.arange(3, dtype=np.float32), np.ones((2, 2), np.float32),
               np.array([7, 8], np.float32))
    out = session.run({"seq": [a, b], "x": x, "maybe": None})
    assert [o.tolist() for o in out["longer"]] == [a.tolist(), b.tolist(), x.tolist()]
    np.testing.assert_array_equal(out["first"], a)
    assert not out["has"] and out["nothing"] is None
    assert session.stats["measured"]["arena_bytes"] == session.stats["predicted"]["arena_bytes"]
    out = session.run({"seq": [b], "x": x, "maybe": np.zeros(3, np.float32)})
    assert len(out["longer"]) == 2 and out["has"]
    with pytest.raises(Exception, match="input 'seq' is a sequence; give a list of arrays"):
        session.run({"seq": a, "x": x})


@pytest.mark.parametrize("case, message", [
    ("subgraph", "output 'out' is a sequence: footprint lowers sequences and optionals to the "
                 "tensors they hold, and cannot pass one out of a subgraph yet"),
    ("position", "node 'at' (SequenceAt): position 2 is outside a sequence of 2 elements"),
    ("tensor_op", "node 'relu' (Relu): reads 'parts', a sequence: only the sequence and optional"),
    ("empty_get", "node 'get' (OptionalGetElement): reads an optional that holds nothing"),
    ("dynamic", "node 'split' (SplitToSequence): splits 'x' along an extent not bound"),
    ("keepdims", "keepdims 0 drops the axis, but part 0 is 2 along it"),
])
def test_what_is_not_lowered_is_named(tmp_path, case, message):
    split = helper.make_node("SplitToSequence", ["x"], ["parts"], name="split", axis=0)
    x = tensor("x", [2, 3])
    y = tensor("y", None)
    if case == "subgraph":
        branch = helper.make_graph(
            [helper.make_node("SplitToSequence", ["x"], ["out"], axis=0)], "branch", [],
            [helper.make_tensor_sequence_value_info("out", TensorProto.FLOAT, None)])
        m = model([helper.make_node("If", ["cond"], ["y"], then_branch=branch,
                                    else_branch=branch)],
                  [x, tensor("cond", [], TensorProto.BOOL)],
                  [helper.make_tensor_sequence_value_info("y", TensorProto.FLOAT, None)])
    elif case == "position":
        m = model([split, helper.make_node("SequenceAt", ["parts", "two"], ["y"], name="at")],
                  [x], [y], [const("two", 2)])
    elif case == "tensor_op":
        m = model([split, helper.make_node("Relu", ["parts"], ["y"], name="relu")], [x], [y])
    elif case == "empty_get":
        m = model([helper.make_node("Optional", [], ["none"], type=helper.make_tensor_type_proto(
            TensorProto.FLOAT, [])),
            helper.make_node("OptionalGetElement", ["none"], ["y"], name="get")], [x], [y])
    elif case == "dynamic":
        m = model([split, helper.make_node("SequenceLength", ["parts"], ["y"])],
                  [tensor("x", [None, 3])], [tensor("y", None, TensorProto.INT64)])
    else:
        m = model([helper.make_node("SplitToSequence", ["x", "two"], ["parts"], axis=1,
                                    keepdims=0),
                   helper.make_node("SequenceAt", ["parts", "zero"], ["y"])],
                  [tensor("x", [2, 4])], [y], [const("two", 2), const("zero", 0)])
    path = tmp_path / "model.onnx"
    onnx.save(m, path)
    with pytest.raises(Exception, match=message.replace("(", r"\(").replace(")", r"\)")):
        footprint.analyze(str(path))


def test_an_extent_from_an_inputs_value_is_planned_for_the_value_given(tmp_path):
    """Range to a limit given as an input: onnxruntime computes the extent when running;
    footprint plans for the value given, says so in stats, and prepares again for another."""
    m = model([helper.make_node("Range", ["zero", "n", "one"], ["r"]),
               helper.make_node("Neg", ["r"], ["y"])],
              [tensor("n", [], TensorProto.INT64)], [tensor("y", None, TensorProto.INT64)],
              [const("zero", 0), const("one", 1)])
    path = tmp_path / "range.onnx"
    onnx.save(m, path)
    session = footprint.Session(str(path))
    y = session.run({"n": np.array(5, dtype=np.int64)})["y"]
    np.testing.assert_array_equal(y, -np.arange(5))
    stats = session.stats
    assert stats["planned_for_values_of"] == ["n"]
    assert stats["measured"]["output_bytes"] == stats["predicted"]["outputs_bytes"] == 40
    y = session.run({"n": np.array(3, dtype=np.int64)})["y"]
    np.testing.assert_array_equal(y, -np.arange(3))
    assert session.stats["predicted"]["outputs_bytes"] == 24
