"""The native heap as glibc's malloc counts it, for measurements from Python.

footprint's counting allocator replaces malloc in the ``footprint`` binary; a module loaded
into a running interpreter cannot do that. glibc keeps its own totals, though: ``mallinfo2()``
reports the bytes it has handed out and not got back, in every arena, small blocks
(``uordblks``) and mmapped large ones (``hblkhd``) alike. That is what this reads (through the
extension, which also samples it from a thread of its own for peaks). It counts every malloc of
the process (the library's, numpy's data buffers, Python objects too big for pymalloc), not
pymalloc's own arenas (mapped directly)."""

import ctypes

from . import _footprint


class _HeapStats(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in ("current", "peak", "allocations", "largest")]


def heap_counter():
    """footprint's counting malloc when it is preloaded into the interpreter
    (``LD_PRELOAD=build/release/lib/libfootprint_heap.so``): every allocation of the process,
    current and peak bytes, read through the library's C entry points; as (stats, reset_peak)
    callables, or None when it is not preloaded."""
    process = ctypes.CDLL(None)
    if not hasattr(process, "footprint_heap_stats"):
        return None
    stats_fn, reset = process.footprint_heap_stats, process.footprint_heap_reset_peak
    stats_fn.restype, reset.restype = None, None

    def stats():
        s = _HeapStats()
        stats_fn(ctypes.byref(s))
        return s
    return stats, reset


def heap_in_use():
    """Bytes of the native heap in use (glibc's mallinfo2: uordblks + hblkhd)."""
    return _footprint._heap_in_use()


def native_peak_sampler(interval_s=0.001):
    """A thread (native, never holding the GIL) sampling heap_in_use every ``interval_s``:
    ``take()`` returns the highest figure since the last take() and starts the next window;
    ``stop()`` ends it. A peak shorter than the interval can be missed (a lower bound)."""
    return _footprint._HeapSampler(interval_s)
