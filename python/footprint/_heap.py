"""The native heap as glibc's malloc counts it, for measurements from Python.

footprint's counting allocator replaces malloc in the ``footprint`` binary; a module loaded
into a running interpreter cannot do that. glibc keeps its own totals, though: ``mallinfo2()``
reports the bytes it has handed out and not got back, in every arena, small blocks
(``uordblks``) and mmapped large ones (``hblkhd``) alike. That is what this reads (through the
extension, which also samples it from a thread of its own for peaks). It counts every malloc of
the process (the library's, numpy's data buffers, Python objects too big for pymalloc), not
pymalloc's own arenas (mapped directly)."""

from . import _footprint


def heap_in_use():
    """Bytes of the native heap in use (glibc's mallinfo2: uordblks + hblkhd)."""
    return _footprint._heap_in_use()


def native_peak_sampler(interval_s=0.001):
    """A thread (native, never holding the GIL) sampling heap_in_use every ``interval_s``:
    ``take()`` returns the highest figure since the last take() and starts the next window;
    ``stop()`` ends it. A peak shorter than the interval can be missed (a lower bound)."""
    return _footprint._HeapSampler(interval_s)
