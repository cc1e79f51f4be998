"""The runner: per case, memos in, setUp, warm-up, timed repetitions, tearDown, memos out; a
record of representations, times and memory; the run written by the C++ runner's stores."""

import collections.abc
import json
import math
import os
import time
import tracemalloc
from dataclasses import dataclass, field

from .. import _args, _footprint
from .._heap import heap_in_use, native_peak_sampler
from ..errors import UsageError
from ._core import Benchmark
from ._memo import Memo, MemoCache
from ._repr import param_json, run_representations, short_text

_END = object()


@dataclass(frozen=True)
class Summary:
    min: float
    median: float
    mean: float
    stddev: float  # sample standard deviation (n - 1); 0 for one sample


def _summary(samples):
    s = _footprint._summarize(list(samples))
    return Summary(s["min"], s["median"], s["mean"], s["stddev"])


@dataclass(slots=True)
class Record:
    """One case: what its parameters were (never the objects), its times and its memory."""

    name: str
    family: str
    tags: tuple
    params: dict  # name -> a builtin as it was, or a ParamRepr
    wall_ms: list = field(default_factory=list)  # one sample per repetition
    cpu_ms: list = field(default_factory=list)  # process CPU time (every thread's)
    # Heap above what the process held before setUp, over setUp + warm-up + repetitions +
    # tearDown: the larger of Python's (tracemalloc) and the native heap's (glibc's totals,
    # sampled); each is in counters too.
    peak_heap_bytes: int = 0
    net_heap_bytes: int = 0  # after tearDown minus before setUp (the larger of the two)
    allocations: int = 0  # not counted in Python: neither tracemalloc nor glibc counts calls
    peak_rss_bytes: int = 0  # VmHWM at the end of the case
    predicted_peak_bytes: int = 0  # set by the benchmark (state.predicted_peak_bytes)
    counters: dict = field(default_factory=dict)
    error: str = ""

    @property
    def wall(self):
        return _summary(self.wall_ms)

    @property
    def cpu(self):
        return _summary(self.cpu_ms)

    def to_json(self):
        """The record as a JSONL line holds it (docs/BENCH.md), summaries left to the reader."""
        j = {"type": "benchmark", "name": self.name, "family": self.family,
             "tags": list(self.tags),
             "params": [param_json(k, v) for k, v in self.params.items()],
             "repetitions": len(self.wall_ms),
             "wall_ms": {"samples": self.wall_ms}, "cpu_ms": {"samples": self.cpu_ms},
             # No "allocations": Python does not count them, and a 0 written here would be
             # read by `footprint compare` as a measured 0 (it refuses a missing figure instead).
             "memory": {"peak_heap_bytes": self.peak_heap_bytes,
                        "net_heap_bytes": self.net_heap_bytes,
                        "peak_rss_bytes": self.peak_rss_bytes,
                        "predicted_peak_bytes": self.predicted_peak_bytes},
             "counters": self.counters}
        if self.error:
            j["error"] = self.error
        return j


@dataclass
class Run:
    """A run's context and records; ``save`` writes them where the C++ runner writes."""

    context: dict
    records: list
    peak_rss_bytes: int = 0  # the highest VmHWM over the cases
    memo_creations: int = 0
    memo_evictions: int = 0
    # The run's own peaks above the heap when it started, memo creation included.
    peak_python_heap_bytes: int = 0
    peak_native_heap_bytes: int = 0
    # tracemalloc's peak over the run as it would read had the runner never reset it (the
    # runner resets it per case): for a caller measuring around run() with tracemalloc.
    tracemalloc_peak_bytes: int = 0

    def _text(self):
        return json.dumps({"context": self.context,
                           "records": [r.to_json() for r in self.records],
                           "peak_rss_bytes": self.peak_rss_bytes,
                           "memo_creations": self.memo_creations,
                           "memo_evictions": self.memo_evictions})

    def to_json(self):
        """What ``footprint bench --json`` prints for a run: context, records, peak RSS."""
        lines = [json.loads(line) for line in _footprint._to_jsonl(self._text()).splitlines()]
        return {"context": lines[0], "records": lines[1:], "peak_rss_bytes": self.peak_rss_bytes}

    def save(self, out=None, format="jsonl", db=None):  # noqa: A002: the CLI's --format
        """Appends the run to ``out`` (JSONL) or writes it there as Google Benchmark JSON
        (``format="gbench"``), and saves it in the SQLite file ``db``."""
        _check_format(format)
        store = _footprint._SqliteStore(str(db)) if db is not None else None
        _write(self, store, out, format)


def _check_format(format):  # noqa: A002
    if format not in ("jsonl", "gbench"):
        raise UsageError(f"footprint.bench: format must be jsonl or gbench, not {format!r}")


def _write(run, store, out, format):  # noqa: A002
    text = run._text()
    if store is not None:
        store.save(text)
    if out is not None:
        key = "gbench" if format == "gbench" else "jsonl"
        _footprint._write_run(text, **{key: str(out)})


class State:
    """What setUp, tearDown and the body may reach of their case."""

    def __init__(self, name, family, index, cache, used):
        self.name = name
        self.family = family
        self.index = index  # the case's position in its benchmark
        self.counters = {}  # extra named figures for the record
        self.predicted_peak_bytes = 0
        self._cache = cache
        self._used = used

    def memo(self, memo):
        """A memo's value (built when not live). Declare it in ``uses=`` so the runner can
        evict it after its last user; otherwise it goes at the end of this benchmark."""
        for m in memo.closure():
            self._used.add(m)
        return self._cache.get(memo)


class _Meter:
    """Heap peaks over windows (a case) and over the whole run. tracemalloc keeps one peak, so
    each window's is folded into the run's before it is reset."""

    def __init__(self, enabled, native_interval_s):
        self.enabled = enabled
        self._started = enabled and not tracemalloc.is_tracing()
        if self._started:
            tracemalloc.start()
        self._sampler = native_peak_sampler(native_interval_s) if enabled else None
        self.base = self._now()
        self.peak = list(self.base)

    def _now(self):
        if not self.enabled:
            return (0, 0)
        return tracemalloc.get_traced_memory()[0], heap_in_use()

    def _peaks(self):
        peaks = (tracemalloc.get_traced_memory()[1], self._sampler.take())
        self.peak = [max(p, q) for p, q in zip(self.peak, peaks)]
        return peaks

    def start(self):
        if self.enabled:
            self._peaks()
            tracemalloc.reset_peak()
        return self._now()

    def stop(self, start):
        """Peaks and net growths since ``start``: ((python, native), (python, native))."""
        if not self.enabled:
            return (0, 0), (0, 0)
        peaks, now = self._peaks(), self._now()
        return (tuple(max(p - s, 0) for p, s in zip(peaks, start)),
                tuple(n - s for n, s in zip(now, start)))

    def close(self):
        if self.enabled:
            self._peaks()
            self._sampler.stop()
        if self._started:
            tracemalloc.stop()


@dataclass
class _Options:
    repetitions: int
    warmup: int
    case_rss: bool
    reprs: object  # a Representations
    # Representations of the values every case shares (run params, benchmarks' fixed params),
    # made once: the run holds those values throughout, so their ids stay theirs.
    shared: dict = field(default_factory=dict)

    def represent(self, value, stable):
        if not stable:
            return self.reprs.represent(value)
        if id(value) not in self.shared:
            self.shared[id(value)] = self.reprs.represent(value)
        return self.shared[id(value)]


def _flatten(benchmarks):
    if isinstance(benchmarks, Benchmark):
        return [benchmarks]
    out = []
    for b in benchmarks:
        if not isinstance(b, Benchmark):
            raise TypeError(f"footprint.bench.run: expected benchmarks, got {type(b).__name__}")
        out.append(b)
    return out


def _last_users(benches, run_params):
    """Memo -> (benchmark index, case index) of its last user in the run's order; the case
    index is inf where the benchmark's cases cannot be read before the run."""
    last = {}
    for bi, b in enumerate(benches):
        static = b.static_memos(run_params)
        scanned = b.scanned_cases()
        if scanned is None:
            last.update((m, (bi, math.inf)) for m in static)
            continue
        for ci, memos in enumerate(scanned):
            last.update((m, (bi, ci)) for m in static | memos)
    return last


def _arguments(b, case, run_params):
    given = {k: v for k, v in run_params.items() if b.any_keyword or k in b.arguments}
    return {**b.defaults, **given, **b.params, **case}


def _case_name(b, named, kept, raw):
    if b.namegen is not None:
        return b.namegen.format(**raw) if isinstance(b.namegen, str) else b.namegen(b.fn, **raw)
    if not named:
        return b.name
    return b.name + "[" + ",".join(f"{k}={short_text(k, kept[k])}" for k in named) + "]"


def _counters_of(value, name):
    if value is None:
        return {}
    if isinstance(value, (int, float)) and not isinstance(value, bool) or \
            hasattr(value, "dtype") and getattr(value, "shape", None) == ():
        return {"value": float(value)}
    if isinstance(value, collections.abc.Mapping):
        return {str(k): float(v) for k, v in value.items()}
    raise TypeError(f"{name} returned {type(value).__name__}: a benchmark returns None, a "
                    "number or a dict of numbers (its counters)")


def _resolve(kwargs, cache, used):
    for k, v in kwargs.items():
        if isinstance(v, Memo):
            used.update(v.closure())
            kwargs[k] = cache.get(v)
    return kwargs


def _time_body(b, kwargs, o, record):
    for _ in range(o.warmup):
        b.fn(**kwargs)
    value = None
    for _ in range(o.repetitions):
        c0, t0 = time.process_time_ns(), time.perf_counter_ns()
        value = b.fn(**kwargs)
        record.wall_ms.append((time.perf_counter_ns() - t0) / 1e6)
        record.cpu_ms.append((time.process_time_ns() - c0) / 1e6)
    return value


def _measure(b, kwargs, state, meter, o, record):
    start = meter.start()
    b.setUp(state, kwargs)
    try:
        counters = _counters_of(_time_body(b, kwargs, o, record), record.name)
    finally:
        b.tearDown(state, kwargs)  # a body that raised leaves its case to tear down too
    (python_peak, native_peak), (python_net, native_net) = meter.stop(start)
    record.peak_heap_bytes = max(python_peak, native_peak)
    record.net_heap_bytes = max(python_net, native_net)
    if meter.enabled:
        record.counters.update(python_peak_heap_bytes=python_peak,
                               native_peak_heap_bytes=native_peak,
                               python_net_heap_bytes=python_net, native_net_heap_bytes=native_net)
    record.counters.update(counters, **state.counters)
    record.predicted_peak_bytes = int(state.predicted_peak_bytes)


def _run_case(b, index, case, run_params, cache, meter, o):
    """The case's record and the memos it used. Nothing here outlives the call but the record:
    the values go with this frame."""
    used = set(b.uses)
    record = Record(name=b.name, family=b.name, tags=b.tags, params={})
    try:
        kwargs = _resolve(_arguments(b, case, run_params), cache, used)
        for m in b.uses:
            cache.get(m)
        stable = {id(v) for v in (*run_params.values(), *b.params.values())}
        record.params = {k: o.represent(v, id(v) in stable and k not in case)
                         for k, v in kwargs.items()}
        record.name = _case_name(b, [k for k in kwargs if k in case or k in b.params],
                                 record.params, kwargs)
        if o.case_rss:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        state = State(record.name, b.name, index, cache, used)
        _measure(b, kwargs, state, meter, o, record)
    except Exception as e:  # noqa: BLE001: a failing case is recorded and the run goes on
        record.error = f"{type(e).__name__}: {e}"
        record.wall_ms, record.cpu_ms = [], []
    memory = _footprint._process_memory()
    record.peak_rss_bytes = memory["peak_rss_bytes"] if memory else 0
    return record, used


def _evict(cache, memos):
    evicted = [m for m in memos if cache.evict(m)]
    if evicted:
        _footprint._malloc_trim()


def _run_benchmark(bi, b, last, run_params, cache, meter, o, evict, emit):
    cases = b.cases()
    ci, used_here = 0, set()
    while (case := next(cases, _END)) is not _END:
        record, used = _run_case(b, ci, case, run_params, cache, meter, o)
        case = None  # before the next case is made: one parameter set alive at a time
        emit(record)
        if evict:
            _evict(cache, [m for m in used if last.get(m) == (bi, ci)])
        used_here |= used
        ci += 1
    if evict:  # memos whose last user could not be known before the run: this benchmark's end
        _evict(cache, [m for m in used_here if last.get(m, (bi, 0))[0] <= bi])


def _context():
    # The C++ run id is the start second and the pid: unique per process, but one Python
    # process may start several runs in a second. The nanoseconds keep them unique and ordered,
    # and so the date and the nanoseconds come from one clock reading: a C++ date taken just
    # before a second ends, beside nanoseconds read just after, would order that run first.
    context = _footprint._run_context()
    now = time.time_ns()
    context["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now // 1_000_000_000))
    context["run_id"] = f"{context['date']}-{os.getpid()}.{now % 1_000_000_000:09d}"
    return context


def run(benchmarks, params=None, *, tags=(), repetitions=5, warmup=1, memos=None,
        memo_budget=None, evict=True, case_rss=False, memory=True, native_interval_s=0.001,
        reprs=None, out=None, format="jsonl", db=None, on_record=None,
        keep_records=True):  # noqa: A002
    """Runs benchmarks (a Benchmark or a sequence of them) and returns a ``Run``.

    ``params`` fills arguments the benchmarks' own parameters leave open; ``tags`` keeps the
    benchmarks with one of them; ``memos`` is a MemoCache to use (``memo_budget`` bounds a new
    one); ``evict=False`` keeps memos until the end; ``case_rss`` resets the RSS high-water
    mark before each case; ``memory=False`` measures time only (no tracemalloc, no sampler);
    ``reprs`` maps types to representation functions for this run. ``out``/``format``/``db``
    save the run as ``Run.save`` does (the SQLite file is opened before anything runs).
    ``keep_records=False`` hands each record to ``on_record`` and keeps none (a Python record
    costs about 2 kB: a family of millions of cases would hold gigabytes); then there is
    nothing to save, and ``out``/``db`` are refused."""
    repetitions = _args.integer(repetitions, "footprint.bench.run: repetitions")
    warmup = _args.integer(warmup, "footprint.bench.run: warmup")
    if repetitions < 1:
        raise UsageError("footprint.bench.run: repetitions must be at least 1")
    if warmup < 0:
        raise UsageError("footprint.bench.run: warmup must be at least 0")
    tags = _args.tags(tags, "footprint.bench.run: tags")
    _check_format(format)
    if not keep_records and (out is not None or db is not None):
        raise UsageError("footprint.bench.run: out and db save the kept records; "
                         "keep_records=False keeps none")
    store = _footprint._SqliteStore(str(db)) if db is not None else None
    run_params = dict(params or {})
    benches = [b for b in _flatten(benchmarks) if not tags or set(tags) & set(b.tags)]
    o = _Options(repetitions, warmup, case_rss, run_representations(reprs))
    own_cache = memos is None
    cache = MemoCache(memo_budget) if own_cache else memos
    creations0, evictions0 = cache.creations, cache.evictions
    last = _last_users(benches, run_params)
    result = Run(context=_context(), records=[])

    def emit(record):
        if keep_records:
            result.records.append(record)
        result.peak_rss_bytes = max(result.peak_rss_bytes, record.peak_rss_bytes)
        if on_record is not None:
            on_record(record)

    meter = _Meter(memory, native_interval_s)
    try:
        for bi, b in enumerate(benches):
            _run_benchmark(bi, b, last, run_params, cache, meter, o, evict, emit)
    finally:
        if own_cache:
            cache.clear()
        meter.close()
    result.memo_creations = cache.creations - creations0
    result.memo_evictions = cache.evictions - evictions0
    result.peak_python_heap_bytes = max(meter.peak[0] - meter.base[0], 0)
    result.peak_native_heap_bytes = max(meter.peak[1] - meter.base[1], 0)
    result.tracemalloc_peak_bytes = meter.peak[0]
    _write(result, store, out, format)
    return result
