// Latency of one TF.js graph model on TF.js's WASM backend (XNNPACK kernels, SIMD, one thread
// in Node), the speed peer of bench/corpus_bench.sh.
//
//   node tfjs_wasm_latency.mjs --cache CACHE --model REL/model.json [--warmup 2] [--runs 10]
//        [--fill-dim 1] [--shape NAME=d0,d1,..]... [--range NAME=lo,hi]...
//
// Inputs are uniform random in [0, 1) (ints in [0, 255]), or in --range, with every -1 dim set
// to --fill-dim unless --shape gives the whole shape (empty: a scalar). Prints one JSON line:
//   {"model": ..., "mode": "execute"|"executeAsync", "median_ms": ..., "min_ms": ..., "runs": N}
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const args = { shape: [], range: [] };
for (let i = 2; i < process.argv.length; i += 2) {
  const key = process.argv[i].replace(/^--/, '');
  if (Array.isArray(args[key])) args[key].push(process.argv[i + 1]); else args[key] = process.argv[i + 1];
}
const byName = (list, parse) => Object.fromEntries(list.map((s) => {
  const i = s.lastIndexOf('=');
  return [s.slice(0, i).replace(/:0$/, ''), parse(s.slice(i + 1))];
}));
const shapes = byName(args.shape, (v) => v.split(',').filter((x) => x !== '').map(Number));
const ranges = byName(args.range, (v) => v.split(',').map(Number));
for (const k of ['cache', 'model']) {
  if (!args[k]) { console.error(`tfjs_wasm_latency: --${k} is required`); process.exit(2); }
}
const require = createRequire(path.join(path.resolve(args.cache), 'package.json'));
const tf = require('@tensorflow/tfjs-core');
const wasm = require('@tensorflow/tfjs-backend-wasm');
const tfconv = require('@tensorflow/tfjs-converter');

const modelFile = path.join(path.resolve(args.cache), 'models', args.model);
const json = JSON.parse(fs.readFileSync(modelFile));
const artifacts = await tf.io.getModelArtifactsForJSON(json, async (manifest) => {
  const specs = [];
  const buffers = [];
  for (const group of manifest) {
    for (const p of group.paths) buffers.push(fs.readFileSync(path.join(path.dirname(modelFile), p)));
    specs.push(...group.weights);
  }
  const all = Buffer.concat(buffers);
  return [specs, all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength)];
});

wasm.setWasmPaths(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm')) + '/');
await tf.setBackend('wasm');
await tf.ready();
const model = await tfconv.loadGraphModel(tf.io.fromMemory(artifacts));

const fill = Number(args['fill-dim'] ?? 1);
const feeds = {};
for (const info of model.inputs) {
  const name = info.name.replace(/:0$/, '');
  const shape = shapes[name] ?? info.shape.map((d) => (d == null || d < 0 ? fill : d));
  const n = shape.reduce((a, b) => a * b, 1);
  const [lo, hi] = ranges[name] ?? [0, 1];
  if (info.dtype === 'float32') {
    feeds[info.name] = tf.tensor(Float32Array.from({ length: n }, () => lo + (hi - lo) * Math.random()), shape, 'float32');
  } else if (info.dtype === 'bool') {
    feeds[info.name] = tf.tensor(Array.from({ length: n }, () => Math.random() < 0.5), shape, 'bool');
  } else {
    feeds[info.name] = tf.tensor(Int32Array.from({ length: n }, () => Math.floor(Math.random() * 256)), shape, 'int32');
  }
}

let mode = 'execute';
async function once() {
  let r;
  if (mode === 'execute') {
    try {
      r = model.execute(feeds, model.outputNodes);
    } catch (e) {
      // execute() refuses graphs with control flow or dynamic-shape ops.
      if (!/executeAsync|dynamic op|control flow/i.test(String(e.message))) throw e;
      mode = 'executeAsync';
    }
  }
  if (mode === 'executeAsync') r = await model.executeAsync(feeds, model.outputNodes);
  const outs = Array.isArray(r) ? r : [r];
  for (const t of outs) await t.data();  // waits for the results, as a caller would
  tf.dispose(outs);
}

const warmup = Number(args.warmup ?? 2);
const runs = Number(args.runs ?? 10);
for (let i = 0; i < warmup; i++) await once();
const ms = [];
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  await once();
  ms.push(performance.now() - t0);
}
ms.sort((a, b) => a - b);
console.log(JSON.stringify({ model: args.model, mode, median_ms: ms[Math.floor(ms.length / 2)],
                             min_ms: ms[0], runs }));
