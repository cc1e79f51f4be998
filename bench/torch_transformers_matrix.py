#!/usr/bin/env python3
"""footprint.torch's transformers matrix at real width (issue 38): every architecture of
python/tests/test_torch_transformers.py at a size of >= 100M parameters, one training step each
(AdamW, zero_grad(set_to_none=True)), in float32 and in mixed precision (CPU autocast to
bfloat16): predict on meta vs record of the CPU run vs PyTorch's profiler.

    PYTHONPATH=build/release/python scripts/hf bench/torch_transformers_matrix.py [--amp] [arch ...]
    PYTHONPATH=build/release/python scripts/torch2 bench/torch_transformers_matrix.py --amp
    PYTHONPATH=build/release/python scripts/hf bench/torch_transformers_matrix.py --predict-only

--predict-only runs no CPU step: predict's peak and time per architecture, to set beside a
table this drew (the CPU runs take minutes each).

Prints a markdown table for docs/BENCHMARKS.md. Models are built from config classes with seeded
random weights (never downloaded): BERT, RoBERTa and CLIP at their base sizes, T5 and Whisper
at base/small (220M, 240M), ViT large (304M), GPT-2 124M, and Llama, Mistral, Qwen2 and Phi at
hidden 1024 x 16 layers (about 250-400M).
"""
import sys
import time

import torch
import transformers as T

import footprint.torch as ft

T.logging.set_verbosity_error()
GB = 1e9

DECODER = dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=16,
               num_attention_heads=16, max_position_embeddings=512)


def configs():
    """Each architecture's class (resolved here: on PyTorch 2.7 transformers' lazy import fails
    inside `with torch.device("meta"):`), its config, and what a batch of it is."""
    text = "text"
    return {
        "gpt2": (T.GPT2LMHeadModel, T.GPT2Config(), text),
        "bert": (T.BertForMaskedLM, T.BertConfig(), text),
        "roberta": (T.RobertaForMaskedLM, T.RobertaConfig(vocab_size=50265,
                                                          max_position_embeddings=514), text),
        "t5": (T.T5ForConditionalGeneration,
               T.T5Config(d_model=768, d_ff=3072, num_layers=12, num_heads=12, d_kv=64,
                          pad_token_id=0, decoder_start_token_id=0), text),
        "llama": (T.LlamaForCausalLM, T.LlamaConfig(num_key_value_heads=4, **DECODER), text),
        "mistral": (T.MistralForCausalLM, T.MistralConfig(num_key_value_heads=4, **DECODER),
                    text),
        "qwen2": (T.Qwen2ForCausalLM, T.Qwen2Config(num_key_value_heads=4, **DECODER), text),
        "phi": (T.PhiForCausalLM, T.PhiConfig(num_key_value_heads=16, **DECODER), text),
        "whisper": (T.WhisperForConditionalGeneration,
                    T.WhisperConfig(d_model=768, encoder_layers=12, decoder_layers=12,
                                    encoder_attention_heads=12, decoder_attention_heads=12,
                                    encoder_ffn_dim=3072, decoder_ffn_dim=3072), "audio"),
        "vit": (T.ViTForImageClassification,
                T.ViTConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                            intermediate_size=4096, num_labels=1000), "image"),
        "clip": (T.CLIPModel, T.CLIPConfig(), "pair"),
    }


def batch_of(kind, device, batch=2, seq=128):
    ids = torch.ones((batch, seq), dtype=torch.long, device=device)
    mask = torch.ones_like(ids)
    if kind == "audio":
        return dict(input_features=torch.ones((batch, 80, 3000), device=device),
                    labels=ids[:, :32])
    if kind == "image":
        return dict(pixel_values=torch.ones((batch, 3, 224, 224), device=device),
                    labels=torch.ones(batch, dtype=torch.long, device=device))
    if kind == "pair":
        return dict(input_ids=ids[:, :77], attention_mask=mask[:, :77],
                    pixel_values=torch.ones((batch, 3, 224, 224), device=device),
                    return_loss=True)
    return dict(input_ids=ids, attention_mask=mask, labels=ids)


def train(arch, device, amp):
    cls, config, kind = configs()[arch]
    torch.manual_seed(0)
    with ft.device(device):
        model = cls(config)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp):
        loss = model(**batch_of(kind, device)).loss
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def params(arch):
    cls, config, _ = configs()[arch]
    with ft.meta():
        model = cls(config)
    return sum(p.numel() for p in model.parameters())


def row(arch, amp):
    step = lambda device: train(arch, device, amp)  # noqa: E731
    t0 = time.perf_counter()
    with ft.measure() as m:
        with ft.record() as real:
            step("cpu")
    cpu_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = ft.predict(step, assume=real.answers)
    predict_s = time.perf_counter() - t0
    fp, fr = pred.figures(), real.figures()
    peak, _after = m.since(real)
    roles = ", ".join(f"{k} {v / GB:.2f}" for k, v in fp["by_role"].items() if v >= 5e6)
    return (f"| {arch} | {'bf16 autocast' if amp else 'float32'} | {params(arch) / 1e6:.0f}M | "
            f"{fp['peak']:,} | {fr['peak']:,} | {'yes' if fp == fr else 'NO'} | "
            f"{peak - fr['peak_above_start']:+,} | "
            f"{roles} | {predict_s:.1f} | {cpu_s:.0f} |")


def predicted_row(arch, amp):
    t0 = time.perf_counter()
    pred = ft.predict(lambda device: train(arch, device, amp))
    predict_s = time.perf_counter() - t0
    return (f"| {arch} | {'bf16 autocast' if amp else 'float32'} | {params(arch) / 1e6:.0f}M | "
            f"{pred.figures()['peak']:,} | {type(pred).__name__} | {predict_s:.2f} |")


def predict_only(archs, kinds):
    print(f"`PYTHONPATH=build/release/python bench/torch_transformers_matrix.py --predict-only` on "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: torch {torch.__version__}, "
          f"transformers {T.__version__}; predict only (the first row includes imports).\n")
    print("| model | precision | parameters | predicted peak | recorder | predict s |")
    print("| --- | --- | ---: | ---: | --- | ---: |")
    for arch in archs:
        for amp in kinds:
            print(predicted_row(arch, amp), flush=True)


def main():
    archs = [a for a in sys.argv[1:] if not a.startswith("--")] or list(configs())
    if "--predict-only" in sys.argv:
        predict_only(archs, (False, True) if "--amp" in sys.argv else (False,))
        return
    kinds = (False, True) if "--amp" in sys.argv else (False,)
    runner = "scripts/hf" if torch.__version__.startswith("1.") else "scripts/torch2"
    print(f"`PYTHONPATH=build/release/python {runner} bench/torch_transformers_matrix.py"
          f"{' --amp' if True in kinds else ''}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}:"
          f" torch {torch.__version__}, transformers {T.__version__}; one training step each "
          "(AdamW, batch 2; text 128 tokens, CLIP 77, Whisper 80 x 3000 features and 32 labels, "
          "images 224 x 224), figures in bytes, by role in GB (parts >= 0.005 GB).\n")
    print("| model | precision | parameters | predicted peak | recorded peak | equal | "
          "profiler - recorded | predicted peak by role (GB) | predict s | CPU run s |")
    print("| --- | --- | ---: | ---: | ---: | --- | ---: | --- | ---: | ---: |")
    for arch in archs:
        for amp in kinds:
            try:
                print(row(arch, amp), flush=True)
            except Exception as e:  # noqa: BLE001 - the CPU run failing (1.13's layer_norm
                # under autocast) or predict refusing: a row that says so
                print(f"| {arch} | {'bf16 autocast' if amp else 'float32'} | "
                      f"{params(arch) / 1e6:.0f}M | fails: {type(e).__name__}: "
                      f"{str(e).splitlines()[0][:100]} | | | | | | |", flush=True)


if __name__ == "__main__":
    main()
