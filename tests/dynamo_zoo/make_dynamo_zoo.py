#!/usr/bin/env python3
"""Exports the dynamo zoo: models as PyTorch 2.x's default exporter writes them in 2026.

`torch.onnx.export(..., dynamo=True)` (the default exporter since PyTorch 2.9) traces with
torch.export and writes the graph through onnxscript, at the opset it defaults to. Each model is
exported twice:

    <name>          as the exporter writes it (its default opset, its own optimisation pass)
    <name>-o23      converted to opset 23, passed through onnxscript's optimizer and its opset-23
                    fusions (onnxscript.rewriter.onnx_fusions: RMSNormalization, RotaryEmbedding,
                    Attention where they match), what users run before deploying

Beside them, a model built with spox (its graph naming and value_info idioms, an If from Python
callables), saved as spox writes it. The architectures: some of the TorchScript zoo's (tests/zoo/make_zoo.py: torchvision's
ResNet-18, MobileNetV3-Small and a 4-layer ViT-S/16; the BERT- and GPT-2-style blocks) and
Hugging Face decoders built from config classes with seeded random weights (never downloaded):
Llama with grouped-query attention, Qwen2 and Mistral, with and without past keys and values
(the cache as legacy tuples turned into the library's DynamicCache inside forward). Sequence and
past lengths are dynamic (torch.export.Dim, named as the dims meta.json binds); the batch is 1
and stays static (torch.export fixes an example extent of 1). BatchNorm
statistics are calibrated on seeded batches and all-zero weights re-drawn, as in the TorchScript
zoo. Each folder:

    OUT/<name>/model.onnx, input_<i>.pb, output_<i>.pb (onnxruntime's, from this script),
    OUT/<name>/meta.json (dims, notes, versions, rtol/atol as the TorchScript zoo sets them)

    build/torch2/bin/python tests/dynamo_zoo/make_dynamo_zoo.py OUT [--only NAME,...] [--list]

Needs the PyTorch 2.x environment of scripts/torch2 (torch, torchvision, transformers, onnx,
onnxscript, onnxruntime, pinned there).
"""
import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "zoo"))
import make_zoo  # noqa: E402  (the TorchScript zoo's architectures and helpers)


# ---- Hugging Face decoders -------------------------------------------------------------------

def _decoder_config(kind):
    import transformers
    common = dict(vocab_size=1000, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                  tie_word_embeddings=False)
    if kind == "llama":
        return transformers.LlamaConfig(**common)
    if kind == "qwen2":
        return transformers.Qwen2Config(**common)
    if kind == "mistral":
        return transformers.MistralConfig(sliding_window=None, **common)
    raise ValueError(kind)


class Decoder(torch.nn.Module):
    """A causal LM's logits for input_ids, and with `past` layers the present keys and values:
    the past comes in as tensors ([batch, kv_heads, past, head_dim] per layer, keys then values)
    and goes into the library's DynamicCache inside forward, so the exported graph has plain
    tensors at its interface."""

    def __init__(self, kind, with_past):
        super().__init__()
        import transformers
        cfg = _decoder_config(kind)
        cfg._attn_implementation = "eager"
        self.model = transformers.AutoModelForCausalLM.from_config(cfg)
        self.with_past = with_past
        self.layers = cfg.num_hidden_layers

    def forward(self, input_ids, *past):
        past_len = past[0].shape[2] if past else 0
        seq = input_ids.shape[1]
        # The causal mask as a 4-D additive tensor, which the library takes as it is: its own
        # mask builders run under vmap, which torch.export cannot trace.
        # Compared as tensors, not by tril(past_len), which would fix the past's length.
        keys = torch.arange(past_len + seq).unsqueeze(0)
        queries = torch.arange(seq).unsqueeze(1) + past_len
        mask = torch.zeros(1, 1, seq, past_len + seq).masked_fill(keys > queries, -1e9)
        if not self.with_past:
            return self.model(input_ids=input_ids, attention_mask=mask, use_cache=False).logits
        from transformers.cache_utils import DynamicCache
        cache = DynamicCache()
        for i in range(self.layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        positions = torch.arange(past_len, past_len + seq).unsqueeze(0)
        out = self.model(input_ids=input_ids, attention_mask=mask, position_ids=positions,
                         past_key_values=cache, use_cache=True)
        presents = []
        for i in range(self.layers):
            k, v = out.past_key_values[i][:2]
            presents += [k, v]
        return (out.logits, *presents)


def _decoder_inputs(with_past, seq=8, past=6):
    def make():
        ids = torch.randint(0, 1000, (1, seq))
        if not with_past:
            return (ids,)
        kv = [torch.randn(1, 2, past, 32) for _ in range(4)]
        return (ids, *kv)
    return make


# ---- models built with spox (its own graph naming and value_info idioms) ---------------------

def spox_mlp_if():
    """An MLP whose output goes through If(c) then Relu else Neg, and a ReduceSum, as spox builds
    it: a dynamic batch N, constants as Constant nodes, the branches as spox's lambdas."""
    import spox.opset.ai.onnx.v21 as op
    from spox import Tensor, argument, build
    rng = np.random.default_rng(0)
    x = argument(Tensor(np.float32, ("N", 16)))
    c = argument(Tensor(np.bool_, ()))
    const = lambda a: op.constant(value=a)  # noqa: E731
    h = op.relu(op.add(op.matmul(x, const(rng.standard_normal((16, 32)).astype(np.float32))),
                       const(rng.standard_normal(32).astype(np.float32))))
    y = op.matmul(h, const(rng.standard_normal((32, 8)).astype(np.float32)))
    (z,) = op.if_(c, then_branch=lambda: [op.relu(y)], else_branch=lambda: [op.neg(y)])
    s = op.reduce_sum(z, const(np.array([1], np.int64)), keepdims=0)
    model = build({"x": x, "c": c}, {"z": z, "s": s})
    feeds = [rng.standard_normal((4, 16)).astype(np.float32), np.array(False)]
    return model, ["x", "c"], feeds, {"N": 4}


# name -> dict(build, inputs, input_names, output_names, notes)
def zoo():
    m = {}
    for name, build in [("resnet18", make_zoo._tv("resnet18")),
                        ("mobilenet_v3_small", make_zoo._tv("mobilenet_v3_small")),
                        ("vit_s16_4l", make_zoo._vit_small)]:
        m[name] = dict(build=build, inputs=make_zoo._images(), input_names=["x"],
                       output_names=["logits"], notes="torchvision classification")
    m["bert_mini"] = dict(build=make_zoo.BertEncoder, inputs=make_zoo._bert_inputs,
                          input_names=["input_ids", "attention_mask"], output_names=["hidden"],
                          dynamic={"input_ids": {1: "seq"}, "attention_mask": {1: "seq"}},
                          dims={"seq": 32},
                          notes="BERT-style encoder (the TorchScript zoo's), sequence dynamic")
    m["gpt2_mini"] = dict(build=make_zoo.Gpt2Decoder, inputs=make_zoo._tokens(1, 16),
                          input_names=["input_ids"], output_names=["logits"],
                          notes="GPT-2-style decoder (the TorchScript zoo's)")
    past_names = [f"past_{kind}_{i}" for i in range(2) for kind in ("key", "value")]
    present_names = [f"present_{kind}_{i}" for i in range(2) for kind in ("key", "value")]
    for kind in ("llama", "qwen2", "mistral"):
        m[f"{kind}_gqa"] = dict(
            build=lambda kind=kind: Decoder(kind, False), inputs=_decoder_inputs(False),
            input_names=["input_ids"], output_names=["logits"],
            dynamic={"input_ids": {1: "seq"}}, dims={"seq": 8},
            notes=f"transformers {kind}: grouped-query attention (4 heads, 2 KV), rotary, "
                  "RMSNorm, SwiGLU; sequence dynamic")
    m["llama_gqa_past"] = dict(
        build=lambda: Decoder("llama", True), inputs=_decoder_inputs(True),
        input_names=["input_ids", *past_names], output_names=["logits", *present_names],
        dynamic={"input_ids": {1: "seq"}, **{n: {2: "past"} for n in past_names}},
        dims={"seq": 8, "past": 6},
        notes="transformers llama decoding after a past of 6 tokens: DynamicCache inside, "
              "present length past + seq, both dynamic")
    m["spox_mlp_if"] = dict(spox=spox_mlp_if,
                            notes="spox 0.18: an MLP, an If with lambda branches, batch N dynamic")
    return m


# ---- export ------------------------------------------------------------------------------

def _save_tensors(folder, prefix, names, arrays):
    from onnx import numpy_helper
    for i, (n, a) in enumerate(zip(names, arrays)):
        with open(os.path.join(folder, f"{prefix}_{i}.pb"), "wb") as f:
            # np.require keeps a 0-d array 0-d (np.ascontiguousarray makes it 1-d).
            f.write(numpy_helper.from_array(np.require(a, requirements="C"), n).SerializeToString())


def _opset(model):
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def to_opset23_fused(path_in, path_out):
    """The exported model at opset 23, optimised and fused as onnxscript does it."""
    import onnx
    import onnx_ir as ir
    import onnxscript
    from onnxscript.rewriter import onnx_fusions
    model = onnx.load(path_in)
    model = onnx.version_converter.convert_version(model, 23)
    m = ir.from_proto(model)
    onnxscript.optimizer.optimize(m)
    counts = onnx_fusions.fuse(m)
    onnx.save(ir.to_proto(m), path_out)
    return counts


def reference(folder, path, feeds, output_names):
    import onnxruntime
    s = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    outs = s.run(None, dict(zip([i.name for i in s.get_inputs()], feeds)))
    _save_tensors(folder, "output", [o.name for o in s.get_outputs()], outs)
    peak = max(float(np.nanmax(np.abs(o))) for o in outs if o.size and o.dtype.kind == "f")
    return peak


def write_meta(folder, name, spec, params, peak, extra):
    import onnx
    import onnxruntime
    import onnxscript
    meta = {"name": name, "dims": spec.get("dims", {}), "notes": spec["notes"],
            "parameters": params,
            "torch": torch.__version__, "onnx": onnx.__version__,
            "onnxscript": onnxscript.__version__, "onnxruntime": onnxruntime.__version__,
            "seed": 0, "rtol": 1e-3, "atol": max(1e-5, 1e-4 * peak), "max_abs_reference": peak}
    meta.update(extra)
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)


def save_spox(name, spec, out_dir):
    """A spox-built model as it is (no opset-23 variant: spox writes the opset it is given)."""
    import onnx
    import spox
    model, names, feeds, dims = spec["spox"]()
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    onnx.save(model, path)
    _save_tensors(folder, "input", names, feeds)
    peak = reference(folder, path, feeds, None)
    write_meta(folder, name, dict(spec, dims=dims), 0, peak,
               {"opset": _opset(model), "exporter": f"spox {spox.__version__}"})
    print(f"dynamo zoo: {name}: opset {_opset(model)} (spox)", file=sys.stderr)


def export_one(name, spec, out_dir, seed=0):
    import onnx
    if "spox" in spec:
        return save_spox(name, spec, out_dir)
    torch.manual_seed(seed)
    model = spec["build"]().eval()
    make_zoo.randomise_norm_affine(model)
    make_zoo.randomise_zero_weights(model)
    bn = make_zoo.calibrate_batchnorm(model, spec["inputs"])
    torch.manual_seed(seed + 1)
    inputs = spec["inputs"]()
    params = sum(p.numel() for p in model.parameters())
    feeds = [x.numpy() for x in inputs]
    t0 = time.time()
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        dynamic = None
        if spec.get("dynamic"):
            dims = {}
            dynamic = [{axis: dims.setdefault(d, torch.export.Dim(d, min=2, max=128))
                        for axis, d in spec["dynamic"].get(n, {}).items()} or None
                       for n in spec["input_names"]]
            # forward(input_ids, *past): the past is one argument, a tuple.
            dynamic = tuple(dynamic) if "past_key_0" not in spec["input_names"] else (
                dynamic[0], tuple(dynamic[1:]))
        program = torch.onnx.export(model, inputs, dynamo=True, input_names=spec["input_names"],
                                    output_names=spec["output_names"], dynamic_shapes=dynamic,
                                    verbose=False)
        program.save(path)
    _save_tensors(folder, "input", spec["input_names"], feeds)
    peak = reference(folder, path, feeds, spec["output_names"])
    opset = _opset(onnx.load(path, load_external_data=False))
    write_meta(folder, name, spec, params, peak,
               {"opset": opset, "exporter": "dynamo", "batchnorms_calibrated": bn})
    print(f"dynamo zoo: {name}: opset {opset}, {params:,} parameters, "
          f"{time.time() - t0:.1f} s", file=sys.stderr)

    fused = os.path.join(out_dir, f"{name}-o23")
    os.makedirs(fused, exist_ok=True)
    fused_path = os.path.join(fused, "model.onnx")
    counts = to_opset23_fused(path, fused_path)
    _save_tensors(fused, "input", spec["input_names"], feeds)
    peak = reference(fused, fused_path, feeds, spec["output_names"])
    ops = {}
    for n in onnx.load(fused_path, load_external_data=False).graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    fusions = {k: ops[k] for k in ("RMSNormalization", "RotaryEmbedding", "Attention") if k in ops}
    write_meta(fused, f"{name}-o23", dict(spec, notes=spec["notes"] + "; opset 23, onnxscript "
                                          "optimizer and fusions"), params, peak,
               {"opset": 23, "exporter": "dynamo + onnxscript optimize/fuse", "fused": fusions,
                "fusion_counts": str(counts)})
    print(f"dynamo zoo: {name}-o23: {fusions or 'no opset-23 fusions'}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    return make_zoo.export_chosen(ap, ap.parse_args(), zoo(), export_one)


if __name__ == "__main__":
    sys.exit(main())
