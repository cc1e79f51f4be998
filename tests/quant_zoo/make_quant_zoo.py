#!/usr/bin/env python3
"""Makes the quantized zoo: int8, int4 and float16 variants of float32 models footprint runs.

The variants are made as a user makes them, with onnxruntime's own tools from PyPI:

  dyn      onnxruntime.quantization.quantize_dynamic (QOperator): DynamicQuantizeLinear and
           MatMulInteger on MatMul/Gemm, ConvInteger on Conv (uint8 weights there: onnxruntime's
           CPU ConvInteger runs uint8 x uint8 only)
  qdq      quantize_static, QDQ format: QuantizeLinear/DequantizeLinear pairs around float ops;
           per-channel weights on CNNs (per-axis DequantizeLinear)
  qop      quantize_static, QOperator format: QLinearConv, QLinearMatMul and the com.microsoft
           QLinearAdd, QLinearGlobalAveragePool, QLinearConcat, ...
  fp16     onnxconverter_common.float16.convert_float_to_float16, keep_io_types=False (float16
           inputs and outputs)
  fp16io   the same with keep_io_types=True (float32 inputs and outputs, Casts at the edges)
  int4     weight-only 4-bit MatMulNBits (com.microsoft) by
           onnxruntime.quantization.matmul_nbits_quantizer, on MatMuls with constant weights
  ortopt   float32 still, fused by onnxruntime's transformers optimizer
           (onnxruntime.transformers.optimizer.optimize_model, what users run before deploying
           on CPU): com.microsoft EmbedLayerNormalization, Attention, SkipLayerNormalization,
           BiasGelu and FastGelu, as the optimizer fuses each model

Static quantization is calibrated on seeded random inputs of the model's shapes (MinMax over
CALIBRATION_SAMPLES of them): float inputs drawn from a normal distribution with the mean and
deviation of the model's reference input (the zoo's images are standard normal, the shared
models' are arange/n in [0, 1)), integer inputs uniformly between the reference input's least and
greatest values (token ids, 0/1 attention masks).

Every variant gets a backend-test folder, as the float zoo (tests/zoo/) has:

    OUT/<source>-<kind>/model.onnx
    OUT/<source>-<kind>/input_<i>.pb    the source model's seeded inputs (float16 where the
                                        variant's inputs are)
    OUT/<source>-<kind>/output_<i>.pb   onnxruntime's outputs for them (CPU, one thread)
    OUT/<source>-<kind>/meta.json       dims, tolerances, how it was made, onnxruntime's verdict

A variant onnxruntime cannot load or run keeps its model, has no output_<i>.pb and says why in
meta.json ("ort_error"); tests/quant_zoo/check_quant_zoo.py skips it with that reason.

    tests/quant_zoo/make_quant_zoo.py OUT --zoo ZOO_DIR --shared SHARED_MODELS [--only NAME,...]
    tests/quant_zoo/make_quant_zoo.py --list | --shared-sources

Runs in the environment scripts/quant makes (pinned onnx, onnxruntime, onnxconverter-common).
"""
import argparse
import glob
import json
import logging
import os
import sys
import time
import warnings

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from onnxconverter_common import float16
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_dynamic, quantize_static)
from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

CALIBRATION_SAMPLES = 8
SEED = 0

# source name -> (tree, folder): "zoo" is tests/zoo's cached export, "shared" ../shared/models.
SOURCES = {
    "resnet18": ("zoo", "resnet18"),
    "mobilenet_v3_small": ("zoo", "mobilenet_v3_small"),
    "mobilenet_v2": ("zoo", "mobilenet_v2"),
    "squeezenet1_1": ("zoo", "squeezenet1_1"),
    "shufflenet_v1": ("shared", "random/shufflenet"),
    "bert_mini": ("zoo", "bert_mini"),
    "gpt2_mini": ("zoo", "gpt2_mini"),
    "vit_s16_4l": ("zoo", "vit_s16_4l"),
}

# (source, kind, options): CNNs get the static formats and float16, transformers the dynamic
# format, 4-bit weights and float16; block sizes and symmetry vary so that each MatMulNBits
# layout appears once (block 32/64/128, with and without zero points).
CNN_QDQ = dict(per_channel=True, activation_type="QUInt8", weight_type="QInt8")
CNN_QOP = dict(per_channel=False, activation_type="QUInt8", weight_type="QInt8")
VARIANTS = [
    ("resnet18", "qdq", CNN_QDQ),
    ("resnet18", "qop", CNN_QOP),
    ("resnet18", "dyn", dict(weight_type="QUInt8")),
    ("resnet18", "fp16", {}),
    ("resnet18", "fp16io", {}),
    ("mobilenet_v3_small", "qdq", CNN_QDQ),
    ("mobilenet_v3_small", "qop", CNN_QOP),
    ("mobilenet_v3_small", "fp16io", {}),
    ("squeezenet1_1", "qop", CNN_QOP),
    ("squeezenet1_1", "fp16", {}),
    ("shufflenet_v1", "qdq", dict(CNN_QDQ, per_channel=False)),
    ("shufflenet_v1", "qop", CNN_QOP),
    ("bert_mini", "dyn", dict(weight_type="QInt8")),
    ("bert_mini", "qdq", dict(per_channel=False, activation_type="QInt8", weight_type="QInt8")),
    ("bert_mini", "qop", dict(per_channel=False, activation_type="QUInt8", weight_type="QInt8")),
    ("bert_mini", "fp16", {}),
    ("bert_mini", "fp16io", {}),
    ("bert_mini", "int4", dict(block_size=32, is_symmetric=False)),
    ("gpt2_mini", "dyn", dict(weight_type="QInt8")),
    ("gpt2_mini", "qdq", dict(per_channel=True, activation_type="QUInt8", weight_type="QInt8")),
    ("gpt2_mini", "fp16io", {}),
    ("gpt2_mini", "int4", dict(block_size=128, is_symmetric=True)),
    ("vit_s16_4l", "dyn", dict(weight_type="QInt8")),
    ("vit_s16_4l", "qdq", dict(per_channel=False, activation_type="QUInt8", weight_type="QInt8")),
    ("vit_s16_4l", "int4", dict(block_size=64, is_symmetric=False)),
    ("bert_mini", "ortopt", dict(model_type="bert", num_heads=4, hidden_size=256)),
    ("gpt2_mini", "ortopt", dict(model_type="gpt2", num_heads=4, hidden_size=256)),
    ("vit_s16_4l", "ortopt", dict(model_type="vit", num_heads=6, hidden_size=384)),
]

KIND_NOTES = {
    "dyn": "quantize_dynamic (QOperator)",
    "qdq": "quantize_static, QDQ",
    "qop": "quantize_static, QOperator",
    "fp16": "float16, keep_io_types=False",
    "fp16io": "float16, keep_io_types=True",
    "int4": "MatMulNBits 4-bit weight-only",
    "ortopt": "onnxruntime's transformers optimizer: EmbedLayerNormalization, Attention, "
              "SkipLayerNormalization, BiasGelu, FastGelu",
}


# ---- inputs --------------------------------------------------------------------------------

def read_tensors(folder, prefix):
    out = []
    for path in sorted(glob.glob(os.path.join(folder, f"{prefix}_*.pb")),
                       key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0])):
        t = onnx.load_tensor(path)
        out.append((t.name, numpy_helper.to_array(t)))
    return out


class SeededReader(CalibrationDataReader):
    """CALIBRATION_SAMPLES seeded random feeds shaped and distributed as the reference inputs."""

    def __init__(self, inputs, seed):
        self.rng = np.random.default_rng(seed)
        self.inputs = inputs
        self.left = CALIBRATION_SAMPLES

    def sample(self, x):
        if np.issubdtype(x.dtype, np.floating):
            mean, std = float(x.mean()), float(x.std()) or 1.0
            return self.rng.normal(mean, std, x.shape).astype(x.dtype)
        return self.rng.integers(int(x.min()), int(x.max()) + 1, x.shape).astype(x.dtype)

    def get_next(self):
        if self.left == 0:
            return None
        self.left -= 1
        return {name: self.sample(x) for name, x in self.inputs}


# ---- the variants --------------------------------------------------------------------------

def quant_type(name):
    return getattr(QuantType, name)


def make_dyn(src, dst, opts, inputs):
    quantize_dynamic(src, dst, weight_type=quant_type(opts["weight_type"]))


def unshare_initializers(src, dst):
    """Writes src with a copy of each initializer for every node past the first that reads it.

    The exporter stores equal constants once (torchvision's zero-initialised Conv biases), and
    onnxruntime 1.32's QOperator quantizer replaces a bias by its int32 form at its first Conv,
    then fails at the next with "'NoneType' object has no attribute 'data_type'". An Identity
    of an initializer (the exporter's other way of sharing one) becomes an initializer too."""
    model = onnx.load(src)
    inits = {t.name: t for t in model.graph.initializer}
    for node in list(model.graph.node):
        if node.op_type == "Identity" and node.input[0] in inits:
            copy = onnx.TensorProto()
            copy.CopyFrom(inits[node.input[0]])
            copy.name = node.output[0]
            model.graph.initializer.append(copy)
            inits[copy.name] = copy
            model.graph.node.remove(node)
    seen = set()
    for node in model.graph.node:
        for i, name in enumerate(node.input):
            if name not in inits:
                continue
            if name in seen:
                copy = onnx.TensorProto()
                copy.CopyFrom(inits[name])
                copy.name = f"{name}.{node.name or node.output[0]}.{i}"
                model.graph.initializer.append(copy)
                node.input[i] = copy.name
            seen.add(name)
    onnx.save(model, dst)


def make_static(fmt):
    def make(src, dst, opts, inputs):
        unshared = dst + ".unshared.onnx"
        unshare_initializers(src, unshared)
        try:
            quantize(unshared, dst, fmt, opts, inputs)
        finally:
            os.remove(unshared)
    return make


def quantize(src, dst, fmt, opts, inputs):
    quantize_static(src, dst, SeededReader(inputs, SEED), quant_format=fmt,
                    per_channel=opts["per_channel"],
                    activation_type=quant_type(opts["activation_type"]),
                    weight_type=quant_type(opts["weight_type"]))


def make_fp16(keep_io_types):
    def make(src, dst, opts, inputs):
        model = onnx.load(src)
        # The exporter's value_info types would contradict the converted nodes; the converter
        # infers what it needs from the nodes.
        del model.graph.value_info[:]
        model = float16.convert_float_to_float16(model, keep_io_types=keep_io_types)
        # onnxconverter-common 1.16 converts a Cast's output value to float16 but leaves its
        # `to` at float (the BERT/GPT-2 exports' mask and GELU Casts), which onnxruntime refuses
        # as a type error: the Cast is made to produce what the converter declared.
        declared = {v.name: v.type.tensor_type.elem_type
                    for v in list(model.graph.value_info) + list(model.graph.output)}
        for n in model.graph.node:
            if n.op_type != "Cast" or declared.get(n.output[0]) != onnx.TensorProto.FLOAT16:
                continue
            for a in n.attribute:
                if a.name == "to" and a.i == onnx.TensorProto.FLOAT:
                    a.i = onnx.TensorProto.FLOAT16
        onnx.save(model, dst)
    return make


def make_int4(src, dst, opts, inputs):
    q = MatMulNBitsQuantizer(onnx.load(src), bits=4, block_size=opts["block_size"],
                             is_symmetric=opts["is_symmetric"])
    q.process()
    q.model.save_model_to_file(dst, False)


def make_ort_optimized(src, dst, opts, inputs):
    # (opt_level 0: the optimizer's own fusions, not onnxruntime's graph optimizations, which it
    # would run through a session that imports torch.)
    from onnxruntime.transformers.optimizer import optimize_model
    optimize_model(src, model_type=opts["model_type"], num_heads=opts["num_heads"],
                   hidden_size=opts["hidden_size"], opt_level=0).save_model_to_file(dst)


MAKERS = {"dyn": make_dyn, "qdq": make_static(QuantFormat.QDQ),
          "qop": make_static(QuantFormat.QOperator), "fp16": make_fp16(False),
          "fp16io": make_fp16(True), "int4": make_int4, "ortopt": make_ort_optimized}


def tolerances(kind, peak):
    """The output check's rtol and atol. As the float zoo (tests/zoo/make_zoo.py): rtol and an
    atol scaled to the largest reference output, so that large logits and small ones are
    checked alike. int4 weight-only MatMulNBits computes in float32 (accuracy level 0), so it
    gets the float zoo's 1e-4 x peak, as does a float32 graph fused by onnxruntime's optimizer
    (ortopt); float16 carries about 1e-3 relative error per op; an int8
    graph whose intermediate rounds one unit differently moves its float outputs by about one
    output quantization step, 2 x peak / 255 for an 8-bit range: 1e-2 x peak allows one unit.
    The kernels that make these run can tighten them; they must not need looser ones."""
    scale = {"int4": (1e-3, 1e-4), "ortopt": (1e-3, 1e-4), "fp16": (1e-2, 5e-3),
             "fp16io": (1e-2, 5e-3)}.get(
        kind, (1e-2, 1e-2))
    return scale[0], max(1e-5, scale[1] * peak)


def ort_outputs(model, feeds, level=None):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    if level is not None:
        so.graph_optimization_level = level
    s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in s.get_outputs()]
    return list(zip(names, s.run(names, dict(feeds))))


# How many seeded one-ulp moves of the float inputs measure onnxruntime against itself.
SELF_RUNS = 4


def ort_self_deviation(model, feeds, outputs):
    """The largest deviation onnxruntime shows against its own reference on this variant: with its
    graph optimisations off (another kernel per op, another summation order), and with every float
    input moved by one unit in the last place (SELF_RUNS seeded moves). A quantized graph turns a
    float difference of one ulp into a different rounding of some intermediate, and that into a
    whole quantization step of the outputs: onnxruntime reproduces itself no better than this, so
    no runtime can be held closer (tests/quant_zoo/README's rule)."""
    def deviation(other):
        return max((float(np.max(np.abs(y.astype(np.float64) - o.astype(np.float64))))
                    for (_, y), (_, o) in zip(outputs, other)
                    if y.size and np.issubdtype(y.dtype, np.floating)), default=0.0)
    worst = deviation(ort_outputs(model, feeds, ort.GraphOptimizationLevel.ORT_DISABLE_ALL))
    rng = np.random.default_rng(SEED)
    for _ in range(SELF_RUNS):
        moved = []
        for n, x in feeds:
            if np.issubdtype(x.dtype, np.floating):
                away = np.where(rng.random(x.shape) < 0.5, -np.inf, np.inf).astype(x.dtype)
                x = np.nextafter(x, away).astype(x.dtype)
            moved.append((n, x))
        worst = max(worst, deviation(ort_outputs(model, moved)))
    return worst


def make_variant(out_dir, roots, source, kind, opts):
    tree, sub = SOURCES[source]
    src_dir = os.path.join(roots[tree], sub)
    src = os.path.join(src_dir, "model.onnx")
    name = f"{source}-{kind}"
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    dst = os.path.join(folder, "model.onnx")
    inputs = read_tensors(src_dir, "input")
    t0 = time.time()
    MAKERS[kind](src, dst, opts, inputs)
    made_s = time.time() - t0
    if kind == "fp16":  # keep_io_types=False: the float inputs are float16 too
        inputs = [(n, x.astype(np.float16) if x.dtype == np.float32 else x) for n, x in inputs]
    for i, (n, x) in enumerate(inputs):
        with open(os.path.join(folder, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, n).SerializeToString())
    src_meta_path = os.path.join(src_dir, "meta.json")
    src_meta = json.load(open(src_meta_path)) if os.path.exists(src_meta_path) else {}
    meta = {"name": name, "source": source, "source_dir": src_dir, "kind": kind,
            "notes": KIND_NOTES[kind], "options": opts, "dims": src_meta.get("dims", {}),
            "seed": SEED, "calibration_samples": CALIBRATION_SAMPLES,
            "onnxruntime": ort.__version__, "onnx": onnx.__version__,
            "make_seconds": round(made_s, 2), "ops": op_counts(dst)}
    try:
        outputs = ort_outputs(dst, inputs)
    except Exception as e:  # onnxruntime's own refusal: the variant is kept, skipped by checks
        meta["ort_error"] = " ".join(str(e).split())
        outputs = []
    peak = 0.0
    for i, (n, y) in enumerate(outputs):
        with open(os.path.join(folder, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(y, n).SerializeToString())
        if y.size and np.issubdtype(y.dtype, np.floating):
            peak = max(peak, float(np.nanmax(np.abs(y.astype(np.float32)))))
    if outputs:
        meta["rtol"], meta["atol"] = tolerances(kind, peak)
        meta["max_abs_reference"] = peak
        # Never closer than onnxruntime holds to itself: twice its largest self-deviation (four
        # samples of a maximum underestimate it) where that exceeds the kind's tolerance.
        meta["ort_self_deviation"] = ort_self_deviation(dst, inputs, outputs)
        meta["atol"] = max(meta["atol"], 2 * meta["ort_self_deviation"])
        # How far quantization moved the outputs from the float32 model's (a sanity figure:
        # a broken calibration shows here, not in the comparison with onnxruntime).
        ref = read_tensors(src_dir, "output")
        if len(ref) == len(outputs):
            meta["max_abs_vs_float32"] = max(
                float(np.max(np.abs(y.astype(np.float32) - r.astype(np.float32))))
                for (_, y), (_, r) in zip(outputs, ref))
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    status = meta.get("ort_error", f"max |y - float32 y| {meta.get('max_abs_vs_float32', 0):.3g}")
    print(f"quant zoo: {name}: made in {made_s:.1f} s; onnxruntime: {status}", file=sys.stderr)


def op_counts(path):
    counts = {}
    for n in onnx.load(path, load_external_data=False).graph.node:
        key = f"{n.domain}:{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--zoo", help="the float zoo's folder (tests/zoo/zoo.sh prints it)")
    ap.add_argument("--shared", help="the shared models' folder (../shared/models)")
    ap.add_argument("--only", default="", help="variants (SOURCE-KIND) or sources, comma-separated")
    ap.add_argument("--list", action="store_true", help="print the variants' names")
    ap.add_argument("--shared-sources", action="store_true",
                    help="print the shared models' folders the variants are made from")
    a = ap.parse_args()
    names = [f"{s}-{k}" for s, k, _ in VARIANTS]
    if a.list:
        print("\n".join(names))
        return 0
    if a.shared_sources:
        print("\n".join(sorted({sub for tree, sub in SOURCES.values() if tree == "shared"})))
        return 0
    if not (a.out and a.zoo and a.shared):
        ap.error("OUT, --zoo and --shared are required")
    only = [n for n in a.only.split(",") if n]
    unknown = [n for n in only if n not in names and n not in SOURCES]
    if unknown:
        ap.error("unknown variants: " + ", ".join(unknown))
    # The quantizer's advice (pre-processing) and the converter's truncation notes are noise.
    logging.disable(logging.WARNING)
    ort.set_default_logger_severity(3)
    warnings.simplefilter("ignore")
    roots = {"zoo": a.zoo, "shared": a.shared}
    for source, kind, opts in VARIANTS:
        if only and f"{source}-{kind}" not in only and source not in only:
            continue
        make_variant(a.out, roots, source, kind, opts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
