"""Benchmarks and their parameter axes.

    @benchmark(tags=("cpu",))
    @product(n=[64, 128], threads=[1, 2])          # a grid: four cases
    def matmul(n, threads): ...

    @parametrize({"b": np.ones((1024, 1024))} for _ in range(1024))   # generated one at a time
    def add(a, b): return (a + b).sum()

Each decorator adds one axis to the benchmark; the cases are the product of its axes, the
first written (top) outermost. An axis is a sequence of parameter dicts (a list: it can be read
again and scanned for memos before the run), a function returning a fresh iterable of them, or
a one-shot iterable (a generator: only as the outermost axis, read once). Cases are made one at
a time as the run reaches them, so a family holds one parameter set at a time.
"""

import collections.abc
import functools
import inspect
import itertools

from .. import _args
from ._memo import Memo


def _noop(state, params):
    pass


class _Axis:
    def __init__(self, source):
        if isinstance(source, collections.abc.Sequence) and not isinstance(source, str):
            self.kind, self.source = "sequence", source
        elif callable(source):
            self.kind, self.source = "factory", source
        elif isinstance(source, collections.abc.Iterable):
            self.kind, self.source = "once", iter(source)
        else:
            raise TypeError(f"footprint.bench: an axis is a sequence, a function returning an "
                            f"iterable, or an iterable of parameter dicts, not "
                            f"{type(source).__name__}")

    def __iter__(self):
        if self.kind == "factory":
            return iter(self.source())
        if self.kind == "once":
            return self.source  # read once: a second pass finds it empty, as a generator does
        return iter(self.source)


class Benchmark:
    """A function to measure and its axes; build it with the decorators."""

    def __init__(self, fn):
        self.fn = fn
        self.name = fn.__name__
        self.tags = ()
        self.setUp = _noop
        self.tearDown = _noop
        self.namegen = None
        self.params = {}  # fixed parameters of every case
        self.uses = ()  # memos every case uses besides those in its parameters
        self.axes = []
        signature = inspect.signature(fn)
        self.arguments = tuple(signature.parameters)
        self.any_keyword = any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values())
        self.defaults = {k: p.default for k, p in signature.parameters.items()
                         if p.default is not inspect.Parameter.empty}

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self):
        return f"<footprint.bench.Benchmark {self.name}>"

    def add_axis(self, source):
        if any(a.kind == "once" for a in self.axes):
            raise TypeError(f"footprint.bench: {self.name}: a one-shot iterable (a generator) "
                            "can only be the outermost axis; pass a list or a function "
                            "returning a fresh iterable")
        self.axes.insert(0, _Axis(source))  # decorators apply bottom-up: the top is outermost
        return self

    def cases(self):
        """The cases' parameter dicts, one at a time, axes nested (the first outermost)."""
        return _nest(self.axes)

    def scanned_cases(self):
        """Per case, the memos its parameters name, when every axis can be read before the
        run (sequences); None otherwise."""
        if any(a.kind != "sequence" for a in self.axes):
            return None
        per_axis = [[_memos_in(e) for e in a.source] for a in self.axes]
        return [frozenset().union(*c) for c in itertools.product(*per_axis)] or [frozenset()]

    def static_memos(self, run_params):
        fixed = {**run_params, **self.params}
        return frozenset(self.uses) | _memos_in(fixed)


_END = object()


def _merge(entry, rest):
    return {**entry, **rest}


def _nest(axes):
    # No frame here keeps a case while it runs: `yield from` and map() hand values on without
    # binding them, so a generated parameter is gone once the runner drops its case (only an
    # outer axis's entry stays bound while its inner axes go round).
    if len(axes) <= 1:
        yield from (axes[0] if axes else [{}])
        return
    outer = iter(axes[0])
    while (entry := next(outer, _END)) is not _END:
        yield from map(functools.partial(_merge, entry), _nest(axes[1:]))
        entry = None


def _memos_in(params):
    return frozenset(m for v in params.values() if isinstance(v, Memo) for m in v.closure())


def _as_benchmark(fn):
    return fn if isinstance(fn, Benchmark) else Benchmark(fn)


def benchmark(fn=None, *, name=None, tags=(), setUp=None, tearDown=None, params=None,
              uses=()):
    """Makes ``fn`` a benchmark (bare ``@benchmark`` or with options). ``setUp(state, params)``
    and ``tearDown(state, params)`` run once per case around its repetitions; ``params`` fixes
    parameters of every case; ``uses`` names memos the cases use besides their parameters.
    ``tags`` is a sequence of strings, or one string: one tag (``tags="numpy"``)."""
    tags = _args.tags(tags, "footprint.bench: tags")

    def apply(f):
        b = _as_benchmark(f)
        b.name = name or b.name
        b.tags = tags or b.tags
        b.setUp = setUp or b.setUp
        b.tearDown = tearDown or b.tearDown
        b.params = {**b.params, **(params or {})}
        b.uses = tuple(b.uses) + tuple(m for u in uses for m in u.closure())
        return b

    return apply if fn is None else apply(fn)


def parametrize(parameters, *, namegen=None, tags=(), setUp=None, tearDown=None):
    """One axis of parameter dicts: a list, a function returning an iterable, or a one-shot
    iterable such as a generator (read lazily; outermost only). ``namegen(fn, **params)``, or a
    format string over the parameters, names the cases."""

    def apply(f):
        b = benchmark(_as_benchmark(f), tags=tags, setUp=setUp, tearDown=tearDown)
        b.namegen = namegen or b.namegen
        return b.add_axis(parameters)

    return apply


def product(*, namegen=None, tags=(), setUp=None, tearDown=None, **iterables):
    """A grid: one axis per keyword, the first outermost. Values are read as the run reaches
    them: a list, a function returning a fresh iterable, or (first keyword only) a one-shot
    iterable."""

    def as_axis(key, source):
        if isinstance(source, collections.abc.Sequence) and not isinstance(source, str):
            return [{key: v} for v in source]
        if callable(source):
            return lambda: ({key: v} for v in source())
        return ({key: v} for v in source)

    def apply(f):
        b = _as_benchmark(f)
        for key, source in reversed(list(iterables.items())):
            b = parametrize(as_axis(key, source), namegen=namegen, tags=tags, setUp=setUp,
                            tearDown=tearDown)(b)
        return b

    return apply
