// Runs two ONNX models in onnxruntime-node on the same inputs and prints one JSON line saying
// whether every output is bit-identical: {"same": true, "outputs": 2}. Inputs come from the
// input_*.pb files beside A when there are any (the backend-test layout), otherwise they are
// seeded random values with symbolic dims set to 1.
//
//   NODE_PATH=~/.cache/footprint/ort/node_modules node bench/ort_compare.js A.onnx B.onnx
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// The few TensorProto fields a backend-test input uses: dims (1), data_type (2), name (8),
// raw_data (9), float_data (4), int64_data (7).
function readTensorPb(file) {
  const b = fs.readFileSync(file);
  let p = 0;
  const varint = () => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      const byte = b[p++];
      v |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return v;
      shift += 7n;
    }
  };
  const t = {dims: [], type: 1, name: '', raw: null, floats: [], ints: []};
  while (p < b.length) {
    const tag = Number(varint());
    const field = tag >> 3;
    const wire = tag & 7;
    if (wire === 0) {
      const v = varint();
      if (field === 1) t.dims.push(Number(v));
      if (field === 2) t.type = Number(v);
      if (field === 7) t.ints.push(BigInt.asIntN(64, v));
    } else if (wire === 2) {
      const len = Number(varint());
      const body = b.subarray(p, p + len);
      if (field === 8) t.name = body.toString('utf8');
      if (field === 9) t.raw = body;
      if (field === 1 || field === 7) {
        const end = p + len;
        while (p < end) {
          const v = varint();
          if (field === 1) t.dims.push(Number(v));
          else t.ints.push(BigInt.asIntN(64, v));
        }
      }
      if (field === 4) for (let k = 0; k + 4 <= len; k += 4) t.floats.push(body.readFloatLE(k));
      p += field === 1 || field === 7 ? 0 : len;
    } else if (wire === 5) {
      p += 4;
    } else if (wire === 1) {
      p += 8;
    }
  }
  const n = t.dims.reduce((x, y) => x * y, 1);
  if (t.type === 1) {
    const data = t.raw ? new Float32Array(t.raw.buffer.slice(t.raw.byteOffset, t.raw.byteOffset + 4 * n))
                       : Float32Array.from(t.floats);
    return [t.name, new ort.Tensor('float32', data, t.dims)];
  }
  if (t.type === 7) {
    const data = t.raw ? new BigInt64Array(t.raw.buffer.slice(t.raw.byteOffset, t.raw.byteOffset + 8 * n))
                       : BigInt64Array.from(t.ints);
    return [t.name, new ort.Tensor('int64', data, t.dims)];
  }
  throw new Error(file + ': data_type ' + t.type + ' is not handled');
}

function inputsFromFiles(model, session) {
  const dir = path.dirname(model);
  const feeds = {};
  for (let i = 0; fs.existsSync(path.join(dir, 'input_' + i + '.pb')); ++i) {
    const [name, tensor] = readTensorPb(path.join(dir, 'input_' + i + '.pb'));
    feeds[name || session.inputNames[i]] = tensor;
  }
  return Object.keys(feeds).length === session.inputNames.length ? feeds : null;
}

function inputsFor(session) {
  const feeds = {};
  let state = 12345;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  session.inputNames.forEach((name, i) => {
    const meta = session.inputMetadata[i];
    const dims = meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : 1));
    const n = dims.reduce((a, b) => a * b, 1);
    const type = meta.type || 'float32';
    let data;
    if (type === 'float32') {
      data = Float32Array.from({length: n}, () => next() * 2 - 1);
    } else if (type === 'int64') {
      data = BigInt64Array.from({length: n}, () => 16000n);
    } else {
      throw new Error('input ' + name + ' has type ' + type);
    }
    feeds[name] = new ort.Tensor(type, data, dims);
  });
  return feeds;
}

async function run(file, inputsFrom) {
  const session = await ort.InferenceSession.create(file, {executionProviders: ['cpu']});
  const feeds = inputsFromFiles(inputsFrom, session) || inputsFor(session);
  const out = await session.run(feeds);
  return session.outputNames.map((n) => out[n]);
}

async function main() {
  const [a, b] = process.argv.slice(2);
  if (!a || !b) {
    console.error('usage: node ort_compare.js A.onnx B.onnx');
    process.exit(2);
  }
  const [oa, ob] = [await run(a, a), await run(b, a)];
  let same = oa.length === ob.length;
  for (let i = 0; same && i < oa.length; ++i) {
    same = JSON.stringify(oa[i].dims) === JSON.stringify(ob[i].dims) &&
        oa[i].data.length === ob[i].data.length &&
        oa[i].data.every((v, k) => Object.is(v, ob[i].data[k]));
  }
  console.log(JSON.stringify({same, outputs: oa.length}));
  process.exit(same ? 0 : 1);
}

main().catch((e) => {
  console.error('ort_compare: ' + (e && e.message ? e.message : e));
  process.exit(1);
});
