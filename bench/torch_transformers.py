#!/usr/bin/env python3
"""footprint.torch on transformers models at real width (issue 38): what a user asks of it.

    PYTHONPATH=build/release/python scripts/hf bench/torch_transformers.py [--quick]
    PYTHONPATH=build/release/python scripts/torch2 bench/torch_transformers.py

Prints a markdown section for docs/BENCHMARKS.md ("## footprint.torch on transformers models"):

- a GPT-2 124M training step (AdamW, batch 2 x 128 tokens; --quick: 1 x 32): predict on meta vs
  record of the CPU run vs PyTorch's profiler (peak, after), the peak by role, and the time to
  predict vs a plain meta run of the same function and the CPU run;
- Llama-3-8B's shape (32 layers, hidden 4096, 8 key-value heads, vocab 128,256, bfloat16) on
  meta: a prefill of 2,048 and 8,192 tokens that returns its cache and last logits, the peak by
  role, and the time and memory (VmHWM growth, measured first: the CPU run below raises it)
  the prediction takes;
- the same step in mixed precision (the forward under CPU autocast to bfloat16): predict vs
  record vs the profiler, and the peak by role (the float32 weights as fp32 masters);
- the largest GPT-2 124M training batch (256 tokens) whose predicted peak fits "8 GB" and
  "8 GiB" (footprint.torch.fit on meta only).

Models are built from config classes (never downloaded), on meta through footprint.torch.device.
"""
import resource
import statistics
import sys
import time

import torch
import transformers as T

import footprint.torch as ft

T.logging.set_verbosity_error()
# The classes are resolved here: transformers imports a model's module on first use, and on
# PyTorch 2.7 that import fails inside `with torch.device("meta"):` (torch._dynamo's circular
# import), footprint or not.
GPT2, LLAMA = T.GPT2LMHeadModel, T.LlamaForCausalLM
QUICK = "--quick" in sys.argv
GB, GIB = 1e9, float(1 << 30)


def vm_hwm():
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def gpt2_step(device, batch=4, seq=256, amp=False):
    """A training step; ``amp``: the forward under CPU autocast to bfloat16 (transformers'
    Trainer with bf16=True on the CPU), float32 weights as the masters."""
    with ft.device(device):
        model = GPT2(T.GPT2Config())  # 124M
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.ones((batch, seq), dtype=torch.long, device=device)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp):
        loss = model(input_ids=ids, attention_mask=torch.ones_like(ids), labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


LLAMA3_8B = T.LlamaConfig(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                          num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
                          max_position_embeddings=8192, rope_theta=500000.0)


def llama_prefill(device, seq):
    with ft.device(device):
        model = LLAMA._from_config(LLAMA3_8B, torch_dtype=torch.bfloat16)
    model.eval()
    ids = torch.ones((1, seq), dtype=torch.long, device=device)
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=True)
    return out.past_key_values, out.logits[:, -1]


def answers_of_a_small_run(seq=8):
    """The values the data-dependent questions of a Llama prefill got on real tensors (a tiny
    Llama on the CPU runs the same transformers code as the 8B one): transformers 4.57 asks
    whether the attention mask is all ones before it builds the mask."""
    small = T.LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                          num_attention_heads=4, num_key_value_heads=2, vocab_size=256)
    with ft.record() as real:
        model = LLAMA(small).eval()
        ids = torch.ones((1, seq), dtype=torch.long)
        with torch.no_grad():
            model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=True)
    return real.answers


def timed(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def roles(fig, unit=GB):
    return ", ".join(f"{k} {v / unit:.3f}" for k, v in fig["by_role"].items())


def three_counts(predicted, recorded, peak, after):
    """The table of a step's peak and after-run bytes: predicted, recorded, the profiler's."""
    print("| figure | predict (meta) | record (CPU run) | PyTorch's profiler |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| peak | {predicted['peak']:,} | {recorded['peak']:,} | {peak:,} |")
    print(f"| after the run | {predicted['after']:,} | {recorded['after']:,} | {after:,} |")


def main():
    batch, seq = (1, 32) if QUICK else (2, 128)
    print("## footprint.torch on transformers models\n")
    runner = "scripts/hf" if torch.__version__.startswith("1.") else "scripts/torch2"
    print(f"`PYTHONPATH=build/release/python {runner} bench/torch_transformers.py"
          f"{' --quick' if QUICK else ''}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: "
          f"torch {torch.__version__}, transformers {T.__version__}, 1 process, figures in "
          "bytes (GB = 10^9 B). Models built from config classes with seeded random weights.\n")

    print("### Llama-3-8B's shape, bfloat16, prefill on meta\n")
    print("| tokens | predicted peak | by role (GB) | after the run | predict s | prediction's "
          "memory |")
    print("| ---: | ---: | --- | ---: | ---: | ---: |")
    answers = answers_of_a_small_run()
    for n in ((2048,) if QUICK else (2048, 8192)):
        base = vm_hwm()
        t0 = time.perf_counter()
        rec = ft.predict(llama_prefill, seq=n, assume=answers)
        took = time.perf_counter() - t0
        f = rec.figures()
        print(f"| {n:,} | {f['peak'] / GB:.2f} GB ({f['peak'] / GIB:.2f} GiB) | {roles(f)} | "
              f"{f['after'] / GB:.2f} GB | {took:.1f} | {(vm_hwm() - base) / 1e6:.0f} MB |")
    print("\nThe prediction's memory is the process's VmHWM growth during `predict` (torch and "
          "transformers imported before). transformers runs this version's attention: eager on "
          "PyTorch 1.13 (the [1, 32, n, n] scores are the temporaries), SDPA on 2.x.\n")

    step = lambda device: gpt2_step(device, batch, seq)  # noqa: E731
    t0 = time.perf_counter()
    with ft.measure() as m:
        with ft.record() as real:
            step("cpu")
    cpu_s = time.perf_counter() - t0
    ft.predict(step, assume=real.answers)  # warm: imports and first calls
    try:
        plain_s, _ = timed(lambda: step("meta"), 3)
    except RuntimeError:  # transformers 4.57 asks its mask's data, which meta cannot answer
        plain_s = None
    predict_s, pred = timed(lambda: ft.predict(step, assume=real.answers), 3)
    fp, fr = pred.figures(), real.figures()
    peak, after = m.since(real)
    print(f"### GPT-2 124M training step (AdamW, batch {batch} x {seq} tokens)\n")
    three_counts(fp, fr, peak, after)
    print(f"\nPredicted equals recorded: {fp == fr}; the profiler's peak is {peak - fr['peak']:,} B "
          "above the recording (the small tensors of Python numbers no dispatch mode sees). "
          f"Peak by role (GB): {roles(fp)}. Time: predict {predict_s:.2f} s (median of 3), the "
          + (f"plain meta run of the same function {plain_s:.2f} s ({predict_s / plain_s:.1f}x)"
             if plain_s else "plain meta run: none (transformers asks its mask's data, which "
             "meta tensors cannot answer; predict takes the CPU run's answers)")
          + f", the CPU run under record {cpu_s:.1f} s.\n")

    amp = lambda device: gpt2_step(device, batch, seq, amp=True)  # noqa: E731
    with ft.measure() as m:
        with ft.record() as real_amp:
            amp("cpu")
    fp, fr = ft.predict(amp, assume=real_amp.answers).figures(), real_amp.figures()
    peak, after = m.since(real_amp)
    print("### The same step in mixed precision (CPU autocast to bfloat16)\n")
    three_counts(fp, fr, peak, after)
    print(f"\nPredicted equals recorded: {fp == fr}; the profiler's peak is "
          f"{peak - fr['peak']:,} B above the recording. Peak by role (GB): {roles(fp)}.\n")

    print("### The largest GPT-2 124M training batch (256 tokens) within a budget\n")
    print("| budget | batch | predicted peak at it | at batch + 1 |")
    print("| --- | ---: | ---: | ---: |")
    for budget in ("8 GB", "8 GiB"):
        f = ft.fit(lambda device, batch: gpt2_step(device, batch, 256), budget, dim="batch",
                   hi=256, assume=real.answers)
        print(f"| {budget} | {f.value} | {f.predicted[f.value]:,} | "
              f"{f.predicted.get(f.value + 1, 0):,} |")


if __name__ == "__main__":
    main()
