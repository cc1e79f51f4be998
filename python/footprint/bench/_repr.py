"""What a record keeps of a parameter: its representation, never the object.

Builtins (int, float, bool, str, None) are kept as they are. numpy arrays, torch tensors and
footprint models become a ``ParamRepr``: dtype, shape, bytes, an xxHash3-128 of the payload
(hashed where it lies, by the C++ library) and where it came from. Other types get one through
``register_repr``; a type with neither is kept as its type name and ``repr()`` text.
"""

import json
import sys
from dataclasses import asdict, dataclass, field

import numpy as np

from .. import _footprint
from .._footprint import Model


@dataclass(frozen=True, slots=True)
class ParamRepr:
    """A parameter as a record keeps it (the fields of the C++ runner's ParamRepr)."""

    type: str
    value: str = ""  # scalars and user types: the value as text
    dtype: str = ""  # tensors
    shape: tuple = field(default_factory=tuple)
    bytes: int = 0  # tensors and models: payload bytes
    hash: str = ""  # xxHash3-128 of the payload, 32 hex digits
    source: str = ""  # the file it was mapped from, the name it was loaded under, or its library

    def to_json(self, name):
        """The parameter in the records' JSON form (docs/BENCH.md)."""
        j = {"name": name, **{k: v for k, v in asdict(self).items() if v not in ("", 0, ())}}
        if self.type == "tensor":
            j["shape"] = list(self.shape)
        if self.hash:
            j["bytes"] = self.bytes
        return j


def _from_json(j):
    # A family of thousands of cases repeats its types, dtypes and sources: one string each.
    fields = {k: sys.intern(v) if k in ("type", "dtype", "source") else v
              for k, v in j.items() if k != "name"}
    fields["shape"] = tuple(fields.get("shape", ()))
    return ParamRepr(**fields)


_BUILTIN_TYPES = {bool: "bool", int: "int", float: "float", str: "string"}


def _builtin_json(name, value):
    """The records' JSON form of a builtin value kept as it is."""
    if value is None:
        return {"name": name, "type": "none"}
    kind = _BUILTIN_TYPES[type(value)]
    if kind == "bool":
        text = "true" if value else "false"
    else:
        text = value if kind == "string" else repr(value)
    return {"name": name, "type": kind, "value": text}


def param_json(name, kept):
    """A kept parameter (a builtin or a ParamRepr) in the records' JSON form."""
    return kept.to_json(name) if isinstance(kept, ParamRepr) else _builtin_json(name, kept)


def short_text(name, kept):
    """The parameter's text in a case name, as the C++ runner writes it."""
    return _footprint._short_text(json.dumps(param_json(name, kept)))


def _array_repr(a, source):
    contiguous = np.ascontiguousarray(a)  # hashing needs one C-ordered run of bytes
    r = _from_json(_footprint._tensor_repr(contiguous))
    filename = getattr(a, "filename", None)  # np.memmap
    return ParamRepr(**{**asdict(r), "source": str(filename) if filename else source})


def _torch_repr(t):
    import torch  # only reached for a torch.Tensor, so torch is already imported

    cpu = t.detach().cpu().contiguous()
    device = f"torch:{t.device}"
    if cpu.dtype == torch.bfloat16:  # numpy has no bfloat16: hash its bits, name its dtype
        r = _array_repr(cpu.view(torch.int16).numpy(), device)
        return ParamRepr(**{**asdict(r), "dtype": "bfloat16"})
    return _array_repr(cpu.numpy(), device)


def _model_repr(m):
    return _from_json(_footprint._model_repr(m))


class Representations:
    """Type -> function giving a value's representation; looked up along the type's MRO, so a
    subclass uses its base's function unless it has its own."""

    def __init__(self, parent=None):
        self._parent = parent  # asked for what this one does not know
        self._fns = {} if parent else {np.ndarray: lambda a: _array_repr(a, "numpy"),
                                       Model: _model_repr}

    def register(self, cls, fn):
        self._fns[cls] = fn

    def _lookup(self, value):
        for cls in type(value).__mro__:
            if cls in self._fns:
                return self._fns[cls]
        if self._parent is not None:
            return self._parent._lookup(value)
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(value, torch.Tensor):
            return _torch_repr
        return None

    def represent(self, value):
        """A builtin as it is, a ParamRepr otherwise."""
        if value is None or type(value) in _BUILTIN_TYPES:
            return value
        if isinstance(value, np.generic):  # numpy scalars are numbers
            return value.item()
        fn = self._lookup(value)
        if fn is None:
            cls = type(value)
            # object's own repr names an address: no use in a record, and different every run.
            text = "" if cls.__repr__ is object.__repr__ else repr(value)
            return ParamRepr(type=f"{cls.__module__}.{cls.__qualname__}", value=text)
        out = fn(value)
        if isinstance(out, dict):
            out = ParamRepr(**{**out, "shape": tuple(out.get("shape", ()))})
        if not (out is None or type(out) in _BUILTIN_TYPES or isinstance(out, ParamRepr)):
            raise TypeError(f"footprint.bench: the representation of {type(value).__name__} "
                            f"must be a builtin, a dict of ParamRepr fields or a ParamRepr, "
                            f"not {type(out).__name__}")
        return out


_REPRESENTATIONS = Representations()


def register_repr(cls, fn):
    """Records represent values of ``cls`` (and its subclasses) as ``fn(value)`` gives: a
    builtin, a ``ParamRepr`` or a dict of its fields (type, value, dtype, shape, bytes, hash,
    source). ``fn`` must not keep the value."""
    _REPRESENTATIONS.register(cls, fn)


def run_representations(reprs):
    """register_repr's representations, with ``reprs`` ({type: fn}) before them."""
    out = Representations(parent=_REPRESENTATIONS)
    for cls, fn in (reprs or {}).items():
        out.register(cls, fn)
    return out


def content_hash(buffer):
    """xxHash3-128 (32 hex digits) of a C-contiguous buffer, as the records' hashes."""
    return _footprint._content_hash(buffer)


def represent(value):
    """What a record keeps of ``value``, by register_repr's representations."""
    return _REPRESENTATIONS.represent(value)
