// Reference outputs for one TF.js graph model from TF.js's own CPU backend (pure JS kernels).
//
//   node tfjs_reference.mjs --cache CACHE --model REL/model.json --out DIR [--seed N]
//        [--fill-dim N] [--shape NAME=d0,d1,..]... [--range [NAME=]lo,hi]... [--outputs t1,t2]
//
// Writes DIR/reference.json and raw little-endian C-order files input_<i>.bin, output_<i>.bin.
// Input i draws from its own mulberry32 stream seeded with seed ^ ((i+1) * 0x9E3779B9): floats
// uniform in [lo,hi) (default [0,1)), ints uniform in [lo,hi] (default [0,255]), bools u>>>31.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';

const args = { shape: [], range: [] };
for (let i = 2; i < process.argv.length; i += 2) {
  const key = process.argv[i].replace(/^--/, '');
  const value = process.argv[i + 1];
  if (Array.isArray(args[key])) args[key].push(value); else args[key] = value;
}
for (const k of ['cache', 'model', 'out']) {
  if (!args[k]) { console.error(`tfjs_reference: --${k} is required`); process.exit(2); }
}
const require = createRequire(path.join(path.resolve(args.cache), 'package.json'));
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-cpu');
const tfconv = require('@tensorflow/tfjs-converter');

const stripPort = (n) => n.replace(/:0$/, '');
const withPort = (n) => (/:\d+$/.test(n) ? n : `${n}:0`);

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}

function makeInput(dtype, shape, seed, index, range) {
  const n = shape.reduce((a, b) => a * b, 1);
  const next = mulberry32((seed ^ Math.imul(index + 1, 0x9E3779B9)) >>> 0);
  if (dtype === 'float32') {
    const [lo, hi] = range ?? [0, 1];
    const data = new Float32Array(n);
    for (let k = 0; k < n; k++) data[k] = Math.fround(lo + (hi - lo) * (next() / 4294967296));
    return { data, range: [lo, hi] };
  }
  if (dtype === 'bool') {
    const data = new Uint8Array(n);
    for (let k = 0; k < n; k++) data[k] = next() >>> 31;
    return { data, range: [0, 1] };
  }
  const [lo, hi] = range ?? [0, 255];
  const data = new Int32Array(n);
  for (let k = 0; k < n; k++) data[k] = lo + Math.floor((next() / 4294967296) * (hi - lo + 1));
  return { data, range: [lo, hi] };
}

async function loadModel(file) {
  const text = fs.readFileSync(file);
  const json = JSON.parse(text);
  const dir = path.dirname(file);
  const artifacts = await tf.io.getModelArtifactsForJSON(json, async (manifest) => {
    const specs = [];
    const buffers = [];
    for (const group of manifest) {
      for (const p of group.paths) buffers.push(fs.readFileSync(path.join(dir, p)));
      specs.push(...group.weights);
    }
    const all = Buffer.concat(buffers);
    return [specs, all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength)];
  });
  const model = await tfconv.loadGraphModel(tf.io.fromMemory(artifacts));
  return { model, sha256: crypto.createHash('sha256').update(text).digest('hex') };
}

async function run(model, feeds, names, mode) {
  const r = mode === 'execute' ? model.execute(feeds, names) : await model.executeAsync(feeds, names);
  return Array.isArray(r) ? r : [r];
}

await tf.setBackend('cpu');
await tf.ready();
const seed = Number(args.seed ?? 1) >>> 0;
const fill = Number(args['fill-dim'] ?? 1);
const shapes = {};
for (const s of args.shape) {
  const i = s.lastIndexOf('=');
  shapes[stripPort(s.slice(0, i))] = s.slice(i + 1).split(',').filter((x) => x !== '').map(Number);
}
const ranges = {};
let globalRange;
for (const s of args.range) {
  const i = s.lastIndexOf('=');
  if (i < 0) globalRange = s.split(',').map(Number);
  else ranges[stripPort(s.slice(0, i))] = s.slice(i + 1).split(',').map(Number);
}

const modelFile = path.join(path.resolve(args.cache), 'models', args.model);
const { model, sha256 } = await loadModel(modelFile);
const signatureInputs = Object.entries(model.signature?.inputs ?? {});
const tensorOf = (name) => {
  const e = signatureInputs.find(([k, v]) => stripPort(k) === name || stripPort(v.name ?? '') === name);
  return withPort(e?.[1].name ?? name);
};
const feeds = {};
const inputs = [];
const inputData = [];
model.inputs.forEach((info, i) => {
  const dtype = info.dtype === 'bool' ? 'bool' : info.dtype === 'float32' ? 'float32' : 'int32';
  const shape = shapes[stripPort(info.name)] ??
    (info.shape ? info.shape.map((d) => (d == null || d < 0 ? fill : d)) : null);
  if (!shape) throw new Error(`input ${info.name} has unknown rank; pass --shape ${info.name}=...`);
  const { data, range } = makeInput(dtype, shape, seed, i, ranges[stripPort(info.name)] ?? globalRange);
  feeds[info.name] = tf.tensor(dtype === 'bool' ? Array.from(data, Boolean) : data, shape, dtype);
  inputs.push({ name: info.name, tensor: tensorOf(info.name), dtype, shape, file: `input_${i}.bin`, range });
  inputData.push(data);
});

const names = args.outputs ? args.outputs.split(',') : model.outputNodes;
const tensors = args.outputs ? names.map(withPort) : model.outputs.map((t) => withPort(t.name));
let mode = 'execute';
let outs;
const start = performance.now();
try {
  outs = await run(model, feeds, names, mode);
} catch (e) {
  // execute() refuses graphs with control flow or dynamic-shape ops.
  if (!/executeAsync|dynamic op|control flow/i.test(String(e.message))) throw e;
  mode = 'executeAsync';
  outs = await run(model, feeds, names, mode);
}
const outputs = [];
const outputData = [];
const ARRAY = { float32: Float32Array, int32: Int32Array, bool: Uint8Array };
for (const [i, t] of outs.entries()) {
  const data = await t.data();
  const Arr = ARRAY[t.dtype];
  if (!Arr) throw new Error(`output ${names[i]}: unsupported dtype ${t.dtype}`);
  // Some CPU kernels return an Int32Array for a float32 tensor: the dtype is authoritative.
  outputData.push(data instanceof Arr ? data : Arr.from(data));
  outputs.push({ name: names[i], tensor: tensors[i], dtype: t.dtype, shape: t.shape, file: `output_${i}.bin` });
}
const ms = performance.now() - start;

const out = path.resolve(args.out);
fs.mkdirSync(out, { recursive: true });
const write = (f, d) => fs.writeFileSync(path.join(out, f), Buffer.from(d.buffer, d.byteOffset, d.byteLength));
inputs.forEach((m, i) => write(m.file, inputData[i]));
outputs.forEach((m, i) => write(m.file, outputData[i]));
fs.writeFileSync(path.join(out, 'reference.json'), JSON.stringify({
  format: 'tfjit-reference/1', model: args.model, modelSha256: sha256, tfjsVersion: tf.version_core,
  backend: 'cpu', execMode: mode, seed, fillDim: fill, firstRunMs: +ms.toFixed(2), inputs, outputs,
}, null, 1));
