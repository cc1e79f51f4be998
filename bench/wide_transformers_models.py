#!/usr/bin/env python3
"""Exports the real-width transformers bench/wide_transformers.sh times (issue 40): the zoo's
BERT-style encoder and GPT-2-style decoder (tests/zoo/make_zoo.py, the same exporter and seeded
weights) built from their families at the widths and shapes asked, not from a fixed file list.

  python3 bench/wide_transformers_models.py OUT_DIR [--widths 768,1024] [--layers 4]
      [--shapes 1x128,8x128,1x512] [--past 1024] [--products 64x768x3072,...]
      [--rnns gru:512x100,lstm:1024x100,...]

For every width d (heads of 64, feed-forward 4 d) it writes OUT_DIR/<name>/model.onnx and
input_*.pb:
  bert_d<d>_<b>x<s>     the encoder on b sequences of s tokens (the last 4 masked out)
  gpt2_d<d>_<b>x<s>     the decoder's prefill of b x s tokens
  gpt2_d<d>_decode_p<P> the decoder's step of one token over P past keys and values
and, for every M x K x N of --products, product_<M>x<K>x<N>: one Linear over M rows of K (a
MatMul and an Add of the bias, as the exporter writes a Linear over a sequence); for every
KIND:HIDDENxSEQ of --rnns (KIND gru or lstm), the recurrent nets people export:
  gru_h<H>_s<S>         the zoo's bidirectional GRU over S frames of 80 features
  lstm_h<H>_s<S>        an LSTM language model: embedding, 2 LSTM layers, the vocabulary's logits
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "zoo"))
import make_zoo  # noqa: E402  (the zoo's models and exporter)
import torch  # noqa: E402

VOCAB = 1000


def bert_spec(d, layers, batch, seq):
    def inputs():
        ids = torch.randint(0, VOCAB, (batch, seq))
        mask = torch.ones(batch, seq, dtype=torch.long)
        mask[:, seq - 4:] = 0
        return ids, mask
    return dict(
        build=lambda: make_zoo.BertEncoder(vocab=VOCAB, d=d, heads=d // 64, layers=layers,
                                           ff=4 * d, max_pos=max(512, seq)),
        inputs=inputs, input_names=["input_ids", "attention_mask"], output_names=["hidden"],
        dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                      "attention_mask": {0: "batch", 1: "seq"}, "hidden": {0: "batch", 1: "seq"}},
        dims={"batch": batch, "seq": seq}, opset=14,
        notes=f"BERT-style encoder, hidden {d}, {layers} layers, {batch} x {seq} tokens")


def gpt2_spec(d, layers, batch, seq):
    return dict(
        build=lambda: make_zoo.Gpt2Decoder(vocab=VOCAB, d=d, heads=d // 64, layers=layers,
                                           max_pos=max(256, seq)),
        inputs=lambda: (torch.randint(0, VOCAB, (batch, seq)),), input_names=["input_ids"],
        output_names=["logits"],
        dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}},
        dims={"batch": batch, "seq": seq}, opset=14,
        notes=f"GPT-2-style decoder, hidden {d}, {layers} layers, prefill of {batch} x {seq}")


def gpt2_decode_spec(d, layers, past):
    heads = d // 64
    past_names = [f"past_{kind}_{i}" for i in range(layers) for kind in ("key", "value")]
    present_names = [f"present_{kind}_{i}" for i in range(layers) for kind in ("key", "value")]
    dyn = {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    dyn.update({n: {0: "batch", 2: "past"} for n in past_names})
    dyn.update({n: {0: "batch", 2: "total_seq"} for n in present_names})
    return dict(
        build=lambda: make_zoo.Gpt2Decoder(vocab=VOCAB, d=d, heads=heads, layers=layers,
                                           max_pos=past + 64, with_past=True),
        inputs=lambda: (torch.randint(0, VOCAB, (1, 1)),
                        *[torch.randn(1, heads, past, 64) for _ in range(2 * layers)]),
        input_names=["input_ids", *past_names], output_names=["logits", *present_names],
        dynamic_axes=dyn, dims={"batch": 1, "seq": 1, "past": past}, opset=14,
        notes=f"GPT-2-style decoder, hidden {d}, {layers} layers, one token over {past} past")


def product_spec(m, k, n):
    return dict(
        build=lambda: torch.nn.Linear(k, n), inputs=lambda: (torch.randn(1, m, k),),
        input_names=["x"], output_names=["y"], dynamic_axes=None, dims={}, opset=14,
        notes=f"one Linear: [1, {m}, {k}] x [{k}, {n}] plus bias")


class LstmLm(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, hidden)
        self.lstm = torch.nn.LSTM(hidden, hidden, num_layers=2, batch_first=True)
        self.out = torch.nn.Linear(hidden, VOCAB)

    def forward(self, tokens):
        y, _ = self.lstm(self.emb(tokens))
        return self.out(y)


def rnn_spec(kind, hidden, seq):
    if kind == "gru":
        return dict(
            build=lambda: make_zoo.BiGru(feats=80, hidden=hidden),
            inputs=lambda: (torch.randn(1, seq, 80),), input_names=["feats"],
            output_names=["logits"], dynamic_axes=None, dims={}, opset=14,
            notes=f"bidirectional GRU, hidden {hidden}, {seq} frames")
    return dict(
        build=lambda: LstmLm(hidden), inputs=lambda: (torch.randint(0, VOCAB, (1, seq)),),
        input_names=["tokens"], output_names=["logits"], dynamic_axes=None, dims={}, opset=14,
        notes=f"LSTM language model, 2 layers of hidden {hidden}, {seq} tokens")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--widths", default="768,1024")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--shapes", default="1x128,8x128,1x512")
    ap.add_argument("--past", type=int, default=1024, help="0: no decode step")
    ap.add_argument("--products", default="64x768x3072,64x3072x768,1x768x3072")
    ap.add_argument("--rnns", default="")
    a = ap.parse_args()
    specs = {}
    for d in (int(w) for w in a.widths.split(",") if w.strip()):
        if d % 64:
            ap.error(f"width {d} is not a whole number of 64-wide heads")
        for shape in (s for s in a.shapes.split(",") if s):
            b, s = (int(x) for x in shape.split("x"))
            specs[f"bert_d{d}_{b}x{s}"] = bert_spec(d, a.layers, b, s)
            specs[f"gpt2_d{d}_{b}x{s}"] = gpt2_spec(d, a.layers, b, s)
        if a.past:
            specs[f"gpt2_d{d}_decode_p{a.past}"] = gpt2_decode_spec(d, a.layers, a.past)
    for p in (p for p in a.products.split(",") if p):
        m, k, n = (int(x) for x in p.split("x"))
        specs[f"product_{m}x{k}x{n}"] = product_spec(m, k, n)
    for r in (r for r in a.rnns.split(",") if r):
        kind, size = r.split(":")
        if kind not in ("gru", "lstm"):
            ap.error(f"--rnns: unknown kind {kind!r} (gru or lstm)")
        hidden, seq = (int(x) for x in size.split("x"))
        specs[f"{kind}_h{hidden}_s{seq}"] = rnn_spec(kind, hidden, seq)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name, spec in specs.items():
        make_zoo.export_one(name, spec, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
