"""The builder's control flow: If branches, Loop and Scan bodies made with
GraphBuilder.subgraph(), whose ops read the enclosing graph's Vars, run by a Session against
numpy, and the usage errors of what is not a subgraph."""

import numpy as np
import pytest

import footprint
from footprint import UsageError


def if_loop_scan_model():
    b = footprint.GraphBuilder(opset=18)
    x = b.input("x", "float32", [4])
    cond = b.input("cond", "bool", [])
    then_b, else_b = b.subgraph(), b.subgraph()
    then_b.output(then_b.relu(x))
    else_b.output(else_b.mul(x, x))
    (y,) = b.if_else(cond, then_b, else_b)
    # Loop: s <- s + x three times, each s also a scan output.
    body = b.subgraph()
    body.input("i", "int64", [])
    c = body.input("c", "bool", [])
    s = body.input("s", "float32", [4])
    s_next = body.add(s, x)
    body.output(c)
    body.output(s_next)
    body.output(body.op("Identity", [s_next])[0])
    total, rows = b.loop(b.const(np.array(3, dtype=np.int64)), None, [y], body)
    # Scan over those rows: a running sum from y.
    scan_body = b.subgraph()
    state = scan_body.input("state", "float32", [4])
    row = scan_body.input("row", "float32", [4])
    summed = scan_body.add(state, row)
    scan_body.output(summed)
    scan_body.output(scan_body.op("Identity", [summed])[0])
    final, running = b.op("Scan", [y, rows], {"body": scan_body, "num_scan_inputs": 1},
                          outputs=2)
    for v, name in ((y, "y"), (total, "total"), (rows, "rows"), (final, "final"),
                    (running, "running")):
        b.output(v, name)
    return b.to_model()


@pytest.mark.parametrize("cond", [True, False])
def test_if_loop_and_scan_built_in_python_run_as_numpy_says(cond):
    model = if_loop_scan_model()
    x = np.array([-1, 2, -3, 4], dtype=np.float32)
    session = footprint.Session(model)
    got = session.run({"x": x, "cond": np.array(cond)})
    y = np.maximum(x, 0) if cond else x * x
    rows = np.stack([y + k * x for k in (1, 2, 3)])
    np.testing.assert_array_equal(got["y"], y)
    np.testing.assert_array_equal(got["total"], y + 3 * x)
    np.testing.assert_array_equal(got["rows"], rows)
    np.testing.assert_array_equal(got["running"], y + np.cumsum(rows, axis=0))
    np.testing.assert_array_equal(got["final"], y + rows.sum(axis=0))
    stats = session.stats
    assert stats["measured"]["arena_bytes"] == stats["predicted"]["arena_bytes"]


def test_what_is_not_a_subgraph_is_a_usage_error():
    b = footprint.GraphBuilder()
    x = b.input("x", "float32", [2])
    cond = b.input("cond", "bool", [])
    with pytest.raises(UsageError, match=r"if_else: then_branch is int, not a builder"):
        b.if_else(cond, 1, b.subgraph())
    with pytest.raises(UsageError, match=r"if_else: cond is ndarray, not a Var"):
        b.if_else(np.array(True), b.subgraph(), b.subgraph())
    with pytest.raises(UsageError, match=r"loop: carried must be a list of Vars"):
        b.loop(None, cond, x, b.subgraph())
    with pytest.raises(UsageError, match=r"loop: body is str, not a builder"):
        b.loop(None, cond, [x], "body")
