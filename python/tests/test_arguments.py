"""Careless or hostile arguments from Python: each is a clear error naming the argument (and,
where it helps, what is accepted), never a silently wrong answer. Every case here once gave an
answer: plan truncated a size of 1.7 to 1, sweep drew a flat line over a dim the model does not
have, torch.fit answered 0 for lo=0 or budget=NaN, a tag string became one tag per letter,
Memo(bytes=-5) was kept, the pytest marker took -5 and True as limits, and the builder let
pybind11's own cast errors through."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import footprint
from footprint.bench import Memo, MemoCache, benchmark, parametrize, run
from test_pytest_plugin import PACKAGE_ROOT

# --- plan: buffers are integer rows -------------------------------------------------------


@pytest.mark.parametrize("rows, where", [
    ([(0, 2, 1.7)], r"buffers\[0\] size: 1.7 is not a whole number"),
    ([(0, 2, 8), (0.5, 2, 8)], r"buffers\[1\] lower: 0.5 is not a whole number"),
    ([(0, float("nan"), 8)], r"buffers\[0\] upper: nan is not a whole number"),
    ([(0, 2, float("inf"))], r"buffers\[0\] size: inf is not a whole number"),
    (np.array([[0, 2, 8], [1, 3, 2.5]]), r"buffers\[1\] size: 2.5 is not a whole number"),
    ([(0, 2, "8")], r"buffers\[0\] size: expected an integer, got str"),
    ([(0, 2, True)], r"buffers\[0\] size: True is a bool"),
    ([(0, 2, None)], r"buffers\[0\] size: expected an integer, got NoneType"),
    ([(0, 2, 1 << 70)], r"buffers\[0\] size: \d+ does not fit int64"),
    (np.array([[0, 2, 1 << 63]], dtype=np.uint64), r"buffers\[0\] size: \d+ does not fit int64"),
    (np.array([[0, 2, 1e19]]), r"buffers\[0\] size: 1e\+19 is not a whole number|does not fit"),
    ([(0, 2, 8), (0, 2)], "ragged rows|shape"),
    ([0, 2, 8], r"shape \(3,\)"),
])
def test_plan_refuses_rows_that_are_not_integers(rows, where):
    with pytest.raises(footprint.UsageError, match=where):
        footprint.plan(rows)


def test_plan_takes_whole_numbers_of_any_integer_type():
    expected = footprint.plan([(0, 2, 1024), (1, 3, 512), (2, 4, 1024)]).offsets
    for rows in ([(0, 2, 1024.0), (1, 3, 512), (2, 4, 1024)],
                 [(np.int32(0), np.uint8(2), np.int64(1024)), (1, 3, 512), (2, 4, 1024)],
                 np.array([[0, 2, 1024], [1, 3, 512], [2, 4, 1024]], dtype=np.uint16),
                 np.array([[0, 2, 1024], [1, 3, 512], [2, 4, 1024]], dtype=np.float64)):
        np.testing.assert_array_equal(footprint.plan(rows).offsets, expected)
    assert footprint.plan([]).buffers == 0


def test_plan_lifetimes_and_sizes_are_the_librarys_checks_naming_the_buffer():
    with pytest.raises(footprint.ModelError, match="buffer 1 .*size -5 is negative"):
        footprint.plan([(0, 2, 8), (0, 2, -5)])
    with pytest.raises(footprint.ModelError, match=r"buffer 0 .*upper \(1\) must be greater"):
        footprint.plan([(3, 1, 8)])


@pytest.mark.parametrize("kwargs, where", [
    ({"capacity": -1}, "capacity: -1 is below 0"),
    ({"capacity": 1.5}, "capacity: 1.5 is not a whole number"),
    ({"seed": -1}, "seed: -1 is below 0"),
    ({"time_limit": float("nan")}, "time_limit: nan"),
    ({"time_limit": -1}, "time_limit: -1"),
    ({"time_limit": "1"}, "time_limit: '1'"),
])
def test_plan_options_are_checked(kwargs, where):
    with pytest.raises(footprint.UsageError, match=where):
        footprint.plan([(0, 1, 8)], **kwargs)


# --- sweep, fit, dims: named dims and integer values ----------------------------------------


def test_sweep_over_a_dim_the_model_does_not_have_is_refused(tiny_cnn):
    with pytest.raises(footprint.UsageError,
                       match=r"sweep: dim 'Q': no input of the model has a dim of that name "
                             r"\(it names N\)"):
        footprint.sweep(tiny_cnn, "Q", [1, 2])
    assert footprint.sweep(tiny_cnn, "N", [1, 2])["total_peak"]["linear"]


@pytest.mark.parametrize("values, where", [
    ([1, 2.5], r"values\[1\]: 2.5 is not a whole number"),
    ([1, True], r"values\[1\]: True is a bool"),
    ("12", "values must be a sequence of integers"),
])
def test_sweep_values_are_integers(tiny_cnn, values, where):
    with pytest.raises(footprint.UsageError, match=where):
        footprint.sweep(tiny_cnn, "N", values)


def test_dims_and_shapes_are_integers(tiny_cnn):
    with pytest.raises(footprint.UsageError, match=r"dims\['N'\]: 8.5 is not a whole number"):
        footprint.analyze(tiny_cnn, dims={"N": 8.5})
    with pytest.raises(footprint.UsageError, match=r"shapes\['x'\]\[0\]: 2.5"):
        footprint.analyze(tiny_cnn, shapes={"x": (2.5, 1, 8, 8)})
    with pytest.raises(footprint.UsageError, match=r"dims: expected a dict, got list"):
        footprint.analyze(tiny_cnn, dims=[("N", 8)])
    with pytest.raises(footprint.UsageError, match=r"shapes\['x'\]: expected a sequence"):
        footprint.analyze(tiny_cnn, shapes={"x": 3})
    with pytest.raises(footprint.UsageError, match=r"fit: low: 1.5"):
        footprint.fit(tiny_cnn, 65536, "N", low=1.5)
    assert (footprint.analyze(tiny_cnn, dims={"N": 8.0}).total_peak ==
            footprint.analyze(tiny_cnn, dims={"N": np.int64(8)}).total_peak)


def test_fit_names_the_python_argument(tiny_cnn):
    with pytest.raises(footprint.UsageError, match=r"fit: dim 'seq': no input of the model"):
        footprint.fit(tiny_cnn, 65536, "seq")


# --- footprint.torch.fit: lo, hi and budget ---------------------------------------------------


def _step(batch, device="cpu"):
    raise AssertionError("not called: the arguments are refused first")


@pytest.mark.parametrize("kwargs, where", [
    ({"lo": 0}, "lo: 0 is below 1"),
    ({"lo": -3}, "lo: -3 is below 1"),
    ({"hi": 0}, "hi: 0 is below 1"),
    ({"lo": 1.5}, "lo: 1.5 is not a whole number"),
    ({"lo": 8, "hi": 4}, r"lo \(8\) is above hi \(4\)"),
    ({"lo": True}, "lo: True is a bool"),
    ({"budget": float("nan")}, "budget: nan is not a byte count"),
    ({"budget": float("inf")}, "budget: inf is not a byte count"),
    ({"budget": -1}, "budget: -1 is not a byte count"),
    ({"budget": 0}, "budget: 0 B leaves no room"),
    ({"budget": 1000.5}, "budget: 1000.5 is not a whole number of bytes"),
    ({"budget": "64 parsecs"}, "budget: '64 parsecs' is not a byte count"),
    ({"dim": 3}, "dim must be a keyword of fn"),
])
def test_torch_fit_refuses_arguments_that_answer_nothing(kwargs, where):
    ft = pytest.importorskip("footprint.torch")
    args = {"budget": 1 << 20, **kwargs}
    with pytest.raises(footprint.UsageError, match=where):
        ft.fit(_step, **args)


def test_torch_fit_takes_footprints_byte_text():
    ft = pytest.importorskip("footprint.torch")
    seen = []

    def step(batch, device="cpu"):
        seen.append(batch)

    # Nothing is allocated: every batch fits, up to hi.
    assert ft.fit(step, "1MiB", lo=2, hi=5).batch == 5
    assert ft.fit(step, 1 << 20, hi=3.0).batch == 3


# --- footprint.bench: tags, Memo sizes -------------------------------------------------------


def test_one_tag_string_is_one_tag():
    @benchmark(tags="numpy")
    def f():
        pass

    assert f.tags == ("numpy",)

    @parametrize([{}], tags="model")
    def g():
        pass

    assert g.tags == ("model",)
    assert [r.name for r in run([f, g], tags="numpy", repetitions=1).records] == ["f"]


@pytest.mark.parametrize("tags, where", [
    (("numpy", 3), r"tags\[1\]: a tag is a string, not int"),
    ([None], r"tags\[0\]: a tag is a string, not NoneType"),
    (5, "tags: expected a string or a sequence of strings, got int"),
])
def test_tags_that_are_not_strings_are_refused(tags, where):
    with pytest.raises(footprint.UsageError, match=where):
        benchmark(tags=tags)
    with pytest.raises(footprint.UsageError, match=where):
        run([], tags=tags)


@pytest.mark.parametrize("size, where", [
    (-5, "Memo: bytes: -5 is below 0"),
    (1.5, "Memo: bytes: 1.5 is not a whole number"),
    ("64MiB", "Memo: bytes: expected an integer, got str"),
    (True, "Memo: bytes: True is a bool"),
])
def test_memo_sizes_are_byte_counts(size, where):
    with pytest.raises(footprint.UsageError, match=where):
        Memo(lambda: 1, bytes=size)
    assert Memo(lambda: 1, bytes=4096.0).bytes_hint == 4096


def test_memo_budgets_and_run_counts_are_integers():
    with pytest.raises(footprint.UsageError, match="MemoCache: budget: -1 is below 0"):
        MemoCache(budget=-1)
    with pytest.raises(footprint.UsageError, match="repetitions: 1.5 is not a whole number"):
        run([], repetitions=1.5)


# --- the pytest marker ------------------------------------------------------------------------

MARKED = '''
import pytest

@pytest.mark.footprint_limit(LIMIT)
def test_marked():
    pass
'''


def run_marked(tmp_path, limit):
    (tmp_path / "test_marked.py").write_text(MARKED.replace("LIMIT", limit))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-p", "footprint.pytest_plugin", str(tmp_path / "test_marked.py")],
                       capture_output=True, text=True, cwd=tmp_path,
                       env=dict(os.environ, PYTHONPATH=str(PACKAGE_ROOT)))
    return r.stdout + r.stderr


@pytest.mark.parametrize("limit, message", [
    ("-5", "footprint_limit(-5): footprint: -5 is negative"),
    ("True", "footprint_limit(True): footprint: True is a bool"),
    ("float('nan')", "footprint_limit(nan): footprint: nan is not a number of bytes"),
    ("'1.5 B'", "footprint_limit('1.5 B'): footprint: '1.5 B' is not a whole number of bytes"),
    ("'64 parsecs'", "footprint_limit('64 parsecs'): footprint: '64 parsecs' is not a size"),
    ("", "footprint_limit: limit is missing"),  # was a KeyError
    ("'1 MiB', 'extra'", "footprint_limit: takes 1 positional argument"),
    ("lim='1 MiB'", "footprint_limit: unknown argument 'lim'"),
])
def test_malformed_limits_are_errors_naming_the_marker(tmp_path, limit, message):
    out = run_marked(tmp_path, limit)
    assert "1 error" in out, out
    assert message.replace("footprint: ", "") in out, out
    assert "expected a byte count" in out or "missing" in out or "argument" in out, out


def test_limit_sizes_are_exact_and_say_their_units():
    from footprint.pytest_plugin import parse_bytes
    assert parse_bytes("64MB") == 64_000_000  # SI, unlike pytest-memray's 64 MiB
    assert parse_bytes("64 MiB") == 64 << 20
    assert parse_bytes("0.29 kB") == 290  # 0.29 * 1000 is 289.99999999999994 in floats
    assert parse_bytes(1e6) == 1_000_000
    assert parse_bytes("9" * 30 + " GB") == int("9" * 30) * 10**9
    assert parse_bytes("9" * 400 + " GB") == int("9" * 400) * 10**9  # was an OverflowError
    with pytest.raises(pytest.UsageError, match="'64 MB' is 64,000,000 B, not pytest-memray"):
        parse_bytes("64 parsecs")
    assert not math.isnan(parse_bytes(0))


# --- GraphBuilder: pybind11's cast errors become UsageErrors -----------------------------------


@pytest.mark.parametrize("shape, where", [
    (["N", 4.5], r"input 'x': shape\[1\]: 4.5 is not a whole number"),
    (["N", None], r"input 'x': shape\[1\]: an extent is an int or a dim's name .*NoneType"),
    (["N", -1], r"input 'x': shape\[1\]: -1 is below 0"),
    (["N", ""], r"input 'x': shape\[1\]: a dim's name cannot be empty"),
    (["N", 1 << 64], r"input 'x': shape\[1\]: \d+ does not fit int64"),
    ("NC", "input 'x': shape: expected a list of extents"),
    (4, "input 'x': shape: expected a list of extents"),
])
def test_builder_extents_are_ints_or_names(shape, where):
    with pytest.raises(footprint.UsageError, match=where):
        footprint.GraphBuilder().input("x", "float32", shape)


@pytest.mark.parametrize("value, where", [
    ({"a": 1}, "attribute 'perm': dict is not an attribute value; expected int, float, str"),
    (None, "attribute 'perm': NoneType is not an attribute value; expected int, float, str"),
    ([1, "a"], r"attribute 'perm'\[1\]: a list attribute holds ints or floats, not str"),
    ([1, None], r"attribute 'perm'\[1\]: a list attribute holds ints or floats, not NoneType"),
    (1 << 64, r"attribute 'perm': \d+ does not fit int64"),
    (1e300, "attribute 'perm': 1e\\+300 is beyond float32's range"),
    (b"01", "attribute 'perm': bytes is not an attribute value"),
])
def test_builder_attributes_of_other_types_are_usage_errors(value, where):
    b = footprint.GraphBuilder()
    x = b.input("x", "float32", [2, 3])
    with pytest.raises(footprint.UsageError, match="op 'Transpose': " + where):
        b.op("Transpose", [x], {"perm": value})


def test_builder_inputs_outputs_and_options_are_checked():
    b = footprint.GraphBuilder()
    x = b.input("x", "float32", [2, 3])
    with pytest.raises(footprint.UsageError, match=r"op 'Relu': inputs\[0\] is ndarray, not a Var"):
        b.op("Relu", [np.ones(3, np.float32)])
    with pytest.raises(footprint.UsageError, match="op 'Relu': inputs must be a list of Vars"):
        b.op("Relu", x)
    with pytest.raises(footprint.UsageError, match="op 'Relu': attrs must be a dict"):
        b.op("Relu", [x], [("alpha", 1)])
    with pytest.raises(footprint.UsageError, match="op 'Relu': outputs: -1 is below 0"):
        b.op("Relu", [x], {}, -1)
    with pytest.raises(footprint.UsageError, match="output: var is str, not a Var"):
        b.output("x")
    with pytest.raises(footprint.UsageError, match="max_value_bytes: -1 is below 0"):
        footprint.GraphBuilder(max_value_bytes=-1)
    # Numpy scalars and whole floats are the numbers they hold.
    t = b.op("Transpose", [x], {"perm": [np.int64(1), 0]})[0]
    assert t.shape == "[3,2]"
    y = b.input("y", "float32", [np.int64(2), 3.0, "N"])
    assert y.shape == "[2,3,N]"
    assert b.op("LeakyRelu", [x], {"alpha": np.float32(0.5)})[0].shape == "[2,3]"


# --- options of the wrong type: a UsageError naming the option, not pybind11's signature dump ---


@pytest.mark.parametrize("call, where", [
    (lambda m: footprint.Session(m, threads=1.5), "Session: threads: 1.5 is not a whole number"),
    (lambda m: footprint.Session(m, threads=True), "Session: threads: True is a bool"),
    (lambda m: footprint.Session(m, planner=None), "Session: planner: expected a str"),
    (lambda m: footprint.Session(m).run([np.zeros((1, 1, 8, 8), np.float32)]),
     "Session.run: inputs must be a dict"),
    (lambda m: footprint.analyze(m, inputs=3), "analyze: inputs: expected a str"),
    (lambda m: footprint.analyze(m, order=None), "analyze: order: expected a str"),
    (lambda m: footprint.sweep(m, "N", [1, 2], inputs=None), "sweep: inputs: expected a str"),
    (lambda m: footprint.sweep(m, "N", []), "sweep: values is empty"),
    (lambda m: footprint.plan([(0, 1, 8)], algo=None), "plan: algo: expected a str"),
    (lambda m: footprint.report(m, m.parent / "unused.html", time_limit=float("nan")),
     "report: time_limit: nan is not a number of seconds"),
    (lambda m: footprint.report(m, m.parent / "unused.html", time_limit=-1),
     "report: time_limit: -1 is not a number of seconds"),
    (lambda m: footprint.GraphBuilder().const([1, 2]), "const: array must be a numpy array"),
    (lambda m: footprint.GraphBuilder().input("x", "floaty", [1]),
     "input 'x': dtype 'floaty' is not a numpy dtype"),
    (lambda m: footprint.GraphBuilder().input("x", None, [1]), "input 'x': dtype is None"),
    (lambda m: footprint.GraphBuilder().to_model(3), "to_model: name: expected a str"),
])
def test_options_of_the_wrong_type_are_usage_errors(tiny_cnn, tmp_path, call, where):
    model = tmp_path / "tiny_cnn.onnx"  # a report refused too late would land beside it
    model.write_bytes(tiny_cnn.read_bytes())
    with pytest.raises(footprint.UsageError, match=where):
        call(model)
    assert not (tmp_path / "unused.html").exists()
