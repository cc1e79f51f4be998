"""footprint's pytest plugin: memory limits on tests, measured or predicted.

    pytest -p footprint.pytest_plugin

    @pytest.mark.footprint_limit("64 MiB")
    def test_load(): ...                 # fails when the test's measured peak exceeds 64 MiB

    @pytest.mark.footprint_predict("model.onnx", dims={"N": 8}, max_peak="32 MiB")
    def test_model(): ...                # fails when footprint.analyze predicts more, unrun

What footprint_limit measures, above what the process held when the test started: the larger
of Python's peak (tracemalloc: every allocation through Python's allocators, numpy's data
included) and the native heap's peak (glibc's mallinfo2 totals, footprint.heap_in_use, sampled
every millisecond by a native thread while the test runs: a peak shorter than that can be missed).
On failure it prints the largest Python allocations still alive when the test ended.
"""

import re
import tracemalloc

import pytest

from . import analyze
from ._heap import heap_in_use, native_peak_sampler

_UNITS = {"": 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "kib": 1024,
          "mib": 1024**2, "gib": 1024**3}


def parse_bytes(text):
    """'64 MiB' -> 67108864; ints pass through."""
    if isinstance(text, int):
        return text
    m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _UNITS:
        raise pytest.UsageError(f"footprint: cannot read {text!r} as a size (e.g. '64 MiB')")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "footprint_limit(limit): fail when the test's measured memory peak (Python "
                   "and native heap) exceeds limit ('64 MiB')")
    config.addinivalue_line(
        "markers", "footprint_predict(model, dims=None, max_peak=...): fail when footprint "
                   "predicts a total peak above max_peak for the model")


def _alive_lines(snapshot, limit=10):
    stats = snapshot.statistics("lineno")[:limit]
    return "\n".join(f"    {s.size:>12,} B  {s.traceback}" for s in stats)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    predict = item.get_closest_marker("footprint_predict")
    if predict is not None:
        model = predict.args[0] if predict.args else predict.kwargs["model"]
        limit = parse_bytes(predict.kwargs["max_peak"])
        peak = analyze(model, dims=predict.kwargs.get("dims")).total_peak
        if peak > limit:
            pytest.fail(f"footprint: {model} is predicted to peak at {peak:,} B, above "
                        f"max_peak {limit:,} B", pytrace=False)
    mark = item.get_closest_marker("footprint_limit")
    if mark is None:
        yield
        return
    limit = parse_bytes(mark.args[0] if mark.args else mark.kwargs["limit"])
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    python_base = tracemalloc.get_traced_memory()[0]
    native_base = heap_in_use()
    native = native_peak_sampler()
    try:
        outcome = yield
    finally:
        native_peak = native.take() - native_base
        native.stop()
    python_peak = tracemalloc.get_traced_memory()[1] - python_base
    snapshot = tracemalloc.take_snapshot()
    if not was_tracing:
        tracemalloc.stop()
    peak = max(python_peak, native_peak)
    item.user_properties.append(("footprint_peak_bytes", peak))
    if outcome.excinfo is None and peak > limit:
        pytest.fail(f"footprint: peak {peak:,} B above the limit {limit:,} B (Python "
                    f"{python_peak:,} B, native heap {native_peak:,} B); the largest Python "
                    f"allocations alive at the test's end:\n{_alive_lines(snapshot)}",
                    pytrace=False)
