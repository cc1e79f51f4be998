// Creates an onnxruntime-node InferenceSession on MODEL, runs it once on a small input (so the
// model is proven valid), and prints one JSON line:
//   {"session_ms":..., "run_ms":..., "max_rss_bytes":..., "output":[...], "ort_version":...}
// max_rss_bytes is process.resourceUsage().maxRSS (the whole node process, as the OS counts it).
//
//   NODE_PATH=~/.cache/footprint/ort/node_modules node bench/ort_session.js MODEL [--no-run]
'use strict';

const ort = require('onnxruntime-node');

async function main() {
  const args = process.argv.slice(2);
  const model = args.find((a) => !a.startsWith('--'));
  if (!model) {
    console.error('usage: node ort_session.js MODEL [--no-run]');
    process.exit(2);
  }
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, {executionProviders: ['cpu']});
  const sessionMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const rssAfterSession = process.resourceUsage().maxRSS * 1024;

  const result = {session_ms: sessionMs, max_rss_after_session_bytes: rssAfterSession};
  if (!args.includes('--no-run')) {
    // The graph input's width: the last dim of the first input's shape.
    const meta = session.inputMetadata ? session.inputMetadata[0] : undefined;
    const shape = meta && meta.shape ? meta.shape : undefined;
    const d = shape && typeof shape[shape.length - 1] === 'number' ? shape[shape.length - 1]
                                                                     : Number(process.env.D || 0);
    if (!d) throw new Error('cannot tell the input width; set D');
    const x = new Float32Array(d);
    for (let i = 0; i < d; ++i) x[i] = (i % 17) / 17 - 0.5;
    const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', x, [1, d])};
    const t1 = process.hrtime.bigint();
    const out = await session.run(feeds);
    result.run_ms = Number(process.hrtime.bigint() - t1) / 1e6;
    const y = out[session.outputNames[0]];
    let finite = true;
    let sum = 0;
    for (const v of y.data) {
      if (!Number.isFinite(v)) finite = false;
      sum += v;
    }
    result.output_dims = y.dims;
    result.output_sum = sum;
    result.output_finite = finite;
    if (!finite) throw new Error('output has non-finite values');
  }
  result.max_rss_bytes = process.resourceUsage().maxRSS * 1024;
  result.ort_version = ort.env && ort.env.versions ? ort.env.versions.common : undefined;
  console.log(JSON.stringify(result));
  await session.release();
}

main().catch((e) => {
  console.error('ort_session: ' + (e && e.stack ? e.stack : e));
  process.exit(1);
});
