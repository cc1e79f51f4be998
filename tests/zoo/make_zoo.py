#!/usr/bin/env python3
"""Exports the model zoo: real architectures through PyTorch's own ONNX exporter.

Every model is built with seeded random weights (nothing is downloaded), its BatchNorm
statistics are calibrated on seeded random batches (so a wrong normalisation kernel cannot
"match" on all-default statistics), and it is exported with one seeded input. Each model gets a
backend-test folder:

    OUT/<name>/model.onnx
    OUT/<name>/input_<i>.pb      TensorProto, the inputs the reference outputs were computed on
    OUT/<name>/meta.json         dims to bind (--dim), what the model exercises, the exporter

Reference outputs (output_<i>.pb) come from onnxruntime-node, not from PyTorch: tests/zoo/zoo.sh
runs bench/ort_run.js --write-outputs on each folder after this script.

    python3 tests/zoo/make_zoo.py OUT [--only NAME,...] [--list]

Needs Debian's python3-torch (1.13), python3-torchvision and python3-torchaudio.
"""
import argparse
import json
import os
import sys
import time

import torch
import torchvision
from torch import nn

# ---- .pb tensors ---------------------------------------------------------------------------

def tensor_proto(name, t):
    """A serialized TensorProto of a CPU tensor (raw_data, as the backend tests store them)."""
    from onnx import numpy_helper
    return numpy_helper.from_array(t.detach().contiguous().cpu().numpy(), name).SerializeToString()


# ---- calibration ---------------------------------------------------------------------------

def calibrate_batchnorm(model, make_batch, batches=4):
    """Sets every BatchNorm's running statistics to the statistics of seeded random batches.

    Default statistics (mean 0, variance 1) make BatchNormalization nearly the identity, so a
    kernel that ignored them would still match. The rest of the model stays in eval mode (the
    detection models' heads behave differently in training).
    """
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return 0
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average over the batches
        m.train()
    with torch.no_grad():
        for _ in range(batches):
            model(*make_batch())
    for m in norms:
        m.eval()
    return len(norms)


def randomise_norm_affine(model):
    """Gives BatchNorm/LayerNorm weights and biases random values (their init is 1 and 0)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.modules.batchnorm._BatchNorm, nn.LayerNorm, nn.GroupNorm)):
                if getattr(m, "weight", None) is not None:
                    m.weight.uniform_(0.5, 1.5)
                if getattr(m, "bias", None) is not None:
                    m.bias.uniform_(-0.2, 0.2)


# ---- the models ----------------------------------------------------------------------------

class BertEncoder(nn.Module):
    """A BERT-style encoder written as the exporter sees Hugging Face's: token, position
    (position ids sliced from a buffer, `[:, :seq]`) and type embeddings, post-norm layers with
    GELU (erf), an additive attention mask from a 0/1 mask input."""

    def __init__(self, vocab=1000, d=256, heads=4, layers=2, ff=1024, max_pos=512):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_pos, d)
        self.typ = nn.Embedding(2, d)
        self.register_buffer("position_ids", torch.arange(max_pos).unsqueeze(0))
        self.norm = nn.LayerNorm(d)
        self.layers = nn.ModuleList(
            nn.ModuleDict({"q": nn.Linear(d, d), "k": nn.Linear(d, d), "v": nn.Linear(d, d),
                           "o": nn.Linear(d, d), "n1": nn.LayerNorm(d), "f1": nn.Linear(d, ff),
                           "f2": nn.Linear(ff, d), "n2": nn.LayerNorm(d)})
            for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        b, s = input_ids.shape
        pos = self.position_ids[:, :s]
        x = self.tok(input_ids) + self.pos(pos) + self.typ(torch.zeros_like(input_ids))
        x = self.norm(x)
        mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        hd = x.shape[-1] // self.heads
        for L in self.layers:
            def split(t):
                return t.view(b, s, self.heads, hd).transpose(1, 2)
            q, k, v = split(L["q"](x)), split(L["k"](x)), split(L["v"](x))
            att = torch.softmax(q @ k.transpose(-1, -2) / hd ** 0.5 + mask, dim=-1)
            ctx = (att @ v).transpose(1, 2).reshape(b, s, -1)
            x = L["n1"](x + L["o"](ctx))
            x = L["n2"](x + L["f2"](nn.functional.gelu(L["f1"](x))))
        return x


class Gpt2Decoder(nn.Module):
    """A GPT-2-style decoder: pre-norm blocks, tanh GELU, a causal mask sliced from a buffer as
    GPT-2 does (`bias[:, :, k-q:k, :k]`), and optionally past keys and values as inputs whose
    length is dynamic; the present keys and values are outputs of length past + seq."""

    def __init__(self, vocab=1000, d=256, heads=4, layers=2, max_pos=256, with_past=False):
        super().__init__()
        self.heads, self.with_past, self.n_layers = heads, with_past, layers
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(max_pos, d)
        self.register_buffer("bias", torch.tril(torch.ones(max_pos, max_pos)).view(
            1, 1, max_pos, max_pos))
        self.blocks = nn.ModuleList(
            nn.ModuleDict({"ln1": nn.LayerNorm(d), "qkv": nn.Linear(d, 3 * d),
                           "proj": nn.Linear(d, d), "ln2": nn.LayerNorm(d),
                           "fc": nn.Linear(d, 4 * d), "out": nn.Linear(4 * d, d)})
            for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, input_ids, *past):
        b, s = input_ids.shape
        past_len = past[0].shape[2] if past else 0
        pos = torch.arange(past_len, past_len + s, dtype=torch.long).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        d = x.shape[-1]
        hd = d // self.heads
        presents = []
        for i, B in enumerate(self.blocks):
            q, k, v = B["qkv"](B["ln1"](x)).split(d, dim=2)
            q = q.view(b, s, self.heads, hd).transpose(1, 2)
            k = k.view(b, s, self.heads, hd).transpose(1, 2)
            v = v.view(b, s, self.heads, hd).transpose(1, 2)
            if past:
                k = torch.cat([past[2 * i], k], dim=2)
                v = torch.cat([past[2 * i + 1], v], dim=2)
            presents += [k, v]
            w = q @ k.transpose(-1, -2) / hd ** 0.5
            ql, kl = w.size(-2), w.size(-1)
            causal = self.bias[:, :, kl - ql:kl, :kl].to(torch.bool)
            w = torch.where(causal, w, torch.tensor(-1e4, dtype=w.dtype))
            a = (torch.softmax(w, dim=-1) @ v).transpose(1, 2).reshape(b, s, d)
            x = x + B["proj"](a)
            x = x + B["out"](nn.functional.gelu(B["fc"](B["ln2"](x)), approximate="tanh"))
        logits = self.head(self.ln_f(x))
        return (logits, *presents) if self.with_past else logits


class ScriptedControl(nn.Module):
    """TorchScript control flow as speech models export it: an If on a dim (`If(dim == 1)`
    then Squeeze else Identity, whose untaken branch does not type-check) and a Loop."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, 3, padding=1)
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = self.conv(x)  # [B, 8, T]
        if y.size(0) == 1:
            z = y.squeeze(0)  # [8, T]
        else:
            z = y.sum(0)
        h = torch.zeros(z.size(1), 8)
        for i in range(3):
            h = torch.tanh(self.lin(h) + z.transpose(0, 1) * float(i + 1))
        return h


class LstmTagger(nn.Module):
    def __init__(self, vocab=500, d=64, hidden=96):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, 10)

    def forward(self, tokens):
        y, _ = self.lstm(self.emb(tokens))
        return self.out(y)


class BiGru(nn.Module):
    def __init__(self, feats=40, hidden=128):
        super().__init__()
        self.gru = nn.GRU(feats, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, 30)

    def forward(self, x):
        y, _ = self.gru(x)
        return self.out(y)


class ResidualBlock(nn.Module):
    """Linear, GELU, LayerNorm and a residual add: exported as one local function."""

    def __init__(self, d=64):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(nn.functional.gelu(self.lin(x))) + x


class ResidualStack(nn.Module):
    def __init__(self, d=64, blocks=4):
        super().__init__()
        self.blocks = nn.ModuleList(ResidualBlock(d) for _ in range(blocks))
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


def _images(size=224, batch=1):
    return lambda: (torch.randn(batch, 3, size, size),)


def _tv(fn, **kw):
    return lambda: getattr(torchvision.models, fn)(weights=None, **kw)


def _vit_small():
    # ViT-S/16 at 224 (12 layers is 22M parameters; 4 keep the suite fast).
    return torchvision.models.vision_transformer.VisionTransformer(
        image_size=224, patch_size=16, num_layers=4, num_heads=6, hidden_dim=384, mlp_dim=1536)


def _tokens(batch, seq, vocab=1000):
    return lambda: (torch.randint(0, vocab, (batch, seq)),)


def _bert_inputs():
    ids = torch.randint(0, 1000, (1, 32))
    mask = torch.ones(1, 32, dtype=torch.long)
    mask[0, 28:] = 0
    return ids, mask


def _gpt2_past_inputs(layers=2, heads=4, hd=64, past=8, seq=4):
    ids = torch.randint(0, 1000, (1, seq))
    kv = [torch.randn(1, heads, past, hd) for _ in range(2 * layers)]
    return (ids, *kv)


def _image_dynamic_batch(names=("x",)):
    return {n: {0: "batch"} for n in names}


# name -> dict(build, inputs, input_names, output_names, dynamic_axes, dims, opset, notes)
def zoo():
    m = {}
    cls = [("resnet18", _tv("resnet18")), ("mobilenet_v2", _tv("mobilenet_v2")),
           ("mobilenet_v3_small", _tv("mobilenet_v3_small")),
           ("efficientnet_b0", _tv("efficientnet_b0")),
           ("regnet_y_400mf", _tv("regnet_y_400mf")), ("convnext_tiny", _tv("convnext_tiny")),
           ("vit_s16_4l", _vit_small), ("swin_t", _tv("swin_t")),
           ("shufflenet_v2_x1_0", _tv("shufflenet_v2_x1_0")),
           ("squeezenet1_1", _tv("squeezenet1_1")), ("densenet121", _tv("densenet121"))]
    for name, build in cls:
        m[name] = dict(build=build, inputs=_images(), input_names=["x"],
                       output_names=["logits"], dynamic_axes={"x": {0: "batch"},
                                                              "logits": {0: "batch"}},
                       dims={"batch": 1}, opset=14, notes="torchvision classification")
    m["fasterrcnn_mobilenet_v3_320"] = dict(
        build=lambda: torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
            weights=None, weights_backbone=None, box_score_thresh=0.0),
        inputs=lambda: ([torch.rand(3, 320, 320)],), input_names=["image"],
        output_names=["boxes", "labels", "scores"], dynamic_axes=None, dims={}, opset=11,
        notes="detection: NonZero, TopK, NonMaxSuppression, RoiAlign (data-dependent shapes)",
        calibrate=lambda: ([torch.rand(3, 320, 320)],))
    m["bert_mini"] = dict(
        build=BertEncoder, inputs=_bert_inputs, input_names=["input_ids", "attention_mask"],
        output_names=["hidden"],
        dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                      "attention_mask": {0: "batch", 1: "seq"}, "hidden": {0: "batch", 1: "seq"}},
        dims={"batch": 1, "seq": 32}, opset=14,
        notes="BERT-style encoder: position ids sliced by Shape, additive mask, erf GELU")
    m["gpt2_mini"] = dict(
        build=Gpt2Decoder, inputs=_tokens(1, 16), input_names=["input_ids"],
        output_names=["logits"],
        dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}},
        dims={"batch": 1, "seq": 16}, opset=14,
        notes="GPT-2-style decoder: causal mask sliced from a buffer, tanh GELU")
    past_names = [f"past_{kind}_{i}" for i in range(2) for kind in ("key", "value")]
    present_names = [f"present_{kind}_{i}" for i in range(2) for kind in ("key", "value")]
    dyn = {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    dyn.update({n: {0: "batch", 2: "past"} for n in past_names})
    dyn.update({n: {0: "batch", 2: "total_seq"} for n in present_names})
    m["gpt2_mini_past"] = dict(
        build=lambda: Gpt2Decoder(with_past=True), inputs=_gpt2_past_inputs,
        input_names=["input_ids", *past_names], output_names=["logits", *present_names],
        dynamic_axes=dyn, dims={"batch": 1, "seq": 4, "past": 8}, opset=14,
        notes="GPT-2-style decoder with past keys/values: present length is past + seq")
    m["scripted_control_flow"] = dict(
        build=lambda: torch.jit.script(ScriptedControl()),
        inputs=lambda: (torch.randn(1, 4, 16),), input_names=["x"], output_names=["h"],
        dynamic_axes={"x": {0: "batch", 2: "time"}, "h": {0: "time"}},
        dims={"batch": 1, "time": 16}, opset=16,
        notes="TorchScript If (Squeeze in the branch taken only at batch 1) and Loop")
    m["lstm_tagger"] = dict(
        build=LstmTagger, inputs=lambda: (torch.randint(0, 500, (1, 20)),),
        input_names=["tokens"], output_names=["tags"],
        dynamic_axes={"tokens": {0: "batch", 1: "seq"}, "tags": {0: "batch", 1: "seq"}},
        dims={"batch": 1, "seq": 20}, opset=14, notes="2-layer bidirectional LSTM")
    m["bigru"] = dict(
        build=BiGru, inputs=lambda: (torch.randn(1, 50, 40),), input_names=["feats"],
        output_names=["logits"],
        dynamic_axes={"feats": {0: "batch", 1: "frames"}, "logits": {0: "batch", 1: "frames"}},
        dims={"batch": 1, "frames": 50}, opset=14, notes="bidirectional GRU")
    m["module_functions"] = dict(
        build=ResidualStack, inputs=lambda: (torch.randn(2, 16, 64),), input_names=["x"],
        output_names=["y"],
        dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}},
        dims={"batch": 2, "seq": 16}, opset=17, functions=(ResidualBlock,),
        notes="each block a model-local function (export_modules_as_functions), called 4 times")
    return m


def randomise_zero_weights(model):
    """Re-draws weights that their init sets to zero (torchvision's ViT head, zero-init residual
    branches): an all-zero head gives all-zero logits, which any kernel "matches"."""
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2 and not p.any():
                p.normal_(0.0, 0.02)


def export_one(name, spec, out_dir, seed=0):
    torch.manual_seed(seed)
    model = spec["build"]()
    if not isinstance(model, torch.jit.ScriptModule):
        model.eval()
        randomise_norm_affine(model)
        randomise_zero_weights(model)
        calibrate = spec.get("calibrate", spec["inputs"])
        bn = calibrate_batchnorm(model, calibrate)
    else:
        bn = 0
    torch.manual_seed(seed + 1)
    inputs = spec["inputs"]()
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    t0 = time.time()
    # Not under no_grad: there, torch 1.13's nn.MultiheadAttention takes its fused inference
    # path (aten::_native_multi_head_attention), which the exporter cannot write.
    extra = {}
    if spec.get("functions"):
        extra["export_modules_as_functions"] = set(spec["functions"])
    torch.onnx.export(model, inputs, path, opset_version=spec["opset"],
                      input_names=spec["input_names"], output_names=spec["output_names"],
                      dynamic_axes=spec["dynamic_axes"], do_constant_folding=True, **extra)
    flat = []
    for x in inputs:
        flat.extend(x if isinstance(x, (list, tuple)) else [x])
    for i, (n, x) in enumerate(zip(spec["input_names"], flat)):
        with open(os.path.join(folder, f"input_{i}.pb"), "wb") as f:
            f.write(tensor_proto(n, x))
    meta = {"name": name, "dims": spec["dims"], "opset": spec["opset"], "notes": spec["notes"],
            "batchnorms_calibrated": bn, "torch": torch.__version__,
            "torchvision": torchvision.__version__, "seed": seed,
            "parameters": sum(p.numel() for p in model.parameters())}
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"zoo: {name}: {meta['parameters']:,} parameters, exported in "
          f"{time.time() - t0:.1f} s", file=sys.stderr)


def write_tolerances(zoo_dir):
    """The output check's tolerances, in each meta.json: rtol 1e-3 and an atol that scales with
    the reference outputs' magnitude, atol = max(1e-5, 1e-4 x max |reference|). Float32 sums
    of large terms (logits of 100 and more) carry absolute errors that grow with them; a fixed
    atol would fail exact kernels on large outputs and pass wrong ones on small outputs."""
    import glob
    import numpy as np
    from onnx import TensorProto, numpy_helper
    for meta_path in sorted(glob.glob(os.path.join(zoo_dir, "*", "meta.json"))):
        folder = os.path.dirname(meta_path)
        peak = 0.0
        for out in sorted(glob.glob(os.path.join(folder, "output_*.pb"))):
            t = TensorProto()
            with open(out, "rb") as f:
                t.ParseFromString(f.read())
            a = numpy_helper.to_array(t)
            if a.size and np.issubdtype(a.dtype, np.floating):
                peak = max(peak, float(np.nanmax(np.abs(a))))
        with open(meta_path) as f:
            meta = json.load(f)
        meta["rtol"] = 1e-3
        meta["atol"] = max(1e-5, 1e-4 * peak)
        meta["max_abs_reference"] = peak
        with open(meta_path, "w") as f:
            json.dump(meta, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--tolerances", action="store_true",
                    help="write rtol/atol into OUT/*/meta.json from the reference outputs")
    a = ap.parse_args()
    if a.tolerances:
        write_tolerances(a.out)
        return 0
    return export_chosen(ap, a, zoo(), export_one)


def export_chosen(ap, a, models, export):
    """The end of a zoo generator's command line (this one's and the dynamo zoo's): --list, or
    `export(name, spec, OUT)` for every model --only names (all by default)."""
    if a.list:
        print("\n".join(models))
        return 0
    if not a.out:
        ap.error("OUT is required")
    names = [n for n in a.only.split(",") if n] or list(models)
    unknown = [n for n in names if n not in models]
    if unknown:
        ap.error("unknown models: " + ", ".join(unknown))
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for n in names:
        export(n, models[n], a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
