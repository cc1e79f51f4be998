"""Benchmarks defined by Python files: each file is imported as a module of its own, and its
Benchmark objects (and lists or tuples of them) are collected in the order the file defines
them."""

import importlib.util
import pathlib
import sys

from .. import _args
from ..errors import UsageError
from ._core import Benchmark


def _module(path):
    name = f"footprint_bench_{abs(hash(str(path.resolve())))}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    spec.loader.exec_module(module)
    return module


def _members(module):
    for value in vars(module).values():
        items = value if isinstance(value, (list, tuple)) else [value]
        yield from (b for b in items if isinstance(b, Benchmark))


def collect(*paths, tags=()):
    """The benchmarks in Python files and folders (every *.py below a folder, sorted), keeping
    those with one of ``tags`` when given (one string is one tag)."""
    tags = _args.tags(tags, "footprint.bench.collect: tags")
    out = []
    for p in map(pathlib.Path, paths):
        if p.is_dir():
            files = sorted(p.rglob("*.py"))
        elif p.is_file():
            files = [p]
        else:
            raise UsageError(f"{p}: no such file or folder")
        for f in files:
            out += [b for b in _members(_module(f)) if b not in out]
    return [b for b in out if not tags or set(tags) & set(b.tags)]
