"""Checks of the package's Python arguments. A number footprint is given is used exactly or
refused: ``int(1.7)`` would plan a buffer of 1 byte, ``tuple("numpy")`` would record five tags.
Each check raises ``UsageError`` naming the argument (``buffers[0] size``, ``lo``, ``budget``)
and saying what it accepts."""

import collections.abc
import fractions
import math
import numbers
import re

import numpy as np

from .errors import UsageError

_INT64_MAX = (1 << 63) - 1

# Byte units, read without regard to case: kB, MB, GB and TB are powers of 1000 (SI: "24 GB" is
# a card's 24,000,000,000 B), KiB, MiB, GiB and TiB powers of 1024 ("24 GiB" is 25,769,803,776 B).
BYTE_UNITS = {"": 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
              "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}


def byte_text(text):
    """The bytes a text such as "64 MiB", "1.5GB" or "67108864" says, as a Fraction (the caller
    refuses a fraction of a byte), or None when it is not a number and a unit."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).lower() not in BYTE_UNITS:
        return None
    return fractions.Fraction(m.group(1)) * BYTE_UNITS[m.group(2).lower()]


def integer(value, what, minimum=None):
    """``value`` as an int: a Python or numpy integer, or a float (or any real) that is exactly
    a whole number, as 1e6 is. A bool, a fraction such as 1.7, NaN, infinity, a string or None
    is a UsageError naming ``what``, as is a value below ``minimum``."""
    if isinstance(value, (bool, np.bool_)):
        raise UsageError(f"{what}: {value!r} is a bool, not an integer")
    if isinstance(value, numbers.Integral):
        n = int(value)
    elif isinstance(value, numbers.Real):
        if not math.isfinite(value) or value != math.floor(value):
            raise UsageError(f"{what}: {value!r} is not a whole number")
        n = int(value)
    else:
        raise UsageError(f"{what}: expected an integer, got {type(value).__name__} {value!r}")
    if minimum is not None and n < minimum:
        raise UsageError(f"{what}: {n} is below {minimum}")
    return n


def int64(value, what, minimum=None):
    """``integer``, and within int64 (what the library's fields hold)."""
    n = integer(value, what, minimum)
    if not -_INT64_MAX - 1 <= n <= _INT64_MAX:
        raise UsageError(f"{what}: {n} does not fit int64")
    return n


def text(value, what, optional=False):
    """A str argument (a name, an inputs policy, an order, a planner's name); None too when
    ``optional``. Which names are known is the library's check."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise UsageError(f"{what}: expected a str, got {type(value).__name__} {value!r}")
    return value


def mapping(value, what):
    """A dict-like argument ({} for None)."""
    if value is None:
        return {}
    if not isinstance(value, collections.abc.Mapping):
        raise UsageError(f"{what}: expected a dict, got {type(value).__name__} {value!r}")
    return value


def tags(value, what="tags"):
    """A tuple of tags: one string is one tag (``tags="numpy"``), any other iterable gives
    its elements, each of which must be a string."""
    if isinstance(value, str):
        return (value,)
    try:
        out = tuple(value)
    except TypeError:
        raise UsageError(f"{what}: expected a string or a sequence of strings, got "
                         f"{type(value).__name__} {value!r}") from None
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise UsageError(f"{what}[{i}]: a tag is a string, not {type(t).__name__} {t!r}")
    return out


_FIELDS = ("lower", "upper", "size")


def buffer_rows(buffers):
    """``plan``'s rows as an (n, 3) int64 array: a sequence of (lower, upper, size) or an (n, 3)
    array of integers (or of floats that are whole numbers). A field that is not an integer
    (a bool, 1.7, NaN, a string), or does not fit int64, is a UsageError naming the row and the
    field; the library checks the rest (upper > lower, size >= 0) and names the buffer."""
    if isinstance(buffers, np.ndarray):
        rows = buffers
    else:
        # As objects: numpy would make True a 1 and "8" an 8 before they could be seen.
        try:
            rows = np.asarray(buffers, dtype=object)
        except (ValueError, TypeError):
            rows = None
    if rows is not None and rows.size == 0:
        return np.zeros((0, 3), dtype=np.int64)
    if rows is None or rows.ndim != 2 or rows.shape[1] != 3:
        shape = "ragged rows" if rows is None else f"shape {rows.shape}"
        raise UsageError(f"plan: buffers must be an (n, 3) array or a sequence of (lower, upper, "
                         f"size) rows, got {shape}")
    kind = rows.dtype.kind
    if kind == "i":
        return rows.astype(np.int64)
    if kind in "uf":  # whole arrays at once: only an offending element is looked at alone
        if kind == "u":
            bad = rows > np.array(_INT64_MAX, dtype=np.uint64)
        else:
            with np.errstate(invalid="ignore"):
                bad = (~np.isfinite(rows) | (rows != np.floor(rows)) | (rows >= 2.0**63) |
                       (rows < -(2.0**63)))
        if not bad.any():
            return rows.astype(np.int64)
        i, j = (int(k) for k in np.argwhere(bad)[0])
        _field(rows[i, j], i, j)  # raises
    flat = rows.ravel().tolist()  # objects (and numpy's bools and strings) one at a time
    for k, v in enumerate(flat):
        if type(v) is not int or not -_INT64_MAX - 1 <= v <= _INT64_MAX:
            flat[k] = _field(v, k // 3, k % 3)
    return np.array(flat, dtype=np.int64).reshape(rows.shape)


def _field(value, i, j):
    return int64(value.item() if isinstance(value, np.generic) else value,
                 f"plan: buffers[{i}] {_FIELDS[j]}")
