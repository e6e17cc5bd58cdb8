// TF.js's own gradient kernels (tfjs-backend-cpu) on seeded inputs, as the reference of
// tfjs_gradient_test (issue 22: checks that do not trust tfjit). Each case is written here once:
// the TF GraphDef that computes it (placeholders a, b, c and constants), the inputs, and TF.js's
// result, printed as text that the test reads:
//   case NAME
//   graph <GraphDef text on one line>
//   input NAME d0,d1,... v0 v1 ...      (float32, every value exact to 9 digits)
//   expect d0,d1,... v0 v1 ...
//   end
//
//   node tests/tf/tfjs_gradients.mjs CACHE   (CACHE: tests/models/fetch_models.sh's folder)
import path from 'node:path';
import { createRequire } from 'node:module';

const cache = process.argv[2];
if (!cache) {
  console.error('usage: tfjs_gradients.mjs CACHE');
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(cache), 'package.json'));
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-cpu');
await tf.setBackend('cpu');

// Values in [-1, 1) from a 32-bit LCG, rounded to float32.
function seeded(shape, seed, lo = -1, hi = 1) {
  const n = shape.reduce((a, b) => a * b, 1);
  const v = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; ++i) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    v[i] = lo + ((s >>> 8) / 16777216) * (hi - lo);
  }
  return tf.tensor(v, shape, 'float32');
}

const fmt = (t) => `${t.shape.join(',')} ${Array.from(t.dataSync(), (x) => x.toPrecision(9)).join(' ')}`;
const list = (xs) => `list { ${xs.map((x) => `i: ${x}`).join(' ')} }`;
const attr = (key, value) => `attr { key: "${key}" value { ${value} } }`;
const T = attr('T', 'type: DT_FLOAT');
const placeholder = (name) =>
  `node { name: "${name}" op: "Placeholder" ${attr('dtype', 'type: DT_FLOAT')} }`;
const ints = (name, values) =>
  `node { name: "${name}" op: "Const" ${attr('dtype', 'type: DT_INT32')} ` +
  `${attr('value', `tensor { dtype: DT_INT32 tensor_shape { dim { size: ${values.length} } } ` +
                   values.map((v) => `int_val: ${v}`).join(' ') + ' }')} }`;
const node = (op, inputs, attrs) =>
  `node { name: "y" op: "${op}" ${inputs.map((i) => `input: "${i}"`).join(' ')} ${attrs.join(' ')} }`;

const cases = [];
// name, graph nodes, feeds {a, b, c}, TF.js kernel name, its inputs and attrs.
function add(name, nodes, feeds, kernel, inputs, attrs, shape = null) {
  let out = tf.engine().runKernel(kernel, inputs, attrs);
  if (shape) out = tf.reshape(out, shape);
  cases.push({ name, graph: [...Object.keys(feeds).map(placeholder), ...nodes].join(' '), feeds, out });
}

// Conv2D's filter and input gradients (NHWC), SAME with stride 2 and VALID with stride 1.
for (const [pad, s, x, f] of [['SAME', 2, [2, 7, 6, 3], [3, 3, 3, 4]],
                              ['VALID', 1, [1, 5, 5, 2], [2, 2, 2, 3]]]) {
  const xv = seeded(x, 11), fv = seeded(f, 12);
  const y = tf.conv2d(xv, fv, s, pad.toLowerCase());
  const dy = seeded(y.shape, 13);
  const a = [T, attr('strides', list([1, s, s, 1])), attr('padding', `s: "${pad}"`)];
  add(`Conv2DBackpropFilter_${pad}`, [ints('sizes', f), node('Conv2DBackpropFilter', ['a', 'sizes', 'b'], a)],
      { a: xv, b: dy }, 'Conv2DBackpropFilter', { x: xv, dy },
      { strides: [s, s], pad: pad.toLowerCase(), dataFormat: 'NHWC', filterShape: f });
  add(`Conv2DBackpropInput_${pad}`, [ints('sizes', x), node('Conv2DBackpropInput', ['sizes', 'a', 'b'], a)],
      { a: fv, b: dy }, 'Conv2DBackpropInput', { dy, filter: fv },
      { inputShape: x, strides: [s, s], pad: pad.toLowerCase(), dataFormat: 'NHWC' });
}

// The same in NCHW (tfjit's NCHW path; TF's CPU kernels take NHWC only).
{
  const x = [1, 3, 6, 5], f = [3, 3, 3, 4], dyShape = [1, 4, 6, 5];
  const xv = seeded(x, 14), fv = seeded(f, 15), dy = seeded(dyShape, 16);
  const a = [T, attr('strides', list([1, 1, 1, 1])), attr('padding', 's: "SAME"'),
             attr('data_format', 's: "NCHW"')];
  add('Conv2DBackpropFilter_NCHW', [ints('sizes', f), node('Conv2DBackpropFilter', ['a', 'sizes', 'b'], a)],
      { a: xv, b: dy }, 'Conv2DBackpropFilter', { x: xv, dy },
      { strides: [1, 1], pad: 'same', dataFormat: 'NCHW', filterShape: f });
  add('Conv2DBackpropInput_NCHW', [ints('sizes', x), node('Conv2DBackpropInput', ['sizes', 'a', 'b'], a)],
      { a: fv, b: dy }, 'Conv2DBackpropInput', { dy, filter: fv },
      { inputShape: x, strides: [1, 1], pad: 'same', dataFormat: 'NCHW' });
}

// Depthwise convolution's gradients (channel multiplier 2).
{
  const x = [1, 6, 5, 2], f = [3, 3, 2, 2];
  const xv = seeded(x, 21), fv = seeded(f, 22);
  const y = tf.depthwiseConv2d(xv, fv, 1, 'same');
  const dy = seeded(y.shape, 23);
  const a = [T, attr('strides', list([1, 1, 1, 1])), attr('padding', 's: "SAME"')];
  add('DepthwiseConv2dNativeBackpropFilter', [ints('sizes', f), node('DepthwiseConv2dNativeBackpropFilter', ['a', 'sizes', 'b'], a)],
      { a: xv, b: dy }, 'DepthwiseConv2dNativeBackpropFilter', { x: xv, dy },
      { strides: [1, 1], dilations: [1, 1], pad: 'same', filterShape: f });
  add('DepthwiseConv2dNativeBackpropInput', [ints('sizes', x), node('DepthwiseConv2dNativeBackpropInput', ['sizes', 'a', 'b'], a)],
      { a: fv, b: dy }, 'DepthwiseConv2dNativeBackpropInput', { dy, filter: fv },
      { strides: [1, 1], dilations: [1, 1], pad: 'same', inputShape: x });
}

// Pooling gradients, 2-D and 3-D.
for (const [pad, k, s] of [['VALID', 2, 2], ['SAME', 3, 2]]) {
  const x = [2, 6, 5, 3];
  const xv = seeded(x, 31);
  const a = [T, attr('ksize', list([1, k, k, 1])), attr('strides', list([1, s, s, 1])),
             attr('padding', `s: "${pad}"`)];
  const ymax = tf.maxPool(xv, k, s, pad.toLowerCase());
  const dy = seeded(ymax.shape, 32);
  add(`MaxPoolGrad_${pad}`, [node('MaxPoolGrad', ['a', 'b', 'c'], a)], { a: xv, b: ymax, c: dy },
      'MaxPoolGrad', { dy, input: xv, output: ymax },
      { filterSize: [k, k], strides: [s, s], pad: pad.toLowerCase() });
  // TF's average pools divide by the window's part inside the input; TF.js's AvgPoolGrad
  // kernels divide by the whole window (its forward AvgPool does not), so they are compared
  // where no window reaches padding.
  if (pad === 'VALID') {
    add(`AvgPoolGrad_${pad}`, [ints('sizes', x), node('AvgPoolGrad', ['sizes', 'b'], a)], { b: dy },
        'AvgPoolGrad', { dy, input: xv }, { filterSize: [k, k], strides: [s, s], pad: pad.toLowerCase() });
  }
}
{
  const x = [1, 4, 5, 4, 2];
  const xv = seeded(x, 41);
  const a = [T, attr('ksize', list([1, 2, 2, 2, 1])), attr('strides', list([1, 2, 1, 2, 1])),
             attr('padding', 's: "SAME"')];
  const ymax = tf.maxPool3d(xv, 2, [2, 1, 2], 'same');
  const dy = seeded(ymax.shape, 42);
  add('MaxPool3DGrad', [node('MaxPool3DGrad', ['a', 'b', 'c'], [...a, attr('TInput', 'type: DT_FLOAT')])],
      { a: xv, b: ymax, c: dy }, 'MaxPool3DGrad', { dy, input: xv },
      { filterSize: [2, 2, 2], strides: [2, 1, 2], pad: 'same' });
  const v = [T, attr('ksize', list([1, 2, 2, 2, 1])), attr('strides', list([1, 2, 1, 2, 1])),
             attr('padding', 's: "VALID"')];
  const dyv = seeded(tf.avgPool3d(xv, 2, [2, 1, 2], 'valid').shape, 43);
  add('AvgPool3DGrad', [ints('sizes', x), node('AvgPool3DGrad', ['sizes', 'b'], v)], { b: dyv },
      'AvgPool3DGrad', { dy: dyv, input: xv }, { filterSize: [2, 2, 2], strides: [2, 1, 2], pad: 'valid' });
}

// Conv3D's gradients.
{
  const x = [1, 4, 5, 4, 2], f = [2, 3, 2, 2, 3];
  const xv = seeded(x, 51), fv = seeded(f, 52);
  const y = tf.conv3d(xv, fv, [1, 2, 1], 'same');
  const dy = seeded(y.shape, 53);
  const a = [T, attr('strides', list([1, 1, 2, 1, 1])), attr('padding', 's: "SAME"')];
  add('Conv3DBackpropFilterV2', [ints('sizes', f), node('Conv3DBackpropFilterV2', ['a', 'sizes', 'b'], a)],
      { a: xv, b: dy }, 'Conv3DBackpropFilterV2', { x: xv, dy },
      { strides: [1, 2, 1], pad: 'same', filterShape: f });
  add('Conv3DBackpropInputV2', [ints('sizes', x), node('Conv3DBackpropInputV2', ['sizes', 'a', 'b'], [...a, attr('Tshape', 'type: DT_INT32')])],
      { a: fv, b: dy }, 'Conv3DBackpropInputV2', { dy, filter: fv },
      { strides: [1, 2, 1], pad: 'same', inputShape: x });
}

// Dilation2D's gradients (grayscale morphology; rates 2 on rows).
{
  const x = [1, 7, 6, 2], f = [2, 3, 2];
  const xv = seeded(x, 61), fv = seeded(f, 62);
  const y = tf.dilation2d(xv, fv, 1, 'valid', [2, 1]);
  const dy = seeded(y.shape, 63);
  const a = [T, attr('strides', list([1, 1, 1, 1])), attr('rates', list([1, 2, 1, 1])),
             attr('padding', 's: "VALID"')];
  for (const which of ['Filter', 'Input']) {
    add(`Dilation2DBackprop${which}`, [node(`Dilation2DBackprop${which}`, ['a', 'b', 'c'], a)],
        { a: xv, b: fv, c: dy }, `Dilation2DBackprop${which}`, { x: xv, filter: fv, dy },
        { strides: [1, 1], pad: 'valid', dilations: [2, 1] });
  }
}

// Elementwise and local-response gradients.
{
  const xv = seeded([3, 4, 5], 71, -2, 2);
  const y = tf.elu(xv);
  const dy = seeded([3, 4, 5], 72);
  add('EluGrad', [node('EluGrad', ['a', 'b'], [T])], { a: dy, b: y }, 'EluGrad', { dy, y }, {});
}
{
  const xv = seeded([2, 3, 2, 6], 81);
  const y = tf.localResponseNormalization(xv, 2, 1.5, 0.3, 0.75);
  const dy = seeded(y.shape, 82);
  add('LRNGrad', [node('LRNGrad', ['a', 'b', 'c'],
                       [T, attr('depth_radius', 'i: 2'), attr('bias', 'f: 1.5'),
                        attr('alpha', 'f: 0.3'), attr('beta', 'f: 0.75')])],
      { a: dy, b: xv, c: y }, 'LRNGrad', { x: xv, y, dy },
      { depthRadius: 2, bias: 1.5, alpha: 0.3, beta: 0.75 });
}

// Resize gradients: an image [1, 4, 5, 2] resized to 7 x 3, with and without align_corners.
for (const align of [false, true]) {
  const img = seeded([1, 4, 5, 2], 91);
  const dy = seeded([1, 7, 3, 2], 92);
  const flag = attr('align_corners', `b: ${align}`);
  add(`ResizeBilinearGrad_align${align}`, [node('ResizeBilinearGrad', ['a', 'b'], [T, flag])],
      { a: dy, b: img }, 'ResizeBilinearGrad', { images: img, dy }, { alignCorners: align },
      // tfjs-backend-cpu labels its result [batch, width, height, depth] but lays it out as
      // the image, [batch, height, width, depth]: the values are read in the image's shape.
      img.shape);
  add(`ResizeNearestNeighborGrad_align${align}`,
      [ints('size', [4, 5]), node('ResizeNearestNeighborGrad', ['a', 'size'], [T, flag])],
      { a: dy }, 'ResizeNearestNeighborGrad', { images: img, dy }, { alignCorners: align });
}

const lines = [];
for (const c of cases) {
  lines.push(`case ${c.name}`, `graph ${c.graph}`);
  for (const [name, t] of Object.entries(c.feeds)) lines.push(`input ${name} ${fmt(t)}`);
  lines.push(`expect ${fmt(c.out)}`, 'end');
}
process.stdout.write(lines.join('\n') + '\n');
