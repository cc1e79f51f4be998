"""footprint.plan: validated offsets from the library's planners."""

import numpy as np
import pytest

import footprint
from conftest import cli_json


def test_the_headers_example():
    # planner.hpp: a and c may share bytes, b overlaps both.
    p = footprint.plan([(0, 2, 1024), (1, 3, 512), (2, 4, 1024)], algo="greedy-size")
    assert p.arena == 1536
    assert p.lower_bound == 1536 and p.optimal
    assert p.offsets.dtype == np.int64 and len(p.offsets) == 3
    a, b, c = (int(o) for o in p.offsets)
    assert b >= a + 1024 or a >= b + 512  # a and b are alive together at 1


def test_naive_never_reuses():
    rows = np.array([[0, 2, 100], [2, 4, 100]])
    assert footprint.plan(rows, algo="naive").arena == 200
    assert footprint.plan(rows, algo="best-fit").arena == 100


def test_a_models_arena_is_the_cli_plan(mobilenet):
    a = footprint.analyze(mobilenet, dims={"N": 8})
    p = footprint.plan(a)
    expected = cli_json("plan", mobilenet, "--dim", "N=8")
    assert p.arena == expected["arena_bytes"]
    assert p.lower_bound == expected["lower_bound_bytes"]
    assert p.buffers == expected["buffers"]
    assert p.algorithm == expected["algorithm"]


def test_unknown_planner_and_bad_rows():
    with pytest.raises(footprint.UsageError) as e:
        footprint.plan([(0, 1, 8)], algo="magic")
    assert "greedy-size" in str(e.value)
    with pytest.raises(footprint.UsageError):
        footprint.plan(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(footprint.ModelError):
        footprint.plan([(3, 1, 8)])  # upper before lower
    assert "auto" in footprint.planners
