"""footprint's exceptions. The C++ library reports a failure as one line naming what was wrong
and where (``FILE: offset N: field.path: what was expected``, ``node 'Conv_3' (Conv): ...``);
these classes carry that line and the parts of it a caller may want to branch on."""

import re

_OFFSET = re.compile(r"^(?P<path>.*?): offset (?P<offset>\d+): ")
_NODE = re.compile(r"node (?:'(?P<name>(?:[^'\\]|\\.)*)'|#(?P<index>\d+)) \(")


class FootprintError(Exception):
    """Base of the errors footprint raises (besides TypeError, MemoryError)."""


class ModelError(FootprintError, ValueError):
    """A model, trace or input footprint cannot process.

    ``path``: the file (or the name given to ``load``) when known; ``offset``: the byte offset in
    it for a malformed file; ``node``: the node's name (or ``#index`` for an unnamed one) for an
    error in the graph. Each is None when the message does not name it.
    """

    def __init__(self, message, path=None):
        super().__init__(message)
        self.message = str(message)
        self.path = path
        self.offset = None
        self.node = None
        found = _OFFSET.match(self.message)
        if found:
            self.path = self.path or found.group("path")
            self.offset = int(found.group("offset"))
        found = _NODE.search(self.message)
        if found:
            name = found.group("name")
            self.node = name if name is not None else "#" + found.group("index")


class UsageError(FootprintError, ValueError):
    """An argument footprint cannot use (an unknown planner, a malformed dim)."""
