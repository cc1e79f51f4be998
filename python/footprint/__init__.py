"""footprint for Python: predict, plan and measure the memory of ONNX models.

    import footprint
    model = footprint.load("model.onnx")          # mapped, zero-copy
    a = footprint.analyze(model, dims={"N": 8})
    a.total_peak, a.lower_bound, a.alive_at_peak[0].why
    p = footprint.plan(a)                          # the model's arena
    out = footprint.Session(model).run({"x": x})   # numpy in, numpy out

Every figure comes from footprint's C++ library (the extension ``footprint._footprint``);
this package only converts arguments. docs/PYTHON.md has the whole API.
"""

import json as _json
import os as _os
from dataclasses import dataclass as _dataclass

import numpy as _np

from . import _footprint
from ._footprint import AliveTensor, Analysis, Model, Var, planners, read_tensor, write_tensor
from ._heap import heap_in_use
from .errors import FootprintError, ModelError, UsageError

__version__ = _footprint.__version__

__all__ = [
    "AliveTensor", "Analysis", "FootprintError", "GraphBuilder", "Model", "ModelError", "Plan",
    "Session", "UsageError", "Var", "analyze", "fit", "heap_in_use", "load", "plan", "planners",
    "read_tensor", "report", "sweep", "write_tensor",
]


def _is_path(x):
    return isinstance(x, (str, _os.PathLike))


def load(source, *, name=None, base_dir=None):
    """A Model from a path (mapped read-only) or from bytes, bytearray, memoryview or a numpy
    uint8 array (borrowed: the Model keeps a reference to the object and reads it in place; a
    bytearray cannot be resized while the Model lives). ``name`` appears in errors;
    ``base_dir`` lets borrowed bytes refer to external data files in that folder."""
    return _footprint.load(source, name, None if base_dir is None else _os.fspath(base_dir))


def _model_of(x):
    return x if isinstance(x, Model) else load(x)


class _Naming:
    """Gives a ModelError that names no file the model's name (its path, or load's name=)."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        if isinstance(error, ModelError) and error.path is None:
            error.path = self.name
        return False


def _dims(dims):
    return {str(k): int(v) for k, v in (dims or {}).items()}


def _shapes(shapes):
    return {str(k): [int(e) for e in v] for k, v in (shapes or {}).items()}


def _shapes_with_files(model, shapes, data_dir):
    """``shapes`` and, with ``data_dir``, the extents of its input_*.pb (the CLI's ``--data-dir``);
    an input given by both is a UsageError."""
    out = _shapes(shapes)
    if data_dir is None:
        return out
    for name, extents in _footprint._input_shapes(model, _os.fspath(data_dir)).items():
        if name in out:
            raise UsageError(f"input '{name}' is given by shapes and by data_dir")
        out[name] = list(extents)
    return out


def analyze(model_or_trace, dims=None, inputs=None, order="stored", shapes=None, data_dir=None,
            fuse=True):
    """The predicted memory timeline of a model (a Model or a path to an .onnx file) or of a
    trace (a path to a .json file in docs/TRACE_FORMAT.md, or the trace as a dict).

    ``dims`` binds named dims ({"N": 8}; unbound ones are 1); ``inputs`` is "caller" (held for
    the whole run) or "donated" (freed after their last use); by default "caller" for a model
    and the trace's own "arguments" for a trace, as the CLI does; ``order`` is "stored" or
    "memory"; ``shapes`` gives whole inputs their extents ({"audio": (1, 16000)}, the CLI's
    ``--shape``): what binds an input whose dims have no name; ``data_dir`` gives them the
    extents of a folder's input_0.pb, input_1.pb, ... (the CLI's ``--data-dir``).
    ``fuse=False`` keeps every activation a step of its own (the CLI's ``--no-fuse``); by
    default they run inside the Conv, MatMul or Gemm before them, as ``Session`` runs them.
    A size that is neither known nor bounded raises ModelError naming the tensor; sizes that
    depend on values are counted at their bounds (``to_json()["bounded"]``).
    The result's ``to_json()`` is what ``footprint analyze --json`` prints."""
    if hasattr(model_or_trace, "trace"):  # a footprint.torch Recording
        model_or_trace = model_or_trace.trace
    if isinstance(model_or_trace, dict):
        return _footprint._analyze_trace(_json.dumps(model_or_trace), "<trace>", inputs)
    if _is_path(model_or_trace) and _os.fspath(model_or_trace).endswith(".json"):
        path = _os.fspath(model_or_trace)
        if dims or shapes or data_dir is not None or order != "stored" or not fuse:
            raise UsageError("dims, shapes, data_dir, order and fuse apply to models; a trace "
                             "has concrete sizes")
        with open(path, encoding="utf-8") as f:
            return _footprint._analyze_trace(f.read(), path, inputs)
    model = _model_of(model_or_trace)
    with _Naming(model.name):
        return _footprint._analyze_model(model, _dims(dims), inputs or "caller", order, None, [],
                                         _shapes_with_files(model, shapes, data_dir), bool(fuse))


def sweep(model, dim, values, dims=None, inputs="caller", order="stored", shapes=None,
          data_dir=None, fuse=True):
    """The total peak and lower bound for each value of one dim, with the line through them:
    the "sweep" object of ``footprint analyze --sweep DIM=V1,V2,... --json``."""
    m = _model_of(model)
    a = _footprint._analyze_model(m, _dims(dims), inputs, order, str(dim),
                                  [int(v) for v in values], _shapes_with_files(m, shapes, data_dir),
                                  bool(fuse))
    return a.to_json()["sweep"]


_UNITS = {"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def _bytes(budget):
    """An int, or the CLI's text: "67108864", "64MiB", "1.5GiB"."""
    if isinstance(budget, int) and not isinstance(budget, bool) and budget >= 0:
        return budget
    import fractions
    import re
    m = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)(B|KiB|MiB|GiB|TiB)?", str(budget))
    if not m:
        raise UsageError(f"budget: {budget!r} is not a byte count (67108864, '64MiB', '1.5GiB')")
    value = fractions.Fraction(m.group(1)) * _UNITS[m.group(2) or ""]
    if value.denominator != 1:
        raise UsageError(f"budget: {budget!r} is not a whole number of bytes")
    return int(value)


def fit(model, budget, dim, dims=None, figure="total", inputs="caller", order="stored",
        shapes=None, data_dir=None, low=1, limit=1 << 40, fuse=True):
    """The largest value of ``dim`` whose predicted figure ("total" peak, "activations" peak or
    "arena" lower bound) fits ``budget`` (bytes, or "64MiB"): what ``footprint fit --json``
    prints, with the value above the answer and why it does not fit (over the budget, or a value
    the model refuses)."""
    m = _model_of(model)
    with _Naming(m.name):
        return _footprint._fit_model(m, m.name or "", _dims(dims), inputs, order,
                                     _shapes_with_files(m, shapes, data_dir), str(dim), str(figure),
                                     _bytes(budget), int(low), int(limit), bool(fuse))


def report(model_or_trace, path, dims=None, inputs=None, order="stored", algo="auto",
           time_limit=None, run=False):
    """Writes `footprint report`'s self-contained HTML page to ``path``: the timeline by
    category with the lower bound and the planned arena, the arena layout, what is alive at the
    peak, and the stored order beside the memory-aware one. ``run=True`` runs the model once
    (random inputs, one thread) and draws what the run held after each step; it needs the
    counting allocator, so from Python it draws nothing and says so on stderr. Returns what
    ``footprint report --json`` prints."""
    name = "<trace>"
    if hasattr(model_or_trace, "trace"):  # a footprint.torch Recording
        model_or_trace, name = model_or_trace.trace, model_or_trace.name
    if isinstance(model_or_trace, dict) or (
            _is_path(model_or_trace) and _os.fspath(model_or_trace).endswith(".json")):
        if dims or order != "stored" or run:
            raise UsageError("dims, order and run apply to models; a trace has its own")
        source_file = None
        if isinstance(model_or_trace, dict):
            text = _json.dumps(model_or_trace)
        else:
            name = source_file = _os.fspath(model_or_trace)
            with open(name, encoding="utf-8") as f:
                text = f.read()
        return _footprint._report_trace(text, name, path, inputs, algo, time_limit, source_file)
    return _footprint._report_model(_model_of(model_or_trace), path, _dims(dims),
                                    inputs or "caller", order, algo, time_limit, run)


@_dataclass(frozen=True)
class Plan:
    """Offsets for buffers in one arena; validated by the library before it is returned."""

    offsets: _np.ndarray  # offsets[i] belongs to buffer i
    arena_bytes: int
    lower_bound_bytes: int  # no plan of these buffers can be smaller
    optimal: bool
    algorithm: str
    solve_ms: float
    search_nodes: int
    buffers: int

    @property
    def arena(self):
        return self.arena_bytes

    @property
    def lower_bound(self):
        return self.lower_bound_bytes


def plan(buffers, algo="auto", time_limit=None, capacity=None, seed=1):
    """Plans an arena. ``buffers``: an Analysis (the model's activations and workspace, as
    ``footprint plan MODEL`` plans them), an (n, 3) integer array or a sequence of
    ``(lower, upper, size)`` with half-open lifetimes [lower, upper). ``algo`` is one of
    ``footprint.planners``; ``time_limit`` (seconds) bounds the searching planners;
    ``capacity`` stops a search at the first plan that fits."""
    if isinstance(buffers, Analysis):
        result = _footprint._plan_analysis(buffers, algo, time_limit, capacity, seed)
    else:
        rows = _np.asarray(buffers, dtype=_np.int64)
        if rows.size == 0:
            rows = rows.reshape(0, 3)
        result = _footprint._plan_rows(rows, algo, time_limit, capacity, seed)
    return Plan(**result)


class Session(_footprint.Session):
    """Runs a model inside its planned arena: ``run({name: array})`` returns
    ``{name: array}``, ``stats`` has what the last run predicted and measured. The session
    keeps its Model (and so the model's bytes) alive. With ``profile=True`` every step is timed
    and ``stats["profile"]`` lists the last run's steps as ``{"name", "op", "ms"}``. With
    ``fuse=False`` activations run as steps of their own (the CLI's ``--no-fuse``)."""

    def __init__(self, model, threads=1, dims=None, planner="auto", order="stored",
                 profile=False, fuse=True):
        model = _model_of(model)
        self._name = model.name
        super().__init__(model, threads, _dims(dims), planner, order, profile, bool(fuse))

    def run(self, inputs):
        with _Naming(self._name):
            return super().run(inputs)


class GraphBuilder(_footprint.GraphBuilder):
    """Builds a graph op by op over footprint's C++ builder: type and shape inference on every
    call, and value propagation (an op whose inputs all have values is computed at once). A
    propagated value lives as long as a Var (or a numpy view from ``Var.value``) holds it.

        b = footprint.GraphBuilder()
        x = b.input("x", "float32", ["N", 4])
        w = b.const(np.ones((4, 2), dtype=np.float32))
        y = b.relu(b.matmul(x, w))
        b.output(y, "y")
        model = b.to_model()      # or b.write_onnx("net.onnx")

    ``op(op_type, inputs, attrs={}, outputs=1)`` reaches any registered op; attributes are
    ints, floats, strings, lists of them, or numpy arrays (tensors)."""

    def _op1(self, op_type, *inputs, **attrs):
        return self.op(op_type, list(inputs), attrs)[0]

    def add(self, a, b):
        return self._op1("Add", a, b)

    def sub(self, a, b):
        return self._op1("Sub", a, b)

    def mul(self, a, b):
        return self._op1("Mul", a, b)

    def div(self, a, b):
        return self._op1("Div", a, b)

    def relu(self, x):
        return self._op1("Relu", x)

    def matmul(self, a, b):
        return self._op1("MatMul", a, b)

    def reshape(self, x, shape):
        return self._op1("Reshape", x, shape)
