#!/usr/bin/env python3
"""Hostile and huge inputs (issue 20): builds every case, runs footprint on it, checks the verdict.

Each case is a command line over crafted models, traces, record files, flags and special files.
It runs under a 10 s timeout and must end as expected: its exit code, and a fragment of the
first line of stderr. The outcome of each is one of

  ok           the expected exit code and message
  wrong        another exit code or message
  crash        killed by a signal, or a sanitizer report on stderr
  hang         still running after the timeout
  silent zero  exit 0 where an error was due, or a size printed as 0 / "counted as 0 bytes"

and the run fails unless every case is ok. The table (case, exit code, first stderr line) goes
to --doc (docs/HOSTILE.md is this script's output). Afterwards /dev/null and /dev/full must still
be character devices: -o used to replace them with regular files when run as root.

  tests/hostile/make_cases.py --footprint build/release/bin/footprint \\
      --model build/release/examples/tiny_cnn.onnx --doc docs/HOSTILE.md
"""
import argparse
import hashlib
import json
import os
import re
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_bytes as ob  # noqa: E402

TIMEOUT_S = 10
SANITIZER = re.compile(r"ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error:")
SILENT_ZERO = re.compile(r"counted as 0 bytes|total peak\s+0 B")


class Case:
    def __init__(self, name, args, rc, first, what, stdin=None):
        self.name, self.args, self.rc, self.first, self.what = name, args, rc, first, what
        self.stdin = stdin


def write(path, data):
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    return path


# ---- models


def relu_model(elem, shape, **kw):
    return ob.model([ob.node("Relu", ["x"], ["y"])], [ob.value_info("x", elem, shape)],
                    [ob.value_info("y", elem, ["?"] * len(shape))], **kw)


def reduce_after(op, inputs, extra_inits, elem):
    """x -> Relu -> `op` (a huge intermediate) -> ReduceSum: the size appears mid-graph."""
    nodes = [ob.node("Relu", ["x"], ["r"]), ob.node(op, ["r"] + inputs, ["e"]),
             ob.node("ReduceSum", ["e"], ["y"], attrs=[ob.attr_int("keepdims", 0)])]
    return ob.model(nodes, [ob.value_info("x", elem, [1])], [ob.value_info("y", elem, [])],
                    extra_inits)


def build_models(d):
    m = {}
    big = 2 ** 62
    m["input_2p62"] = write(f"{d}/input_2p62.onnx", relu_model(ob.FLOAT, [big]))
    m["concat"] = write(f"{d}/concat.onnx", ob.model(
        [ob.node("Concat", ["a", "b"], ["y"], attrs=[ob.attr_int("axis", 0)])],
        [ob.value_info("a", ob.INT8, [big]), ob.value_info("b", ob.INT8, [big])],
        [ob.value_info("y", ob.INT8, ["?"])]))
    m["tile_2p80"] = write(f"{d}/tile_2p80.onnx", ob.model(
        [ob.node("Tile", ["x", "r"], ["y"])], [ob.value_info("x", ob.FLOAT, [2 ** 40])],
        [ob.value_info("y", ob.FLOAT, ["?"])], [ob.int64_tensor("r", [2 ** 40])]))
    m["reshape"] = write(f"{d}/reshape.onnx", ob.model(
        [ob.node("Reshape", ["x", "s"], ["y"])], [ob.value_info("x", ob.FLOAT, [2])],
        [ob.value_info("y", ob.FLOAT, ["?", "?"])],
        [ob.int64_tensor("s", [3, 6148914691236517206])]))
    m["sixteen"] = write(f"{d}/sixteen.onnx", ob.model(
        [ob.node("Relu", [f"x{i}"], [f"y{i}"], name=f"r{i}") for i in range(16)],
        [ob.value_info(f"x{i}", ob.INT8, [2 ** 60]) for i in range(16)],
        [ob.value_info(f"y{i}", ob.INT8, [2 ** 60]) for i in range(16)]))
    m["cos_1e18"] = write(f"{d}/cos_1e18.onnx", ob.model(
        [ob.node("ConstantOfShape", ["s"], ["y"])], [], [ob.value_info("y", ob.FLOAT, ["?"] * 3)],
        [ob.int64_tensor("s", [10 ** 6] * 3)]))
    m["cos_1e17"] = write(f"{d}/cos_1e17.onnx", ob.model(
        [ob.node("ConstantOfShape", ["s"], ["c"]),
         ob.node("ReduceSum", ["c"], ["y"], attrs=[ob.attr_int("keepdims", 0)])], [],
        [ob.value_info("y", ob.FLOAT, [])], [ob.int64_tensor("s", [10 ** 6, 10 ** 6, 10 ** 5])]))
    m["tile_2p59"] = write(f"{d}/tile_2p59.onnx", reduce_after(
        "Tile", ["s"], [ob.int64_tensor("s", [2 ** 59])], ob.INT8))
    m["expand_2p57"] = write(f"{d}/expand_2p57.onnx", reduce_after(
        "Expand", ["s"], [ob.int64_tensor("s", [2 ** 57])], ob.FLOAT))
    # MatMul alone: the oneDNN scratchpad query that died of SIGFPE (matmul.cpp, workspace_of).
    m["matmul_n"] = write(f"{d}/matmul_n.onnx", ob.model(
        [ob.node("MatMul", ["x", "w"], ["y"], name="mm")], [ob.value_info("x", ob.FLOAT, ["N", 8])],
        [ob.value_info("y", ob.FLOAT, ["N", 8])],
        [ob.tensor("w", ob.FLOAT, [8, 8], raw=bytes(4 * 64))]))
    m["negative_dim"] = write(f"{d}/negative_dim.onnx", relu_model(ob.FLOAT, [1, -5]))
    m["opset99"] = write(f"{d}/opset99.onnx", relu_model(ob.FLOAT, [1, 4], opset=99))
    m["string_input"] = write(f"{d}/string_input.onnx", ob.model(
        [ob.node("Shape", ["s"], ["y"])], [ob.value_info("s", ob.STRING, [2])],
        [ob.value_info("y", ob.INT64, [1])]))
    m["cycle"] = write(f"{d}/cycle.onnx", ob.model(
        [ob.node("Add", ["x", "c"], ["a"], name="A"), ob.node("Relu", ["a"], ["b"], name="B"),
         ob.node("Neg", ["b"], ["c"], name="C"), ob.node("Abs", ["x"], ["y"], name="D")],
        [ob.value_info("x", ob.FLOAT, [1])], [ob.value_info("y", ob.FLOAT, [1])]))
    # An initializer whose bytes live in "weights.bin", a FIFO next to the model.
    external = (ob.vint(1, 4) + ob.vint(2, ob.FLOAT) + ob.vbytes(8, "w") +
                ob.vbytes(13, ob.vbytes(1, "location") + ob.vbytes(2, "weights.bin")) +
                ob.vint(14, 1))
    os.makedirs(f"{d}/ext", exist_ok=True)
    m["external_fifo"] = write(f"{d}/ext/model.onnx", ob.model(
        [ob.node("Add", ["x", "w"], ["y"])], [ob.value_info("x", ob.FLOAT, [4])],
        [ob.value_info("y", ob.FLOAT, [4])], [external]))
    os.mkfifo(f"{d}/ext/weights.bin")
    return m


# ---- traces and record files


def trace(tensors, ops, **extra):
    doc = {"format": "footprint-trace/1", "tensors": tensors, "ops": ops}
    doc.update(extra)
    return json.dumps(doc)


def build_traces(d):
    t = {}
    huge = 2 ** 64 - 1
    t["two_2p64"] = write(f"{d}/two_2p64.json", trace(
        [{"name": "x", "bytes": 16, "kind": "input"}, {"name": "a", "bytes": huge},
         {"name": "b", "bytes": huge}, {"name": "y", "bytes": 16, "kind": "output"}],
        [{"inputs": ["x"], "outputs": ["a"]}, {"inputs": ["a"], "outputs": ["b"]},
         {"inputs": ["a", "b"], "outputs": ["y"]}]))
    t["shape_2p62"] = write(f"{d}/shape_2p62.json", trace(
        [{"name": "big", "dtype": "float32", "shape": [2 ** 62], "kind": "input"}], []))
    t["read_before_write"] = write(f"{d}/read_before_write.json", trace(
        [{"name": "x", "bytes": 4, "kind": "input"}, {"name": "t", "bytes": 4},
         {"name": "y", "bytes": 4, "kind": "output"}],
        [{"inputs": ["t"], "outputs": ["y"]}, {"inputs": ["x"], "outputs": ["t"]}]))
    t["writes_input"] = write(f"{d}/writes_input.json", trace(
        [{"name": "x", "bytes": 4, "kind": "input"}], [{"inputs": ["x"], "outputs": ["x"]}]))
    t["format_99"] = write(f"{d}/format_99.json", trace([], [], format="footprint-trace/99"))
    return t


def gbench(benchmarks):
    return json.dumps({"context": {"date": "2026-12-01"}, "benchmarks": benchmarks})


def iteration(**fields):
    e = {"name": "run/m", "run_name": "run/m", "run_type": "iteration", "real_time": 1.0,
         "cpu_time": 1.0, "time_unit": "ms"}
    e.update(fields)
    return {k: v for k, v in e.items() if v is not None}


def build_records(d):
    r = {}
    r["base"] = write(f"{d}/base.json", gbench([iteration() for _ in range(3)]))
    r["empty"] = write(f"{d}/empty.json", gbench([]))
    r["no_real_time"] = write(f"{d}/no_real_time.json",
                              gbench([iteration(real_time=None) for _ in range(3)]))
    r["fortnight"] = write(f"{d}/fortnight.json",
                           gbench([iteration(time_unit="fortnight") for _ in range(3)]))
    r["base_jsonl"] = write(f"{d}/base.jsonl", "\n".join(json.dumps(x) for x in [
        {"type": "context", "run_id": "1"},
        {"type": "benchmark", "name": "run/m", "wall_ms": {"samples": [1, 1, 1]},
         "cpu_ms": {"samples": [1, 1, 1]}}]) + "\n")
    r["no_wall_jsonl"] = write(f"{d}/no_wall.jsonl", "\n".join(json.dumps(x) for x in [
        {"type": "context", "run_id": "2"}, {"type": "benchmark", "name": "run/m"}]) + "\n")
    r["no_unit"] = write(f"{d}/no_unit.json",
                         gbench([iteration(time_unit=None) for _ in range(3)]))
    r["heap_base"] = write(f"{d}/heap_base.json",
                           gbench([iteration(max_bytes_used=4096) for _ in range(3)]))
    memory = {k: 4096 for k in MEMORY_KEYS.values()}
    for metric, key in MEMORY_KEYS.items():
        r[f"full_{metric}"] = write(f"{d}/full_{metric}.jsonl", jsonl_record(memory))
        r[f"no_{metric}"] = write(f"{d}/no_{metric}.jsonl", jsonl_record(
            {k: v for k, v in memory.items() if k != key}))
    r["negative_heap"] = write(f"{d}/negative_heap.jsonl",
                               jsonl_record(dict(memory, peak_heap_bytes=-5)))
    return r


# compare's metric: the key of a JSONL record's "memory" object
MEMORY_KEYS = {"peak_heap": "peak_heap_bytes", "net_heap": "net_heap_bytes",
               "allocations": "allocations", "peak_rss": "peak_rss_bytes",
               "predicted_peak": "predicted_peak_bytes"}


def jsonl_record(memory):
    return "\n".join(json.dumps(x) for x in [
        {"type": "context", "run_id": "3"},
        {"type": "benchmark", "name": "run/m", "wall_ms": {"samples": [1, 1, 1]},
         "cpu_ms": {"samples": [1, 1, 1]}, "memory": memory}]) + "\n"


# ---- the cases


def cases(d, model, m, t, r):
    fifo = f"{d}/fifo"
    os.mkfifo(fifo)
    os.mkfifo(f"{d}/fifo.json")
    os.mkfifo(f"{d}/unread_fifo")
    os.mkfifo(f"{d}/fifo.csv")
    os.mkfifo(f"{d}/fifo.sqlite")
    os.makedirs(f"{d}/a_folder")
    os.makedirs(f"{d}/fifo_data")
    os.mkfifo(f"{d}/fifo_data/input_0.pb")
    C = Case
    err, usage = 1, 2
    yield from [
        # 1-2: sizes that overflow, totals that wrap
        C("float[2^62] input", ["analyze", m["input_2p62"]], err,
          "size of 'x' (float[4611686018427387904])", "byte size past 2^64"),
        C("Concat of two int8[2^62]", ["analyze", m["concat"]], err,
          "node 'concat' (Concat): extent arithmetic", "extent past int64"),
        C("Tile 2^40 x 2^40", ["analyze", m["tile_2p80"]], err,
          "node 'tile' (Tile): extent arithmetic", "extent past int64"),
        C("Reshape [2] to [3, 6148914691236517206]", ["analyze", m["reshape"]], err,
          "node 'reshape' (Reshape): extent arithmetic: 3 x 6148914691236517206", "no wrap to 2"),
        C("16 inputs of int8[2^60]: analyze", ["analyze", m["sixteen"]], err,
          "total input bytes", "total past 2^64"),
        C("16 inputs of int8[2^60]: plan", ["plan", m["sixteen"]], err, "total input bytes",
          "total past 2^64"),
        C("16 inputs of int8[2^60]: report", ["report", m["sixteen"], "-o", f"{d}/r.html"], err,
          "total input bytes", "total past 2^64"),
        C("--dim N=2^63-1", ["analyze", model, "--dim", "N=9223372036854775807"], err,
          "size of 'x' (float[9223372036854775807,1,8,8])", "element count past 2^64"),
        C("trace: two tensors of 2^64-1 bytes", ["analyze", t["two_2p64"]], err,
          "buffer 'a': 18446744073709551615 bytes rounded up", "no 'total peak 30 B'"),
        C("trace: float32[2^62]", ["analyze", t["shape_2p62"]], err,
          "/tensors/0: the bytes of 'big' (4611686018427387904 x float) overflow uint64",
          "named the path only"),
        # 1: run refuses what cannot be allocated, before allocating
        C("run ConstantOfShape [10^6]^3", ["run", m["cos_1e18"]], err,
          "constant 'y' of node 'constantofshape' (ConstantOfShape): 4000000000000000000 bytes "
          "cannot be allocated", "was SIGSEGV"),
        C("analyze ConstantOfShape [10^6]^3", ["analyze", m["cos_1e18"]], 0, "",
          "4e18 bytes is a size, not an error"),
        C("run ConstantOfShape [10^6,10^6,10^5]", ["run", m["cos_1e17"]], err,
          "constant 'c' of node 'constantofshape' (ConstantOfShape): 400000000000000000 bytes "
          "cannot be allocated", "was SIGSEGV"),
        C("run mid-graph Tile to 2^59 int8", ["run", m["tile_2p59"]], err,
          "(largest: 'e', 576460752303423488 bytes)", "was SIGSEGV"),
        C("run mid-graph Expand to 2^57 float", ["run", m["expand_2p57"]], err,
          "(largest: 'e', 576460752303423488 bytes)", "was SIGSEGV"),
        # 4: flag values that reached oneDNN
        C("--dim N=2^32 (oneDNN)", ["analyze", model, "--dim", "N=4294967296"], err,
          "the most oneDNN's kernels take", "was SIGFPE"),
        C("MatMul --dim N=2^32 (oneDNN)", ["analyze", m["matmul_n"], "--dim", "N=4294967296"],
          err, "node 'mm' (MatMul): input 0 [4294967296,8] has more than 2147483647 elements",
          "was SIGFPE in the scratchpad query"),
        C("MatMul plan --dim N=2^28 (oneDNN, 2^31 elements)", ["plan", m["matmul_n"], "--dim",
                                                             "N=268435456"], err,
          "has more than 2147483647 elements, the most oneDNN's kernels take",
          "was SIGFPE in the scratchpad query"),
        C("--sweep N=1,2^58", ["analyze", model, "--sweep", "N=1,288230376151711744"], err,
          "element count: 2305843009213693952 x 8 overflows uint64", "was SIGFPE"),
        C("--sweep N=1,2^32 (oneDNN)", ["analyze", model, "--sweep", "N=1,4294967296"], err,
          "the most oneDNN's kernels take", "was SIGFPE"),
        C("run --dim N=2^32", ["run", model, "--dim", "N=4294967296"], err, "cannot be allocated",
          "random input refused before allocating"),
        # 10: flag ranges
        C("bench --threads 10000", ["bench", model, "--threads", "10000"], usage,
          "'10000' is not a thread count in 1..256", "died in libgomp"),
        C("run --threads 10000", ["run", model, "--threads", "10000"], usage,
          "--threads: Value 10000 not in range 1 to 256", "one range everywhere"),
        C("bench --warmup -1", ["bench", model, "--warmup", "-1"], usage,
          "--warmup: Value -1 is not an integer >= 0", "was accepted"),
        C("run --warmup -1", ["run", model, "--warmup", "-1"], usage,
          "--warmup: Value -1 is not an integer >= 0", "was accepted"),
        C("plan --time-limit nan", ["plan", model, "--time-limit", "nan"], usage,
          "not a finite number of seconds above 0", "was accepted"),
        C("report --time-limit inf", ["report", model, "--time-limit", "inf", "-o",
                                      f"{d}/r.html"], usage,
          "not a finite number of seconds above 0", "was accepted"),
        # 10: validation and messages
        C("input dim -5", ["analyze", m["negative_dim"]], err, "input 'x': dim 1 is -5",
          "was accepted silently"),
        C("opset 99: analyze", ["analyze", m["opset99"]], 0,
          "footprint: warning: the model imports ai.onnx opset 99", "was silent"),
        C("opset 99: plan", ["plan", m["opset99"]], 0,
          "footprint: warning: the model imports ai.onnx opset 99", "was silent"),
        C("string input", ["run", m["string_input"]], err, "string elements have no fixed size",
          "talked about extents"),
        C("cycle", ["analyze", m["cycle"]], err,
          "has a cycle: 'B' (Relu) -> 'C' (Neg) -> 'A' (Add) -> 'B' (Relu)", "path was wrong"),
        C("trace reads before it writes", ["analyze", t["read_before_write"]], err,
          "/ops/0/inputs/0: 't' is read before any op writes it", "was accepted"),
        C("trace writes an input", ["analyze", t["writes_input"]], err,
          "/ops/0/outputs/0: writes 'x', which is an input", "was accepted"),
        C("trace footprint-trace/99", ["analyze", t["format_99"]], err,
          "/format: unknown format 'footprint-trace/99'", "was accepted"),
        # 6: special files as inputs (each would block or never end)
        C("info FIFO", ["info", fifo], err, "a FIFO, not a regular file", "blocked forever"),
        C("info --load read FIFO", ["info", "--load", "read", fifo], err,
          "a FIFO, not a regular file", "blocked forever"),
        C("external data in a FIFO", ["analyze", m["external_fifo"]], err,
          "a FIFO, not a regular file", "blocked forever"),
        C("analyze a FIFO trace", ["analyze", f"{d}/fifo.json"], err,
          "a FIFO, not a regular file", "blocked forever"),
        C("run --input from a FIFO", ["run", model, "--input", f"x={fifo}"], err,
          "a FIFO, not a regular file", "blocked forever"),
        C("plan a FIFO buffer list", ["plan", f"{d}/fifo.csv"], err,
          "fifo.csv: a FIFO, not a regular file", "blocked forever"),
        C("run --data-dir with a FIFO input_0.pb", ["run", model, "--data-dir",
                                                    f"{d}/fifo_data"], err,
          "input_0.pb: a FIFO, not a regular file", "would block"),
        C("bench a FIFO model", ["bench", fifo, "--repeat", "1", "-q"], err,
          "a FIFO, not a regular file", "would block"),
        C("compare a FIFO", ["compare", fifo, r["base"]], err, "a FIFO, not a regular file",
          "would block"),
        C("history --db a FIFO", ["history", "--db", f"{d}/fifo.sqlite"], err,
          "fifo.sqlite: a FIFO, not a regular file", "SQLite waited in its first read"),
        C("bench --db /dev/null", ["bench", model, "--repeat", "1", "-q", "--db", "/dev/null"],
          err, "/dev/null: a character device, not a regular file",
          "SQLite would write /dev/null-wal"),
        C("info a folder", ["info", f"{d}/a_folder"], err, "a directory, not a regular file",
          "not a file"),
        C("info /dev/zero", ["info", "/dev/zero"], err, "a character device, not a regular file",
          "endless"),
        C("compare /dev/zero", ["compare", "/dev/zero", "/dev/zero"], err,
          "/dev/zero: a character device, not a regular file", "read until 6.1 GB"),
        # 7: outputs that must not destroy what they name
        C("report -o /dev/null", ["report", model, "--dim", "N=1", "-o", "/dev/null"], 0, "",
          "written through, not replaced"),
        C("plan -o /dev/null", ["plan", model, "--dim", "N=1", "-o", "/dev/null"], 0, "",
          "written through, not replaced"),
        C("fold -o /dev/null", ["fold", model, "-o", "/dev/null"], 0, "",
          "written through, not replaced"),
        C("fold --external-data -o /dev/null", ["fold", model, "--external-data", "-o",
                                                "/dev/null"], err,
          "-o must be a regular file", "would write /dev/null.data"),
        C("report -o /dev/full", ["report", model, "--dim", "N=1", "-o", "/dev/full"], err,
          "/dev/full: write failed: No space left on device", "exit 0 and replaced"),
        C("plan -o /dev/full", ["plan", model, "--dim", "N=1", "-o", "/dev/full"], err,
          "/dev/full: write failed: No space left on device", "exit 0 and replaced"),
        C("fold -o /dev/full", ["fold", model, "-o", "/dev/full"], err,
          "/dev/full: write failed: No space left on device", "exit 0 and replaced"),
        C("plan -o a folder", ["plan", model, "--dim", "N=1", "-o", f"{d}/a_folder"], err,
          "cannot write: it is a directory", "said 'cannot write: Success'"),
        C("plan -o a FIFO nobody reads", ["plan", model, "--dim", "N=1", "-o", f"{d}/unread_fifo"], err,
          "cannot write: a FIFO nobody reads", "would block"),
        C("plan -o missing/x.csv", ["plan", model, "--dim", "N=1", "-o", f"{d}/missing/x.csv"], err,
          "does not exist (footprint creates no folders)", "one rule for every -o"),
        C("report -o missing/x.html", ["report", model, "--dim", "N=1", "-o", f"{d}/missing/x.html"], err,
          "does not exist (footprint creates no folders)", "one rule for every -o"),
        C("fold -o missing/x.onnx", ["fold", model, "-o", f"{d}/missing/x.onnx"], err,
          "does not exist (footprint creates no folders)", "fold created it"),
        C("bench --out missing/x.jsonl", ["bench", model, "--repeat", "1", "-q", "--out",
                                          f"{d}/missing/x.jsonl"], err,
          "does not exist (footprint creates no folders)", "bench created it"),
        C("run -o missing/sub", ["run", model, "--repeat", "1", "-o", f"{d}/missing/sub"], err,
          "(footprint creates no parent folders)", "run created it"),
        # 9: compare passes nothing it cannot check
        C("compare: empty benchmark list", ["compare", r["base"], r["empty"], "--fail-on",
                                            "time:5%"], err, "no benchmark records",
          "passed with exit 0"),
        C("compare: no real_time", ["compare", r["base"], r["no_real_time"], "--fail-on",
                                    "time:5%"], err, "without a numeric \"real_time\"",
          "read as 0, -100 %"),
        C("compare: time_unit fortnight", ["compare", r["base"], r["fortnight"], "--fail-on",
                                           "time:5%"], err, "unknown time_unit 'fortnight'",
          "read as ms"),
        C("compare: JSONL without wall_ms", ["compare", r["base_jsonl"], r["no_wall_jsonl"],
                                             "--fail-on", "time:5%"], err,
          "the contender record has no time samples", "read as 0, -100 %"),
        C("compare: no time_unit", ["compare", r["base"], r["no_unit"], "--fail-on", "time:5%"],
          err, "an iteration without a \"time_unit\"", "read as ns"),
        C("compare: gbench without max_bytes_used", ["compare", r["heap_base"], r["base"],
                                                     "--fail-on", "peak_heap:1%"], err,
          "the contender record has no peak_heap figure", "read as 0, -100 %"),
        C("compare: negative peak_heap_bytes", ["compare", r["full_peak_heap"],
                                                r["negative_heap"]], err,
          "\"peak_heap_bytes\" is -5, not a count", "wrapped to 2^64-5"),
    ]
    for metric, key in MEMORY_KEYS.items():
        yield C(f"compare: JSONL without {key}", ["compare", r[f"full_{metric}"],
                                                  r[f"no_{metric}"], "--fail-on", f"{metric}:1%"],
                err, f"the contender record has no {metric} figure", "read as 0, -100 %")


def run_case(footprint, c, cwd):
    try:
        p = subprocess.run([footprint] + c.args, cwd=cwd, capture_output=True, text=True,
                           timeout=TIMEOUT_S, errors="replace")
    except subprocess.TimeoutExpired:
        return None, "", "", "hang"
    first = p.stderr.splitlines()[0] if p.stderr else ""
    if p.returncode < 0 or SANITIZER.search(p.stderr):
        return p.returncode, first, p.stderr, "crash"
    if SILENT_ZERO.search(p.stdout + p.stderr) or (p.returncode == 0 and c.rc != 0):
        return p.returncode, first, p.stderr, "silent zero"
    ok = p.returncode == c.rc and c.first in first
    return p.returncode, first, p.stderr, "ok" if ok else "wrong"


def concurrent_writers(footprint, model, d, n=4):
    """Several first writers of one new database: every one must succeed."""
    db = f"{d}/race.sqlite"
    procs = [subprocess.Popen([footprint, "bench", model, "--repeat", "1", "-q", "--db", db],
                              stderr=subprocess.PIPE, text=True) for _ in range(n)]
    rcs, firsts = [], []
    for p in procs:
        try:
            _, e = p.communicate(timeout=TIMEOUT_S * 3)
        except subprocess.TimeoutExpired:
            p.kill()
            return None, "", "hang"
        rcs.append(p.returncode)
        firsts.append(e.splitlines()[0] if e else "")
    if any(rc < 0 for rc in rcs):
        return min(rcs), next((f for f in firsts if f), "killed by a signal"), "crash"
    try:
        runs = sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone()[0]
    except sqlite3.Error:
        runs = 0
    ok = all(rc == 0 for rc in rcs) and runs == n
    first = next((f for f in firsts if f), f"{runs} runs saved")
    return max(rcs), first, "ok" if ok else "wrong"


def foreign_database(footprint, d):
    """history --db on somebody else's SQLite file: refused, and the file left as it was."""
    db = f"{d}/theirs.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE notes (x)")
    con.commit()
    con.close()
    before = hashlib.sha256(open(db, "rb").read()).hexdigest()
    c = Case("", ["history", "--db", db], 1, "not a footprint database", "")
    rc, first, _, verdict = run_case(footprint, c, d)
    after = hashlib.sha256(open(db, "rb").read()).hexdigest()
    if verdict == "ok" and (before != after or os.path.exists(db + "-wal")):
        verdict = "wrong"
    return rc, first, verdict


def is_char_device(path):
    return stat.S_ISCHR(os.stat(path).st_mode)


def markdown(rows, summary):
    out = ["# Hostile and huge inputs", "",
           "Produced by `tests/hostile/make_cases.py` (run by ctest as `hostile_inputs`): every "
           "case of issue 20, each under a 10 s timeout. Paths are shortened to the case folder.",
           "", summary, "",
           "| case | was | exit | first line of stderr | verdict |",
           "| --- | --- | --- | --- | --- |"]
    for name, what, rc, first, verdict in rows:
        cell = first.replace("|", "\\|")
        out.append(f"| {name} | {what} | {rc if rc is not None else '-'} | `{cell}` | {verdict} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--footprint", required=True)
    ap.add_argument("--model", required=True, help="the example model (tiny_cnn.onnx)")
    ap.add_argument("--doc", help="write the table here (markdown)")
    a = ap.parse_args()
    footprint, model = os.path.abspath(a.footprint), os.path.abspath(a.model)
    rows = []
    with tempfile.TemporaryDirectory(prefix="footprint-hostile-") as d:
        m, t, r = build_models(d), build_traces(d), build_records(d)
        for c in cases(d, model, m, t, r):
            rc, first, stderr, verdict = run_case(footprint, c, d)
            rows.append((c.name, c.what, rc, first.replace(d, "CASE"), verdict))
            if verdict != "ok":
                print(f"{verdict}: {c.name}: exit {rc}, expected {c.rc} and {c.first!r}\n"
                      f"  {' '.join(c.args)}\n  {stderr.strip()[:500]}", file=sys.stderr)
        rc, first, verdict = concurrent_writers(footprint, model, d)
        rows.append(("4 concurrent first writers of one --db", "sqlite: table runs already exists",
                     rc, first.replace(d, "CASE"), verdict))
        rc, first, verdict = foreign_database(footprint, d)
        rows.append(("history --db on a foreign SQLite file", "added tables, user_version=2",
                     rc, first.replace(d, "CASE"), verdict + " (file unchanged)"
                     if verdict == "ok" else verdict))
    devices_ok = is_char_device("/dev/null") and is_char_device("/dev/full")
    rows.append(("/dev/null and /dev/full afterwards", "replaced by regular files", None,
                 "still character devices" if devices_ok else "NOT character devices",
                 "ok" if devices_ok else "wrong"))
    counts = {}
    for row in rows:
        v = row[4].split(" ")[0] if row[4].startswith("ok") else row[4]
        counts[v] = counts.get(v, 0) + 1
    summary = (f"{len(rows)} cases: {counts.get('ok', 0)} ok, {counts.get('wrong', 0)} wrong, "
               f"{counts.get('crash', 0)} crashes, {counts.get('hang', 0)} hangs, "
               f"{counts.get('silent zero', 0)} silent zeros.")
    if a.doc:
        write(a.doc, markdown(rows, summary))
    print(summary)
    return 0 if counts.get("ok", 0) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
