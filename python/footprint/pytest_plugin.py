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

Sizes are byte counts or text: "64 MiB" is 67,108,864 B, while "64 MB" is 64,000,000 B (kB, MB,
GB are powers of 1000, as in SI; pytest-memray's "64MB" means 64 MiB). A malformed marker (a
negative, fractional, bool or NaN limit, an unknown unit, a missing argument) is the test's
error at setup, naming the marker and the value.
"""

import fractions
import numbers
import tracemalloc

import pytest

from . import _args, analyze
from ._heap import heap_in_use, native_peak_sampler

# kB, MB and GB are powers of 1000; KiB, MiB and GiB powers of 1024 (_args.BYTE_UNITS).
# pytest-memray's limit_memory("64MB") means 64 MiB; here "64MB" is 64,000,000 B: write
# "64 MiB" for 67,108,864 B.
_UNIT_HELP = ("a byte count (an int >= 0) or text such as '64 MiB' (67,108,864 B); kB, MB, GB "
              "are powers of 1000 ('64 MB' is 64,000,000 B, not pytest-memray's 64 MiB), KiB, "
              "MiB, GiB powers of 1024")


def parse_bytes(text):
    """A size in bytes: an int >= 0 (a float that is a whole number too), or text, a number and
    a unit: '64 MiB' -> 67108864, '1.5 kB' -> 1500, '64MB' -> 64000000 (kB, MB, GB are powers
    of 1000; KiB, MiB, GiB of 1024). A bool, a negative or fractional count, NaN, infinity or
    an unknown unit raises pytest.UsageError saying what is accepted."""
    def refuse(why):
        raise pytest.UsageError(f"footprint: {text!r} {why}: expected {_UNIT_HELP}")
    if isinstance(text, bool):
        refuse("is a bool")
    if isinstance(text, numbers.Real):
        if isinstance(text, numbers.Integral):
            value = fractions.Fraction(int(text))
        elif text != text or text in (float("inf"), float("-inf")):
            refuse("is not a number of bytes")
        else:
            value = fractions.Fraction(text)
    elif isinstance(text, str):
        value = _args.byte_text(text)
        if value is None:
            refuse("is not a size")
    else:
        refuse(f"is a {type(text).__name__}, not a size")
    if value < 0:
        refuse("is negative")
    if value.denominator != 1:
        refuse("is not a whole number of bytes")
    return int(value)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "footprint_limit(limit): fail when the test's measured memory peak (Python "
                   "and native heap) exceeds limit: " + _UNIT_HELP)
    config.addinivalue_line(
        "markers", "footprint_predict(model, dims=None, max_peak=...): fail when footprint "
                   "predicts a total peak above max_peak for the model (a size as "
                   "footprint_limit's)")


def _marker_value(mark, name, keyword):
    """The marker's argument (first positional or ``keyword=``); a missing, repeated or unknown
    one fails the test naming the marker."""
    known = {"footprint_limit": {"limit"},
             "footprint_predict": {"model", "dims", "max_peak"}}[name]
    unknown = sorted(set(mark.kwargs) - known)
    if unknown:
        pytest.fail(f"{name}: unknown argument {unknown[0]!r} (it takes "
                    f"{', '.join(sorted(known))})", pytrace=False)
    positional = {"footprint_limit": ("limit",), "footprint_predict": ("model",)}[name]
    if len(mark.args) > len(positional):
        pytest.fail(f"{name}: takes {len(positional)} positional argument, got "
                    f"{len(mark.args)}: {mark.args!r}", pytrace=False)
    if keyword in positional and mark.args:
        if keyword in mark.kwargs:
            pytest.fail(f"{name}: {keyword} is given twice", pytrace=False)
        return mark.args[0]
    if keyword not in mark.kwargs:
        example = ("footprint_limit('64 MiB')" if name == "footprint_limit" else
                   "footprint_predict('model.onnx', max_peak='32 MiB')")
        pytest.fail(f"{name}: {keyword} is missing, as in {example}", pytrace=False)
    return mark.kwargs[keyword]


def _marker_bytes(mark, name, keyword):
    value = _marker_value(mark, name, keyword)
    try:
        return parse_bytes(value)
    except pytest.UsageError as e:
        why = str(e).removeprefix("footprint: ")
    # Failed outside the handler: the report shows this line alone, not the chain.
    call = f"{name}({value!r})" if keyword == "limit" else f"{name}({keyword}={value!r})"
    pytest.fail(f"{call}: {why}", pytrace=False)


def _limits(item):
    """The item's markers read and checked: (model, dims, max_peak) or None, limit or None."""
    predict = item.get_closest_marker("footprint_predict")
    if predict is not None:
        model = _marker_value(predict, "footprint_predict", "model")
        dims = predict.kwargs.get("dims")
        predict = (model, dims, _marker_bytes(predict, "footprint_predict", "max_peak"))
    mark = item.get_closest_marker("footprint_limit")
    limit = None if mark is None else _marker_bytes(mark, "footprint_limit", "limit")
    return predict, limit


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    # A malformed marker is the test's error at setup, before its fixtures or body run.
    _limits(item)


def _alive_lines(snapshot, limit=10):
    stats = snapshot.statistics("lineno")[:limit]
    return "\n".join(f"    {s.size:>12,} B  {s.traceback}" for s in stats)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    predict, limit = _limits(item)
    if predict is not None:
        model, dims, max_peak = predict
        peak = analyze(model, dims=dims).total_peak
        if peak > max_peak:
            pytest.fail(f"footprint: {model} is predicted to peak at {peak:,} B, above "
                        f"max_peak {max_peak:,} B", pytrace=False)
    if limit is None:
        yield
        return
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
