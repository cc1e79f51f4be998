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
import numbers as _numbers
import os as _os
from dataclasses import dataclass as _dataclass

import numpy as _np

from . import _args, _footprint
from ._footprint import AliveTensor, Analysis, Model, Var, planners, read_tensor, write_tensor
from ._heap import heap_in_use
from .errors import FootprintError, ModelError, UsageError

__version__ = _footprint.__version__

__all__ = [
    "AliveTensor", "Analysis", "FootprintError", "GraphBuilder", "Model", "ModelError", "Plan",
    "Session", "UsageError", "Var", "analyze", "fit", "heap_in_use", "load", "plan", "planners",
    "read_tensor", "report", "sweep", "write_tensor",
]


def _seconds(value, what):
    """A time limit in seconds: None, or a number >= 0 (not NaN, not a bool)."""
    if value is not None and (not isinstance(value, _numbers.Real) or isinstance(value, bool) or
                              not value >= 0):
        raise UsageError(f"{what}: {value!r} is not a number of seconds >= 0")
    return None if value is None else float(value)


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
    """{name: value}: each value an integer (used exactly: 8.5 is refused, not made 8)."""
    return {str(k): _args.int64(v, f"dims[{str(k)!r}]")
            for k, v in _args.mapping(dims, "dims").items()}


def _shapes(shapes):
    """{input: extents}: each extent an integer."""
    out = {}
    for k, v in _args.mapping(shapes, "shapes").items():
        if isinstance(v, (str, bytes)) or not _is_iterable(v):
            raise UsageError(f"shapes[{str(k)!r}]: expected a sequence of extents, got "
                             f"{type(v).__name__} {v!r}")
        out[str(k)] = [_args.int64(e, f"shapes[{str(k)!r}][{i}]") for i, e in enumerate(v)]
    return out


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


def _dir(data_dir):
    """``data_dir`` as the extension takes it: its input_*.pb also give the values extents depend
    on (a Reshape's shape, a Range's limit given as inputs), as the CLI's ``--data-dir``."""
    return None if data_dir is None else _os.fspath(data_dir)


def _is_recording(obj):
    """Whether ``obj`` is a footprint.torch Recording, asked of its class: ``hasattr(obj,
    "trace")`` built the whole trace (a property) only to throw it away, which was half of
    analyze's time on a recording of 10^5 ops."""
    return isinstance(getattr(type(obj), "trace", None), property)


def analyze(model_or_trace, dims=None, inputs=None, order="stored", shapes=None, data_dir=None,
            fuse=True, keep_16bit=False):
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
    ``keep_16bit=True`` keeps a float16/bfloat16 model's activations in their stored type (the
    CLI's ``--keep-16bit``); by default those between kernels that compute in float32 are
    counted as the float32 carriers ``Session`` runs them as.
    A size that is neither known nor bounded raises ModelError naming the tensor; sizes that
    depend on values are counted at their bounds (``to_json()["bounded"]``).
    The result's ``to_json()`` is what ``footprint analyze --json`` prints."""
    inputs = _args.text(inputs, "analyze: inputs", optional=True)
    order = _args.text(order, "analyze: order")
    if _is_recording(model_or_trace):
        if inputs is None:
            return model_or_trace.analyze()  # (predict's: from its engine's trace text)
        model_or_trace = model_or_trace.trace
    if isinstance(model_or_trace, dict):
        return _footprint._analyze_trace(_json.dumps(model_or_trace), "<trace>", inputs)
    if _is_path(model_or_trace) and _os.fspath(model_or_trace).endswith(".json"):
        path = _os.fspath(model_or_trace)
        if (dims or shapes or data_dir is not None or order != "stored" or not fuse
                or keep_16bit):
            raise UsageError("dims, shapes, data_dir, order, fuse and keep_16bit apply to "
                             "models; a trace "
                             "has concrete sizes")
        with open(path, encoding="utf-8") as f:
            return _footprint._analyze_trace(f.read(), path, inputs)
    model = _model_of(model_or_trace)
    with _Naming(model.name):
        return _footprint._analyze_model(model, _dims(dims), inputs or "caller", order, None, [],
                                         _shapes_with_files(model, shapes, data_dir), bool(fuse),
                                         not keep_16bit, _dir(data_dir))


def sweep(model, dim, values, dims=None, inputs="caller", order="stored", shapes=None,
          data_dir=None, fuse=True, keep_16bit=False):
    """The total peak and lower bound for each value of one dim, with the line through them:
    the "sweep" object of ``footprint analyze --sweep DIM=V1,V2,... --json``. ``dim`` must be
    a dim an input of the model names (or "batch" for a model the library re-batches): any
    other would sweep nothing and draw a flat line, so it is a UsageError listing the model's
    named dims."""
    if not isinstance(dim, str):
        raise UsageError(f"sweep: dim must be a dim's name (a str), not {type(dim).__name__}")
    if isinstance(values, (str, bytes)):
        raise UsageError(f"sweep: values must be a sequence of integers, not {values!r}")
    values = [_args.int64(v, f"sweep: values[{i}]") for i, v in enumerate(values)]
    if not values:
        raise UsageError("sweep: values is empty: a sweep needs the dim's values")
    inputs, order = _args.text(inputs, "sweep: inputs"), _args.text(order, "sweep: order")
    m = _model_of(model)
    with _Naming(m.name):
        a = _footprint._analyze_model(m, _dims(dims), inputs, order, dim, values,
                                      _shapes_with_files(m, shapes, data_dir), bool(fuse),
                                      not keep_16bit, _dir(data_dir))
    return a.to_json()["sweep"]


def _bytes(budget):
    """An int, or text: "67108864", "64MiB", "1.5 GiB", "24 GB" (kB, MB, GB powers of 1000;
    KiB, MiB, GiB of 1024)."""
    if isinstance(budget, int) and not isinstance(budget, bool) and budget >= 0:
        return budget
    value = None if isinstance(budget, bool) else _args.byte_text(str(budget))
    if value is None:
        raise UsageError(f"budget: {budget!r} is not a byte count (67108864, '64MiB', '1.5GiB', "
                         "'24 GB')")
    if value.denominator != 1:
        raise UsageError(f"budget: {budget!r} is not a whole number of bytes")
    return int(value)


def fit(model, budget, dim, dims=None, figure="total", inputs="caller", order="stored",
        shapes=None, data_dir=None, low=1, limit=1 << 40, fuse=True, keep_16bit=False):
    """The largest value of ``dim`` whose predicted figure ("total" peak, "activations" peak or
    "arena" lower bound) fits ``budget`` (bytes, or "64MiB"): what ``footprint fit --json``
    prints, with the value above the answer and why it does not fit (over the budget, or a value
    the model refuses)."""
    inputs, order = _args.text(inputs, "fit: inputs"), _args.text(order, "fit: order")
    m = _model_of(model)
    with _Naming(m.name):
        return _footprint._fit_model(m, m.name or "", _dims(dims), inputs, order,
                                     _shapes_with_files(m, shapes, data_dir), str(dim), str(figure),
                                     _bytes(budget), _args.int64(low, "fit: low"),
                                     _args.int64(limit, "fit: limit"), bool(fuse),
                                     not keep_16bit, _dir(data_dir))


def report(model_or_trace, path, dims=None, inputs=None, order="stored", algo="auto",
           time_limit=None, run=False):
    """Writes `footprint report`'s self-contained HTML page to ``path``: the timeline by
    category with the lower bound and the planned arena, the arena layout, what is alive at the
    peak, and the stored order beside the memory-aware one. ``run=True`` runs the model once
    (random inputs, one thread) and draws what the run held after each step; it needs the
    counting allocator, so from Python it draws nothing and says so on stderr. Returns what
    ``footprint report --json`` prints."""
    inputs = _args.text(inputs, "report: inputs", optional=True)
    order, algo = _args.text(order, "report: order"), _args.text(algo, "report: algo")
    time_limit = _seconds(time_limit, "report: time_limit")
    name = "<trace>"
    if _is_recording(model_or_trace):
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
    algo = _args.text(algo, "plan: algo")
    time_limit = _seconds(time_limit, "plan: time_limit")
    if capacity is not None:
        capacity = _args.int64(capacity, "plan: capacity", minimum=0)
    seed = _args.integer(seed, "plan: seed", minimum=0)
    if seed >= 1 << 64:
        raise UsageError(f"plan: seed: {seed} does not fit uint64")
    if isinstance(buffers, Analysis):
        result = _footprint._plan_analysis(buffers, algo, time_limit, capacity, seed)
    else:
        result = _footprint._plan_rows(_args.buffer_rows(buffers), algo, time_limit, capacity,
                                       seed)
    return Plan(**result)


class Session(_footprint.Session):
    """Runs a model inside its planned arena: ``run({name: array})`` returns
    ``{name: array}``, ``stats`` has what the last run predicted and measured. The session
    keeps its Model (and so the model's bytes) alive. With ``profile=True`` every step is timed
    and ``stats["profile"]`` lists the last run's steps as ``{"name", "op", "ms"}``. With
    ``fuse=False`` activations run as steps of their own (the CLI's ``--no-fuse``). With
    ``keep_16bit=True`` a float16/bfloat16 model's activations stay in their stored type (the
    CLI's ``--keep-16bit``); by default those between kernels that compute in float32 are
    float32 carriers of the same 16-bit values (``stats["float32_carriers"]``)."""

    def __init__(self, model, threads=1, dims=None, planner="auto", order="stored",
                 profile=False, fuse=True, keep_16bit=False):
        model = _model_of(model)
        self._name = model.name
        super().__init__(model, _args.integer(threads, "Session: threads"), _dims(dims),
                         _args.text(planner, "Session: planner"),
                         _args.text(order, "Session: order"), bool(profile), bool(fuse),
                         not keep_16bit)
        # The sequences and optionals among the inputs and outputs, which travel as tensors.
        self._held_io = self._held

    def run(self, inputs):
        if not isinstance(inputs, dict):
            raise UsageError(f"Session.run: inputs must be a dict of name: array, not "
                             f"{type(inputs).__name__}")
        for name in inputs:
            if not isinstance(name, str):
                raise UsageError(f"Session.run: input names are strings, not {name!r}")
        held_inputs, held_outputs = self._held_io
        with _Naming(self._name):
            return _regrouped(super().run(_flattened(inputs, held_inputs)), held_outputs)


def _flattened(inputs, held):
    """A sequence input's list as its elements, named "s[0]", "s[1]", ... (as the runtime takes
    them); an optional input given as None omitted (it holds nothing)."""
    out = {}
    for name, value in inputs.items():
        kind = held.get(name)
        if kind == "sequence":
            if not isinstance(value, (list, tuple)):
                raise UsageError(f"Session.run: input {name!r} is a sequence; give a list of "
                                 f"arrays, not {type(value).__name__}")
            for i, element in enumerate(value):
                out[f"{name}[{i}]"] = element
        elif kind == "optional" and value is None:
            continue
        else:
            out[name] = value
    return out


def _regrouped(outputs, held):
    """The elements of a sequence output ("s[0]", "s[1]", ...) as one list under its name; an
    empty optional output as None."""
    out = {}
    for name, kind in held.items():
        if kind == "sequence" and name not in outputs:
            out[name] = []
    for name, value in outputs.items():
        base, _, index = name.rpartition("[")
        if base and index.endswith("]") and held.get(base) == "sequence":
            out.setdefault(base, []).append(value)
        else:
            out[name] = value
    for name, kind in held.items():
        if kind == "optional" and name not in out:
            out[name] = None
    return out


def _is_iterable(x):
    try:
        iter(x)
    except TypeError:
        return False
    return True


def _extents(shape, what):
    """A builder input's extents: each an int >= 0 (or a float that is a whole number) or a
    non-empty dim name."""
    if isinstance(shape, (str, bytes)) or not _is_iterable(shape):
        raise UsageError(f"{what}: expected a list of extents (ints or dim names), got "
                         f"{type(shape).__name__} {shape!r}")
    out = []
    for i, e in enumerate(shape):
        if isinstance(e, str):
            if not e:
                raise UsageError(f"{what}[{i}]: a dim's name cannot be empty")
            out.append(e)
        elif isinstance(e, _numbers.Real):
            out.append(_args.int64(e, f"{what}[{i}]", minimum=0))
        else:
            raise UsageError(f"{what}[{i}]: an extent is an int or a dim's name (a str), not "
                             f"{type(e).__name__} {e!r}")
    return out


_ATTR_TYPES = "int, float, str, a list of ints or of floats, a numpy array, or a subgraph"
_FLOAT32_MAX = float(_np.finfo(_np.float32).max)


def _float_attr(value, what):
    # ONNX float attributes are float32: a finite value beyond its range would become inf.
    f = float(value)
    if _np.isfinite(f) and abs(f) > _FLOAT32_MAX:
        raise UsageError(f"{what}: {value!r} is beyond float32's range (a float attribute is "
                         "a float32)")
    return f


def _attr_value(value, what):
    """An attribute value as the types the extension converts: int, float, str, list of ints,
    list of floats, numpy array, a subgraph's builder; anything else is a UsageError naming
    the attribute."""
    if isinstance(value, _footprint.GraphBuilder):
        return value
    if isinstance(value, (bool, _np.bool_)):
        return int(value)
    if isinstance(value, _numbers.Integral):
        return _args.int64(value, what)
    if isinstance(value, _numbers.Real):
        return _float_attr(value, what)
    if isinstance(value, str):
        return value
    if isinstance(value, _np.ndarray):
        return value
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, _numbers.Integral) for v in value):
            return [_args.int64(v, f"{what}[{i}]") for i, v in enumerate(value)]
        for i, v in enumerate(value):
            if not isinstance(v, _numbers.Real):
                raise UsageError(f"{what}[{i}]: a list attribute holds ints or floats, not "
                                 f"{type(v).__name__} {v!r}")
        return [_float_attr(v, f"{what}[{i}]") for i, v in enumerate(value)]
    raise UsageError(f"{what}: {type(value).__name__} is not an attribute value; expected "
                     f"{_ATTR_TYPES}")


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
    ints, floats, strings, lists of ints or floats, numpy arrays (tensors) or subgraphs. An
    argument of another type (an extent 4.5, an attribute None or a dict, an input that is not
    a Var) is a UsageError naming it and what it accepts.

    Control flow: ``subgraph()`` makes a builder for an If branch or a Loop/Scan body, whose ops
    may read this graph's Vars; its ``input()``s are the subgraph's formal inputs and its
    ``output()``s its results. Finish it, then pass it:

        then_b, else_b = b.subgraph(), b.subgraph()
        then_b.output(then_b.relu(x)); else_b.output(else_b.mul(x, x))
        y, = b.if_else(cond, then_b, else_b)
        body = b.subgraph()                      # Loop: (iteration, cond, carried...) ->
        i, c, s = body.input("i", "int64", []), body.input("c", "bool", []), body.input("s", "float32", [4])
        body.output(c); body.output(body.add(s, x))          # (cond, carried..., scans...)
        total, = b.loop(b.const(np.array(3)), None, [s0], body)
        summed = b.op("Scan", [s0, xs], {"body": scan_body, "num_scan_inputs": 1}, outputs=2)"""

    def __init__(self, opset=18, max_value_bytes=64 << 20, propagate=True, threads=1,
                 name="main"):
        super().__init__(_args.integer(opset, "GraphBuilder: opset", minimum=1),
                         _args.integer(max_value_bytes, "GraphBuilder: max_value_bytes",
                                       minimum=0),
                         bool(propagate), _args.integer(threads, "GraphBuilder: threads"),
                         _args.text(name, "GraphBuilder: name"))

    def input(self, name, dtype, shape):
        """A graph input: ``dtype`` a numpy dtype or its name ("float32"); ``shape`` lists its
        extents, each an int >= 0 or a dim's name."""
        name = _args.text(name, "input: name")
        if dtype is None:  # numpy reads None as float64
            raise UsageError(f"input {name!r}: dtype is None; name it (\"float32\")")
        try:
            dtype = _np.dtype(dtype)
        except TypeError:
            raise UsageError(f"input {name!r}: dtype {dtype!r} is not a numpy dtype "
                             "(\"float32\", np.int64)") from None
        return super().input(name, dtype, _extents(shape, f"input {name!r}: shape"))

    def const(self, array, name=""):
        """A constant holding a copy of ``array`` (a numpy array: its dtype is the constant's)."""
        if not isinstance(array, _np.ndarray):
            raise UsageError(f"const: array must be a numpy array (its dtype is the constant's), "
                             f"not {type(array).__name__}")
        return super().const(array, _args.text(name, "const: name"))

    def subgraph(self):
        """A builder for a subgraph of this graph (an If branch, a Loop or Scan body)."""
        sub = GraphBuilder.__new__(GraphBuilder)
        _footprint.GraphBuilder.__init__(sub, self)
        return sub

    def if_else(self, cond, then_branch, else_branch):
        """If(cond) with the two branches' outputs (builders made by ``subgraph()``)."""
        self._check_var(cond, "if_else: cond")
        for what, sub in (("then_branch", then_branch), ("else_branch", else_branch)):
            self._check_subgraph(sub, f"if_else: {what}")
        return super().if_else(cond, then_branch, else_branch)

    def loop(self, max_trip, cond, carried, body):
        """Loop(max_trip, cond, carried...) running ``body`` (inputs: iteration int64 [],
        condition bool [], carried...; outputs: condition, carried..., scan outputs...);
        ``max_trip`` or ``cond`` may be None. Returns the final carried values, then the scan
        outputs stacked along a new first axis."""
        for what, v in (("max_trip", max_trip), ("cond", cond)):
            if v is not None:
                self._check_var(v, f"loop: {what}")
        if isinstance(carried, Var) or not _is_iterable(carried):
            raise UsageError(f"loop: carried must be a list of Vars, not {type(carried).__name__}")
        carried = list(carried)
        for i, v in enumerate(carried):
            self._check_var(v, f"loop: carried[{i}]")
        self._check_subgraph(body, "loop: body")
        return super().loop(max_trip, cond, carried, body)

    @staticmethod
    def _check_var(v, what):
        if not isinstance(v, Var):
            raise UsageError(f"{what} is {type(v).__name__}, not a Var")

    @staticmethod
    def _check_subgraph(sub, what):
        if not isinstance(sub, _footprint.GraphBuilder):
            raise UsageError(f"{what} is {type(sub).__name__}, not a builder from subgraph()")

    def to_model(self, name="<builder>"):
        return super().to_model(_args.text(name, "to_model: name"))

    def op(self, op_type, inputs, attrs=None, outputs=1, domain=""):
        op_type = _args.text(op_type, "op: op_type")
        where = f"op {op_type!r}"
        if isinstance(inputs, (Var, str, bytes)) or not _is_iterable(inputs):
            raise UsageError(f"{where}: inputs must be a list of Vars (None for an omitted "
                             f"optional input), not {type(inputs).__name__}")
        inputs = list(inputs)
        for i, v in enumerate(inputs):
            if v is not None and not isinstance(v, Var):
                raise UsageError(f"{where}: inputs[{i}] is {type(v).__name__}, not a Var (make "
                                 "a constant with const(array))")
        if attrs is None:
            attrs = {}
        if not isinstance(attrs, dict):
            raise UsageError(f"{where}: attrs must be a dict of name: value, not "
                             f"{type(attrs).__name__}")
        converted = {}
        for key, value in attrs.items():
            if not isinstance(key, str):
                raise UsageError(f"{where}: attribute names are strings, not {key!r}")
            converted[key] = _attr_value(value, f"{where}: attribute {key!r}")
        return super().op(op_type, inputs, converted,
                          _args.integer(outputs, f"{where}: outputs", minimum=0),
                          _args.text(domain, f"{where}: domain"))

    def output(self, var, name=""):
        if not isinstance(var, Var):
            raise UsageError(f"output: var is {type(var).__name__}, not a Var")
        return super().output(var, _args.text(name, "output: name"))

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
