"""footprint.torch on Hugging Face transformers models (issue 38's matrix, at small widths):
each architecture built from its config class with seeded random weights (never downloaded),
a training step (AdamW, ``zero_grad(set_to_none=True)``), the same with gradient checkpointing,
and for the causal LMs a prefill and a decode step with the library's cache. Each case:
``predict`` on meta equals ``record`` of the CPU run (peak and after, byte for byte, and every
op that allocates), and PyTorch's profiler, which counts c10's allocator independently, agrees
with the recording: the same bytes after the run, and a peak above it by the scratch no
dispatch mode sees, stated per case (``add_workspace`` then makes the peaks equal).

Runs where transformers is importable: ``scripts/hf`` makes build/hf (pinned in
transformers_requirements.txt) over Debian's PyTorch, and scripts/test runs this file with it.
"""
import pytest

torch = pytest.importorskip("torch", reason="footprint.torch needs PyTorch (python3-torch)")
T = pytest.importorskip("transformers", reason="transformers is not installed: scripts/hf "
                        "makes build/hf (scripts/hf -m pytest python/tests/test_torch_transformers.py)")

import footprint.torch as ft  # noqa: E402
from footprint import _torch_engine  # noqa: E402

T.logging.set_verbosity_error()

SMALL = dict(hidden_size=32, intermediate_size=64, num_attention_heads=4, num_hidden_layers=2)
IMAGE = dict(image_size=32, patch_size=8, **SMALL)


def configs():
    return {
        "gpt2": (T.GPT2LMHeadModel,
                 T.GPT2Config(n_layer=2, n_embd=32, n_head=4, vocab_size=256, n_positions=64)),
        "bert": (T.BertForMaskedLM,
                 T.BertConfig(vocab_size=256, max_position_embeddings=64, **SMALL)),
        "roberta": (T.RobertaForMaskedLM,
                    T.RobertaConfig(vocab_size=256, max_position_embeddings=66, **SMALL)),
        "t5": (T.T5ForConditionalGeneration,
               T.T5Config(d_model=32, d_ff=64, num_heads=4, d_kv=8, num_layers=2, vocab_size=256,
                          pad_token_id=0, decoder_start_token_id=0, eos_token_id=1)),
        "llama": (T.LlamaForCausalLM,
                  T.LlamaConfig(vocab_size=256, num_key_value_heads=2,  # grouped-query
                                max_position_embeddings=64, **SMALL)),
        "mistral": (T.MistralForCausalLM,
                    T.MistralConfig(vocab_size=256, num_key_value_heads=2,
                                    max_position_embeddings=64, **SMALL)),
        "qwen2": (T.Qwen2ForCausalLM,
                  T.Qwen2Config(vocab_size=256, num_key_value_heads=2,
                                max_position_embeddings=64, **SMALL)),
        "phi": (T.PhiForCausalLM,
                T.PhiConfig(vocab_size=256, num_key_value_heads=4, max_position_embeddings=64,
                            **SMALL)),
        "whisper": (T.WhisperForConditionalGeneration,
                    T.WhisperConfig(d_model=32, encoder_layers=2, decoder_layers=2,
                                    encoder_attention_heads=4, decoder_attention_heads=4,
                                    encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=256,
                                    num_mel_bins=16, max_source_positions=16,
                                    max_target_positions=32, pad_token_id=0, bos_token_id=1,
                                    eos_token_id=2, decoder_start_token_id=1, suppress_tokens=[],
                                    begin_suppress_tokens=[])),
        "vit": (T.ViTForImageClassification, T.ViTConfig(num_labels=10, **IMAGE)),
        "clip": (T.CLIPModel,
                 T.CLIPConfig(text_config=dict(vocab_size=256, max_position_embeddings=16,
                                               **SMALL),
                              vision_config=IMAGE, projection_dim=16)),
    }


CAUSAL = ("gpt2", "llama", "mistral", "qwen2", "phi")


def batch_of(arch, device, batch=2, seq=8):
    ids = torch.ones((batch, seq), dtype=torch.long, device=device)
    mask = torch.ones((batch, seq), dtype=torch.long, device=device)
    images = torch.ones((batch, 3, 32, 32), device=device)
    if arch == "whisper":
        return dict(input_features=torch.ones((batch, 16, 32), device=device), labels=ids)
    if arch == "vit":
        return dict(pixel_values=images,
                    labels=torch.ones(batch, dtype=torch.long, device=device))
    if arch == "clip":
        return dict(input_ids=ids, attention_mask=mask, pixel_values=images, return_loss=True)
    return dict(input_ids=ids, attention_mask=mask, labels=ids)


def build(arch, device):
    torch.manual_seed(0)
    cls, config = configs()[arch]
    with ft.device(device):
        return cls(config)


def train(arch, device, checkpointing=False, amp=False):
    """A training step; ``amp``: mixed precision as transformers' Trainer runs it on the CPU
    (bf16=True): float32 weights (the masters AdamW steps), the forward under autocast."""
    model = build(arch, device)
    if checkpointing:
        # The non-reentrant form, transformers' advice: the reentrant one fails Whisper's
        # backward on PyTorch 2.7 (transformers 4.57) without footprint.
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp):
        loss = model(**batch_of(arch, device)).loss
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def prefill_and_decode(arch, device):
    """Eight tokens, then one more with the cache the first call returned; returns the cache."""
    model = build(arch, device).eval()
    with torch.no_grad():
        out = model(input_ids=torch.ones((2, 8), dtype=torch.long, device=device), use_cache=True)
        out = model(input_ids=torch.ones((2, 1), dtype=torch.long, device=device),
                    past_key_values=out.past_key_values, use_cache=True)
    return out.past_key_values


# The small tensors of Python numbers in AdamW's arithmetic, made by no aten op, are what the
# profiler counts at a training step's peak beyond the recording.
# (torch.utils.checkpoint's CPU RNG states, 5,056 B each and also made outside aten, are alive
# while a block is recomputed, below these steps' peak; a step that keeps its outputs to the
# optimizer moves the peak there, 10,132 B above the recording for GPT-2.)
OPTIMIZER_NUMBERS = 20


KINDS = ("train", "checkpointed", "amp", "amp-checkpointed")


def cases():
    for arch in configs():
        for kind in KINDS:
            yield pytest.param(arch, kind, OPTIMIZER_NUMBERS, id=f"{arch}-{kind}")
        if arch in CAUSAL:
            yield pytest.param(arch, "decode", None, id=f"{arch}-decode")


def step_of(arch, kind):
    if kind == "decode":
        return lambda device: prefill_and_decode(arch, device)
    return lambda device: train(arch, device, checkpointing=kind.endswith("checkpointed"),
                                amp=kind.startswith("amp"))


def allocating_ops(rec):
    """The ops that allocate, in order. The 0-d tensor of a Python number written into a tensor
    (``ids[..., 0] = start_id``) is made outside aten on the CPU and by ``scalar_tensor`` on
    meta: the same bytes at the same place, under two names."""
    return [("outside_aten" if o["op"] == "scalar_tensor" else o["op"])
            for o in rec.trace["ops"] if o["outputs"]]


@pytest.mark.parametrize("arch,kind,scratch", list(cases()))
def test_predict_equals_record_equals_the_profiler(arch, kind, scratch):
    step = step_of(arch, kind)
    try:
        with ft.measure() as measured:
            with ft.record() as real:
                kept = step("cpu")
    except RuntimeError as refused:
        # PyTorch 1.13's CPU layer_norm takes no bfloat16 input with float32 weights (BERT and
        # RoBERTa under autocast): predict refuses the step as the CPU does, never a number.
        assert kind.startswith("amp") and torch.__version__ < "2", refused
        with pytest.raises(RuntimeError, match=str(refused)):
            ft.predict(step)
        return
    # transformers asks its masks questions on 2.x (`if padding_mask.all():`): the CPU run's
    # answers are the values predict takes for them.
    predicted = ft.predict(step, assume=real.answers)
    # Below Python where it can be built (scripts/lib.sh installs libtorch-dev); autocast on meta
    # is the dispatch mode's.
    engine = _torch_engine.load() is not None and not kind.startswith("amp")
    assert (type(predicted).__name__ == "_EngineRecording") == engine, _torch_engine.why_not()
    fig = real.figures()
    assert predicted.figures() == fig
    assert allocating_ops(predicted) == allocating_ops(real)
    peak, after = measured.since(real)
    assert after == fig["after_above_start"]
    if scratch is not None:  # decode: none, or the profiler's own few bytes
        assert peak - fig["peak_above_start"] == scratch
    # The peak by role: its parts sum to it; a training step's holds the gradients and AdamW's
    # state, a decode step's the KV cache (what the model returns as past_key_values or in a
    # Cache object) and the logits.
    roles = fig["by_role"]
    assert sum(roles.values()) == fig["peak"]
    if kind == "decode":
        assert roles.get("KV cache", 0) > 0, roles
    else:  # (weights include parameters that get no gradient: CLIP's unused ones)
        # Under autocast the float32 parameters are the masters of the 16-bit copies it makes.
        weights = roles.get("weights", 0) + roles.get("fp32 masters", 0)
        assert 0 < roles["gradients"] <= weights and roles["optimizer state"] > 0, roles
        assert (roles.get("fp32 masters", 0) > 0) == kind.startswith("amp"), roles
    real.add_workspace(measured)
    assert real.figures()["peak_above_start"] == peak
    if kind == "decode":
        # The cache the step returns is alive after it, in both, and predict names it.
        returned = [t for t in predicted.trace["tensors"]
                    if "returned by the function" in t.get("note", "")]
        assert returned and sum(t["bytes"] for t in returned) == fig["after"] > 0
        del kept


def events(rec):
    """What a trace allocates and frees, in order."""
    return [(what, name) for o in rec.trace["ops"]
            for what, names in (("made by " + o["op"], o["outputs"]), ("freed", o.get("free", [])))
            for name in names]


@pytest.mark.parametrize("arch,kind", [("gpt2", "train"), ("t5", "train"), ("llama", "decode"),
                                       ("whisper", "checkpointed"), ("clip", "train")])
def test_the_engine_records_what_the_dispatch_mode_records(monkeypatch, arch, kind):
    """The engine below Python and the dispatch mode give the same trace: every allocation and
    free in the same order, the same tensors (sizes, notes, lines, modules) and figures."""
    if _torch_engine.load() is None:
        assert not _torch_engine.headers_present(), _torch_engine.why_not()
        pytest.skip(f"footprint.torch's engine cannot be built here: {_torch_engine.why_not()}")
    step = step_of(arch, kind)
    with ft.record() as real:
        step("cpu")
    fast = ft.predict(step, assume=real.answers)
    with monkeypatch.context() as m:
        m.setattr(_torch_engine, "_state", {"module": None, "why": "the test's"})
        with pytest.warns(RuntimeWarning, match="records in Python"):
            ft._WARNED.clear()
            slow = ft.predict(step, assume=real.answers)
    assert events(fast) == events(slow)
    assert fast.trace["tensors"] == slow.trace["tensors"]
    assert fast.figures() == slow.figures()
