"""The recorder's engine below Python (_torch_engine.cpp), compiled for the torch it runs with.

The extension must see the installed torch's headers and C++ ABI, which differ between Debian's
1.13 and a PyPI 2.x, so it is compiled on first use by torch.utils.cpp_extension (g++, and the
headers: Debian's libtorch-dev, or the ones a PyPI wheel ships) into a cache directory named
after its source, torch's version and Python's: ``$FOOTPRINT_CACHE`` or
``~/.cache/footprint`` (``XDG_CACHE_HOME`` honoured). The first compile takes about 30 s; later
processes load the cached module. Where it cannot be built, ``load()`` returns None and
``why_not()`` says why; footprint.torch then records with its dispatch mode (same trace, about
10x slower). ``FOOTPRINT_TORCH_ENGINE=0`` turns the engine off.
"""

import hashlib
import os
import sys
import time
import warnings

import torch

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_torch_engine.cpp")
_state = {}


def cache_dir():
    base = os.environ.get("FOOTPRINT_CACHE")
    if not base:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or
                            os.path.join(os.path.expanduser("~"), ".cache"), "footprint")
    return os.path.join(base, "torch-engine")


def _build():
    if os.environ.get("FOOTPRINT_TORCH_ENGINE", "1") == "0":
        raise RuntimeError("FOOTPRINT_TORCH_ENGINE=0")
    from torch.utils import cpp_extension
    # NDEBUG as torch was built: RecordFunction's layout has a debug-only member. C++17 (1.13's
    # default is C++14).
    flags = ["-O2", "-DNDEBUG", "-std=c++17", "-w"]
    with open(_SOURCE, "rb") as f:
        source = f.read()
    key = hashlib.sha256(b"\0".join([source, torch.__version__.encode(), sys.version.encode(),
                                      " ".join(flags).encode()])).hexdigest()
    name = f"footprint_torch_engine_{key[:16]}"
    where = os.path.join(cache_dir(), name)
    os.makedirs(where, exist_ok=True)
    # cpp_extension serialises builds with a lock file and waits while it exists: one a killed
    # build left behind (a compile takes under a minute) would make every later process wait.
    lock = os.path.join(where, "lock")
    try:
        if time.time() - os.path.getmtime(lock) > 600:
            os.remove(lock)
    except OSError:
        pass
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cpp_extension.load(name, [_SOURCE], build_directory=where, extra_cflags=flags,
                                  verbose=False)


def load():
    """The compiled module (None where it cannot be built; see why_not)."""
    if "module" not in _state:
        try:
            _state["module"] = _build()
        except Exception as e:  # noqa: BLE001 -- any failure means: record in Python
            first = str(e).strip().splitlines()
            _state["module"] = None
            _state["why"] = f"{type(e).__name__}: {first[-1] if first else ''}"
    return _state["module"]


def headers_present():
    """Whether torch's C++ headers are installed (the engine must build then): a PyPI wheel's,
    or Debian's libtorch-dev."""
    return any(os.path.isfile(os.path.join(d, "ATen", "record_function.h")) for d in
               (os.path.join(os.path.dirname(torch.__file__), "include"), "/usr/include"))


def why_not():
    """Why load() gave None ('' when it did not)."""
    load()
    return _state.get("why", "")
