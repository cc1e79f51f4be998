"""Memos: values built lazily, shared by benchmarks, and released after their last user.

    model = Memo(lambda: footprint.load("big.onnx"), name="big", bytes=os.path.getsize(...))
    session = Memo(lambda m: footprint.Session(m), model)      # built from another memo

A ``Memo`` is a handle: put it in a benchmark's parameters (or ``uses=``) and the runner's
``MemoCache`` builds the value right before the first case that needs it and evicts it right
after the last one. A memo's size is the heap it grew by while it was built (the larger of
Python's, by tracemalloc when it is tracing, and the native heap's, by glibc's totals) plus the
``bytes`` given (memory no heap counts, such as a mapped file).
"""

import tracemalloc
from collections import OrderedDict

from .. import _args
from .._heap import heap_in_use


class Memo:
    """A lazily built value: ``factory(*values of deps)``. Compared by identity. ``bytes`` is
    the memory the value holds that no heap counts (a mapped file): an integer >= 0."""

    def __init__(self, factory, *deps, name=None, bytes=0):  # noqa: A002: the record's name
        if not callable(factory):
            raise TypeError("Memo: the factory must be callable")
        for d in deps:
            if not isinstance(d, Memo):
                raise TypeError(f"Memo: dependencies must be Memos, not {type(d).__name__}")
        self.factory = factory
        self.deps = deps
        self.name = name or getattr(factory, "__name__", "memo")
        self.bytes_hint = _args.integer(bytes, "Memo: bytes", minimum=0)

    def closure(self):
        """This memo and every memo it is built from, dependencies first."""
        out = []
        for d in self.deps:
            out += [m for m in d.closure() if m not in out]
        return out + [self]

    def __repr__(self):
        return f"<footprint.bench.Memo {self.name}>"


def _heap_now():
    python = tracemalloc.get_traced_memory()[0] if tracemalloc.is_tracing() else 0
    return python, heap_in_use()


class MemoCache:
    """The live memo values. ``budget`` (bytes) bounds their total size: building one that
    would pass it evicts the least recently used first (and again once its size is known);
    None leaves it unbounded."""

    def __init__(self, budget=None):
        self.budget = None if budget is None else _args.integer(budget, "MemoCache: budget",
                                                                 minimum=0)
        self._values = OrderedDict()  # memo -> (value, bytes), least recently used first
        self.creations = 0
        self.evictions = 0

    def get(self, memo):
        """The memo's value, built (with its dependencies) when it is not live."""
        if memo in self._values:
            self._values.move_to_end(memo)
            return self._values[memo][0]
        args = [self.get(d) for d in memo.deps]
        self._make_room(memo.bytes_hint, keep=memo.deps)
        python0, native0 = _heap_now()
        value = memo.factory(*args)
        python1, native1 = _heap_now()
        size = max(python1 - python0, native1 - native0, 0) + memo.bytes_hint
        self._values[memo] = (value, size)
        self.creations += 1
        self._make_room(0, keep=(memo, *memo.deps))
        return value

    def _make_room(self, incoming, keep):
        if self.budget is None:
            return
        for m in list(self._values):
            if self.bytes() + incoming <= self.budget:
                return
            if m not in keep:
                self.evict(m)

    def __contains__(self, memo):
        return memo in self._values

    def size(self):
        """How many memos are live."""
        return len(self._values)

    def bytes(self):
        """The live memos' sizes, added up."""
        return sum(size for _, size in self._values.values())

    def evict(self, memo):
        """Drops the cache's reference to the memo's value; True when it was live."""
        if self._values.pop(memo, None) is None:
            return False
        self.evictions += 1
        return True

    def clear(self):
        for m in list(self._values):
            self.evict(m)
