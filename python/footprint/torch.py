"""footprint.torch: the exact memory trace of a PyTorch program on the CPU.

    import footprint, footprint.torch
    with footprint.torch.record(module=model) as rec:
        loss = model(x).sum()
        loss.backward()
        opt.step()
    footprint.analyze(rec).total_peak        # bytes, from footprint's C++ timeline
    rec.save("step.json")                    # `footprint analyze / plan / report step.json`

The recorder sees every aten op below autograd (a ``TorchDispatchMode``), one trace tensor per
*storage* (a view shares its base's storage and allocates nothing; an in-place op allocates
nothing), and a storage's free when its last reference goes (a weak reference to the storage,
looked at before every op and at the end, so a free caused by Python's ``del`` between two ops is
placed after the first). It names why each storage is alive: saved for backward (autograd's
``saved_tensors_hooks``), a parameter, a gradient, optimizer state, held by the caller.

Works on PyTorch 1.13 and 2.x: it uses only ``TorchDispatchMode``, ``saved_tensors_hooks``,
the global module hooks (``register_module_forward_pre_hook``) and the multiprocessing
module's ``StorageWeakRef``, all present in both. ``predict`` builds the same trace over
``device="meta"`` tensors (no data is allocated) with an engine below Python
(_torch_engine.cpp: libtorch's RecordFunction callbacks and allocators, compiled on first use),
falling back to the dispatch mode where it cannot be built or the program uses autocast.
docs/TORCH.md has the whole story.
"""

import contextlib
import functools
import os
import sys
import time
import weakref

import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode

from . import _args
from . import _autocast
from . import _torch_engine
from . import _bytes as _byte_count
from ._heap import heap_counter as _heap_counter
from .errors import UsageError

__all__ = ["Recording", "device", "fit", "measure", "meta", "predict", "record"]

_TORCH_DIR = os.path.dirname(torch.__file__)
_SKIP_DIRS = (_TORCH_DIR, os.path.dirname(os.path.abspath(__file__)),
              os.path.dirname(contextlib.__file__))


def _storage(t):
    """The untyped storage of ``t`` (2.x: untyped_storage(); 1.13: the C method _storage(),
    which Tensor.storage() wraps in a TypedStorage after asking every torch function mode)."""
    return t.untyped_storage()


if not hasattr(torch.Tensor, "untyped_storage"):
    # Decided once: asked per call, 1.13's missing attribute raised and caught an
    # AttributeError for every tensor of every op.
    def _storage(t):  # noqa: F811
        return t._storage()


# Per code object, whether its frames are skipped (torch's, footprint's, contextlib's); per code
# object and line, the "file.py:line" printed. Every op asks _user_line, and the path tests and
# formatting were a tenth of predict's time (a GPT-2 training step, 5,538 ops).
_SKIPPED_CODE = {}
_LINES = {}


def _user_line():
    """file:line of the innermost frame outside torch, footprint and contextlib."""
    f = sys._getframe(2)
    while f is not None:
        code = f.f_code
        skip = _SKIPPED_CODE.get(code)
        if skip is None:
            skip = _SKIPPED_CODE[code] = code.co_filename.startswith(_SKIP_DIRS)
        if not skip:
            break
        f = f.f_back
    if f is None:
        return ""
    key = (f.f_code, f.f_lineno)
    line = _LINES.get(key)
    if line is None:
        line = _LINES[key] = f"{os.path.basename(f.f_code.co_filename)}:{f.f_lineno}"
    return line


def _tensors_in(value, found=None):
    """The tensors of an op's arguments or results (tensors, numbers, and tuples, lists and
    dicts of them), in order: what torch's pytree flattening gives them, at a fraction of its
    cost per op."""
    if found is None:
        found = []
    if isinstance(value, torch.Tensor):
        found.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _tensors_in(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            _tensors_in(v, found)
    return found


def _describe(t):
    dtype = str(t.dtype).replace("torch.", "")
    return f"{dtype}[{', '.join(str(d) for d in t.shape)}]"


# The roles figures()["by_role"] breaks a peak into, the first that fits a storage.
ROLES = ("weights", "fp32 masters", "gradients", "optimizer state", "KV cache", "logits",
         "saved for backward", "inputs", "temporaries", "kernel scratch")


def _role(tensor):
    """A trace tensor's role, from its kind and the recorder's notes."""
    note = tensor.get("note", "")
    if "fp32 master" in note:
        return "fp32 masters"
    if tensor["kind"] == "weight" or "parameter" in note.split("; ") or "16-bit copy of " in note:
        return "weights"
    for role, mark in (("gradients", "gradient of "), ("optimizer state", "optimizer state"),
                       ("KV cache", "KV cache"), ("logits", "logits"),
                       ("saved for backward", "saved for backward")):
        if mark in note:
            return role
    return "inputs" if tensor["kind"] == "input" else "temporaries"


class _Differing:
    """The values a data-dependent question got at one line, where they differed."""

    def __init__(self, values):
        self.values = tuple(values)

    def __repr__(self):
        return " and ".join(repr(v) for v in self.values)


class _Storage:
    """One storage the recorder has seen: where it came from and what keeps it."""

    __slots__ = ("name", "bytes", "kind", "weak", "freed_after", "notes", "op", "module",
                 "line", "phase", "tensor")

    def __init__(self, name, storage, kind, tensor):
        self.name = name
        self.bytes = int(storage.nbytes())
        self.kind = kind  # "input" (existed before), "weight" (a parameter) or "activation"
        self.weak = StorageWeakRef(storage)
        self.freed_after = None  # index of the op after which the storage was gone
        self.notes = []
        self.op = self.module = self.line = self.phase = ""
        self.tensor = _describe(tensor)

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)


class Recording:
    """What ``record`` saw: ``trace`` (docs/TRACE_FORMAT.md, as a dict), ``save(path)``,
    ``analyze()`` (footprint.analyze over the trace), ``ops`` and ``storages``."""

    def __init__(self, name):
        self.name = name
        self.ops = []
        self.storages = {}  # StorageImpl address -> _Storage, while alive
        self.seconds = 0.0
        self._order = []  # every _Storage, in the order first seen
        self._counts = {}
        self._phase = ["forward"]
        self._modules = []  # the module path stack (forward hooks)
        self._paths = {}  # id(module) -> path
        self._param_names = {}  # StorageImpl address -> parameter name
        self._pending_saved = []  # (storage, op index) packed since the last op
        self._out_refs = []  # per op, a weak reference to its first output
        self._windows = []  # per aten op, (start, end) in microseconds since the epoch
        self._workspace = {}  # op index -> scratch bytes a measurement saw inside it
        self._muted = 0  # > 0 while the recorder's own hooks run ops
        self._recording = True  # until its block ends
        self._meta = _meta_kernels()
        self._params = []  # (name, weak reference) of every leaf tensor an op read
        self._before = set()  # storages of the tensors Python could reach when recording began
        self._watched = {}  # id of a tensor object seen -> a weak reference to it (_watch)
        self._dirty = set()  # storages whose tensors went since the last sweep
        self._full_sweeps = False  # look at every storage before every op (saved=False)
        self._assume = {}  # "file.py:line" -> the value a data-dependent question there gets
        self.assumptions = []  # each value given: {"line", "tensor", "value"}
        # "file.py:line" -> the value a data-dependent question there got on real tensors
        self.answers = {}
        # CPU autocast's casts, made on meta tensors as the CPU makes them
        self.autocast = _autocast.Emulation(_tensors_in, lambda: _muted(self), _user_line)

    # -- storages -----------------------------------------------------------------------------

    def _label(self, base):
        n = self._counts.get(base, 0)
        self._counts[base] = n + 1
        return f"{base}#{n}"

    def _open(self, name, storage, kind, tensor):
        s = _Storage(name, storage, kind, tensor)
        s.phase = self._phase[-1]
        s.module = self._modules[-1] if self._modules else ""
        self.storages[storage._cdata] = s
        self._order.append(s)
        return s

    def _existing(self, t):
        """The record of ``t``'s storage, registering one that existed before the recording
        (a parameter, an argument) the first time an op reads it."""
        st = _storage(t)
        self._watch(t, st._cdata)
        s = self.storages.get(st._cdata)
        if s is not None and not s.weak.expired():
            if s.kind == "activation" and isinstance(t, torch.nn.Parameter):
                s.note("parameter")  # made inside the recording (a model built in the step)
            return s
        if s is not None:  # a freed storage's address, reused before a sweep saw the free
            self._close(st._cdata, s, len(self.ops) - 1)
        pname = self._param_names.get(st._cdata)
        if st._cdata not in self._before and pname is None:
            # Made during the recording without an aten op (torch.tensor(), a Python number an
            # op wrapped, numpy): allocated by a step of its own just before this first read.
            s = self._open(self._label("outside_aten"), st, "activation", t)
            s.op, s.line = "made outside aten (torch.tensor, a wrapped number)", _user_line()
            self.ops.append({"name": f"{s.name} = {_describe(t)} made outside aten {s.line}",
                             "op": "outside_aten", "inputs": [], "outputs": [s.name],
                             "phase": self._phase[-1], "module": s.module, "line": s.line})
            self._out_refs.append(lambda: None)
            self._windows.append(None)
        elif pname is not None or isinstance(t, torch.nn.Parameter):
            s = self._open(pname or self._label("parameter"), st, "weight", t)
            s.note("parameter")
        else:
            s = self._open(self._label("input"), st, "input", t)
        if t.requires_grad and t.is_leaf:
            self._params.append((pname or s.name, weakref.ref(t)))
        return s

    def _mute(self, delta):
        self._muted += delta

    def _close(self, key, s, after):
        s.freed_after = after
        del self.storages[key]

    def _watch(self, t, key):
        """Marks storage ``key`` for a look at the next sweep when the tensor object ``t``
        goes. PyTorch keeps a tensor's Python object as long as its TensorImpl lives (C++
        holders included), so a storage can only be freed when one of the tensors over it
        goes; each tensor the recorder sees (every op's inputs and outputs, what autograd saves)
        is watched, and a sweep looks at the storages of the tensors that went since the last
        one instead of at every live storage (which made recording quadratic in the program's
        length)."""
        i = id(t)
        if i in self._watched:
            return

        def gone(_ref, i=i, key=key):
            self._watched.pop(i, None)
            self._dirty.add(key)

        self._watched[i] = weakref.ref(t, gone)

    def _set_data(self, set_data, t, value):
        """``t.data = value`` (``module.to(dtype)``, ``half()``): ``t``'s storage is replaced
        while ``t`` lives on, so the old one may go with no tensor going; it is looked at in
        the next sweep, and ``t`` is watched over its new storage."""
        old = _storage(t)._cdata
        set_data(t, value)
        self._dirty.add(old)
        if self._watched.pop(id(t), None) is not None:
            self._watch(t, _storage(t)._cdata)

    def _sweep(self, full=False):
        """Frees since the last op, placed after it (the trace releases after an op)."""
        if full or self._full_sweeps:
            gone = [(k, s) for k, s in self.storages.items() if s.weak.expired()]
        else:
            gone = []
            for k in self._dirty:
                s = self.storages.get(k)
                if s is not None and s.weak.expired():
                    gone.append((k, s))
        self._dirty.clear()
        for k, s in gone:
            self._close(k, s, len(self.ops) - 1)

    def _resolve_saved(self, final=False):
        """Names the autograd node that saved each storage packed since the last look.

        A pack between ops c-1 and c is an output op c-1 saves (autograd saves outputs after
        the op ran) or an input op c saves (inputs are saved before it runs); it is op c's when
        op c read the storage. The node is that op's output's grad_fn, which autograd sets
        before the next op starts, so an entry is resolved once op c has finished."""
        keep = []
        for s, c in self._pending_saved:
            if c >= len(self.ops) and not final:
                keep.append((s, c))
                continue
            op = c if c < len(self.ops) and s.name in self.ops[c]["inputs"] else c - 1
            out = self._out_refs[op]() if 0 <= op < len(self._out_refs) else None
            node = getattr(out, "grad_fn", None)
            if node is not None:
                s.note(f"saved for backward of {node.name()}")
            else:
                s.note("saved for backward of " +
                       (f"the node of {self.ops[op]['op']}" if op >= 0 else "an autograd node"))
        self._pending_saved = keep

    def _answer(self, line, value):
        """Keeps the value a data-dependent question at ``line`` got on real tensors, for
        ``answers``; a line that got different values keeps them all."""
        old = self.answers.get(line, _Differing(()))
        values = old.values if isinstance(old, _Differing) else (old,)
        if value not in values:
            values += (value,)
        self.answers[line] = values[0] if len(values) == 1 else _Differing(values)

    def _assumed(self, func, t, line, made_by=None):
        """The kernel of a data-dependent op on a meta tensor (``.item()``, ``bool(t)``,
        ``x in t``, ``nonzero``): the value the user gave for ``line`` (noted in
        ``assumptions``), or a UsageError naming the line and the tensor. Meta tensors hold no
        data, and a guessed value would silently change what the program does."""
        if made_by is None:
            made_by = self._existing(t).op
        what = _describe(t) + (f" from {made_by}" if made_by else "")
        if func is not _LOCAL_SCALAR:
            raise UsageError(
                f"{line}: {str(func).replace('aten.', '').replace('.default', '')} of {what} makes "
                "a tensor whose size its data decides, which a meta tensor does not hold; make "
                "the step not depend on it, or record() it on the CPU")
        if line not in self._assume:
            raise UsageError(
                f"{line}: the program asks the value of {what} (.item(), bool(), `in`), which a "
                f"meta tensor does not hold; give it, predict(..., assume={{'{line}': value}}) "
                "(a recording of the step on real tensors, at any size, has the values its "
                "questions got: assume=rec.answers), or make the step not depend on it")
        value = self._assume[line]
        if isinstance(value, _Differing):
            raise UsageError(
                f"{line}: the program asks the value of {what}, which got {value} on the "
                "recorded run: no one value to assume there")
        self.assumptions.append({"line": line, "tensor": _describe(t), "value": value})
        return lambda *args, **kwargs: value

    def _note_returned(self, value, returned=True):
        """Names the storages of the tensors ``value`` holds (a tensor, containers of them, or an
        object such as a KV cache whose attributes hold them) as returned by the function (when
        ``returned``), and those of a KV cache or logits as such."""
        # (value, role): a tensor held by a cache object (transformers' Cache classes, or what
        # a result calls past_key_values) is the KV cache; one a result calls logits, logits.
        found, todo, seen = [], [(value, "")], set()
        while todo:
            v, role = todo.pop()
            if id(v) in seen:
                continue
            seen.add(id(v))
            if isinstance(v, torch.Tensor):
                found.append((v, role))
                continue
            if "Cache" in type(v).__name__:
                role = "KV cache"
            if isinstance(v, dict) or hasattr(v, "keys") and hasattr(v, "__getitem__"):
                items = [(k, v[k]) for k in v.keys()]
            elif isinstance(v, (list, tuple)):
                items = [("", x) for x in v]
            elif hasattr(v, "__dict__") and not isinstance(v, (type, torch.nn.Module)):
                items = list(vars(v).items())
            else:
                continue
            for k, x in items:
                inner = {"past_key_values": "KV cache", "logits": "logits"}.get(k, role)
                todo.append((x, inner))
        for t, role in found:
            if returned:
                self._note_tensor(t, "returned by the function")
            if role:
                self._note_tensor(t, role)

    def _note_tensor(self, t, text):
        """Notes ``text`` on the record of ``t``'s storage, if the recording holds it alive."""
        s = self.storages.get(_storage(t)._cdata)
        if s is not None:
            s.note(text)

    def _made_on_meta(self, cpu):
        """A meta tensor in place of ``cpu`` (made from Python data as the CPU run makes it),
        keeping its storage's record: the trace is the CPU run's."""
        with _muted(self):
            m = torch.empty_like(cpu, device="meta").requires_grad_(cpu.requires_grad)
        s = self.storages.pop(_storage(cpu)._cdata, None)
        if s is not None:
            s.weak = StorageWeakRef(_storage(m))
            self.storages[_storage(m)._cdata] = s
        self._watch(m, _storage(m)._cdata)
        return m

    # -- ops ----------------------------------------------------------------------------------

    def _on_op(self, func, args, kwargs):
        if self._dirty or self._full_sweeps:
            self._sweep()
        if self._pending_saved:
            self._resolve_saved()
        flat_in = _tensors_in((args, kwargs))
        reads, read = [], []
        for t in flat_in:
            s = self._existing(t)
            read.append(s)
            if s.name not in reads:
                reads.append(s.name)
        line = _user_line()
        impl = func
        if flat_in and flat_in[0].is_meta:
            if self.autocast.used and self.autocast.on():
                self.autocast.check(func, args, kwargs)
            impl = self._meta.get(func, func)
            if func in _DATA_DEPENDENT:
                impl = self._assumed(func, flat_in[0], line)
        began = time.time_ns() // 1000
        out = _call(func, args, kwargs, self, impl)
        self._windows.append((began, time.time_ns() // 1000))
        if func is _LOCAL_SCALAR and not flat_in[0].is_meta:
            self._answer(line, out)
        out = _tensor_result(func, args, out, self)
        flat_out = _tensors_in(out)
        if not flat_in and not flat_out:
            # No tensor in or out (torchvision's _cuda_version, asked when it is first
            # imported): nothing to place, and it would make the first run's trace differ.
            self._windows.pop()
            return out
        index = len(self.ops)
        name, label, alias_flags, kind = _op_info(func)
        module = self._modules[-1] if self._modules else ""
        writes = []
        aliases = alias_flags if len(alias_flags) == len(flat_out) else (False,) * len(flat_out)
        for t, alias in zip(flat_out, aliases):
            st = _storage(t)
            self._watch(t, st._cdata)
            known = self.storages.get(st._cdata)
            if known is not None and not known.weak.expired():
                continue  # a view or an in-place result of a storage the recorder knows
            if known is not None:
                self._close(st._cdata, known, index - 1)
            if alias:  # aliases an argument the recorder has not seen: it existed before
                self._existing(t)
                continue
            s = self._open(self._label(label), st, "activation", t)
            s.op, s.line = name, line
            writes.append(s.name)
            if func in _CASTS and read:
                _note_precision_copy(read[0], flat_in[0], s, t)
        if func in _COPIES and len(read) > 1:
            _note_precision_copy(read[1], flat_in[1], read[0], flat_in[0])
        where = " ".join(x for x in (f"@{module}" if module else "", line) if x)
        self.ops.append({"name": f"{name}{kind} {where}".strip(), "op": name,
                         "inputs": reads, "outputs": writes, "phase": self._phase[-1],
                         "module": module, "line": line})
        self._out_refs.append(weakref.ref(flat_out[0]) if flat_out else lambda: None)
        return out

    def _on_pack(self, t):
        """saved_tensors_hooks' pack: the storage is saved for backward. Returning a detached
        alias (not ``t``) keeps the storage exactly as autograd would, without the reference
        cycle an output saved as itself makes (its grad_fn would hold it)."""
        self._muted += 1
        try:
            # Without a grad_fn there is no cycle to avoid (and a wrapped Python number would
            # reach detach as a float).
            held = t if t.grad_fn is None else t.detach()
            # Inputs are packed before their op runs, so the storage may be new to the recorder.
            self._pending_saved.append((self._existing(t), len(self.ops)))
            self._watch(held, _storage(held)._cdata)
        finally:
            self._muted -= 1
        return held

    # -- scopes -------------------------------------------------------------------------------

    def _name_tree(self, root, prefix):
        for path, m in root.named_modules():
            full = ".".join(x for x in (prefix, path) if x)
            self._paths.setdefault(id(m), full)
        for pname, p in root.named_parameters():
            full = ".".join(x for x in (prefix, pname) if x)
            self._param_names.setdefault(_storage(p)._cdata, full)
        for bname, b in root.named_buffers():
            full = ".".join(x for x in (prefix, bname) if x)
            self._param_names.setdefault(_storage(b)._cdata, full)

    def _enter_module(self, module):
        if id(module) not in self._paths:
            self._name_tree(module, type(module).__name__)
        self._modules.append(self._paths[id(module)])

    def _leave_module(self, out):
        if self._modules:
            self._modules.pop()
        if not self._modules:
            # What a model returns to the program: its cache and logits are named as it
            # returns them (a prefill's cache is gone by the end of a decode step).
            with _muted(self):
                self._note_returned(out, returned=False)

    @contextlib.contextmanager
    def phase(self, name):
        """Marks the ops inside as phase ``name`` (forward, backward, optimizer, or any)."""
        self._phase.append(name)
        try:
            yield self
        finally:
            self._phase.pop()

    # -- results ------------------------------------------------------------------------------

    def _note_optimizer(self, opt):
        for group in opt.param_groups:
            for p in group["params"]:
                pname = self._param_names.get(_storage(p)._cdata, "a parameter")
                if p.grad is not None:
                    self._note_tensor(p.grad, f"gradient of {pname}")
                for key, value in opt.state.get(p, {}).items():
                    if isinstance(value, torch.Tensor):
                        self._note_tensor(value, f"optimizer state ({key} of {pname})")

    def _note_gradients(self):
        for pname, ref in self._params:
            p = ref()
            if p is not None and p.grad is not None:
                self._note_tensor(p.grad, f"gradient of {pname}")

    @property
    def trace(self):
        """The recording in footprint's trace format (docs/TRACE_FORMAT.md)."""
        ops = [dict(o, free=[]) for o in self.ops]
        for s in self._order:
            if s.freed_after is not None and s.freed_after >= 0:
                ops[s.freed_after]["free"].append(s.name)
        for i, ws in self._workspace.items():
            ops[i]["workspace"] = ws
        for o in ops:
            if not o["free"]:
                del o["free"]
        tensors = []
        for s in self._order:
            if s.freed_after is not None and s.freed_after < 0:
                continue  # existed before and was gone before the first op: never part of it
            t = {"name": s.name, "bytes": s.bytes, "tensor": s.tensor}
            alive = s.freed_after is None
            if s.kind == "activation":
                t["kind"] = "output" if alive else "activation"
                t.update(op=s.op, module=s.module, line=s.line, phase=s.phase)
                notes = s.notes + (["held by the caller after the run"] if alive else [])
            else:
                t["kind"] = s.kind
                t["held"] = alive
                notes = s.notes + (["existed before the recording"] if s.kind == "input" else [])
            if notes:
                t["note"] = "; ".join(notes)
            tensors.append(t)
        return {"format": "footprint-trace/1", "name": self.name, "arguments": "donated",
                "explicit_frees": True, "recorder": f"footprint.torch (torch {torch.__version__})",
                "tensors": tensors, "ops": ops}

    def add_workspace(self, measurement):
        """Writes, as each op's ``workspace``, the scratch its kernel allocated and freed (what
        no dispatch mode sees: oneDNN's reorders, the 0-d tensors of Python numbers), from a
        ``measure`` block around this recording. Op i's window runs from the end of the op
        before it (or the recording's start) to its own end, so it holds what Python did in
        between; its workspace is what makes the trace's level at step i the highest the
        allocator's count rose in that window (after Python's frees that the trace places
        before the step): the rise, plus what the trace freed before the step, less the step's
        outputs (and those of the steps made outside aten just before it). After it the trace's peak is the measured one; without it the trace has only
        what aten ops hand to each other."""
        sizes = {s.name: s.bytes for s in self._order}
        freed_after = {}
        for s in self._order:
            if s.freed_after is not None and s.freed_after >= 0:
                freed_after[s.freed_after] = freed_after.get(s.freed_after, 0) + s.bytes
        events, k = measurement.events, 0
        begin, made, freed = self.started_us, 0, 0
        for i, window in enumerate(self._windows):
            made += sum(sizes[n] for n in self.ops[i]["outputs"])
            if window is None:  # a step made outside aten: counted with the next aten op
                freed += freed_after.get(i - 1, 0) if i > 0 else 0
                continue
            freed += freed_after.get(i - 1, 0) if i > 0 else 0
            while k < len(events) and events[k][0] <= begin:
                k += 1
            # The highest level inside the window, over its events only (the level at its start
            # is the step before's). Where the trace frees before this step, the levels before
            # Python's last free ahead of the op (gradients set to None) still hold what it
            # freed: only those after it count, or the freed bytes would read as this step's
            # scratch.
            levels, now = [], 0
            last_free = -1
            while k < len(events) and events[k][0] <= window[1]:
                now += events[k][1]
                levels.append(now)
                if events[k][1] < 0 and events[k][0] < window[0]:
                    last_free = len(levels) - 1
                k += 1
            counted = levels[last_free + 1:] if freed > 0 else levels
            scratch = max(counted) + freed - made if counted else 0
            if scratch > 0:
                self._workspace[i] = scratch
            begin, made, freed = window[1], 0, 0
        return self

    def save(self, path):
        import json
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.trace, f, indent=1)

    def analyze(self):
        import footprint
        return footprint.analyze(self.trace)

    def figures(self):
        """start, peak and after bytes of the recorded trace (footprint's timeline), and the
        same above ``start`` (what existed when the recording began and an op read), which is
        what ``measure`` sees."""
        import footprint
        trace = self.trace  # built once: a 10^6-op program's is 600 MB of Python objects
        timeline = footprint.analyze(trace)  # its figures, not its per-step JSON
        start = sum(t["bytes"] for t in trace["tensors"] if t["kind"] in ("input", "weight"))
        peak = timeline.total_peak  # weights included; after leaves them out
        after = timeline.after + timeline.weights
        return {"start": start, "peak": peak, "after": after, "peak_above_start": peak - start,
                "after_above_start": after - start,
                "by_role": self._roles_at(timeline.peak_step, trace) if self.ops else {}}

    def _roles_at(self, step, trace):
        """Bytes alive at op ``step`` of ``trace`` by role (ROLES), the op's measured scratch as
        "kernel scratch": what the peak is made of."""
        made, freed = {}, {}
        for i, o in enumerate(trace["ops"]):
            for n in o["outputs"]:
                made[n] = i
            for n in o.get("free", []):
                freed[n] = i
        by = dict.fromkeys(ROLES, 0)
        for t in trace["tensors"]:
            n = t["name"]
            if made.get(n, -1) <= step <= freed.get(n, len(trace["ops"])):
                by[_role(t)] += t["bytes"]
        by["kernel scratch"] += trace["ops"][step].get("workspace", 0)
        return {r: b for r, b in by.items() if b}


_CASTS = (torch.ops.aten._to_copy.default, torch.ops.aten.to.dtype)
_COPIES = (torch.ops.aten.copy_.default,)
_HALF = (torch.float16, torch.bfloat16)


_OP_INFO = {}


def _op_info(func):
    """What the trace says of every call of ``func``, read from its schema once: its name
    ("mm", "add.Tensor"), the label of its outputs' storages, per return whether the schema says
    it aliases an argument (Tensor(a) / Tensor(a!): a view or an in-place result, whose storage
    exists before the op), and " (in place)" / " (view)" / "" for the op's line."""
    info = _OP_INFO.get(func)
    if info is None:
        name = str(func).replace("aten.", "").replace(".default", "")
        returns = func._schema.returns
        aliases = tuple(r.alias_info is not None for r in returns)
        kind = ""
        if any(aliases):
            kind = " (in place)" if any(
                r.alias_info is not None and r.alias_info.is_write for r in returns) else " (view)"
        info = _OP_INFO[func] = (name, name.split(".")[0], aliases, kind)
    return info


def _is_parameter(s):
    return s.kind == "weight" or "parameter" in s.notes


def _note_precision_copy(src, src_t, dst, dst_t):
    """Mixed precision's two copies of a weight, named where one is made from the other (a
    cast, or a copy_ into it): float32 parameters cast to 16 bits (autocast's casts, or
    model.half() kept beside its masters) are the fp32 masters, their casts the 16-bit weights
    the step computes with; the float32 tensor copied back into a 16-bit parameter (an
    optimizer stepping masters of a bfloat16 model) is its fp32 master. (A float32 cast of a
    16-bit parameter is not one: models upcast weights for a norm's arithmetic.)"""
    if _is_parameter(src) and src_t.dtype == torch.float32 and dst_t.dtype in _HALF:
        src.note("fp32 master")
        dst.note(f"16-bit copy of {src.name}")
    elif _is_parameter(dst) and dst_t.dtype in _HALF and src_t.dtype == torch.float32:
        src.note(f"fp32 master of {dst.name}")


@contextlib.contextmanager
def _muted(rec):
    """A block whose ops are the recorder's own, not the program's (none without a recorder)."""
    if rec is not None:
        rec._mute(1)
    try:
        yield
    finally:
        if rec is not None:
            rec._mute(-1)


def _tensor_args(func, args):
    """``args`` with a Python number where ``func``'s schema takes a Tensor made the 0-d tensor
    it was: PyTorch 1.13 hands a wrapped number (the tensor a Python number becomes) to a
    dispatch mode as the number, and an op taking only a Tensor there then refuses it (the
    non-reentrant checkpoint's hooks detaching the 0.5 of ``x * 0.5``). A wrapped number is a
    CPU tensor of float64, int64, bool or complex128."""
    schema = func._schema.arguments
    fixed = None
    for i, a in enumerate(args):
        if (isinstance(a, (bool, int, float, complex)) and i < len(schema)
                and str(schema[i].type) == "Tensor"):
            fixed = fixed if fixed is not None else list(args)
            dtype = {bool: torch.bool, int: torch.int64, float: torch.float64,
                     complex: torch.complex128}[type(a)]
            fixed[i] = torch.scalar_tensor(a, dtype=dtype)
    return args if fixed is None else tuple(fixed)


def _call(func, args, kwargs, rec=None, impl=None):
    """``impl`` (by default ``func``) on the arguments; where it refuses a Python number for a
    Tensor argument of ``func``'s schema (1.13: see _tensor_args), again with the number made a
    tensor (by no op the recording shows)."""
    impl = impl or func
    try:
        return impl(*args, **kwargs)
    except RuntimeError as e:
        if "Expected a value of type 'Tensor'" not in str(e):
            raise
    with _muted(rec):
        args = _tensor_args(func, args)
    return impl(*args, **kwargs)


def _tensor_result(func, args, out, rec=None):
    """``out`` as the Tensor ``func``'s schema returns. PyTorch 1.13 hands an op's result on a
    wrapped number (the 0-d tensor a Python number becomes, ``x * 2.5``) back to a dispatch mode
    as a Python number, which the dispatcher then refuses where the schema returns a Tensor:
    autograd detaching a number it saved for backward failed every transformers training step
    ("detach returned invalid type float"). The result of an alias (detach, a view) is the
    argument itself, whose storage it shares; any other is a 0-d tensor of the argument's dtype,
    as the op made (by no op the recording shows: it is the op's output)."""
    if isinstance(out, torch.Tensor) or not isinstance(out, (bool, int, float, complex)):
        return out
    returns = func._schema.returns
    if len(returns) != 1 or str(returns[0].type) != "Tensor":
        return out
    first = next((a for a in args if isinstance(a, torch.Tensor)), None)
    if first is None:
        return out
    if returns[0].alias_info is not None:
        return first
    with _muted(rec):
        return torch.scalar_tensor(out, dtype=first.dtype, device=first.device)


_LOCAL_SCALAR = torch.ops.aten._local_scalar_dense.default
# Ops whose result depends on the tensor's data (a Python value, or an output whose size the
# data decides), which meta tensors cannot compute.
_DATA_DEPENDENT = {_LOCAL_SCALAR, torch.ops.aten.nonzero.default,
                   torch.ops.aten.masked_select.default, torch.ops.aten.unique_dim.default,
                   torch.ops.aten._unique2.default}


_PROFILER_OPS = set()
_OTHER_OPS = set()


def _is_profiler_op(func):
    """Whether ``func`` is one of the profiler's ops, asked of its namespace (a Python property)
    once per op."""
    if func in _OTHER_OPS:
        return False
    (_PROFILER_OPS if func.namespace == "profiler" else _OTHER_OPS).add(func)
    return func in _PROFILER_OPS


class _Mode(TorchDispatchMode):
    def __init__(self, rec):
        super().__init__()
        self._rec = rec

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        # The profiler's ops (1.13's record_function handle, a tensor over a C++ object that
        # c10's allocator never made) hold no tensor data.
        if self._rec._muted or func in _PROFILER_OPS or _is_profiler_op(func):
            return _tensor_result(func, args, _call(func, args, kwargs))
        return self._rec._on_op(func, args, kwargs)


def _all_subclasses(base):
    seen, todo = [], [base]
    while todo:
        c = todo.pop()
        for sub in c.__subclasses__():
            if sub not in seen:
                seen.append(sub)
                todo.append(sub)
    return seen


def _optimizer_classes():
    return [c for c in _all_subclasses(torch.optim.Optimizer) if "step" in vars(c)]


@contextlib.contextmanager
def _phases(rec):
    """backward() and optimizer steps mark their ops' phase. 2.x has global optimizer step
    hooks; on 1.13 the step methods of the Optimizer subclasses are wrapped while recording."""
    patched = []
    real_backward, real_grad = torch.autograd.backward, torch.autograd.grad

    def in_phase(fn, phase, on_self=None):
        def wrapped(*args, **kwargs):
            if not _still_recording(rec):  # a wrapper torch kept past the recording (below)
                return fn(*args, **kwargs)
            if on_self is not None and args:
                rec._note_optimizer(args[0])  # the gradients it reads, before zero_grad drops them
            with rec.phase(phase):
                out = fn(*args, **kwargs)
            # The optimizer's state is named as the step leaves it; the recorder keeps no
            # reference to the optimizer, which would keep its state and the parameters alive
            # after the program let them go.
            if on_self is not None and args:
                rec._note_optimizer(args[0])
            return out
        wrapped.__wrapped__ = fn
        wrapped.__dict__.update(getattr(fn, "__dict__", {}))
        return wrapped

    torch.autograd.backward = in_phase(real_backward, "backward")
    torch.autograd.grad = in_phase(real_grad, "backward")
    classes = _optimizer_classes()
    methods = [(c, "step") for c in classes] + [(torch.optim.Optimizer, "zero_grad")]
    for cls, method in methods:
        patched.append((cls, method, vars(cls)[method]))
        setattr(cls, method, in_phase(vars(cls)[method], "optimizer", on_self=True))
    # 2.x's Optimizer.__init__ wraps `type(self).step` for its profiler once per class and sets
    # the wrapper on that class: on a subclass that inherits step (2.7's AdamW from Adam) first
    # made during the recording, it wraps this wrapper and stays after it. It is left there (the
    # program's optimizers made meanwhile use it, their hooks in it) and passes through once
    # the recording is over.
    try:
        yield
    finally:
        torch.autograd.backward, torch.autograd.grad = real_backward, real_grad
        for cls, method, fn in patched:
            setattr(cls, method, fn)


def _still_recording(rec):
    """Whether ``rec`` (a weak proxy) is a recording still under way."""
    try:
        return rec._recording
    except ReferenceError:
        return False


def _reachable_storages():
    """The storages of every tensor the garbage collector tracks. The heap holds hundreds of
    thousands of objects once transformers is imported: a Python loop asking each whether it is
    a tensor cost as much as the plain meta run of a GPT-2 training step, so the tensors are
    picked out by their types in C (map, compress), each type asked once."""
    import gc
    import itertools
    import warnings
    found = set()
    # Looking at every object touches deprecated ones too (torch.distributed.reduce_op warns).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        objects = gc.get_objects()
        tensor_types = {k for k in set(map(type, objects)) if issubclass(k, torch.Tensor)}
        for obj in itertools.compress(objects, map(tensor_types.__contains__, map(type, objects))):
            try:
                found.add(_storage(obj)._cdata)
            except (RuntimeError, NotImplementedError):  # sparse and storage-less kinds
                pass
    return found


def _cpu_proxy(t, small):
    """A tiny CPU tensor for ``t`` (or None): its dtype and rank, each size through ``small``
    (0 and 1 kept, equal sizes equal), its dims laid out in the same stride order, and a last
    dim of stride other than 1 where ``t``'s is."""
    if t is None:
        return None
    shape = [small.get(n, n) for n in t.shape]
    if t.dim() > 0 and t.stride(-1) != 1 and t.shape[-1] > 1:
        return torch.empty(shape + [2], dtype=t.dtype)[..., 0]
    order = sorted(range(t.dim()), key=lambda d: (-t.stride(d), d))  # outermost first
    base = torch.empty([shape[d] for d in order], dtype=t.dtype)
    return base.permute([order.index(d) for d in range(t.dim())])


def _sdpa_as_on_the_cpu(rec, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                        scale=None, enable_gqa=False):
    """scaled_dot_product_attention on meta tensors as the CPU runs it: the CPU's backend
    choice, asked of tiny proxies (it depends on dtypes, ranks, which sizes are equal, 0 or 1,
    strides, dropout and the mask, not on how large the sizes are), and for its flash kernel
    the ops the CPU runs: a bool mask made additive, then the fused kernel."""
    extra = {"enable_gqa": True} if enable_gqa else {}
    tensors = [t for t in (query, key, value, attn_mask) if t is not None]
    small = {n: i + 2 for i, n in enumerate(sorted({n for t in tensors for n in t.shape
                                                     if n > 1}))}
    with _muted(rec):  # the proxies (and the probe of the CPU's mask ops) are not the program's
        negate = attn_mask is not None and attn_mask.dtype == torch.bool and \
            _cpu_negates_bool_masks()
        choice = torch._fused_sdp_choice(*(_cpu_proxy(t, small) for t in (query, key, value)),
                                         _cpu_proxy(attn_mask, small), dropout_p, is_causal,
                                         scale=scale, **extra)
    flash = int(torch.nn.attention.SDPBackend.FLASH_ATTENTION)
    # enable_gqa with as many key heads as query heads (transformers passes it always) changes
    # nothing; with fewer, the CPU's flash kernel takes no such argument.
    if choice != flash or (enable_gqa and key.shape[-3] != query.shape[-3]):
        return _SDPA(query, key, value, attn_mask, dropout_p, is_causal, scale=scale, **extra)
    mask = attn_mask
    if mask is not None and mask.dtype == torch.bool:
        zero = torch.scalar_tensor(0.0, dtype=query.dtype, device=query.device)
        keep = mask.logical_not() if negate else None  # in the CPU's order of ops
        minus_inf = torch.scalar_tensor(float("-inf"), dtype=query.dtype, device=query.device)
        mask = torch.where(keep, minus_inf, zero) if negate else torch.where(mask, zero, minus_inf)
    return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        query, key, value, dropout_p, is_causal, attn_mask=mask, scale=scale)[0]


_SDPA = getattr(torch.nn.functional, "scaled_dot_product_attention", None)


@functools.lru_cache(maxsize=None)
def _cpu_negates_bool_masks():
    """Whether this PyTorch's CPU attention makes a bool mask additive through logical_not
    (2.5: where(not mask, -inf, 0)) or without it (2.7: where(mask, 0, -inf)): asked of the CPU
    once, on tiny tensors, so that meta runs the same ops."""
    seen = []

    class Ops(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    q = torch.zeros(1, 1, 2, 8)
    with Ops():
        _SDPA(q, q, q, attn_mask=torch.ones(2, 2, dtype=torch.bool))
    return any("logical_not" in f for f in seen)


def _on_meta(args):
    return bool(args) and getattr(args[0], "device", None) == torch.device("meta")


# Functions that make a tensor from Python data: on the CPU its storage is made outside aten
# (then lift_fresh), on meta by no op at all.
_FROM_DATA = tuple(getattr(torch, n) for n in ("tensor", "as_tensor", "asarray") if hasattr(torch, n))


class _AsOnTheCpu(torch.overrides.TorchFunctionMode):
    """Meta tensors made and used as the CPU makes and uses them:

    - ``torch.tensor(data, device="meta")`` (a buffer of a module built on meta,
      ``footprint.torch.device``) makes its storage by no op a dispatch mode sees, so an unread
      one (GPT-2's ``masked_bias``) would be missing where the CPU run has it: it is made on the
      CPU, as the CPU run makes it (the recorder sees the same ops), then replaced by a meta
      tensor that keeps the CPU storage's record;
    - on meta tensors PyTorch 2.x's scaled_dot_product_attention always takes its math path
      (its backend choice says "math" off the CPU), while the CPU runs its fused flash kernel,
      which keeps other tensors for backward: a prediction would count the wrong ones."""

    def __init__(self, rec):
        super().__init__()
        self._rec = rec

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.backward:
            return self._backward(*args, **kwargs)
        if type(func) is _METHOD_WRAPPER and func == _SET_DATA:
            return self._rec._set_data(func, *args)
        if _autocast.enabled() and any(t.is_meta for t in _tensors_in((args, kwargs))):
            return self._rec.autocast.call(func, args, kwargs, self._run)
        return self._run(func, args, kwargs)

    def _backward(self, tensor, gradient=None, retain_graph=None, create_graph=False,
                  inputs=None):
        """``Tensor.backward``, with this mode kept on once the program has used autocast: a
        torch function the mode hands on runs without it, and so would checkpoint's forward
        recomputed under the autocast it ran in, uncast on meta. (Not before: on 1.13 the mode
        costs the recorder's own Python in backward a fifth of predict's time.)"""
        with self if self._rec.autocast.used else contextlib.nullcontext():
            torch.autograd.backward(tensor, gradient, retain_graph, create_graph, inputs=inputs)

    def _run(self, func, args, kwargs):
        if func is _SDPA and _SDPA is not None and _on_meta(args):
            return _sdpa_as_on_the_cpu(self._rec, *args, **kwargs)
        if (func in _FROM_DATA and str(kwargs.get("device")) == "meta" and args
                and not isinstance(args[0], torch.Tensor)):
            return self._rec._made_on_meta(func(*args, **dict(kwargs, device="cpu")))
        return func(*args, **kwargs)


_SET_DATA = torch.Tensor.data.__set__
_METHOD_WRAPPER = type(_SET_DATA)
_REAL_AUTOCAST = torch.autocast


class _Autocast(_REAL_AUTOCAST):
    """``torch.autocast`` that also takes ``device_type="meta"`` (which it refuses: "must be
    'cuda' or 'cpu'"), as transformers' rotary embeddings ask it on their tensors' device: the
    prediction is the CPU's run, where that device is the CPU, so it is the CPU's autocast
    (which footprint.torch follows on meta tensors, see _autocast)."""

    def __new__(cls, device_type, *args, **kwargs):
        if str(device_type) != "meta":
            return super().__new__(cls)
        return _REAL_AUTOCAST("cpu", *args, **kwargs)


def _fork_rng_but_on_meta(real_fork_rng):
    """``torch.random.fork_rng`` doing nothing for meta (see _meta_as_the_cpu)."""
    def fork_rng(*args, **kwargs):
        if str(kwargs.get("device_type", "")) == "meta":
            return contextlib.nullcontext()
        return real_fork_rng(*args, **kwargs)
    return fork_rng


@contextlib.contextmanager
def _meta_as_the_cpu(rec):
    """Meta tensors run as the CPU would run them: 2.x's attention as above, and
    ``torch.random.fork_rng`` (which 2.x's checkpoint calls when it recomputes, and which fails
    for a device without an RNG module, meta, even when asked not to fork) does nothing for meta:
    meta tensors take no random numbers, and the state it keeps is no aten op's storage."""
    real_fork_rng = torch.random.fork_rng
    fork_rng = _fork_rng_but_on_meta(real_fork_rng)

    # The mode sees the calls made at the top; a function it hands on (multi_head_attention_
    # forward) runs without it, and reaches attention through torch.nn.functional's name.
    def sdpa(*args, **kwargs):
        if _on_meta(args):
            return rec.autocast.call(_SDPA, args, kwargs,
                                     lambda _f, a, k: _sdpa_as_on_the_cpu(rec, *a, **k))
        return _SDPA(*args, **kwargs)

    torch.random.fork_rng = fork_rng
    torch.autocast = _Autocast
    if _SDPA is not None:
        torch.nn.functional.scaled_dot_product_attention = sdpa
    try:
        with _AsOnTheCpu(rec), _autocast.following(rec.autocast):
            yield
    finally:
        torch.random.fork_rng = real_fork_rng
        torch.autocast = _REAL_AUTOCAST
        if _SDPA is not None:
            torch.nn.functional.scaled_dot_product_attention = _SDPA


def _refuse_nesting():
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack
    if _RECORDING or any(isinstance(m, _Mode) for m in _get_current_dispatch_mode_stack()):
        raise UsageError(
            f"{_user_line()}: record() or predict() inside a recording: the inner one's ops "
            "(meta tensors, for predict) would be counted as the outer program's; call it "
            "before or after the record() block")


# The engine recordings open (the dispatch mode's are found on torch's mode stack).
_RECORDING = []


@contextlib.contextmanager
def record(module=None, name="torch", optimizers=(), saved=True, assume=None):
    """Records every aten op run inside the block (forward, backward(), optimizer steps).

    ``module`` names module scopes and parameters relative to it (``encoder.layers.3.attn``);
    without it, modules are named from the first one called (its class name as the prefix).
    ``optimizers`` whose state should be named; optimizers whose step runs inside the block
    are found by themselves. ``saved=False`` leaves out saved_tensors_hooks: the timeline is
    the same (autograd holds what it saves either way) but no storage says which node saved
    it; on 1.13 a Python number saved for backward (``q / math.sqrt(E)`` in
    multi_head_attention_forward) made autograd fail under the hooks before footprint handled
    it. ``assume``: the values of data-dependent questions asked of meta tensors, by the
    "file.py:line" that asks (see ``predict``). Yields a ``Recording``; its ``trace`` is
    complete after the block."""
    _refuse_nesting()
    rec = Recording(name)
    rec._assume = dict(assume or {})
    # Without the hooks autograd keeps what it saves in tensors of its own, which no watch sees.
    rec._full_sweeps = not saved
    rec._before = _reachable_storages()
    rec.started_us = time.time_ns() // 1000  # the profiler's clock
    if module is not None:
        rec._name_tree(module, "")
    optimizers = list(optimizers)
    mod = torch.nn.modules.module
    pre = mod.register_module_forward_pre_hook(lambda m, args: rec._enter_module(m))
    post = mod.register_module_forward_hook(lambda m, args, out: rec._leave_module(out))
    start = time.perf_counter()
    try:
        hooks = (torch.autograd.graph.saved_tensors_hooks(rec._on_pack, lambda t: t) if saved
                 else contextlib.nullcontext())
        weak = weakref.proxy(rec)  # as in _engine_record: what torch may keep holds it weakly
        with _phases(weak), _meta_as_the_cpu(weak), hooks, _Mode(weak):
            yield rec
    finally:
        pre.remove()
        post.remove()
        rec.seconds = time.perf_counter() - start
        rec._recording = False
    rec._sweep(full=True)
    rec._resolve_saved(final=True)
    rec._note_gradients()
    for opt in optimizers:
        rec._note_optimizer(opt)


class _Record:
    """A storage's record as the engine hands it over (the fields ``trace`` reads)."""

    __slots__ = ("name", "bytes", "kind", "freed_after", "notes", "op", "module", "line",
                 "phase", "tensor")

    def __init__(self, fields):
        (self.name, self.bytes, self.kind, self.freed_after, self.notes, self.op, self.module,
         self.line, self.phase, self.tensor) = fields


class _EngineRecording(Recording):
    """A Recording whose ops come from the engine below Python (_torch_engine.cpp) instead of a
    dispatch mode: the same trace, with Python called at module scopes, phases, autograd's
    packs and the notes, never per op."""

    def __init__(self, name, module):
        self._done = False
        self._text = None
        super().__init__(name)
        self._engine = module.Engine(list(_SKIP_DIRS), self._classify, _is_a_parameter)
        self._engine.set_phase("forward")
        self.autocast_seen = False

    def _classify(self, t):
        """(kind, name, note) of a storage that existed before the recording, first read."""
        pname = self._param_names.get(_storage(t)._cdata)
        if pname is not None or isinstance(t, torch.nn.Parameter):
            name, kind, note = pname or self._label("parameter"), "weight", "parameter"
        else:
            name, kind, note = self._label("input"), "input", None
        if t.requires_grad and t.is_leaf:
            self._params.append((name, weakref.ref(t)))
        return kind, name, note

    def _note_tensor(self, t, text):
        self._engine.note(t, text)

    def _mute(self, delta):
        self._muted += delta
        self._engine.mute(delta)

    def _enter_module(self, module):
        super()._enter_module(module)
        self._engine.set_module(self._modules[-1])

    def _leave_module(self, out):
        super()._leave_module(out)
        self._engine.set_module(self._modules[-1] if self._modules else "")

    @contextlib.contextmanager
    def phase(self, name):
        self._phase.append(name)
        self._engine.set_phase(name)
        try:
            yield self
        finally:
            self._phase.pop()
            self._engine.set_phase(self._phase[-1])

    def _on_pack(self, t):
        self._engine.mute(1)
        try:
            held = t if t.grad_fn is None else t.detach()
        finally:
            self._engine.mute(-1)
        self._engine.saved(t)
        return held

    def _made_on_meta(self, cpu):
        self._engine.mute(1)
        try:
            m = torch.empty_like(cpu, device="meta").requires_grad_(cpu.requires_grad)
        finally:
            self._engine.mute(-1)
        self._engine.adopt(m, cpu)
        return m

    def _from_data(self, func, args, kwargs):
        """``func`` (torch.tensor, as_tensor, asarray) as _AsOnTheCpu runs it: on meta, made on
        the CPU as the CPU run makes it, then replaced by a meta tensor keeping its record."""
        if str(kwargs.get("device")) == "meta" and args and not isinstance(args[0], torch.Tensor):
            return self._made_on_meta(func(*args, **dict(kwargs, device="cpu")))
        return func(*args, **kwargs)

    def _data_dependent(self, func, t):
        """The meta kernel of a data-dependent op while recording (see Recording._assumed)."""
        line = _user_line()
        found = self._engine.find(t)
        made_by = self._engine.describe(found)["op"] if found >= 0 else ""
        return self._assumed(func, t, line, made_by)()

    def _finish(self):
        self._engine.stop()
        self._engine.drop_callbacks()
        self.autocast_seen = self.autocast_seen or self._engine.autocast_seen()
        if self._engine.error():
            raise RuntimeError(f"footprint.torch's recorder failed inside an op, so the trace "
                               f"misses it: {self._engine.error()}")
        self._done = True

    # The ops and storage records are Python objects made from the engine's when first asked
    # after the recording (the trace, figures): recording makes none.
    @property
    def ops(self):
        if self._ops is None and self._done:
            self._ops = self._engine.ops()
        return self._ops or []

    @ops.setter
    def ops(self, value):  # Recording.__init__'s empty list
        self._ops = value or None

    @property
    def _order(self):
        if self._records is None and self._done:
            self._records = [_Record(r) for r in self._engine.storages()]
        return self._records or []

    @_order.setter
    def _order(self, value):
        self._records = value or None

    def _trace_text(self):
        if self._text is None:
            self._text = self._engine.trace_json(
                self.name, f"footprint.torch (torch {torch.__version__})")
        return self._text

    @property
    def trace(self):
        if self._workspace or not self._done:
            return super().trace
        import json
        return json.loads(self._trace_text())

    def analyze(self):
        if self._workspace or not self._done:
            return super().analyze()
        from . import _footprint
        return _footprint._analyze_trace(self._trace_text(), "<trace>", None)

    def figures(self):
        """Recording.figures from the engine's trace text, without the trace's Python objects."""
        if self._workspace or not self._done:
            return super().figures()
        timeline = self.analyze()
        start = self._engine.start_bytes()
        peak, after = timeline.total_peak, timeline.after + timeline.weights
        by_role = {}
        if self._engine.op_count():
            by_role = dict.fromkeys(ROLES, 0)
            for kind, note, size in self._engine.alive_at(timeline.peak_step):
                by_role[_role({"kind": kind, "note": note})] += size
            by_role = {r: b for r, b in by_role.items() if b}
        return {"start": start, "peak": peak, "after": after, "peak_above_start": peak - start,
                "after_above_start": after - start, "by_role": by_role}


_WARNED = set()


def _warn_once(text):
    import warnings
    if text not in _WARNED:
        _WARNED.add(text)
        warnings.warn(text, RuntimeWarning, stacklevel=3)


def _is_a_parameter(t):
    return isinstance(t, torch.nn.Parameter)


def _data_dependent_kernel(rec, func, t):
    """A data-dependent op's meta kernel: ``rec`` (a weak proxy) answers it."""
    return rec._data_dependent(func, t)


@contextlib.contextmanager
def _engine_meta_kernels(rec):
    """Meta kernels registered while the engine records (no dispatch mode to swap them in):
    those 1.13 lacks or whose outputs are not the CPU's, and for the data-dependent ops the value
    ``assume`` gives or an error naming the line (Recording._assumed)."""
    import warnings
    # The dispatch mode's replacements (_meta_kernels) but native_layer_norm's: it calls the op
    # itself (a Meta kernel of its own would recurse), and its check matters only under
    # autocast, which the mode records.
    kernels = {func: kernel for func, kernel in _meta_kernels().items()
               if func is not torch.ops.aten.native_layer_norm.default}
    kernels.update({func: functools.partial(_data_dependent_kernel, rec, func)
                    for func in _DATA_DEPENDENT})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 2.x: "Overriding a previously registered kernel"
        lib = torch._C._dispatch_library("IMPL", "aten", "Meta", __file__, 0)
        for func, fn in kernels.items():
            name = func._schema.name.split("::")[-1]
            lib.impl(name + ("." + func._schema.overload_name if func._schema.overload_name
                             else ""), "Meta", fn)
    try:
        yield
    finally:
        # 2.x keeps a library's registrations until reset (1.13: until the object goes): a
        # kernel left behind would answer .item() on meta with this recording's assumptions.
        if hasattr(lib, "reset"):
            lib.reset()
        del lib


@contextlib.contextmanager
def _engine_record(module, name, assume):
    """``record`` on the engine, for ``predict``: the block's function on meta tensors."""
    rec = _EngineRecording(name, module)
    rec._assume = dict(assume or {})
    rec.started_us = time.time_ns() // 1000
    mod = torch.nn.modules.module
    pre = mod.register_module_forward_pre_hook(lambda m, args: rec._enter_module(m))
    post = mod.register_module_forward_hook(lambda m, args, out: rec._leave_module(out))
    start = time.perf_counter()
    _RECORDING.append(rec)
    # What is patched or registered while recording reaches the recording weakly: torch keeps
    # some of those functions after they are put back (2.x's dynamo tables torch's functions),
    # and a strong reference would keep every trace alive.
    weak = weakref.proxy(rec)
    try:
        with _phases(weak), _engine_as_the_cpu(weak), _engine_meta_kernels(weak), \
                torch.autograd.graph.saved_tensors_hooks(weak._on_pack, lambda t: t):
            rec._engine.start()
            try:
                yield rec
            finally:
                rec._note_gradients()
                rec._finish()
    finally:
        _RECORDING.pop()
        pre.remove()
        post.remove()
        rec.seconds = time.perf_counter() - start
        rec._recording = False


@contextlib.contextmanager
def _engine_as_the_cpu(rec):
    """_meta_as_the_cpu's work without its torch function mode (a Python call per torch
    function): attention, fork_rng and torch.tensor(..., device="meta") replaced by name while
    recording. Autocast on meta needs the dispatch mode's emulation: the engine notes that the
    program entered it (``autocast_seen``) and predict records again with the mode."""
    real_fork_rng = torch.random.fork_rng
    fork_rng = _fork_rng_but_on_meta(real_fork_rng)
    real_from_data = {n: getattr(torch, n) for n in ("tensor", "as_tensor", "asarray")
                      if hasattr(torch, n)}

    def sdpa(*args, **kwargs):
        if _on_meta(args):
            return _sdpa_as_on_the_cpu(rec, *args, **kwargs)
        return _SDPA(*args, **kwargs)

    def from_data(func):
        return lambda *args, **kwargs: rec._from_data(func, args, kwargs)

    class Autocast(_REAL_AUTOCAST):
        def __new__(cls, device_type, *args, **kwargs):
            if kwargs.get("enabled", args[1] if len(args) > 1 else True):
                rec.autocast_seen = True
            if str(device_type) != "meta":
                return super().__new__(cls)
            return _REAL_AUTOCAST("cpu", *args, **kwargs)

    # nn.Parameter(t) (a module's _apply, a model built in the step) detaches t with dispatch
    # modes stashed away: no op of the program's either.
    real_make_subclass = torch.Tensor._make_subclass  # torch._C's, which Tensor inherits

    def make_subclass(*args, **kwargs):
        with _muted(rec):
            return real_make_subclass(*args, **kwargs)

    # 1.13's record_function (Optimizer.step's) keeps its handle in a tensor made inside the
    # profiler's op, which runs unobserved: what it makes is no program's.
    profiler_ops = torch.ops.profiler
    real_enter = getattr(profiler_ops, "_record_function_enter", None)

    def enter(*args, **kwargs):
        rec._engine.mute(1)
        try:
            return real_enter(*args, **kwargs)
        finally:
            rec._engine.mute(-1)

    if real_enter is not None:
        setattr(profiler_ops, "_record_function_enter", enter)
    torch.Tensor._make_subclass = staticmethod(make_subclass)
    torch.random.fork_rng = fork_rng
    torch.autocast = Autocast
    for n, f in real_from_data.items():
        setattr(torch, n, from_data(f))
    if _SDPA is not None:
        torch.nn.functional.scaled_dot_product_attention = sdpa
    try:
        yield
    finally:
        del torch.Tensor._make_subclass
        if real_enter is not None:
            setattr(profiler_ops, "_record_function_enter", real_enter)
        torch.random.fork_rng = real_fork_rng
        torch.autocast = _REAL_AUTOCAST
        for n, f in real_from_data.items():
            setattr(torch, n, f)
        if _SDPA is not None:
            torch.nn.functional.scaled_dot_product_attention = _SDPA


class Measurement:
    """What a ``measure`` block allocated, measured without the recorder.

    ``peak`` and ``after``: PyTorch's profiler (each allocation and free of c10's CPU allocator
    with its requested size, in order), in bytes above what was allocated when the block began;
    ``since(rec)`` gives the same from the moment a ``record`` block began. The profiler reports
    a free only of a block it saw allocated, so a program that frees tensors made before the
    block makes them inside it.

    ``heap_peak`` and ``heap_after``: footprint's counting malloc, when it is preloaded (else
    None): every malloc of the process (tensors, and the objects around them), with the bytes
    glibc really reserved (malloc_usable_size), above the block's start. Measure with
    ``profiler=False`` for these: the profiler's own records are mallocs too."""

    def __init__(self):
        self.peak = self.after = 0
        self.heap_peak = self.heap_after = None
        self.events = []  # (time in microseconds since the epoch, signed bytes)
        self.seconds = 0.0

    def since(self, rec):
        """(peak, after) above the bytes allocated when ``rec`` began."""
        now = peak = 0
        for us, n in self.events:
            if us >= rec.started_us:
                now += n
                peak = max(peak, now)
        return peak, now


def _start_us(event):
    """A profiler event's start in microseconds: ``start_us()`` on 1.13, ``start_ns()`` on 2.x
    (which dropped the other)."""
    if hasattr(event, "start_ns"):
        return event.start_ns() // 1000
    return event.start_us()


@contextlib.contextmanager
def measure(profiler=True):
    """Measures the real run's CPU memory independently of the recorder: the profiler's
    memory events (``profile_memory=True``), summed in the order they happened, and footprint's
    counting malloc when it is preloaded."""
    from torch.profiler import ProfilerActivity, profile
    m = Measurement()
    heap = _heap_counter()
    start = time.perf_counter()
    if heap is not None:
        heap[1]()
        base = heap[0]().current
    with (profile(activities=[ProfilerActivity.CPU], profile_memory=True) if profiler
          else contextlib.nullcontext()) as prof:
        yield m
    if heap is not None:
        end = heap[0]()
        m.heap_peak, m.heap_after = end.peak - base, end.current - base
    m.seconds = time.perf_counter() - start
    if prof is None:
        return
    m.events = [(_start_us(e), e.nbytes()) for e in prof.profiler.kineto_results.events()
                if e.name() == "[memory]" and str(e.device_type()).endswith("CPU")]
    m.events.sort(key=lambda e: e[0])  # stable: events of one microsecond keep their order
    now = 0
    for _, n in m.events:
        now += n
        m.peak = max(m.peak, now)
    m.after = now


def _meta_convolution_backward(grad_output, input, weight, bias_sizes, stride, padding,
                               dilation, transposed, output_padding, groups, output_mask):
    """convolution_backward's outputs are shaped like input, weight and the bias."""
    del stride, padding, dilation, transposed, output_padding, groups
    out = [input.new_empty(input.shape) if output_mask[0] else None,
           weight.new_empty(weight.shape) if output_mask[1] else None,
           grad_output.new_empty((weight.shape[0],)) if output_mask[2] and bias_sizes else None]
    return tuple(out)


def _meta_native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight,
                                     bias, output_mask):
    """The CPU's gradients of layer_norm: of the input in its type, contiguous, and of the
    weight and the bias in theirs (2.x's meta kernel makes all three in the input's type, so a
    bfloat16 input under autocast, with float32 weights, had autograd cast them after it)."""
    del grad_out, normalized_shape, mean, rstd
    return (input.new_empty(input.shape) if output_mask[0] else None,
            weight.new_empty(weight.shape) if output_mask[1] and weight is not None else None,
            bias.new_empty(bias.shape) if output_mask[2] and bias is not None else None)


@functools.lru_cache(maxsize=None)
def _cpu_layer_norm_refusal(dtypes):
    """The error the CPU's layer_norm gives for an input, weight and bias of these dtypes
    (1.13 refuses a bfloat16 input with float32 weights, which autocast makes), or None: asked
    of one-element tensors, once per combination."""
    inp, weight, bias = (None if d is None else torch.zeros(1, dtype=d) for d in dtypes)
    try:
        torch.ops.aten.native_layer_norm.default(inp, [1], weight, bias, 1e-5)
    except RuntimeError as e:
        return str(e)
    return None


def _meta_native_layer_norm(input, normalized_shape, weight, bias, eps):
    """layer_norm on meta tensors, refusing what the CPU refuses (1.13's meta kernel takes
    mixed types the CPU's does not: a prediction of a step the CPU cannot run)."""
    refusal = _cpu_layer_norm_refusal(tuple(None if t is None else t.dtype
                                            for t in (input, weight, bias)))
    if refusal is not None:
        raise RuntimeError(refusal)
    return torch.ops.aten.native_layer_norm.default(input, normalized_shape, weight, bias, eps)


def _meta_kernels():
    """Meta kernels called in place of the op on meta tensors: ones 1.13 lacks (2.x has them)
    and ones whose outputs are not the CPU's."""
    return {torch.ops.aten.convolution_backward.default: _meta_convolution_backward,
            torch.ops.aten.native_layer_norm_backward.default: _meta_native_layer_norm_backward,
            torch.ops.aten.native_layer_norm.default: _meta_native_layer_norm}


# The functions that make a tensor from nothing (no tensor argument to take a device from):
# what 2.x's ``with torch.device(...)`` sends to its device.
_FACTORIES = ("arange", "as_tensor", "asarray", "bartlett_window", "blackman_window", "empty",
              "empty_strided", "eye", "full", "hamming_window", "hann_window", "kaiser_window",
              "linspace", "logspace", "ones", "rand", "randint", "randn", "randperm", "range",
              "scalar_tensor", "tensor", "tril_indices", "triu_indices", "zeros")


# Taken when footprint.torch is imported: a recording replaces some of them by name.
_FACTORY_FUNCTIONS = frozenset(getattr(torch, n) for n in _FACTORIES if hasattr(torch, n))


class _DeviceMode(torch.overrides.TorchFunctionMode):
    """1.13's stand-in for 2.x's ``with torch.device(d)``: factory functions called without a
    device make their tensor on ``d``."""

    def __init__(self, device):
        super().__init__()
        self._device = torch.device(device)
        self._factories = _FACTORY_FUNCTIONS

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in self._factories and kwargs.get("device") is None:
            kwargs = dict(kwargs, device=self._device)
            if _RECORDING and func in _FROM_DATA:
                return _RECORDING[-1]._from_data(func, args, kwargs)
        return func(*args, **kwargs)


def device(d):
    """A context in which modules and tensors made without a device are made on ``d``: what
    ``with torch.device(d):`` is on PyTorch 2.x, which 1.13 lacks. On "meta" a model of any size
    is built without allocating its weights, ``torch.tensor(...)`` buffers of its ``__init__``
    included (a plain ``.to("meta")`` builds it on the CPU first)::

        def step(device, batch):
            with footprint.torch.device(device):
                model = transformers.LlamaForCausalLM(config)
            ...
        footprint.torch.predict(step, batch=8)
    """
    if hasattr(torch.device, "__enter__"):  # 2.x
        return torch.device(d)
    return _DeviceMode(d)


def meta():
    """``device("meta")``: builds modules and tensors on meta (no data) inside the block."""
    return device("meta")


def predict(fn, *args, name="predicted", assume=None, **kwargs):
    """The trace of ``fn(*args, device="meta", **kwargs)`` without running it: ``fn`` builds
    its model and inputs on the device it is given, and on "meta" every aten op computes only
    shapes and dtypes, so storages have their real sizes and lifetimes but no data. (On 1.13
    ``device="meta"`` is what works; FakeTensorMode exists there but needs every tensor
    converted by hand.) Where an op picks its kernel by device (2.x's attention), the CPU's
    pick is followed (``record`` does that on meta tensors). Build the model inside ``fn`` with
    ``footprint.torch.device(device)`` so that it is made on meta directly.

    A step that asks a value of its tensors' data (``.item()``, ``if mask.all():``,
    ``pad_id in input_ids``) cannot be predicted without that value: ``predict`` stops with a
    UsageError naming the line that asks, unless ``assume`` gives it ({"file.py:line": value},
    the line as the error names it); each value given is listed in the Recording's
    ``assumptions``. A recording of the step on real tensors (at any size) has the values its
    questions got in ``answers``, in the form ``assume`` takes: ``predict(step, batch=64,
    assume=small_run.answers)``. Returns the Recording."""
    engine = _torch_engine.load()
    if engine is None:
        _warn_once(f"footprint.torch: predict records in Python, about 10x slower than its engine "
                   f"below Python, which could not be built here ({_torch_engine.why_not()}); "
                   "docs/TORCH.md says what it needs")
    else:
        _refuse_nesting()
        with _engine_record(engine, name, assume) as rec:
            returned = fn(*args, device="meta", **kwargs)
            rec._note_returned(returned)
        del returned
        if not rec.autocast_seen:
            return rec
        # Autocast on meta tensors is emulated op by op, which only the dispatch mode can do.
        del rec
    with record(name=name, assume=assume) as rec:
        returned = fn(*args, device="meta", **kwargs)
        rec._note_returned(returned)
    del returned  # held until the recording ended: what fn returns is alive after the run
    return rec


class Fit:
    """``fit``'s answer in the dim it searched: ``value`` (verified when ``measured`` has
    figures), ``predicted_value`` (from predictions alone), ``dim`` (its name), ``predicted``
    {n: predicted peak} and ``measured`` {n: measured peak} in bytes. ``batch`` and
    ``predicted_batch`` are the same numbers under their former names."""

    def __init__(self, value, predicted_value, predicted, measured, dim="batch"):
        self.value, self.predicted_value, self.dim = value, predicted_value, dim
        self.predicted, self.measured = predicted, measured

    @property
    def batch(self):
        return self.value

    @property
    def predicted_batch(self):
        return self.predicted_value

    def __repr__(self):
        return (f"Fit({self.dim}={self.value}, predicted {self.dim}={self.predicted_value}, "
                f"measured={self.measured})")


def _largest(fits, lo, hi):
    """The largest n in [lo, hi] with fits(n), for a fits that is true up to some n: doubling
    from lo, then bisection. lo - 1 when even lo does not fit."""
    if not fits(lo):
        return lo - 1
    good, bad = lo, None
    while bad is None:
        n = min(good * 2, hi)
        if n == good:
            return good
        if fits(n):
            good = n
        else:
            bad = n
    while bad - good > 1:
        mid = (good + bad) // 2
        if fits(mid):
            good = mid
        else:
            bad = mid
    return good


def fit(fn, budget, dim="batch", lo=1, hi=1 << 20, verify=False, **kwargs):
    """The largest value of ``dim`` (a keyword of ``fn``) in [lo, hi] whose peak fits in
    ``budget`` bytes (an int above 0, or footprint's byte text: "64MiB", "1.5GiB").
    ``fn(**{dim: n}, device=...)`` builds its model and inputs on that device and runs one
    step. The search uses predictions on meta tensors only. ``verify=True`` then runs ``fn``
    on the CPU at the answer and the answer + 1 and measures their peaks (``measure``): while
    the answer's measured peak is over budget (kernels' own scratch, which no aten op shows,
    see docs/TORCH.md), it steps down by one and runs again. Returns a ``Fit`` (``value``, in ``dim``); ``value`` is
    lo - 1 when even lo does not fit. ``lo`` and ``hi`` are integers with 1 <= lo <= hi; a
    budget of 0, NaN, a negative or fractional one is a UsageError naming the argument (a
    search over them would answer 0 for a reason it never says)."""
    if not isinstance(dim, str):
        raise UsageError(f"fit: dim must be a keyword of fn (a str), not {type(dim).__name__}")
    budget = _byte_count(budget)
    if budget <= 0:
        raise UsageError(f"budget: {budget} B leaves no room; a budget is above 0 bytes")
    lo = _args.integer(lo, "fit: lo", minimum=1)
    hi = _args.integer(hi, "fit: hi", minimum=1)
    if lo > hi:
        raise UsageError(f"fit: lo ({lo}) is above hi ({hi})")
    predicted = {}
    assume = kwargs.pop("assume", None)

    def fits(n):
        if n not in predicted:
            predicted[n] = predict(fn, **{dim: n}, assume=assume, **kwargs).figures()["peak"]
        return predicted[n] <= budget

    n = _largest(fits, lo, hi)
    measured = {}
    if verify and n >= lo:
        def run(b):
            with measure() as m:
                fn(**{dim: b}, device="cpu", **kwargs)
            measured[b] = m.peak
            return m.peak
        answer = n
        while answer >= lo and run(answer) > budget:
            answer -= 1
        if answer + 1 not in measured:
            run(answer + 1)
        return Fit(answer, n, predicted, measured, dim)
    return Fit(n, n, predicted, measured, dim)
