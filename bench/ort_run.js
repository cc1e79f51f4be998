// Runs one ONNX model in onnxruntime-node on a backend-test folder's inputs (input_*.pb), times
// it, checks the outputs against output_*.pb and prints one JSON line:
//   {"ort_version", "threads", "session_ms", "latency_ms": {"min", "median", "p90", "runs"},
//    "match", "max_abs_error", "max_rel_error", "mismatch"?, "outputs": [...],
//    "peak_rss_bytes", "rss_hwm_before_session_bytes", "rss_hwm_after_session_bytes"}
// The side-by-side counterpart of `footprint run MODEL --data-dir DIR --threads T --repeat N
// --json` (bench/runtime_compare.sh): one first run (the one checked), WARMUP untimed runs, then
// N timed runs. peak_rss_bytes is VmHWM of /proc/self/status at the end: the whole node process.
// The output check is footprint's (src/runtime/output_check.cpp): |got - want| <= atol +
// rtol * |want| for floats, equality otherwise, NaN equal to NaN, outputs matched by name when
// every expected output has a name the session produces, otherwise by position.
//
//   NODE_PATH=~/.cache/footprint/ort/node_modules node bench/ort_run.js MODEL --data-dir DIR
//       [--threads T] [--repeat N] [--warmup W] [--rtol 1e-3] [--atol 1e-5]
//       [--write-outputs OUT_DIR]
//
// --write-outputs writes the first run's outputs as OUT_DIR/output_<i>.pb (TensorProto: dims,
// data_type, name, raw_data), so a folder of inputs becomes a backend-test folder another runtime
// can be checked against (bench/example_vs_ort.sh).
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function usage(msg) {
  if (msg) console.error('ort_run: ' + msg);
  console.error('usage: node ort_run.js MODEL --data-dir DIR [--threads T] [--repeat N] ' +
                '[--warmup W] [--rtol R] [--atol A] [--write-outputs OUT_DIR]');
  process.exit(2);
}

function parseArgs(argv) {
  const o = {model: '', dataDir: '', threads: 1, repeat: 10, warmup: 1, rtol: 1e-3, atol: 1e-5,
             writeOutputs: ''};
  const num = (flag, v) => {
    const x = Number(v);
    if (v === undefined || !Number.isFinite(x)) usage(flag + ' needs a number');
    return x;
  };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--data-dir') o.dataDir = argv[++i] || usage('--data-dir needs a folder');
    else if (a === '--threads') o.threads = num(a, argv[++i]);
    else if (a === '--repeat') o.repeat = num(a, argv[++i]);
    else if (a === '--warmup') o.warmup = num(a, argv[++i]);
    else if (a === '--rtol') o.rtol = num(a, argv[++i]);
    else if (a === '--atol') o.atol = num(a, argv[++i]);
    else if (a === '--write-outputs') o.writeOutputs = argv[++i] || usage('--write-outputs needs a folder');
    else if (a.startsWith('--')) usage('unknown option ' + a);
    else if (!o.model) o.model = a;
    else usage('one model only');
  }
  if (!o.model) usage('no model');
  if (!o.dataDir) usage('no --data-dir');
  if (o.threads < 1 || o.repeat < 1 || o.warmup < 0) usage('bad --threads, --repeat or --warmup');
  return o;
}

// ---- A minimal TensorProto reader -------------------------------------------------------------
// Fields: dims (1, varint, packed or not), data_type (2), float_data (4, packed or fixed32),
// int32_data (5), int64_data (7), name (8), raw_data (9), double_data (10), uint64_data (11).
// The shared backend-test files all use dims + data_type + name + raw_data.

// onnx TensorProto.DataType -> [ort type, typed array, element bytes]
const TYPES = {
  1: ['float32', Float32Array, 4],
  2: ['uint8', Uint8Array, 1],
  3: ['int8', Int8Array, 1],
  4: ['uint16', Uint16Array, 2],
  5: ['int16', Int16Array, 2],
  6: ['int32', Int32Array, 4],
  7: ['int64', BigInt64Array, 8],
  9: ['bool', Uint8Array, 1],
  10: ['float16', Uint16Array, 2],
  11: ['float64', Float64Array, 8],
  12: ['uint32', Uint32Array, 4],
  13: ['uint64', BigUint64Array, 8],
};

function readTensorPb(file) {
  const b = fs.readFileSync(file);
  let p = 0;
  const varint = (end) => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (p >= end) throw new Error(file + ': truncated varint');
      const byte = b[p++];
      v |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return v;
      shift += 7n;
    }
  };
  const t = {dims: [], type: 0, name: '', raw: null, floats: [], ints32: [], ints64: [],
             doubles: [], uints64: []};
  const pushVarint = (field, v) => {
    if (field === 1) t.dims.push(Number(BigInt.asIntN(64, v)));
    else if (field === 2) t.type = Number(v);
    else if (field === 5) t.ints32.push(Number(BigInt.asIntN(32, v)));
    else if (field === 7) t.ints64.push(BigInt.asIntN(64, v));
    else if (field === 11) t.uints64.push(BigInt.asUintN(64, v));
  };
  while (p < b.length) {
    const tag = Number(varint(b.length));
    const field = tag >> 3;
    const wire = tag & 7;
    if (wire === 0) {
      pushVarint(field, varint(b.length));
    } else if (wire === 2) {
      const len = Number(varint(b.length));
      const start = p;
      const end = p + len;
      if (end > b.length) throw new Error(file + ': truncated field ' + field);
      if (field === 8) t.name = b.toString('utf8', start, end);
      else if (field === 9) t.raw = b.subarray(start, end);
      else if (field === 4) for (let k = start; k + 4 <= end; k += 4) t.floats.push(b.readFloatLE(k));
      else if (field === 10) for (let k = start; k + 8 <= end; k += 8) t.doubles.push(b.readDoubleLE(k));
      else if (field === 1 || field === 5 || field === 7 || field === 11) {
        while (p < end) pushVarint(field, varint(end));
      }
      p = end;
    } else if (wire === 5) {
      if (field === 4) t.floats.push(b.readFloatLE(p));
      p += 4;
    } else if (wire === 1) {
      if (field === 10) t.doubles.push(b.readDoubleLE(p));
      p += 8;
    } else {
      throw new Error(file + ': wire type ' + wire + ' is not handled');
    }
  }
  const info = TYPES[t.type];
  if (!info) throw new Error(file + ': data_type ' + t.type + ' is not handled');
  const [ortType, Arr, size] = info;
  const n = t.dims.reduce((x, y) => x * y, 1);
  let data;
  if (t.raw) {
    if (t.raw.length !== n * size) {
      throw new Error(`${file}: raw_data has ${t.raw.length} bytes, ${n * size} expected`);
    }
    // Copy into an aligned buffer of its own.
    data = new Arr(t.raw.buffer.slice(t.raw.byteOffset, t.raw.byteOffset + t.raw.length));
  } else if (t.type === 1) {
    data = Float32Array.from(t.floats);
  } else if (t.type === 11) {
    data = Float64Array.from(t.doubles);
  } else if (t.type === 7) {
    data = BigInt64Array.from(t.ints64);
  } else if (t.type === 13) {
    data = BigUint64Array.from(t.uints64);
  } else if (t.type === 12) {
    data = Uint32Array.from(t.uints64.map(Number));
  } else {
    data = Arr.from(t.ints32);  // int32, int16, int8, uint16, uint8, bool, float16 bits
  }
  if (data.length !== n) throw new Error(`${file}: ${data.length} values, ${n} expected`);
  const tensor = new ort.Tensor(ortType, ortType === 'bool' ? Uint8Array.from(data) : data, t.dims);
  return {name: t.name, tensor};
}

// ---- A minimal TensorProto writer (the fields the reader above needs) ----------------------------
function varintBytes(v) {
  let x = BigInt.asUintN(64, BigInt(v));
  const out = [];
  do {
    let byte = Number(x & 0x7fn);
    x >>= 7n;
    if (x !== 0n) byte |= 0x80;
    out.push(byte);
  } while (x !== 0n);
  return Buffer.from(out);
}

function writeTensorPb(file, name, tensor) {
  const code = Object.keys(TYPES).find((k) => TYPES[k][0] === tensor.type);
  if (code === undefined) throw new Error(`${name}: ${tensor.type} outputs cannot be written`);
  const data = tensor.data;
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const len = (field, bytes) => [varintBytes((field << 3) | 2), varintBytes(bytes.length), bytes];
  const parts = [];
  for (const d of tensor.dims) parts.push(varintBytes(1 << 3), varintBytes(d));
  parts.push(varintBytes(2 << 3), varintBytes(Number(code)));
  parts.push(...len(8, Buffer.from(name, 'utf8')), ...len(9, raw));
  // Written beside and renamed, so a reader never sees half a file.
  fs.writeFileSync(file + '.tmp', Buffer.concat(parts));
  fs.renameSync(file + '.tmp', file);
}

function numbered(dir, stem) {
  const out = [];
  for (let i = 0; fs.existsSync(path.join(dir, `${stem}_${i}.pb`)); ++i) {
    out.push(path.join(dir, `${stem}_${i}.pb`));
  }
  return out;
}

// ---- The output check (footprint's rule) -------------------------------------------------------
function compareOutputs(session, results, expected, rtol, atol) {
  const c = {match: true, max_abs_error: 0, max_rel_error: 0, problem: ''};
  const names = session.outputNames;
  if (names.length < expected.length) {
    return {...c, match: false, problem: `${expected.length} outputs expected, ${names.length} produced`};
  }
  const byName = expected.every((w) => w.name && names.includes(w.name));
  expected.forEach((w, i) => {
    const gotName = byName ? w.name : names[i];
    const got = results[gotName];
    const want = w.tensor;
    const label = `output "${w.name || gotName}"`;
    const sameDims = got.dims.length === want.dims.length &&
                     got.dims.every((d, k) => Number(d) === Number(want.dims[k]));
    if (got.type !== want.type || !sameDims) {
      c.match = false;
      if (!c.problem) {
        c.problem = `${label}: dtype or extents differ from the expected ` +
                    `(${got.type}[${got.dims}] vs ${want.type}[${want.dims}])`;
      }
      return;
    }
    const exact = !(want.type === 'float32' || want.type === 'float64');
    const g = got.data;
    const e = want.data;
    for (let k = 0; k < e.length; ++k) {
      const gv = Number(g[k]);
      const wv = Number(e[k]);
      if (Number.isNaN(gv) && Number.isNaN(wv)) continue;
      const err = !Number.isFinite(wv) && gv === wv ? 0 : Math.abs(gv - wv);
      c.max_abs_error = Math.max(c.max_abs_error, Number.isNaN(err) ? Infinity : err);
      if (wv !== 0) c.max_rel_error = Math.max(c.max_rel_error, err / Math.abs(wv));
      const ok = exact ? g[k] === e[k] : err <= atol + rtol * Math.abs(wv);
      if (!ok && c.match) {
        c.match = false;
        c.problem = `${label} element ${k}: got ${gv}, expected ${wv}`;
      }
    }
  });
  return c;
}

function vmHwm() {
  const m = /VmHWM:\s*(\d+)\s*kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : null;
}

// The definition footprint reports (include/footprint/bench/percentile.hpp): linear
// interpolation between the closest ranks, so both runtimes' medians are the same statistic.
function percentile(v, q) {
  const s = [...v].sort((a, b) => a - b);
  const h = q * (s.length - 1);
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, s.length - 1);
  return s[lo] + (h - lo) * (s[hi] - s[lo]);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
  const result = {
    model: o.model,
    ort_version: ort.env && ort.env.versions ? ort.env.versions.common : undefined,
    threads: o.threads,
    rss_hwm_before_session_bytes: vmHwm(),
  };

  const t0 = nowMs();
  const session = await ort.InferenceSession.create(o.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: o.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  result.session_ms = nowMs() - t0;
  result.rss_hwm_after_session_bytes = vmHwm();

  // Inputs: matched by name when the file's name is one of the model's inputs, else by position.
  const files = numbered(o.dataDir, 'input');
  if (files.length === 0) throw new Error(o.dataDir + ': no input_0.pb');
  const feeds = {};
  files.forEach((f, i) => {
    const {name, tensor} = readTensorPb(f);
    const key = name && session.inputNames.includes(name) ? name : session.inputNames[i];
    if (key === undefined) throw new Error(`${f}: the model has only ${session.inputNames.length} inputs`);
    feeds[key] = tensor;
  });
  const missing = session.inputNames.filter((n) => !(n in feeds));
  if (missing.length) throw new Error('no input file for ' + missing.join(', '));

  const first = await session.run(feeds);
  const expected = numbered(o.dataDir, 'output').map(readTensorPb);
  if (expected.length) {
    const c = compareOutputs(session, first, expected, o.rtol, o.atol);
    result.match = c.match;
    result.max_abs_error = c.max_abs_error;
    result.max_rel_error = c.max_rel_error;
    if (c.problem) result.mismatch = c.problem;
  }
  result.outputs = session.outputNames.map((n) => ({name: n, type: first[n].type, dims: first[n].dims}));
  if (o.writeOutputs) {
    fs.mkdirSync(o.writeOutputs, {recursive: true});
    session.outputNames.forEach((n, i) => {
      writeTensorPb(path.join(o.writeOutputs, `output_${i}.pb`), n, first[n]);
    });
  }
  for (let i = 0; i < o.warmup; ++i) await session.run(feeds);
  const lat = [];
  for (let i = 0; i < o.repeat; ++i) {
    const t = nowMs();
    await session.run(feeds);
    lat.push(nowMs() - t);
  }
  result.latency_ms = {min: Math.min(...lat), median: percentile(lat, 0.5), p90: percentile(lat, 0.9),
                       runs: lat.length};
  result.peak_rss_bytes = vmHwm();
  console.log(JSON.stringify(result));
  await session.release();
}

main().catch((e) => {
  console.error('ort_run: error: ' + (e && e.message ? e.message : e));
  if (process.env.ORT_RUN_STACK && e && e.stack) console.error(e.stack);
  process.exit(1);
});
