#!/usr/bin/env python3
"""What footprint.torch.predict costs against a plain meta run of the same function (issue 38:
at most 2x), with its engine below Python and with the dispatch mode it replaced.

    PYTHONPATH=build/release/python scripts/hf bench/torch_predict_cost.py [--runs N]
    PYTHONPATH=build/release/python scripts/torch2 bench/torch_predict_cost.py

For each program (transformers models at real width, built from their config classes on meta
inside the function, as predict's users write them): the plain run on meta, predict with the
engine and predict with the dispatch mode, alternated in each round so that the three share the
machine's state; medians over the rounds, and the ratio of each median to the plain run's.
Every predict is checked to give the same figures (the engine's and the mode's). Prints a
markdown section for docs/BENCHMARKS.md.
"""
import statistics
import sys
import time

import torch
import transformers as T

import footprint
import footprint.torch as ft
from footprint import _torch_engine

T.logging.set_verbosity_error()
RUNS = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 7


def train(cls, config, batch, seq, kind="lm"):
    def step(device):
        with ft.device(device):
            model = cls(config)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        ids = torch.ones((batch, seq), dtype=torch.long, device=device)
        if kind == "t5":
            loss = model(input_ids=ids, labels=ids).loss
        else:
            loss = model(input_ids=ids, attention_mask=torch.ones_like(ids), labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def decode(cls, config, batch, past):
    def step(device):
        with ft.device(device):
            model = cls(config)
        ids = torch.ones((batch, past), dtype=torch.long, device=device)
        with torch.no_grad():
            out = model(input_ids=ids, use_cache=True)
            nxt = torch.ones((batch, 1), dtype=torch.long, device=device)
            return model(input_ids=nxt, past_key_values=out.past_key_values, use_cache=True)
    return step


def resnet50_step(device, batch=8):
    import torchvision
    with ft.device(device):
        model = torchvision.models.resnet50()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.ones(batch, 3, 224, 224, device=device)
    torch.nn.functional.cross_entropy(model(x), torch.zeros(batch, dtype=torch.long,
                                                             device=device)).backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def encoder_step(device, batch=8, seq=256):
    with ft.device(device):
        model = torch.nn.TransformerEncoder(
            torch.nn.TransformerEncoderLayer(768, 12, 3072, batch_first=True), 12)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model(torch.ones(batch, seq, 768, device=device)).sum().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def programs():
    llama = T.LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=16,
                          num_attention_heads=16, num_key_value_heads=4, vocab_size=32000)
    return [
        ("torchvision ResNet-50 training step (SGD), batch 8", resnet50_step),
        ("nn.TransformerEncoder 12 x 768 training step (AdamW), 8 x 256", encoder_step),
        ("GPT-2 124M training step, 2 x 128", train(T.GPT2LMHeadModel, T.GPT2Config(), 2, 128)),
        ("BERT-base training step, 2 x 128",
         train(T.BertForMaskedLM, T.BertConfig(), 2, 128)),
        ("T5-small training step, 2 x 128",
         train(T.T5ForConditionalGeneration, T.T5Config(decoder_start_token_id=0), 2, 128, "t5")),
        ("Llama 300M (GQA) training step, 2 x 128", train(T.LlamaForCausalLM, llama, 2, 128)),
        ("Llama 300M prefill 512 + one decoded token", decode(T.LlamaForCausalLM, llama, 1, 512)),
    ]


def by_the_mode(fn):
    saved = dict(_torch_engine._state)
    _torch_engine._state.clear()
    _torch_engine._state.update({"module": None, "why": "the benchmark's"})
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ft.predict(fn)
    finally:
        _torch_engine._state.clear()
        _torch_engine._state.update(saved)


def seconds(fn):
    """CPU seconds of this process (one thread works here): what the machine's other load
    changes least."""
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def main():
    if _torch_engine.load() is None:
        sys.exit(f"the engine cannot be built here: {_torch_engine.why_not()}")
    print("## What footprint.torch.predict costs\n")
    print(f"`PYTHONPATH=build/release/python {'scripts/hf' if torch.__version__ < '2' else 'scripts/torch2'} "
          f"bench/torch_predict_cost.py` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: "
          f"torch {torch.__version__}, transformers {T.__version__}, {RUNS} rounds, each running "
          "the plain meta run, predict with the engine (and then `figures()`, the trace's analysis) "
          "and predict with the dispatch mode; medians of the process's CPU seconds, and each "
          "median over the plain run's.\n")
    print("| program | ops | plain meta run | predict (engine) | ratio | + figures() | ratio "
          "| predict (dispatch mode) | ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, fn in programs():
        try:
            fn("meta")  # imports and first calls
            can_run = True
        except RuntimeError as e:  # what predict works around (1.13: autocast on "meta")
            can_run, why = False, str(e).splitlines()[0]
        try:
            fast, slow = ft.predict(fn), by_the_mode(fn)
        except footprint.UsageError as e:  # 2.x's transformers ask their masks' data
            print(f"| {name} | | {'fails' if not can_run else ''} | needs assume= "
                  f"({str(e).split(':')[0]}:...) | | | | | |")
            continue
        assert type(fast).__name__ == "_EngineRecording", type(fast)
        assert fast.figures() == slow.figures(), name
        plain, engine, figures, mode = [], [], [], []
        for _ in range(RUNS):
            plain.append(seconds(lambda: fn("meta"))[0] if can_run else float("nan"))
            took, rec = seconds(lambda: ft.predict(fn))
            engine.append(took)
            figures.append(took + seconds(rec.figures)[0])
            del rec
            mode.append(seconds(lambda: by_the_mode(fn))[0])
        p, e, f, m = (statistics.median(x) for x in (plain, engine, figures, mode))
        if not can_run:
            print(f"| {name} | {len(fast.ops):,} | fails: {why[:60]} | {e:.3f} | | {f:.3f} | | "
                  f"{m:.3f} | |")
            continue
        print(f"| {name} | {len(fast.ops):,} | {p:.3f} | {e:.3f} | {e / p:.2f}x | {f:.3f} | "
              f"{f / p:.2f}x | {m:.3f} | {m / p:.1f}x |")
    print("\nBoth predicts give the same figures on every program (checked above). The plain run "
          "builds the model on meta and runs the step, as predict does; predict's time includes "
          "building the trace's records; `figures()` then makes the trace's Python objects and analyses it "
          "in footprint's C++ timeline.\n")


if __name__ == "__main__":
    main()
