#!/usr/bin/env python3
"""Makes quantized and float16 variants of real-width model folders (bench/wide_quant.sh).

The quantized zoo's own maker (tests/quant_zoo/make_quant_zoo.py: the same onnxruntime quantizer
calls, seeded calibration, onnxruntime's outputs as references, tolerances per kind and the
meta.json runtime_compare reads) applied to every model folder of SOURCE_DIR that --only names:

    bench/wide_quant_models.py OUT SOURCE_DIR --kinds dyn,fp16io [--only bert_d768_1x128,...]

Runs in the environment scripts/quant makes.
"""
import argparse
import logging
import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "quant_zoo"))
import make_quant_zoo as mqz  # noqa: E402

# The options each kind takes here: the quantized zoo's transformer settings.
OPTIONS = {
    "dyn": dict(weight_type="QInt8"),
    "qdq": dict(per_channel=True, activation_type="QUInt8", weight_type="QInt8"),
    "fp16": {},
    "fp16io": {},
    "int4": dict(block_size=32, is_symmetric=False),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("source_dir")
    ap.add_argument("--kinds", default="dyn", help="comma-separated: " + ", ".join(OPTIONS))
    ap.add_argument("--only", default="", help="model folders of SOURCE_DIR, comma-separated")
    a = ap.parse_args()
    kinds = [k for k in a.kinds.split(",") if k]
    bad = [k for k in kinds if k not in OPTIONS]
    if bad:
        ap.error("unknown kinds: " + ", ".join(bad))
    names = sorted(n for n in os.listdir(a.source_dir)
                   if os.path.isfile(os.path.join(a.source_dir, n, "model.onnx")))
    only = [n for n in a.only.split(",") if n]
    missing = [n for n in only if n not in names]
    if missing:
        ap.error("no model folder " + ", ".join(missing) + " in " + a.source_dir)
    logging.disable(logging.WARNING)
    mqz.ort.set_default_logger_severity(3)
    warnings.simplefilter("ignore")
    for name in only or names:
        mqz.SOURCES[name] = ("source", name)
        for kind in kinds:
            mqz.make_variant(a.out, {"source": a.source_dir}, name, kind, OPTIONS[kind])
    return 0


if __name__ == "__main__":
    sys.exit(main())
