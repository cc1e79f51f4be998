"""CPU autocast followed on meta tensors, for footprint.torch's ``predict``.

``torch.autocast("cpu")`` casts the arguments of some aten ops (linear, matmul, conv: to
bfloat16; losses: to float32; cat and stack: to the widest, on 2.x) in a kernel of its own that
runs only for CPU tensors: on meta tensors it casts nothing, and a mixed-precision step would
be predicted in float32. So the casts are asked of the CPU and made on meta:

- ``Emulation.call`` (from footprint.torch's torch function mode, above autograd, where the
  casts must be made for autograd to see them) calls the function once on *shells*, CPU
  tensors of the same sizes over one element of storage, under the user's autocast, in a
  dispatch mode that notes each cast of a shell and stops at the first other op, before any
  kernel runs. The casts are then made on the meta tensors in the same order, the ones autocast
  caches (float32 leaves that require grad, cast to the low type) kept until autocast's cache
  is cleared, and the function runs with autocast off, as autocast's own kernel runs it.
- ``Emulation.check`` (from the recorder's dispatch mode, below autograd) asks the same of any
  op autocast has a CPU kernel for that reaches the recorder on meta tensors with autocast on:
  an op inside a function the torch function mode does not see (``torch.einsum``'s bmm, a loss
  that broadcasts its arguments first) would be cast on the CPU, and a prediction without the
  cast would be a guess, so it stops with a UsageError naming the op and the line.

What autocast does is not copied from PyTorch's source: which ops it wraps is read from the
dispatcher (the registrations of the AutocastCPU key) and how it casts is asked of the CPU, so
every PyTorch version is followed as it behaves (1.13 casts nothing for ``cat``, 2.x promotes).
"""

import contextlib
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .errors import UsageError

# The casts autocast makes: Tensor.to(dtype), which is _to_copy above autograd and to.dtype
# below it (where the recorder's dispatch mode asks).
_CASTS = (torch.ops.aten._to_copy.default, torch.ops.aten.to.dtype)


def _enabled(device_type):
    if hasattr(torch, "get_autocast_dtype"):  # 2.x asks by device type
        return torch.is_autocast_enabled(device_type)
    return torch.is_autocast_cpu_enabled() if device_type == "cpu" else torch.is_autocast_enabled()


def _set_cpu_enabled(on):
    if hasattr(torch, "get_autocast_dtype"):
        torch.set_autocast_enabled("cpu", on)
    else:
        torch.set_autocast_cpu_enabled(on)


def _cpu_dtype():
    if hasattr(torch, "get_autocast_dtype"):
        return torch.get_autocast_dtype("cpu")
    return torch.get_autocast_cpu_dtype()


def _any_enabled():
    return torch.is_autocast_cpu_enabled() or torch.is_autocast_enabled()


# Whether any autocast is on (asked per torch function: 2.x's one call where it has it). Inside
# a dispatch mode's handler autocast always reads as off: ask ``Emulation.on`` there.
enabled = getattr(torch._C, "_is_any_autocast_enabled", _any_enabled)


def _states():
    return (_enabled("cpu"), _enabled("cuda"))


def _wrapped_ops():
    """The ops autocast has a CPU kernel for, as "name" and "name.overload"."""
    names = set()
    for n in torch._C._dispatch_get_registrations_for_dispatch_key("AutocastCPU"):
        n = n.split("::", 1)[-1]
        names.add(n)
        names.add(n.split(".", 1)[0])
    return frozenset(names)


_WRAPPED = _wrapped_ops()


def _function_wraps(func):
    """Whether a torch function is (or, for Python functions of torch.nn.functional, calls
    first) an op autocast has a CPU kernel for: ``linear``, ``__matmul__``, ``cross_entropy``
    (cross_entropy_loss)."""
    name = getattr(func, "__name__", "").strip("_")
    if name == "rmatmul":
        name = "matmul"
    return name in _WRAPPED or f"{name}_loss" in _WRAPPED


# Ops below autograd that an op autocast wraps becomes (convolution for conv2d, the fused CPU
# attention for scaled_dot_product_attention, nll_loss_forward for nll_loss), with how many
# leading tensor arguments the two share: the recorder sees these where the torch function
# mode did not see the wrapped op (inside a Python function of torch's it handed on).
_DECOMPOSED = {decomposed: (wrapped, shared) for decomposed, wrapped, shared in (
    ("convolution", "conv2d", 3),
    ("_scaled_dot_product_flash_attention_for_cpu", "scaled_dot_product_attention", 3),
    ("nll_loss_forward", "nll_loss", 2),
    ("nll_loss2d_forward", "nll_loss2d", 2),
    ("_prelu_kernel", "prelu", 2),
    ("_cdist_forward", "cdist", 2)) if wrapped in _WRAPPED}


def _op_name(func):
    schema = func._schema
    name = schema.name.split("::", 1)[-1]
    return f"{name}.{schema.overload_name}" if schema.overload_name else name


class _Stop(Exception):
    """Raised by the probe at the first op that is not a cast of a shell."""


class _Probe(TorchDispatchMode):
    """Notes the casts made of ``shells`` ((index, dtype), in the order made), answering each
    with a shell of the cast type; stops at the first op that is not a cast."""

    def __init__(self, shells):
        super().__init__()
        self._index = {id(s): i for i, s in enumerate(shells)}
        self.casts = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _CASTS:
            dtype = kwargs.get("dtype", args[1] if len(args) > 1 else None)
            if isinstance(dtype, torch.dtype):
                if id(args[0]) in self._index:
                    self.casts.append((self._index[id(args[0])], dtype))
                return _shell(args[0], dtype)
        raise _Stop


def _shell(t, dtype=None):
    """A CPU tensor of ``t``'s sizes over one element: what autocast looks at, no data."""
    return torch.empty((), dtype=dtype or t.dtype, device="cpu").expand(t.shape)


def _autocasts(casts):
    """The leading casts autocast made, of ``casts`` seen before an op's first other op:
    autocast casts each argument once, all to one type (the low type, float32, or the widest
    of the arguments'), before the op's own casts begin."""
    seen, first = set(), None
    for n, (i, dtype) in enumerate(casts):
        if i in seen or first not in (None, dtype):
            return tuple(casts[:n])
        seen.add(i)
        first = dtype
    return tuple(casts)


def _replace(value, tensors):
    """``value`` with its tensors (in _tensors_in's order) taken from the iterator ``tensors``."""
    if isinstance(value, torch.Tensor):
        return next(tensors)
    if isinstance(value, (tuple, list)):
        return type(value)(_replace(v, tensors) for v in value)
    if isinstance(value, dict):
        return {k: _replace(v, tensors) for k, v in value.items()}
    return value


def _signature(value):
    """What a probe's answer depends on: the structure, the tensors' dtypes, other values."""
    if isinstance(value, torch.Tensor):
        return value.dtype
    if isinstance(value, (tuple, list)):
        return (type(value).__name__,) + tuple(_signature(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, _signature(v)) for k, v in value.items())
    try:
        hash(value)
        return value
    except TypeError:
        return type(value).__name__


@contextlib.contextmanager
def _asking_the_cpu(autocast):
    """CPU autocast on or off (it reads as off inside a dispatch mode's handler) and its cache
    off (the shells' casts are not the program's), as they were after the block."""
    was_on, cached = _enabled("cpu"), torch.is_autocast_cache_enabled()
    _set_cpu_enabled(autocast)
    torch.set_autocast_cache_enabled(False)
    try:
        yield
    finally:
        _set_cpu_enabled(was_on)
        torch.set_autocast_cache_enabled(cached)


class Emulation:
    """One recording's autocast on meta: the probes' answers and autocast's cache."""

    def __init__(self, tensors_in, quiet, user_line):
        self._tensors_in = tensors_in  # footprint.torch's flattening of arguments
        self._quiet = quiet            # a block whose ops the recorder does not count
        self._user_line = user_line
        self._answers = {}
        self._cache = {}               # id(source) -> (weakref to source, cast)
        # (cpu, cuda) autocast on, per autocast block the program is in (read as it enters:
        # a dispatch mode's handler cannot read it), and whether an op it casts runs now
        self._states = [_states()]
        self._inside = 0
        self.used = any(self._states[0])  # whether the program has been in an autocast block

    def on(self):
        """Whether the program is in an autocast block (outside the ops it casts)."""
        return not self._inside and any(self._states[-1])

    def clear_cache(self):
        """What ``torch.clear_autocast_cache()`` does to autocast's own cache."""
        self._cache.clear()

    def _casts(self, func, args, kwargs):
        """The casts CPU autocast makes of ``func``'s tensors, ((index, dtype), ...), or None
        where the CPU refused the shells. The op's own casts (2.x's attention computing bfloat16 in
        float32 on its math path) come after autocast's and are made with autocast off too:
        autocast's are what the run with it on casts before them. (Without autocast the op may
        refuse arguments of the mixed types autocast resolves: see _autocasts.)"""
        key = (func, _cpu_dtype(), _signature(args), _signature(kwargs))
        if key not in self._answers:
            on, off = self._probe(func, args, kwargs, True), self._probe(func, args, kwargs, False)
            if on is not None and off and on[len(on) - len(off):] == off:
                on = on[:len(on) - len(off)]
            self._answers[key] = None if on is None else _autocasts(on)
        return self._answers[key]

    def _probe(self, func, args, kwargs, autocast):
        """The casts of the arguments ``func`` makes before its first other op, with CPU
        autocast on or off: asked of shells of them on the CPU (no kernel runs)."""
        with self._quiet(), torch.no_grad(), _asking_the_cpu(autocast):
            shells = [_shell(t) for t in self._tensors_in((args, kwargs))]
            probe = _Probe(shells)
            try:
                with probe:
                    a, k = _replace((args, kwargs), iter(shells))
                    func(*a, **k)
            except _Stop:
                pass
            except Exception:  # noqa: BLE001 - any refusal of the shells: not known
                return None
        return probe.casts

    def _cast(self, t, dtype):
        """``t.to(dtype)`` as autocast makes it: float32 leaves that require grad, cast to the
        low type, once per autocast region (its cache)."""
        cacheable = (dtype == _cpu_dtype() and t.dtype == torch.float32 and t.requires_grad
                     and t.is_leaf and not t._is_view() and torch.is_autocast_cache_enabled())
        if not cacheable:
            return t.to(dtype)
        hit = self._cache.get(id(t))
        if hit is not None and hit[0]() is t:
            return hit[1]
        cast = t.to(dtype)
        self._cache[id(t)] = (weakref.ref(t), cast)
        return cast

    def call(self, func, args, kwargs, then):
        """``then(func, args, kwargs)`` on meta tensors as CPU autocast would run ``func``."""
        if not _enabled("cpu") or not _function_wraps(func):
            return then(func, args, kwargs)
        casts = self._casts(func, args, kwargs)
        if casts is None:
            raise UsageError(
                f"torch.autocast('cpu') around {getattr(func, '__name__', func)} at "
                f"{self._user_line()}: footprint.torch could not ask the CPU which of its "
                "arguments autocast casts; cast explicitly there, or record() the step on "
                "the CPU")
        if casts:
            flat = self._tensors_in((args, kwargs))
            for i, dtype in casts:
                flat[i] = self._cast(flat[i], dtype)
            args, kwargs = _replace((args, kwargs), iter(flat))
        _set_cpu_enabled(False)  # as autocast's kernel calls the op: not again inside it
        self._inside += 1
        try:
            return then(func, args, kwargs)
        finally:
            self._inside -= 1
            _set_cpu_enabled(True)

    def check(self, func, args, kwargs):
        """Stops where autocast would cast the arguments of an aten op on meta tensors that
        the torch function mode did not cast (or where it is on for another device)."""
        cpu, cuda = self._states[-1]
        if cuda:
            raise UsageError(
                f"torch.autocast('cuda') around {_op_name(func)} at {self._user_line()}: "
                "footprint.torch predicts the CPU's run, and the CUDA autocast's casts are "
                "not the CPU's; predict with torch.autocast('cpu') or explicit casts")
        if not cpu:
            return
        name = _op_name(func)
        if name in _WRAPPED:
            casts = self._casts(func, args, kwargs)
        elif name.split(".", 1)[0] in _DECOMPOSED:
            wrapped, shared = _DECOMPOSED[name.split(".", 1)[0]]
            tensors = tuple(self._tensors_in((args, kwargs))[:shared])
            casts = self._casts(getattr(torch.ops.aten, wrapped).default, tensors, {})
        else:
            return
        if casts is None or casts:
            raise UsageError(
                f"torch.autocast('cpu') would cast the arguments of {_op_name(func)} at "
                f"{self._user_line()}, inside a function footprint.torch does not see on meta "
                "tensors, so a prediction would miss the cast; cast explicitly there "
                "(x.to(torch.bfloat16)), or record() the step on the CPU")


@contextlib.contextmanager
def following(emulation):
    """Inside the block the emulation follows the program's autocast blocks (torch.autocast
    and its subclasses, as ``with``, as a decorator, in checkpoint's recomputation), and
    ``torch.clear_autocast_cache`` (which the outermost one's exit calls) clears its cache."""
    real_clear = torch.clear_autocast_cache
    cls = torch.amp.autocast_mode.autocast
    real_enter, real_exit = cls.__enter__, cls.__exit__

    def clear():
        emulation.clear_cache()
        real_clear()

    def enter(self):
        out = real_enter(self)
        emulation._states.append(_states())
        emulation.used = emulation.used or any(emulation._states[-1])
        return out

    def exit_(self, *exc):
        if len(emulation._states) > 1:
            emulation._states.pop()
        return real_exit(self, *exc)

    torch.clear_autocast_cache = clear
    cls.__enter__, cls.__exit__ = enter, exit_
    try:
        yield
    finally:
        torch.clear_autocast_cache = real_clear
        cls.__enter__, cls.__exit__ = real_enter, real_exit
