"""footprint.torch against figures derived by hand (docs/TRACE_FORMAT.md's seed, numel x 4
bytes) and against PyTorch's profiler, which counts c10's CPU allocator independently."""
import pytest

torch = pytest.importorskip("torch", reason="footprint.torch needs PyTorch (python3-torch)")

import footprint  # noqa: E402
import footprint.torch as ft  # noqa: E402

F = 4  # bytes per float32


def seed_backward(saved):
    """The seed trace's backward as plain PyTorch: five saved tensors, four multiplies, each
    saved tensor deleted after its last use."""
    t0, x, y, z, t2 = saved
    if isinstance(saved, list):
        saved.clear()
    t3 = t2 * z
    del z
    grad_z = t2 * t0
    del t0
    grad_x = t3 * y
    del y
    grad_y = t3 * x
    del t3, x
    return grad_x, grad_y, grad_z


def seed_arguments(container):
    x, y, z = (torch.full((4,), v) for v in (1.0, 2.0, 3.0))
    return container([x * y, x, y, z, torch.ones(4)])


@pytest.mark.parametrize("container,peak,after", [(list, 96, 64), (tuple, 144, 128)])
def test_seed_list_and_tuple(container, peak, after):
    with ft.measure() as m:  # the profiler must see the arguments made to see them freed
        saved = seed_arguments(container)
        t2 = saved[4]  # the incoming gradient: the engine (here the caller) keeps it
        with ft.record() as rec:
            grads = seed_backward(saved)
    fig = rec.figures()
    assert (fig["start"], fig["peak"], fig["after"]) == (5 * 4 * F, peak, after)
    assert m.since(rec) == (peak - 80, after - 80)
    a = footprint.analyze(rec)
    assert a.total_peak == peak and a.to_json()["after_bytes"] == after
    assert len(grads) == 3 and (container is list or t2 is saved[4])


def test_eager_backward_step_by_step():
    x, y, z = (torch.full((4,), v, requires_grad=True) for v in (1.0, 2.0, 3.0))
    with ft.measure() as m, ft.record() as rec:
        (x * y * z).sum().backward()
    trace = rec.trace
    phases = [o["phase"] for o in trace["ops"]]
    assert phases.index("backward") > 0 and set(phases) == {"forward", "backward"}
    alloc = [o["op"] for o in trace["ops"] if o["outputs"]]
    # forward: t0 = x*y, t1 = t0*z, the loss; backward: the seed gradient of ones, then two
    # multiplies per MulBackward0 (MulBackward0 of t1 first, then of t0).
    assert alloc == ["mul.Tensor", "mul.Tensor", "sum", "ones_like"] + ["mul.Tensor"] * 4
    fig = rec.figures()
    # x, y, z: 48 B. Peak during the last multiply: x, y, z, the gradient of t0 (16), grad_z and
    # grad_x and grad_y... derived: 48 + t0 16 + loss 4 + ones 4 + grad_t0 16 + 3 x 16 - t0
    # (freed once MulBackward0 of t1 ran) = 120; after: x, y, z and their three gradients.
    assert fig["peak"] == 48 + 16 + 4 + 4 + 16 + 3 * 16 - 16
    assert fig["after"] == 48 + 3 * 16
    assert (m.peak, m.after) == (fig["peak"] - 48, fig["after"] - 48)
    notes = {t["name"]: t.get("note", "") for t in trace["tensors"]}
    assert "saved for backward of MulBackward0" in notes["mul#0"]  # t0, saved by t1 = t0 * z
    assert sum("gradient of" in n for n in notes.values()) == 3


def test_views_and_in_place_allocate_nothing():
    x = torch.zeros(256)
    with ft.record() as rec:
        v = x.view(16, 16)
        v.add_(1)
        w = v[3]
        w.mul_(2)
    assert all(o["outputs"] == [] for o in rec.ops)
    assert rec.figures()["peak"] == 256 * F
    assert [o["name"].split(" ")[1] for o in rec.ops] == ["(view)", "(in", "(view)", "(in"]
    assert x[48] == 2 and w.sum() == 32


def test_free_seen_when_the_last_reference_goes():
    with ft.record() as rec:
        a = torch.ones(1000)
        b = a.view(10, 100)
        del a  # the view still holds the storage
        c = b * 2
        del b
        d = c + 1
        del c
        d.neg_()
    ops = rec.trace["ops"]
    assert ops[2].get("free") == ["ones#0"] and ops[3].get("free") == ["mul#0"]
    assert rec.figures()["peak"] == 2 * 1000 * F and rec.figures()["after"] == 1000 * F
    assert d.view(-1)[0] == -3


def test_modules_lines_and_mlp_training_with_sgd():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 8)
    with ft.measure() as m, ft.record(module=model) as rec:
        model(x).square().sum().backward()
        opt.step()
    trace = rec.trace
    kinds = {t["name"]: t["kind"] for t in trace["tensors"]}
    params = (8 * 16 + 16 + 16 * 2 + 2) * F
    assert sum(t["bytes"] for t in trace["tensors"] if t["kind"] == "weight") == params
    assert [kinds[n] for n in ("0.weight", "0.bias", "2.weight", "2.bias")] == ["weight"] * 4
    notes = [t.get("note", "") for t in trace["tensors"]]
    assert sum("gradient of" in n for n in notes) == 4
    modules = {o["module"] for o in trace["ops"] if o["phase"] == "forward"}
    assert {"0", "1", "2"} <= modules
    assert {o["phase"] for o in trace["ops"]} == {"forward", "backward", "optimizer"}
    assert all(o["line"].startswith("test_torch.py:") for o in trace["ops"])
    fig = rec.figures()
    # after: the inputs and parameters, and one gradient per parameter
    assert fig["after"] == fig["start"] + params
    assert m.after == fig["after_above_start"]
    # The peak op's kernel wraps Python numbers into 0-d tensors (8 B, and a cast), which no
    # dispatch mode sees: at most a few such temporaries above the recorded peak.
    assert 0 <= m.peak - fig["peak_above_start"] <= 64


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = torch.nn.Linear(4, 4)
        self.ff = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU())

    def forward(self, x):
        return self.ff(self.attn(x))


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([Block(), torch.nn.Linear(8, 4), Block()])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_module_paths_with_and_without_a_root():
    model = Encoder()
    x = torch.randn(2, 4)
    with ft.record(module=model) as rec:
        model(x)
    modules = [o["module"] for o in rec.ops if o["op"] == "addmm"]
    assert modules == ["layers.0.attn", "layers.0.ff.0", "layers.1", "layers.2.attn",
                       "layers.2.ff.0"]
    weights = {t["name"] for t in rec.trace["tensors"] if t["kind"] == "weight"}
    assert {"layers.0.attn.weight", "layers.2.ff.0.bias"} <= weights
    with ft.record() as unnamed:  # global hooks alone: the first module called is the root
        model(x)
    assert [o["module"] for o in unnamed.ops if o["op"] == "addmm"][3] == "Encoder.layers.2.attn"


def test_adamw_state_is_named():
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4)
    opt = torch.optim.AdamW(model.parameters())
    with ft.record(module=model) as rec:
        model(torch.randn(2, 8)).sum().backward()
        opt.step()
    notes = [t.get("note", "") for t in rec.trace["tensors"]]
    state = [n for n in notes if "optimizer state" in n]
    assert len(state) == 6  # step (0-d), exp_avg and exp_avg_sq of weight and of bias
    grown = rec.figures()["after_above_start"]
    # gradients (4 x 9 floats... weight 32 + bias 4) and two moments each, and two step counters
    assert grown == 3 * (32 + 4) * F + 2 * F


def predicted_step(batch, device="cpu"):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.Flatten(), torch.nn.Linear(8 * 8 * 8, 10)).to(device)
    x = torch.randn(batch, 3, 8, 8, device=device)
    model(x).sum().backward()


def test_prediction_on_meta_equals_the_real_trace():
    for batch in (1, 5):
        predicted = ft.predict(predicted_step, batch=batch).figures()
        with ft.record() as real:
            predicted_step(batch)
        assert predicted == real.figures()


def test_fit_finds_the_largest_batch():
    one = ft.predict(predicted_step, batch=1).figures()["peak"]
    two = ft.predict(predicted_step, batch=2).figures()["peak"]
    per_sample = two - one
    budget = one + 9 * per_sample + per_sample // 2  # batch 10 fits, 11 does not
    f = ft.fit(predicted_step, budget, dim="batch")
    assert f.batch == f.predicted_batch == 10 and not f.measured
    assert f.predicted[10] <= budget < ft.predict(predicted_step, batch=11).figures()["peak"]
    # Verified: the largest batch whose measured peak is within the budget, the next one over
    # it. The measured peak adds the conv kernel's own scratch, which depends on the batch and
    # on PyTorch's oneDNN (none at 10 and 11 on 1.13; 5,888 B at 10 and 7,936 B at 9 on 2.5,
    # which makes 10 measure over the budget and fit step down to 9; 24,416 B at every batch on
    # 2.7, down to 6).
    v = ft.fit(predicted_step, budget, dim="batch", verify=True)
    assert v.predicted_batch == 10 and 1 <= v.batch <= 10
    # Each batch it stepped down through was measured, and measured over the budget.
    assert sorted(v.measured) == list(range(v.batch, max(v.batch + 2, 11)))
    assert v.measured[v.batch] <= budget < min(v.measured[b] for b in v.measured if b > v.batch)
    for b in v.measured:
        scratch = v.measured[b] - ft.predict(predicted_step, batch=b).figures()["peak"]
        assert 0 <= scratch < 32 * 1024


def test_kernel_scratch_from_the_measurement_completes_the_peak():
    # The convolution's kernel allocates scratch no aten op shows, at some batches: which ones
    # depends on the kernels the CPU gets (batch 3 on AVX-512; on an AVX2 EPYC batch 1, not 3).
    for batch in (3, 1, 2, 5):
        with ft.measure() as m:
            with ft.record() as rec:
                predicted_step(batch)
        fig = rec.figures()
        measured_peak, measured_after = m.since(rec)
        assert measured_after == fig["after_above_start"]
        scratch = measured_peak - fig["peak_above_start"]
        assert scratch >= 0
        if scratch > 0:
            break
    else:
        pytest.fail("the convolution allocated no scratch at batch 3, 1, 2 or 5")
    rec.add_workspace(m)
    assert rec.figures()["peak_above_start"] == measured_peak
    steps = [o for o in rec.trace["ops"] if o.get("workspace")]
    assert steps and all(o["workspace"] > 0 for o in steps)


def test_counting_malloc_preloaded_agrees_within_the_objects_per_tensor():
    if ft._heap_counter() is None:
        pytest.skip("footprint's counting malloc is not preloaded (ctest python_torch_heap_tests "
                    "runs this with LD_PRELOAD=build/release/lib/libfootprint_heap.so)")
    x = torch.ones(1 << 18)  # 1 MiB

    def program():
        a = x * 2
        b = a + 1
        del a
        c = b * b
        del b
        return c

    with ft.record() as rec:
        kept = program()
    del kept
    with ft.measure(profiler=False) as m:  # a plain run: no recorder, no profiler records
        kept = program()
    fig = rec.figures()
    assert (fig["peak_above_start"], fig["after_above_start"]) == (2 << 20, 1 << 20)
    # malloc counts what glibc reserved for each block and the C++ objects around a storage
    # (TensorImpl, StorageImpl), which the trace does not: under 1 KiB per tensor alive, and
    # 1 KiB of Python's own allocations at the peak.
    assert 0 <= m.heap_after - fig["after_above_start"] < 1024
    assert 0 <= m.heap_peak - fig["peak_above_start"] < 2 * 1024 + 1024
    assert kept.shape == x.shape


def test_trace_runs_through_the_cli(tmp_path):
    saved = seed_arguments(list)
    keep = saved[4]
    with ft.record(name="seed") as rec:
        seed_backward(saved)
    path = tmp_path / "seed.json"
    rec.save(path)
    a = footprint.analyze(str(path))
    assert a.total_peak == 96 and keep.sum() == 4
    page = tmp_path / "seed.html"
    assert footprint.report(rec, page)["total_peak_bytes"] == 96


def events(rec):
    """What a trace allocates and frees, in order, and by which ops: the memory it describes. (A
    free placed after an op that allocates nothing is the same moment as after the op before it;
    predict's engine and the dispatch mode differ on such ops, `detach` among them.)"""
    return [(what, name) for o in rec.trace["ops"]
            for what, names in (("made by " + o["op"], o["outputs"]), ("freed", o.get("free", [])))
            for name in names]


def allocating_ops(rec):
    """The ops that allocate, in order: what a prediction and the CPU run share (the CPU's own
    kernels may free their small tensors an op earlier than their meta stand-ins)."""
    return [o["op"] for o in rec.trace["ops"] if o["outputs"]]


@pytest.mark.skipif(not hasattr(torch.nn.functional, "scaled_dot_product_attention"),
                    reason="PyTorch 2.x's fused attention (1.13 has none)")
@pytest.mark.parametrize("mask", ["none", "causal", "bool", "float"])
def test_attention_is_predicted_as_the_cpu_runs_it(mask):
    # On meta, 2.x's scaled_dot_product_attention takes its math path while the CPU runs its
    # flash kernel; predict follows the CPU (here 4 MB of attention weights the math path keeps
    # for backward and the CPU never makes).
    def step(device):
        torch.manual_seed(0)
        q, k, v = (torch.randn(4, 8, 128, 64, device=device, requires_grad=True)
                   for _ in range(3))
        kw = {"causal": {"is_causal": True},
              "bool": {"attn_mask": torch.ones(128, 128, dtype=torch.bool,
                                               device=device).tril()},
              "float": {"attn_mask": torch.zeros(128, 128, device=device)},
              "none": {}}[mask]
        torch.nn.functional.scaled_dot_product_attention(q, k, v, **kw).sum().backward()

    predicted = ft.predict(step)
    with ft.record() as real:
        step("cpu")
    assert predicted.figures() == real.figures()
    assert allocating_ops(predicted) == allocating_ops(real)


@pytest.mark.skipif(not hasattr(torch.nn.functional, "scaled_dot_product_attention"),
                    reason="PyTorch 2.x's fused attention (1.13 has none)")
def test_encoder_layer_training_step_is_predicted_exactly():
    def step(device):
        torch.manual_seed(0)
        # No dropout: with it the CPU takes the math path too.
        layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True,
                                                 device=device)
        x = torch.randn(2, 32, 64, device=device)
        layer(x).sum().backward()

    predicted = ft.predict(step)
    with ft.record() as real:
        step("cpu")
    assert predicted.figures() == real.figures()
    assert "_scaled_dot_product_flash_attention_for_cpu" in allocating_ops(real)
    assert allocating_ops(predicted) == allocating_ops(real)


def test_checkpointed_step_is_predicted_exactly():
    # 2.x's checkpoint forks the RNG of the inputs' device when it recomputes, which fails for
    # meta: record makes that a no-op on meta (meta tensors take no random numbers).
    import torch.utils.checkpoint

    def step(device):
        torch.manual_seed(0)
        inner = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                                    torch.nn.Linear(256, 64)).to(device)
        x = torch.randn(32, 64, device=device, requires_grad=True)
        torch.utils.checkpoint.checkpoint(inner, x, use_reentrant=False).sum().backward()

    predicted = ft.predict(step)
    with ft.record() as real:
        step("cpu")
    assert predicted.figures() == real.figures()


# -- the front door for transformers-style programs (issue 38) ---------------------------------


def mha_step(device="cpu", batch=2):
    """nn.MultiheadAttention's training step: its forward saves a Python number for backward
    (``q / math.sqrt(E)``), which 1.13's autograd detached through the recorder and failed."""
    torch.manual_seed(0)
    with ft.device(device):
        mha = torch.nn.MultiheadAttention(16, 2)
    q = torch.ones(5, batch, 16, device=device)
    out, _ = mha(q, q, q)
    (out * 2.5).sum().backward()


def test_python_numbers_saved_for_backward():
    with ft.record() as real:
        mha_step()
    ops = [o["op"] for o in real.trace["ops"]]
    assert "mm" in ops and any(o["phase"] == "backward" for o in real.trace["ops"])
    assert ft.predict(mha_step).figures() == real.figures()


class RotaryLike(torch.nn.Module):
    """transformers' rotary embeddings: autocast turned off on the tensors' own device, and a
    buffer made by torch.tensor in __init__ that forward never reads."""

    def __init__(self, enabled=False):
        super().__init__()
        self.enabled = enabled
        self.lin = torch.nn.Linear(8, 8)
        self.register_buffer("unread", torch.tensor([-1e4] * 3), persistent=False)

    def forward(self, x):
        with torch.autocast(device_type=x.device.type, enabled=self.enabled):
            return self.lin(x).cos()


def rotary_step(device="cpu", batch=3, enabled=False):
    with ft.device(device):
        m = RotaryLike(enabled)
    x = torch.ones(batch, 8, device=device)
    m(x).sum().backward()


def test_autocast_off_and_tensor_buffers_on_meta():
    predicted = ft.predict(rotary_step)
    with ft.record() as real:
        rotary_step()
    assert predicted.figures() == real.figures()
    # The unread torch.tensor buffer is in both traces (made outside aten, 12 bytes).
    assert [t["bytes"] for t in predicted.trace["tensors"] if t["name"].startswith("outside")] \
        == [t["bytes"] for t in real.trace["tensors"] if t["name"].startswith("outside")] == [12]


def test_autocast_on_the_tensors_device_is_the_cpus_on_meta():
    # transformers asks autocast of x.device.type: "meta" is the CPU the prediction is of.
    with ft.record() as real:
        rotary_step(enabled=True)
    predicted = ft.predict(rotary_step, enabled=True)
    assert predicted.figures() == real.figures()
    assert "_to_copy" in [o["op"] for o in predicted.trace["ops"]]  # the casts to bfloat16


def amp_step(device="cpu", batch=4):
    """A mixed-precision step as people write it: float32 weights (the masters), the forward
    under CPU autocast (linear and matmul cast to bfloat16, the weights' casts cached for the
    block, cat promoting on 2.x, the loss in float32, a checkpointed block recomputed under
    the autocast it ran in), backward and AdamW outside it."""
    import torch.utils.checkpoint
    torch.manual_seed(0)
    with ft.device(device):
        lin = torch.nn.Linear(16, 16)
        head = torch.nn.Linear(32, 5)
    x = torch.ones(batch, 16, device=device)
    labels = torch.zeros(batch, dtype=torch.long, device=device)
    opt = torch.optim.AdamW([*lin.parameters(), *head.parameters()])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h = lin(x)
        h = lin(h) @ torch.ones(16, 16, device=device)  # the same weights: one cast
        h = torch.utils.checkpoint.checkpoint(lambda t: lin(t).relu(), h, use_reentrant=False)
        h = torch.cat([h, x], dim=1)  # bfloat16 with float32
        loss = torch.nn.functional.cross_entropy(head(h), labels)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def test_autocast_on_meta_casts_as_the_cpu_casts():
    with ft.record() as real:
        amp_step()
    predicted = ft.predict(amp_step)
    assert predicted.figures() == real.figures()

    def tensors(rec):
        return [(t["bytes"], t.get("note", "")) for t in rec.trace["tensors"]]

    assert tensors(predicted) == tensors(real)
    ops = [o["op"] for o in real.trace["ops"]]
    assert [o["op"] for o in predicted.trace["ops"]] == ops
    # lin's weight and bias cast once in the forward (cached), again when recomputed
    forward = [o for o in real.trace["ops"] if o["phase"] == "forward" and o["op"] == "_to_copy"]
    assert len(forward) >= 3


def masters_step(device="cpu"):
    """Mixed precision by hand: the model cast to bfloat16 inside the step (module.to replaces
    each parameter's storage, freeing the float32 one with no tensor object going), AdamW
    stepping float32 masters, copied back into the model's weights."""
    torch.manual_seed(0)
    with ft.device(device):
        model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                    torch.nn.Linear(64, 8))
    masters = [p.detach().clone().requires_grad_() for p in model.parameters()]
    model.to(torch.bfloat16)
    opt = torch.optim.AdamW(masters)
    model(torch.ones(16, 64, device=device, dtype=torch.bfloat16)).float().sum().backward()
    for m, p in zip(masters, model.parameters()):
        m.grad = p.grad.float()
    opt.step()
    with torch.no_grad():
        for m, p in zip(masters, model.parameters()):
            p.copy_(m)


def test_fp32_masters_are_a_role_and_swapped_weights_are_freed_where_they_go():
    with ft.measure() as measured, ft.record() as real:
        masters_step()
    fig = real.figures()
    # The profiler's peak is the recording's plus AdamW's Python numbers (20 B): the float32
    # weights module.to(bfloat16) replaced are freed there, not at the end.
    assert measured.since(real)[0] - fig["peak_above_start"] == 20
    params = 64 * 64 + 64 + 64 * 8 + 8
    roles = fig["by_role"]
    assert roles["fp32 masters"] == 4 * params and roles["weights"] == 2 * params, roles
    assert ft.predict(masters_step).figures() == fig
    # Under autocast the float32 parameters are the masters of the bfloat16 copies it makes.
    with ft.record() as amp:
        amp_step()
    assert amp.figures()["by_role"]["fp32 masters"] == 4 * (16 * 16 + 16 + 32 * 5 + 5)
    notes = [t.get("note", "") for t in amp.trace["tensors"]]
    assert any(n.startswith("16-bit copy of ") for n in notes)


def einsum_step(device="cpu"):
    a = torch.ones(4, 8, device=device)
    b = torch.ones(8, 4, device=device)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return torch.einsum("ij,jk->ik", a, b)  # bmm inside einsum, cast by autocast


def test_autocast_casts_footprint_cannot_follow_stop_naming_the_op_and_line():
    with ft.record() as real:
        einsum_step()
    assert "_to_copy" in [o["op"] for o in real.trace["ops"]]
    with pytest.raises(footprint.UsageError,
                       match=r"torch.autocast\('cpu'\) would cast the arguments of bmm at "
                             r"test_torch.py:\d+"):
        ft.predict(einsum_step)


def test_device_builds_on_meta_without_allocating():
    with ft.meta():
        m = RotaryLike()
        t = torch.tensor([1.0, 2.0])
    assert all(p.is_meta for p in m.parameters()) and m.unread.is_meta and t.is_meta
    assert not torch.empty(1).is_meta  # only inside the block


def branchy_step(device="cpu", batch=2):
    """A step that looks at its data: a Python branch on a tensor's value."""
    x = torch.ones(batch, 4, device=device, requires_grad=True)
    y = x * 3
    if (y > 0).all():  # the line predict names
        y = y * 2
    y.sum().backward()


def test_data_dependent_python_stops_naming_the_line_or_takes_the_users_value():
    with pytest.raises(footprint.UsageError,
                       match=r"test_torch.py:\d+: the program asks the value of bool\[\] from "
                             r"all .*assume=\{'test_torch.py:\d+': value\}") as refused:
        ft.predict(branchy_step)
    line = str(refused.value).split(": ")[0]
    predicted = ft.predict(branchy_step, assume={line: True})
    assert predicted.assumptions == [{"line": line, "tensor": "bool[]", "value": True}]
    with ft.record() as real:
        branchy_step()
    assert predicted.figures() == real.figures()
    with pytest.raises(footprint.UsageError, match=r"nonzero of float32\[2, 4\].*whose size"):
        ft.predict(lambda device: torch.ones(2, 4, device=device).nonzero())


def test_the_peak_by_role_and_fit_in_its_own_dim():
    def step(device, width=32):
        with ft.device(device):
            model = torch.nn.Sequential(torch.nn.Linear(16, width), torch.nn.ReLU(),
                                        torch.nn.Linear(width, 16))
        opt = torch.optim.AdamW(model.parameters())
        model(torch.ones(4, 16, device=device)).sum().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    fig = ft.predict(step).figures()
    roles = fig["by_role"]
    # The parts are the peak; AdamW's step peaks with weights, gradients and two moments each.
    assert sum(roles.values()) == fig["peak"]
    weights = (16 * 32 + 32 + 32 * 16 + 16) * F
    assert roles["weights"] == roles["gradients"] == weights
    assert roles["optimizer state"] >= 2 * weights
    with ft.record() as real:
        step("cpu")
    assert real.figures() == fig
    f = ft.fit(step, fig["peak"] * 3, dim="width", hi=4096)
    assert f.dim == "width" and f.value == f.batch and 32 < f.value < 4096
    assert repr(f).startswith(f"Fit(width={f.value}, predicted width={f.value}")


def test_workspace_never_takes_a_free_python_made_between_ops():
    # Python frees 256 KiB between two ops, then a view (which allocates nothing) runs: the
    # measured window of the view goes down, and no scratch may be written for it.
    x = torch.ones(1 << 16)
    with ft.measure() as m:
        with ft.record() as rec:
            big = x * 3
            del big
            v = x.view(-1)
            y = v + 1
    rec.add_workspace(m)
    ops = rec.trace["ops"]
    assert [o["op"] for o in ops] == ["mul.Tensor", "view", "add.Tensor"]
    assert "workspace" not in ops[1]
    assert rec.figures()["peak_above_start"] == m.since(rec)[0]
    del y


def test_bad_programs_get_an_error_or_a_result():
    def boom(device):
        torch.ones(3, device=device)
        raise ValueError("a bug of the program")

    autocast = torch.autocast
    with pytest.raises(ValueError, match="a bug of the program"):
        ft.predict(boom)
    assert torch.autocast is autocast  # everything record patched is put back
    with ft.record():
        with pytest.raises(footprint.UsageError, match=r"test_torch.py:\d+: record\(\) or "
                                                       r"predict\(\) inside a recording"):
            ft.predict(lambda device: torch.ones(4, device=device))
    # No parameters, and a program that never frees what it makes.
    assert ft.predict(lambda device: torch.relu(torch.ones(3, device=device))).figures()[
        "peak"] == 24
    kept = []
    fig = ft.predict(lambda device: kept.extend(torch.ones(100, device=device)
                                                for _ in range(10))).figures()
    assert fig["after"] == fig["peak"] == 10 * 100 * F


# -- the engine below Python (issue 38's cost) ---------------------------------------------------


def engine_or_skip():
    from footprint import _torch_engine
    if _torch_engine.load() is None:
        # With torch's headers (Debian's libtorch-dev, which scripts/lib.sh installs, or a
        # wheel's) it must build.
        assert not _torch_engine.headers_present(), _torch_engine.why_not()
        pytest.skip(f"footprint.torch's engine cannot be built here: {_torch_engine.why_not()}")


def trace_by_the_mode(monkeypatch, fn, **kwargs):
    from footprint import _torch_engine
    with monkeypatch.context() as m:
        m.setattr(_torch_engine, "_state", {"module": None, "why": "the test's"})
        with pytest.warns(RuntimeWarning, match="records in Python.*the test's"):
            ft._WARNED.clear()
            return ft.predict(fn, **kwargs)


@pytest.mark.parametrize("step,kwargs", [
    (predicted_step, {"batch": 3}), (mha_step, {}), (rotary_step, {}), (branchy_step, None),
    (masters_step, {})], ids=["conv", "mha", "buffers", "assumed", "masters"])
def test_the_engine_records_what_the_dispatch_mode_records(monkeypatch, step, kwargs):
    """predict below Python (the engine) and with the dispatch mode give the same trace: the
    same ops that allocate, the same tensors, sizes, frees, notes and figures."""
    engine_or_skip()
    if kwargs is None:  # a data-dependent step: the value is the user's
        with ft.record() as real:
            step()
        kwargs = {"assume": real.answers}
    fast = ft.predict(step, **kwargs)
    assert type(fast).__name__ == "_EngineRecording"
    slow = trace_by_the_mode(monkeypatch, step, **kwargs)
    assert type(slow).__name__ == "Recording"

    assert events(fast) == events(slow)
    assert fast.trace["tensors"] == slow.trace["tensors"]
    assert fast.figures() == slow.figures()
    assert fast.assumptions == slow.assumptions


def test_the_engine_leaves_autocast_to_the_mode():
    """Autocast on meta tensors is emulated op by op, which needs the dispatch mode: a program
    that enters it is recorded again with the mode, and predicted as the CPU runs it."""
    engine_or_skip()
    predicted = ft.predict(amp_step)
    assert type(predicted).__name__ == "Recording"
    with ft.record() as real:
        amp_step()
    assert predicted.figures() == real.figures()


def test_a_prediction_is_freed_when_dropped():
    """The engine holds Python callbacks into its Recording while it records: a cycle through
    C++, which Python's collector cannot see, unless it lets go of them after (a loop of
    predicts, as fit runs, would keep every trace)."""
    import gc
    import weakref
    engine_or_skip()
    rec = ft.predict(predicted_step, batch=2)
    assert type(rec).__name__ == "_EngineRecording"
    gone = weakref.ref(rec)
    del rec
    gc.collect()
    assert gone() is None
    # Nor do its meta kernels outlive it: .item() of a meta tensor is refused as before.
    with pytest.raises((RuntimeError, NotImplementedError)):
        torch.ones(1, device="meta").item()
    # The same of a recording on real tensors (torch 2.x keeps functions the recorder patched:
    # its optimizers wrap the step they find, ours while recording), and an optimizer made while
    # recording steps after it as before.
    with ft.record() as rec:
        w = torch.nn.Parameter(torch.ones(4))
        opt = torch.optim.AdamW([w])
        w.sum().backward()
        opt.step()
    gone = weakref.ref(rec)
    del rec
    gc.collect()
    assert gone() is None
    before = w.detach().clone()
    w.sum().backward()
    opt.step()
    assert not torch.equal(before, w.detach())
