"""The native heap as glibc's malloc counts it, for measurements from Python.

footprint's counting allocator replaces malloc in the ``footprint`` binary; a module loaded
into a running interpreter cannot do that. glibc keeps its own totals, though: ``mallinfo2()``
reports the bytes it has handed out and not got back, in every arena, small blocks
(``uordblks``) and mmapped large ones (``hblkhd``) alike. That is what this reads. It counts
every malloc of the process (the library's, numpy's data buffers, Python objects too big for
pymalloc), not pymalloc's own arenas (mapped directly)."""

import ctypes
import ctypes.util


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def _mallinfo2():
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    fn = getattr(libc, "mallinfo2", None)
    if fn is None:
        return None
    fn.restype = _MallInfo2
    return fn


_FN = _mallinfo2()


def heap_in_use():
    """Bytes of the native heap in use (glibc's mallinfo2: uordblks + hblkhd), or None where
    the C library has no mallinfo2 (glibc before 2.33, musl)."""
    if _FN is None:
        return None
    info = _FN()
    return info.uordblks + info.hblkhd
