// Differential cases of the gradients ops (docs/DESIGN.md, "Op families"): kernel vs evaluator
// vs CPU JIT, each against an independent reference: TF's formulas written out here in double
// precision (relu_op_functor.h, cwise_ops.h, xent_op.cc, the batch-norm gradient), naive loops
// over windows and taps for the pooling, convolution and resize gradients, and hand-computed
// values for the shape ops (BroadcastGradientArgs, ConcatOffset, StridedSliceGrad). NCHW
// variants transpose an NHWC case (NCDHW an NDHWC one). Dilation2DBackpropInput/Filter are
// kernel-only (XLA leaves them to TF). GradientsErrors checks TF's errors in both modes.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tests/tf/op_cases.h"
#include "tfjit/session.h"

namespace tfjit::optest {
namespace {

constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluScaleAlpha = 1.7580993408473768599402175208123;

std::string TypeName(DType t) {
  switch (t) {
    case DType::kFloat16: return "f16";
    case DType::kBFloat16: return "bf16";
    case DType::kFloat32: return "f32";
    case DType::kFloat64: return "f64";
    case DType::kInt8: return "int8";
    case DType::kUInt8: return "uint8";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    default: return "other";
  }
}

// Fixed feeds over [-8, 8] in steps of 0.5 (exact 0 and 6 included) and gradients over
// [-2, 2]; integers get the integral values.
Tensor Spread(DType t, const Dims& dims, int salt) {
  return Build(t, dims, [&](const Dims& i) {
    const int64_t k = Ravel(i, dims) + salt;
    const double v = static_cast<double>((k * 7919) % 33 - 16) * 0.5;
    return IsFloatingDType(t) ? v : std::round(v);
  });
}
Tensor Grads(DType t, const Dims& dims) {
  return Build(t, dims, [&](const Dims& i) {
    const int64_t k = Ravel(i, dims);
    const double v = static_cast<double>((k * 31) % 17 - 8) * 0.25;
    return IsFloatingDType(t) ? v : std::round(v * 2);
  });
}

// An elementwise gradient case on two inputs of shape `dims`.
OpCase GradCase(const std::string& op, DType t, const Dims& dims,
                std::function<double(double, double)> f, bool fixed_feeds = false) {
  OpCase c{absl::StrCat(op, "_", TypeName(t), "_", DimsName(dims)), op, t, {dims, dims}};
  if (fixed_feeds) {
    c.name += "_spread";
    c.feed_values = {Grads(t, dims), Spread(t, dims, 0)};
  }
  c.reference = BinaryRef(std::move(f));
  return c;
}

void AddElementwiseCases(std::vector<OpCase>* cases) {
  const double kAlpha = static_cast<double>(0.2f);  // a float attr, as TF holds it
  struct Grad {
    const char* op;
    std::function<double(double, double)> f;
    bool ints;  // the op takes integer types
  };
  const std::vector<Grad> grads = {
      {"ReluGrad", [](double g, double f) { return f > 0 ? g : 0.0; }, true},
      {"Relu6Grad", [](double g, double f) { return f > 0 && f < 6 ? g : 0.0; }, true},
      {"EluGrad", [](double g, double y) { return y < 0 ? (y + 1) * g : g; }, false},
      {"SeluGrad",
       [](double g, double y) { return y < 0 ? g * (y + kSeluScaleAlpha) : g * kSeluScale; },
       false},
      {"LeakyReluGrad", [kAlpha](double g, double f) { return f > 0 ? g : g * kAlpha; }, false},
      {"SoftplusGrad", [](double g, double f) { return g / (std::exp(-f) + 1); }, false},
      {"SoftsignGrad", [](double g, double f) { return g / ((1 + std::abs(f)) * (1 + std::abs(f))); },
       false},
      {"SigmoidGrad", [](double y, double dy) { return dy * y * (1 - y); }, false},
      {"TanhGrad", [](double y, double dy) { return dy * (1 - y * y); }, false},
      {"SqrtGrad", [](double y, double dy) { return 0.5 * dy / y; }, false},
      {"RsqrtGrad", [](double y, double dy) { return -0.5 * y * y * y * dy; }, false},
      {"ReciprocalGrad", [](double y, double dy) { return -dy * y * y; }, false},
      {"InvGrad", [](double y, double dy) { return -dy * y * y; }, false},
  };
  for (const Grad& g : grads) {
    cases->push_back(GradCase(g.op, DType::kFloat32, {3, 17}, g.f));
    cases->push_back(GradCase(g.op, DType::kFloat32, {}, g.f));
    cases->push_back(GradCase(g.op, DType::kFloat32, {0, 4}, g.f));
    cases->push_back(GradCase(g.op, DType::kFloat64, {2, 3, 5}, g.f));
    cases->push_back(GradCase(g.op, DType::kFloat16, {7}, g.f));
    cases->push_back(GradCase(g.op, DType::kBFloat16, {2, 9}, g.f));
    if (std::string(g.op).find("Relu") != std::string::npos ||
        std::string(g.op).find("Elu") != std::string::npos) {
      // Both branches, and the boundaries 0 and 6 exactly.
      cases->push_back(GradCase(g.op, DType::kFloat32, {5, 13}, g.f, true));
      cases->push_back(GradCase(g.op, DType::kFloat16, {33}, g.f, true));
    }
    if (g.ints) {
      for (DType t : {DType::kInt32, DType::kInt64, DType::kInt8, DType::kUInt8}) {
        cases->push_back(GradCase(g.op, t, {4, 9}, g.f, t != DType::kUInt8));
      }
    }
  }
  // LeakyReluGrad with a non-default alpha (above 1 and negative are allowed).
  for (double alpha : {1.5, static_cast<double>(-0.3f)}) {
    OpCase c = GradCase("LeakyReluGrad", DType::kFloat32, {6, 11},
                        [alpha](double g, double f) { return f > 0 ? g : g * alpha; }, true);
    c.name += alpha > 0 ? "_alpha1_5" : "_alpha_neg";
    c.attrs["alpha"].set_f(static_cast<float>(alpha));
    cases->push_back(c);
  }
}

// BiasAddGrad: the sum over every dim but the channel dim.
OpCase BiasAddGradCase(DType t, const Dims& dims, const std::string& format) {
  OpCase c{absl::StrCat("BiasAddGrad_", TypeName(t), "_", DimsName(dims), "_", format),
           "BiasAddGrad", t, {dims}};
  c.attrs["data_format"] = StringAttr(format);
  const size_t channel = format == "NHWC" ? dims.size() - 1 : 1;
  c.reference = [channel](const std::vector<Tensor>& in) {
    const Dims& d = in[0].dims();
    std::vector<double> sum(static_cast<size_t>(d[channel]), 0.0);
    for (int64_t k = 0; k < in[0].num_elements(); ++k) {
      sum[static_cast<size_t>(Unravel(k, d)[channel])] += ElementAsDouble(in[0], k);
    }
    return Floats(in[0].dtype(), {d[channel]}, sum);
  };
  return c;
}

// BroadcastGradientArgs on constant shapes with hand-computed reduction axes.
OpCase BgaCase(const std::string& name, DType t, const std::vector<int64_t>& s0,
               const std::vector<int64_t>& s1, int output, const std::vector<int64_t>& want) {
  auto vec = [t](const std::vector<int64_t>& v) {
    if (t == DType::kInt64) return Ints64(v);
    return Ints(std::vector<int32_t>(v.begin(), v.end()));
  };
  OpCase c{absl::StrCat("BroadcastGradientArgs_", name, "_", TypeName(t), "_r", output),
           "BroadcastGradientArgs", t, {}, {vec(s0), vec(s1)}};
  c.output = output;
  const Tensor expected = vec(want);
  c.reference = [expected](const std::vector<Tensor>&) { return expected; };
  return c;
}

void AddBroadcastGradientArgsCases(std::vector<OpCase>* cases) {
  struct Bga {
    const char* name;
    std::vector<int64_t> s0, s1, r0, r1;
  };
  const std::vector<Bga> all = {
      {"bias", {2, 3, 4}, {4}, {}, {0, 1}},
      {"both", {2, 1, 4}, {3, 1}, {1}, {0, 2}},
      {"equal_with_ones", {2, 1}, {2, 1}, {}, {}},  // equal shapes reduce nothing
      {"scalar", {}, {5, 2}, {0, 1}, {}},
      {"ones", {1}, {1, 1}, {0, 1}, {0, 1}},
      {"zero_dim", {0, 3}, {1, 3}, {}, {0}},
  };
  for (const Bga& b : all) {
    for (DType t : {DType::kInt32, DType::kInt64}) {
      cases->push_back(BgaCase(b.name, t, b.s0, b.s1, 0, b.r0));
      cases->push_back(BgaCase(b.name, t, b.s0, b.s1, 1, b.r1));
    }
  }
}

// SoftmaxCrossEntropyWithLogits in double: output 0 the loss, 1 the backprop.
RefFn XentRef(int output) {
  return [output](const std::vector<Tensor>& in) {
    const Tensor &x = in[0], &y = in[1];
    auto dims2 = [](Dims d) {
      while (d.size() < 2) d.insert(d.begin(), 1);
      return d;
    };
    const Dims dx = dims2(x.dims()), dy = dims2(y.dims());
    const int64_t batch = std::max(dx[0], dy[0]), classes = std::max(dx[1], dy[1]);
    auto at = [&](const Tensor& t, const Dims& d, int64_t r, int64_t j) {
      return ElementAsDouble(t, (d[0] == 1 ? 0 : r) * d[1] + (d[1] == 1 ? 0 : j));
    };
    Tensor out = output == 0 ? Tensor(x.dtype(), {batch}) : Tensor(x.dtype(), {batch, classes});
    for (int64_t r = 0; r < batch; ++r) {
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < classes; ++j) mx = std::max(mx, at(x, dx, r, j));
      double sum = 0;
      for (int64_t j = 0; j < classes; ++j) sum += std::exp(at(x, dx, r, j) - mx);
      double loss = 0;
      for (int64_t j = 0; j < classes; ++j) {
        const double p = std::exp(at(x, dx, r, j) - mx) / sum;
        loss -= at(y, dy, r, j) * std::log(p);
        if (output == 1) SetFromDouble(out, r * classes + j, p - at(y, dy, r, j));
      }
      if (output == 0) SetFromDouble(out, r, loss);
    }
    return out;
  };
}

void AddXentCases(std::vector<OpCase>* cases) {
  struct Shapes {
    Dims logits, labels;
  };
  const std::vector<Shapes> shapes = {
      {{4, 5}, {4, 5}}, {{3, 17}, {3, 17}}, {{4, 5}, {5}}, {{1, 6}, {3, 6}},
      {{3, 1}, {3, 4}}, {{0, 5}, {0, 5}},   {{2, 1}, {2, 1}},
  };
  for (int output : {0, 1}) {
    for (const Shapes& s : shapes) {
      OpCase c{absl::StrCat("SoftmaxCrossEntropyWithLogits_f32_", DimsName(s.logits), "_",
                            DimsName(s.labels), "_out", output),
               "SoftmaxCrossEntropyWithLogits", DType::kFloat32, {s.logits, s.labels}};
      c.output = output;
      c.reference = XentRef(output);
      cases->push_back(c);
    }
    for (DType t : {DType::kFloat16, DType::kBFloat16, DType::kFloat64}) {
      OpCase c{absl::StrCat("SoftmaxCrossEntropyWithLogits_", TypeName(t), "_out", output),
               "SoftmaxCrossEntropyWithLogits", t, {{3, 7}, {3, 7}}};
      c.output = output;
      c.reference = XentRef(output);
      cases->push_back(c);
    }
    // Large logits: the max shift keeps exp finite.
    OpCase big{absl::StrCat("SoftmaxCrossEntropyWithLogits_f32_large_out", output),
               "SoftmaxCrossEntropyWithLogits", DType::kFloat32, {{2, 3}, {2, 3}}};
    big.feed_values = {Floats(DType::kFloat32, {2, 3}, {1000, 999, 998, -500, 0, 500}),
                       Floats(DType::kFloat32, {2, 3}, {0.2, 0.3, 0.5, 1, 0, 0})};
    big.output = output;
    big.reference = XentRef(output);
    cases->push_back(big);
  }
}

// SparseSoftmaxCrossEntropyWithLogits: the dense reference on one-hot labels.
RefFn SparseXentRef(int output) {
  return [output](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    Tensor onehot(x.dtype(), x.dims());
    for (int64_t r = 0; r < x.dim(0); ++r) {
      const int64_t l = static_cast<int64_t>(ElementAsDouble(in[1], r));
      SetFromDouble(onehot, r * x.dim(1) + l, 1.0);
    }
    return XentRef(output)({x, onehot});
  };
}

void AddSparseXentCases(std::vector<OpCase>* cases) {
  struct Sx {
    DType t, tl;
    Dims logits;
    std::vector<int64_t> labels;
  };
  const std::vector<Sx> all = {
      {DType::kFloat32, DType::kInt64, {4, 5}, {0, 4, 2, 1}},
      {DType::kFloat32, DType::kInt32, {3, 17}, {16, 0, 5}},
      {DType::kFloat64, DType::kInt64, {2, 3}, {2, 2}},
      {DType::kFloat16, DType::kInt32, {3, 4}, {3, 1, 0}},
      {DType::kBFloat16, DType::kInt64, {2, 6}, {5, 0}},
      {DType::kFloat32, DType::kInt32, {5, 1}, {0, 0, 0, 0, 0}},
      {DType::kFloat32, DType::kInt64, {0, 4}, {}},
  };
  for (int output : {0, 1}) {
    for (const Sx& s : all) {
      const Dims ld = {static_cast<int64_t>(s.labels.size())};
      OpCase c{absl::StrCat("SparseSoftmaxCrossEntropyWithLogits_", TypeName(s.t), "_",
                            TypeName(s.tl), "_", DimsName(s.logits), "_out", output),
               "SparseSoftmaxCrossEntropyWithLogits", s.t, {s.logits, ld}};
      c.input_dtypes = {s.t, s.tl};
      c.attrs["Tlabels"] = TypeAttr(s.tl);
      Tensor labels(s.tl, ld);
      for (size_t k = 0; k < s.labels.size(); ++k) {
        SetFromDouble(labels, static_cast<int64_t>(k), static_cast<double>(s.labels[k]));
      }
      c.feed_values = {Build(s.t, s.logits,
                             [&](const Dims& i) {
                               return std::sin(static_cast<double>(Ravel(i, s.logits)) * 1.7) * 3;
                             }),
                       labels};
      c.output = output;
      c.reference = SparseXentRef(output);
      cases->push_back(c);
    }
  }
}

// DynamicStitch with constant indices (consts first) and fed data; the reference scatters
// rows in order, so later duplicates win.
OpCase StitchCase(const std::string& op, const std::string& name, DType t,
                  const std::vector<Tensor>& indices, const std::vector<Dims>& data) {
  OpCase c{absl::StrCat(op, "_", name, "_", TypeName(t)), op, t, data, indices};
  c.consts_first = true;
  c.attrs["N"] = IntAttr(static_cast<int64_t>(indices.size()));
  const size_t n = indices.size();
  c.reference = [n](const std::vector<Tensor>& in) {
    // in: data[0..n) (the placeholders), then indices[0..n) (the consts).
    int64_t max_index = -1;
    for (size_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < in[n + i].num_elements(); ++j) {
        max_index = std::max(max_index, static_cast<int64_t>(ElementAsDouble(in[n + i], j)));
      }
    }
    const Dims& d0 = in[0].dims();
    Dims slice(d0.begin() + in[n].rank(), d0.end());
    int64_t row = 1;
    for (int64_t d : slice) row *= d;
    Dims out_dims = {max_index + 1};
    out_dims.insert(out_dims.end(), slice.begin(), slice.end());
    Tensor out(in[0].dtype(), out_dims);
    for (size_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < in[n + i].num_elements(); ++j) {
        const int64_t dst = static_cast<int64_t>(ElementAsDouble(in[n + i], j));
        for (int64_t e = 0; e < row; ++e) {
          SetFromDouble(out, dst * row + e, ElementAsDouble(in[i], j * row + e));
        }
      }
    }
    return out;
  };
  return c;
}

Tensor IntMatrix(const Dims& dims, const std::vector<int32_t>& v) {
  return Tensor::FromVector<int32_t>(DType::kInt32, dims, v);
}

void AddStitchCases(std::vector<OpCase>* cases) {
  for (const char* op : {"DynamicStitch", "ParallelDynamicStitch"}) {
    for (DType t : {DType::kFloat32, DType::kInt32, DType::kFloat16}) {
      // Interleaved rows, a rank-2 index tensor.
      cases->push_back(StitchCase(op, "interleaved", t,
                                  {Ints({0, 2, 4}), IntMatrix({1, 2}, {1, 3})},
                                  {{3, 2}, {1, 2, 2}}));
    }
    // A scalar index; rows of rank 2.
    cases->push_back(StitchCase(op, "scalar_index", DType::kFloat32,
                                {Ints({1}, true), Ints({0, 2})}, {{3, 4}, {2, 3, 4}}));
    // Scalar data rows (the shape arithmetic of reduction gradients, tf1_regression).
    cases->push_back(StitchCase(op, "shape_merge", DType::kInt32,
                                {Ints({0, 1, 2, 3}), Ints({1, 3})}, {{4}, {2}}));
    // Three inputs, runs out of order.
    cases->push_back(StitchCase(op, "three", DType::kFloat64,
                                {Ints({5, 4}), Ints({0, 1, 2}), Ints({3})},
                                {{2, 3}, {3, 3}, {1, 3}}));
    // An empty index list next to a full one.
    cases->push_back(StitchCase(op, "empty_part", DType::kFloat32, {Ints({}), Ints({1, 0})},
                                {{0, 5}, {2, 5}}));
  }
  // DynamicStitch: later duplicates win.
  cases->push_back(StitchCase("DynamicStitch", "duplicates", DType::kFloat32,
                              {Ints({0, 1, 2}), Ints({1})}, {{3}, {1}}));
}

// ConcatOffset with hand-computed offsets.
void AddConcatOffsetCases(std::vector<OpCase>* cases) {
  struct Co {
    const char* name;
    int32_t axis;
    std::vector<std::vector<int64_t>> shapes;
    std::vector<std::vector<int64_t>> want;
  };
  const std::vector<Co> all = {
      {"axis1", 1, {{2, 3, 4}, {2, 5, 4}, {2, 0, 4}}, {{0, 0, 0}, {0, 3, 0}, {0, 8, 0}}},
      {"axis_neg", -1, {{2, 3}, {2, 4}}, {{0, 0}, {0, 3}}},
      {"axis0_vectors", 0, {{7}, {1}, {2}, {3}}, {{0}, {7}, {8}, {10}}},
  };
  for (const Co& co : all) {
    for (DType st : {DType::kInt32, DType::kInt64}) {
      std::vector<Tensor> consts = {Ints({co.axis}, true)};
      for (const auto& s : co.shapes) {
        consts.push_back(st == DType::kInt64 ? Ints64(s)
                                             : Ints(std::vector<int32_t>(s.begin(), s.end())));
      }
      for (size_t out = 0; out < co.shapes.size(); ++out) {
        OpCase c{absl::StrCat("ConcatOffset_", co.name, "_", TypeName(st), "_out", out),
                 "ConcatOffset", DType::kInt32, {}, consts};
        c.has_t = false;
        c.attrs["N"] = IntAttr(static_cast<int64_t>(co.shapes.size()));
        c.attrs["shape_type"] = TypeAttr(st);
        c.output = static_cast<int>(out);
        const std::vector<int64_t>& w = co.want[out];
        const Tensor expected =
            st == DType::kInt64 ? Ints64(w) : Ints(std::vector<int32_t>(w.begin(), w.end()));
        c.reference = [expected](const std::vector<Tensor>&) { return expected; };
        cases->push_back(c);
      }
    }
  }
}

// StridedSliceGrad against a hand-listed map: output[pos[k]] = dy[k], zero elsewhere.
OpCase SsgCase(const std::string& name, DType t, const Dims& shape, std::vector<int32_t> begin,
               std::vector<int32_t> end, std::vector<int32_t> strides, const Dims& dy,
               std::vector<int64_t> pos, std::map<std::string, int64_t> masks = {}) {
  OpCase c{absl::StrCat("StridedSliceGrad_", name, "_", TypeName(t)), "StridedSliceGrad", t,
           {dy}, {Ints(std::vector<int32_t>(shape.begin(), shape.end())), Ints(begin), Ints(end),
                  Ints(strides)}};
  c.consts_first = true;
  c.attrs["Index"] = TypeAttr(DType::kInt32);
  for (const auto& [k, v] : masks) c.attrs[k] = IntAttr(v);
  c.reference = [shape, pos, t](const std::vector<Tensor>& in) {
    Tensor out(t, shape);
    for (size_t k = 0; k < pos.size(); ++k) {
      SetFromDouble(out, pos[k], ElementAsDouble(in[0], static_cast<int64_t>(k)));
    }
    return out;
  };
  return c;
}

void AddStridedSliceGradCases(std::vector<OpCase>* cases) {
  for (DType t : {DType::kFloat32, DType::kInt32, DType::kFloat16}) {
    // x[1:6:2] of a length-7 vector: positions 1, 3, 5.
    cases->push_back(SsgCase("step2", t, {7}, {1}, {6}, {2}, {3}, {1, 3, 5}));
  }
  // x[::-2] of a length-6 vector: positions 5, 3, 1.
  cases->push_back(SsgCase("reverse", DType::kFloat64, {6}, {0}, {0}, {-2}, {3}, {5, 3, 1},
                           {{"begin_mask", 1}, {"end_mask", 1}}));
  // x[1, 0:3:2] of [3, 4]: shrink dim 0 -> dy [2] at (1,0), (1,2).
  cases->push_back(SsgCase("shrink", DType::kFloat32, {3, 4}, {1, 0}, {2, 3}, {1, 2}, {2}, {4, 6},
                           {{"shrink_axis_mask", 1}}));
  // x[:, newaxis, 1:] of [2, 3]: dy [2, 1, 2] at (0,1),(0,2),(1,1),(1,2).
  cases->push_back(SsgCase("new_axis", DType::kFloat32, {2, 3}, {0, 0, 1}, {0, 0, 3}, {1, 1, 1},
                           {2, 1, 2}, {1, 2, 4, 5},
                           {{"begin_mask", 1}, {"end_mask", 1}, {"new_axis_mask", 2}}));
  // x[..., ::-1] of [2, 2, 3] (ellipsis): every row reversed.
  cases->push_back(SsgCase("ellipsis", DType::kFloat32, {2, 2, 3}, {0, 0}, {0, 0}, {1, -1},
                           {2, 2, 3}, {2, 1, 0, 5, 4, 3, 8, 7, 6, 11, 10, 9},
                           {{"ellipsis_mask", 1}, {"begin_mask", 2}, {"end_mask", 2}}));
  // An empty slice x[3:1] of [4, 2]: all zeros.
  cases->push_back(SsgCase("empty", DType::kFloat32, {4, 2}, {3}, {1}, {1}, {0, 2}, {}));
  // Clamped ends x[-10:10:3] of a length-8 vector: positions 0, 3, 6.
  cases->push_back(SsgCase("clamped", DType::kFloat32, {8}, {-10}, {10}, {3}, {3}, {0, 3, 6}));
}

// MirrorPadGrad: each padded position adds into the input position it mirrors.
OpCase MpgCase(const std::string& mode, DType t, const Dims& in,
               const std::vector<int32_t>& pads) {
  OpCase c{absl::StrCat("MirrorPadGrad_", mode, "_", TypeName(t), "_", DimsName(in)),
           "MirrorPadGrad", t, {in}, {IntMatrix({static_cast<int64_t>(in.size()), 2}, pads)}};
  c.attrs["mode"] = StringAttr(mode);
  c.attrs["Tpaddings"] = TypeAttr(DType::kInt32);
  const int64_t offset = mode == "REFLECT" ? 1 : 0;
  c.reference = [pads, offset](const std::vector<Tensor>& x) {
    const Dims& d = x[0].dims();
    Dims out_dims(d.size());
    for (size_t k = 0; k < d.size(); ++k) out_dims[k] = d[k] - pads[2 * k] - pads[2 * k + 1];
    std::vector<double> sum(static_cast<size_t>(std::max<int64_t>(0, [&] {
      int64_t n = 1;
      for (int64_t v : out_dims) n *= v;
      return n;
    }())), 0.0);
    for (int64_t e = 0; e < x[0].num_elements(); ++e) {
      Dims idx = Unravel(e, d);
      for (size_t k = 0; k < d.size(); ++k) {
        int64_t q = idx[k] - pads[2 * k];
        const int64_t n = out_dims[k];
        while (q < 0 || q >= n) {  // mirror until inside (one step suffices for valid pads)
          q = q < 0 ? -q - 1 + offset : 2 * n - 1 - offset - q;
        }
        idx[k] = q;
      }
      sum[static_cast<size_t>(Ravel(idx, out_dims))] += ElementAsDouble(x[0], e);
    }
    return Floats(x[0].dtype(), out_dims, sum);
  };
  return c;
}

void AddMirrorPadGradCases(std::vector<OpCase>* cases) {
  for (const char* mode : {"REFLECT", "SYMMETRIC"}) {
    cases->push_back(MpgCase(mode, DType::kFloat32, {7}, {2, 1}));
    cases->push_back(MpgCase(mode, DType::kFloat32, {6, 9}, {1, 2, 3, 2}));
    cases->push_back(MpgCase(mode, DType::kFloat64, {3, 4, 5}, {0, 0, 1, 1, 2, 0}));
    cases->push_back(MpgCase(mode, DType::kInt32, {5, 5}, {1, 1, 0, 2}));
    cases->push_back(MpgCase(mode, DType::kFloat16, {8}, {2, 2}));
  }
  cases->push_back(MpgCase("SYMMETRIC", DType::kFloat32, {6}, {2, 2}));  // pads == dim
}

// ---- Pooling gradients (NHWC) ----

tensorflow::AttrValue IntListAttr(const std::vector<int64_t>& v) {
  tensorflow::AttrValue a;
  a.mutable_list();
  for (int64_t x : v) a.mutable_list()->add_i(x);
  return a;
}

// TF's windowed output size and padding before, for one spatial dim.
std::pair<int64_t, int64_t> PoolDim(int64_t in, int64_t k, int64_t s, bool same) {
  if (!same) return {(in - k + s) / s, 0};
  const int64_t out = (in + s - 1) / s;
  return {out, std::max<int64_t>((out - 1) * s + k - in, 0) / 2};
}

struct PoolSpec {
  const char* name;
  Dims in;  // NHWC
  int64_t k, s;
  bool same;
};

// Calls f(n, oh, ow, c, h0, h1, w0, w1) for every output element, with its clipped window.
template <typename F>
void ForEachPoolOutput(const PoolSpec& p, F f) {
  const auto [oh_n, ph] = PoolDim(p.in[1], p.k, p.s, p.same);
  const auto [ow_n, pw] = PoolDim(p.in[2], p.k, p.s, p.same);
  for (int64_t n = 0; n < p.in[0]; ++n) {
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        for (int64_t c = 0; c < p.in[3]; ++c) {
          const int64_t hs = oh * p.s - ph, ws = ow * p.s - pw;
          f(n, oh, ow, c, std::max<int64_t>(hs, 0), std::min(hs + p.k, p.in[1]),
            std::max<int64_t>(ws, 0), std::min(ws + p.k, p.in[2]));
        }
      }
    }
  }
}

Dims PoolOut(const PoolSpec& p) {
  return {p.in[0], PoolDim(p.in[1], p.k, p.s, p.same).first,
          PoolDim(p.in[2], p.k, p.s, p.same).first, p.in[3]};
}

void SetPoolAttrs(OpCase* c, const PoolSpec& p) {
  c->attrs["ksize"] = IntListAttr({1, p.k, p.k, 1});
  c->attrs["strides"] = IntListAttr({1, p.s, p.s, 1});
  c->attrs["padding"] = StringAttr(p.same ? "SAME" : "VALID");
}

const std::vector<PoolSpec>& PoolSpecs() {
  static const std::vector<PoolSpec> specs = {
      {"k2s2_valid", {2, 5, 6, 3}, 2, 2, false},
      {"k3s2_same", {1, 7, 7, 2}, 3, 2, true},
      {"k3s1_same", {1, 4, 5, 1}, 3, 1, true},
      {"k2s3_valid", {2, 7, 8, 2}, 2, 3, false},
  };
  return specs;
}

RefFn MaxPoolGradRef(const PoolSpec& p);

void AddPoolGradCases(std::vector<OpCase>* cases) {
  for (const PoolSpec& p : PoolSpecs()) {
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
      OpCase c{absl::StrCat("AvgPoolGrad_", p.name, "_", TypeName(t)), "AvgPoolGrad", t,
               {PoolOut(p)}, {Ints(std::vector<int32_t>(p.in.begin(), p.in.end()))}};
      c.consts_first = true;
      SetPoolAttrs(&c, p);
      c.reference = [p](const std::vector<Tensor>& in) {
        Tensor out(in[0].dtype(), p.in);
        std::vector<double> acc(static_cast<size_t>(out.num_elements()), 0.0);
        const Dims od = in[0].dims();
        ForEachPoolOutput(p, [&](int64_t n, int64_t oh, int64_t ow, int64_t c, int64_t h0,
                                 int64_t h1, int64_t w0, int64_t w1) {
          const double g = At(in[0], {n, oh, ow, c}) / static_cast<double>((h1 - h0) * (w1 - w0));
          for (int64_t i = h0; i < h1; ++i) {
            for (int64_t j = w0; j < w1; ++j) acc[static_cast<size_t>(Ravel({n, i, j, c}, p.in))] += g;
          }
        });
        return Floats(in[0].dtype(), p.in, acc);
      };
      cases->push_back(c);
    }
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32}) {
      OpCase c{absl::StrCat("MaxPoolGrad_", p.name, "_", TypeName(t)), "MaxPoolGrad", t,
               {p.in, PoolOut(p), PoolOut(p)}};
      SetPoolAttrs(&c, p);
      if (t == DType::kFloat32) {  // MaxPoolGradV2: ksize and strides as constant inputs
        OpCase v2 = c;
        v2.name = absl::StrCat("MaxPoolGradV2_", p.name, "_", TypeName(t));
        v2.op = "MaxPoolGradV2";
        v2.attrs.erase("ksize");
        v2.attrs.erase("strides");
        v2.consts = {Ints({1, static_cast<int32_t>(p.k), static_cast<int32_t>(p.k), 1}),
                     Ints({1, static_cast<int32_t>(p.s), static_cast<int32_t>(p.s), 1})};
        v2.reference = MaxPoolGradRef(p);
        cases->push_back(v2);
      }
      c.reference = MaxPoolGradRef(p);
      cases->push_back(c);
    }
  }
}

// MaxPoolGrad: each gradient goes to the first maximum of its window (row-major order).
RefFn MaxPoolGradRef(const PoolSpec& p) {
  return [p](const std::vector<Tensor>& in) {
    std::vector<double> acc(static_cast<size_t>(in[0].num_elements()), 0.0);
    ForEachPoolOutput(p, [&](int64_t n, int64_t oh, int64_t ow, int64_t c, int64_t h0,
                             int64_t h1, int64_t w0, int64_t w1) {
      Dims best;
      for (int64_t i = h0; i < h1; ++i) {
        for (int64_t j = w0; j < w1; ++j) {
          if (best.empty() || At(in[0], {n, i, j, c}) > At(in[0], best)) best = {n, i, j, c};
        }
      }
      acc[static_cast<size_t>(Ravel(best, p.in))] += At(in[2], {n, oh, ow, c});
    });
    return Floats(in[0].dtype(), p.in, acc);
  };
}

// ---- FusedBatchNormGrad ----

// TF's batch-norm gradient in double: output 0 x_backprop, 1 scale_backprop, 2 offset_backprop,
// 3 an empty placeholder.
RefFn BatchNormGradRef(int output, bool training, bool nchw, double eps) {
  return [=](const std::vector<Tensor>& in) {
    const Tensor &dy = in[0], &x = in[1];
    const Dims& d = x.dims();
    const size_t cdim = nchw ? 1 : d.size() - 1;
    const int64_t channels = d[cdim];
    if (output == 3) return Tensor(DType::kFloat32, {0});
    std::vector<double> sum_dy(static_cast<size_t>(channels)), sum_dyxc(sum_dy.size());
    for (int64_t k = 0; k < x.num_elements(); ++k) {
      const int64_t c = Unravel(k, d)[cdim];
      const double xc = ElementAsDouble(x, k) - ElementAsDouble(in[3], c);
      sum_dy[static_cast<size_t>(c)] += ElementAsDouble(dy, k);
      sum_dyxc[static_cast<size_t>(c)] += ElementAsDouble(dy, k) * xc;
    }
    auto r = [&](int64_t c) { return 1.0 / std::sqrt(ElementAsDouble(in[4], c) + eps); };
    if (output == 1 || output == 2) {
      std::vector<double> v(sum_dy.size());
      for (int64_t c = 0; c < channels; ++c) {
        v[static_cast<size_t>(c)] = output == 2 ? sum_dy[static_cast<size_t>(c)]
                                                : sum_dyxc[static_cast<size_t>(c)] * r(c);
      }
      return Floats(DType::kFloat32, {channels}, v);
    }
    const double n = static_cast<double>(x.num_elements() / std::max<int64_t>(1, channels));
    return Build(x.dtype(), d, [&](const Dims& i) {
      const int64_t c = i[cdim];
      const size_t cc = static_cast<size_t>(c);
      const double g = At(dy, i), xc = At(x, i) - ElementAsDouble(in[3], c);
      const double s = ElementAsDouble(in[2], c);
      if (!training) return g * s * r(c);
      return s * r(c) * (g - sum_dy[cc] / n - xc * (sum_dyxc[cc] / n) * r(c) * r(c));
    });
  };
}

void AddBatchNormGradCases(std::vector<OpCase>* cases) {
  struct Bn {
    const char* op;
    DType t;
    Dims x;
    bool nchw, training;
  };
  const std::vector<Bn> all = {
      {"FusedBatchNormGrad", DType::kFloat32, {2, 3, 4, 3}, false, true},
      {"FusedBatchNormGrad", DType::kFloat32, {2, 3, 4, 3}, false, false},
      {"FusedBatchNormGradV2", DType::kFloat32, {1, 5, 3, 4}, true, true},
      {"FusedBatchNormGradV2", DType::kFloat16, {2, 2, 3, 5}, false, true},
      {"FusedBatchNormGradV3", DType::kFloat32, {3, 2, 2, 4}, false, true},
      {"FusedBatchNormGradV3", DType::kBFloat16, {2, 4, 2, 3}, false, false},
      {"FusedBatchNormGradV3", DType::kFloat32, {2, 3, 2, 5}, true, false},
  };
  for (const Bn& b : all) {
    const int64_t channels = b.nchw ? b.x[1] : b.x[3];
    const bool v1 = std::string(b.op) == "FusedBatchNormGrad";
    const bool v3 = std::string(b.op) == "FusedBatchNormGradV3";
    for (int output : {0, 1, 2, 3}) {
      OpCase c{absl::StrCat(b.op, "_", TypeName(b.t), "_", DimsName(b.x), b.nchw ? "_nchw" : "",
                            b.training ? "_training" : "_inference", "_out", output),
               b.op, b.t, {b.x, b.x, {channels}, {channels}, {channels}}};
      const DType f = DType::kFloat32;
      c.input_dtypes = {b.t, b.t, f, f, f};
      auto vec = [&](int salt, double lo, double span) {
        return Build(f, {channels}, [=](const Dims& i) {
          return lo + span * std::fabs(std::sin(static_cast<double>(i[0] * 3 + salt)));
        });
      };
      c.feed_values = {Build(b.t, b.x, [&](const Dims& i) {
                         return std::sin(static_cast<double>(Ravel(i, b.x)) * 0.7);
                       }),
                       Build(b.t, b.x, [&](const Dims& i) {
                         return std::cos(static_cast<double>(Ravel(i, b.x)) * 1.3) * 2;
                       }),
                       vec(1, 0.5, 1.0), vec(2, -0.3, 0.6), vec(3, 0.2, 1.5)};
      if (v3) {
        c.inputs.push_back({});
        c.input_dtypes.push_back(f);
        c.feed_values.push_back(Tensor(f, {}));
      }
      if (!v1) c.attrs["U"] = TypeAttr(f);
      c.attrs["is_training"] = BoolAttr(b.training);
      c.attrs["epsilon"].set_f(0.001f);
      if (b.nchw) c.attrs["data_format"] = StringAttr("NCHW");
      c.output = output;
      c.reference = BatchNormGradRef(output, b.training, b.nchw, static_cast<double>(0.001f));
      cases->push_back(c);
    }
  }
}

// ---- Convolution backprops (NHWC) ----

struct ConvSpec {
  const char* name;
  Dims x, filter;  // filter [kh, kw, in_c, out_c] (depthwise [kh, kw, c, multiplier])
  int64_t stride, dilation;
  bool same;
};

// TF's output size and padding before of one spatial dim with dilation.
std::pair<int64_t, int64_t> ConvDim(int64_t in, int64_t k, int64_t s, int64_t d, bool same) {
  const int64_t ek = (k - 1) * d + 1;
  if (!same) return {(in - ek + s) / s, 0};
  const int64_t out = (in + s - 1) / s;
  return {out, std::max<int64_t>((out - 1) * s + ek - in, 0) / 2};
}

Dims ConvOut(const ConvSpec& c, bool depthwise) {
  return {c.x[0], ConvDim(c.x[1], c.filter[0], c.stride, c.dilation, c.same).first,
          ConvDim(c.x[2], c.filter[1], c.stride, c.dilation, c.same).first,
          depthwise ? c.filter[2] * c.filter[3] : c.filter[3]};
}

// f(n, oy, ox, kh, kw, iy, ix) for every tap inside the input.
template <typename F>
void ForEachConvTap(const ConvSpec& c, F f) {
  const auto [oh, ph] = ConvDim(c.x[1], c.filter[0], c.stride, c.dilation, c.same);
  const auto [ow, pw] = ConvDim(c.x[2], c.filter[1], c.stride, c.dilation, c.same);
  for (int64_t n = 0; n < c.x[0]; ++n) {
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        for (int64_t kh = 0; kh < c.filter[0]; ++kh) {
          for (int64_t kw = 0; kw < c.filter[1]; ++kw) {
            const int64_t iy = oy * c.stride + kh * c.dilation - ph;
            const int64_t ix = ox * c.stride + kw * c.dilation - pw;
            if (iy >= 0 && iy < c.x[1] && ix >= 0 && ix < c.x[2]) f(n, oy, ox, kh, kw, iy, ix);
          }
        }
      }
    }
  }
}

void SetConvAttrs(OpCase* o, const ConvSpec& c) {
  o->attrs["strides"] = IntListAttr({1, c.stride, c.stride, 1});
  o->attrs["dilations"] = IntListAttr({1, c.dilation, c.dilation, 1});
  o->attrs["padding"] = StringAttr(c.same ? "SAME" : "VALID");
}

Tensor Wavy(DType t, const Dims& d, double freq) {
  return Build(t, d, [&](const Dims& i) { return std::sin(static_cast<double>(Ravel(i, d)) * freq); });
}

void AddConvBackpropCases(std::vector<OpCase>* cases) {
  const std::vector<ConvSpec> conv = {
      {"s1_same", {2, 5, 6, 3}, {3, 3, 3, 4}, 1, 1, true},
      {"s2_valid", {1, 7, 7, 2}, {3, 2, 2, 5}, 2, 1, false},
      {"dilated_same", {1, 6, 6, 2}, {2, 2, 2, 3}, 1, 2, true},
      {"s2_same_1x1", {2, 5, 4, 3}, {1, 1, 3, 2}, 2, 1, true},
  };
  for (const bool depthwise : {false, true}) {
    const std::string op = depthwise ? "DepthwiseConv2dNativeBackpropFilter" : "Conv2DBackpropFilter";
    for (const ConvSpec& c : conv) {
      for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
        if (depthwise && c.dilation != 1) continue;
        OpCase o{absl::StrCat(op, "_", c.name, "_", TypeName(t)), op, t, {ConvOut(c, depthwise)},
                 {Wavy(t, c.x, 0.9), Ints(std::vector<int32_t>(c.filter.begin(), c.filter.end()))}};
        o.consts_first = true;  // input (as a constant), filter_sizes, then the fed out_backprop
        SetConvAttrs(&o, c);
        o.reference = [c, depthwise](const std::vector<Tensor>& in) {
          const Tensor &dy = in[0], &x = in[1];
          std::vector<double> acc(static_cast<size_t>(c.filter[0] * c.filter[1] * c.filter[2] *
                                                      c.filter[3]), 0.0);
          ForEachConvTap(c, [&](int64_t n, int64_t oy, int64_t ox, int64_t kh, int64_t kw,
                                int64_t iy, int64_t ix) {
            for (int64_t ci = 0; ci < c.filter[2]; ++ci) {
              for (int64_t o = 0; o < c.filter[3]; ++o) {
                const int64_t oc = depthwise ? ci * c.filter[3] + o : o;
                acc[static_cast<size_t>(Ravel({kh, kw, ci, o}, c.filter))] +=
                    At(x, {n, iy, ix, ci}) * At(dy, {n, oy, ox, oc});
              }
            }
          });
          return Floats(x.dtype(), c.filter, acc);
        };
        cases->push_back(o);
      }
    }
  }
  const std::vector<ConvSpec> dw = {
      {"s1_same", {2, 5, 5, 3}, {3, 3, 3, 2}, 1, 1, true},
      {"s2_valid", {1, 7, 6, 2}, {2, 3, 2, 1}, 2, 1, false},
      {"s2_same", {1, 6, 7, 4}, {3, 3, 4, 3}, 2, 1, true},
  };
  for (const ConvSpec& c : dw) {
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
      OpCase o{absl::StrCat("DepthwiseConv2dNativeBackpropInput_", c.name, "_", TypeName(t)),
               "DepthwiseConv2dNativeBackpropInput", t, {c.filter, ConvOut(c, true)},
               {Ints(std::vector<int32_t>(c.x.begin(), c.x.end()))}};
      o.consts_first = true;
      SetConvAttrs(&o, c);
      o.reference = [c](const std::vector<Tensor>& in) {
        const Tensor &f = in[0], &dy = in[1];
        std::vector<double> acc(static_cast<size_t>(c.x[0] * c.x[1] * c.x[2] * c.x[3]), 0.0);
        ForEachConvTap(c, [&](int64_t n, int64_t oy, int64_t ox, int64_t kh, int64_t kw,
                              int64_t iy, int64_t ix) {
          for (int64_t ci = 0; ci < c.x[3]; ++ci) {
            for (int64_t m = 0; m < c.filter[3]; ++m) {
              acc[static_cast<size_t>(Ravel({n, iy, ix, ci}, c.x))] +=
                  At(dy, {n, oy, ox, ci * c.filter[3] + m}) * At(f, {kh, kw, ci, m});
            }
          }
        });
        return Floats(f.dtype(), c.x, acc);
      };
      cases->push_back(o);
    }
  }
}

// ---- Resize gradients (NHWC) ----

// TF's resize source coordinate in float (legacy or half-pixel scaler).
float ResizeScale(int64_t in, int64_t out, bool align) {
  return (align && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                            : static_cast<float>(in) / static_cast<float>(out);
}

struct ResizeSpec {
  const char* name;
  Dims grads;                // [N, OH, OW, C]
  int64_t h, w;              // the original size
  bool align, half_pixel;
};

void AddResizeGradCases(std::vector<OpCase>* cases) {
  const std::vector<ResizeSpec> specs = {
      {"up", {2, 7, 9, 3}, 3, 4, false, false},
      {"down", {1, 3, 2, 2}, 5, 6, false, false},
      {"up_align", {1, 5, 7, 2}, 3, 4, true, false},
      {"up_half_pixel", {2, 6, 5, 1}, 4, 3, false, true},
      {"down_half_pixel", {1, 2, 3, 3}, 5, 7, false, true},
  };
  for (const ResizeSpec& r : specs) {
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
      const Dims image = {r.grads[0], r.h, r.w, r.grads[3]};
      OpCase c{absl::StrCat("ResizeBilinearGrad_", r.name, "_", TypeName(t)), "ResizeBilinearGrad",
               t, {r.grads, image}};
      c.input_dtypes = {DType::kFloat32, t};
      c.attrs["align_corners"] = BoolAttr(r.align);
      c.attrs["half_pixel_centers"] = BoolAttr(r.half_pixel);
      c.reference = [r, image, t](const std::vector<Tensor>& in) {
        std::vector<double> acc(static_cast<size_t>(image[0] * r.h * r.w * image[3]), 0.0);
        const float sy = ResizeScale(r.h, r.grads[1], r.align);
        const float sx = ResizeScale(r.w, r.grads[2], r.align);
        auto src = [&](int64_t i, float s) {
          return r.half_pixel ? (static_cast<float>(i) + 0.5f) * s - 0.5f : static_cast<float>(i) * s;
        };
        for (int64_t k = 0; k < in[0].num_elements(); ++k) {
          const Dims i = Unravel(k, r.grads);
          const float fy = src(i[1], sy), fx = src(i[2], sx);
          const int64_t y0 = std::max<int64_t>(static_cast<int64_t>(std::floor(fy)), 0);
          const int64_t y1 = std::min<int64_t>(static_cast<int64_t>(std::ceil(fy)), r.h - 1);
          const int64_t x0 = std::max<int64_t>(static_cast<int64_t>(std::floor(fx)), 0);
          const int64_t x1 = std::min<int64_t>(static_cast<int64_t>(std::ceil(fx)), r.w - 1);
          // The weights as TF holds them: lerp and 1 - lerp in float.
          const float ly = fy - std::floor(fy), lx = fx - std::floor(fx);
          const double ay = 1.0f - ly, ax = 1.0f - lx;
          const double g = ElementAsDouble(in[0], k);
          acc[static_cast<size_t>(Ravel({i[0], y0, x0, i[3]}, image))] += g * ay * ax;
          acc[static_cast<size_t>(Ravel({i[0], y0, x1, i[3]}, image))] += g * ay * lx;
          acc[static_cast<size_t>(Ravel({i[0], y1, x0, i[3]}, image))] += g * ly * ax;
          acc[static_cast<size_t>(Ravel({i[0], y1, x1, i[3]}, image))] += g * ly * lx;
        }
        return Floats(t, image, acc);
      };
      cases->push_back(c);
    }
    for (DType t : {DType::kFloat32, DType::kFloat16, DType::kInt32, DType::kUInt8}) {
      const Dims image = {r.grads[0], r.h, r.w, r.grads[3]};
      OpCase c{absl::StrCat("ResizeNearestNeighborGrad_", r.name, "_", TypeName(t)),
               "ResizeNearestNeighborGrad", t, {r.grads},
               {Ints({static_cast<int32_t>(r.h), static_cast<int32_t>(r.w)})}};
      c.attrs["align_corners"] = BoolAttr(r.align);
      c.attrs["half_pixel_centers"] = BoolAttr(r.half_pixel);
      c.reference = [r, image, t](const std::vector<Tensor>& in) {
        std::vector<double> acc(static_cast<size_t>(image[0] * r.h * r.w * image[3]), 0.0);
        const float sy = ResizeScale(r.h, r.grads[1], r.align);
        const float sx = ResizeScale(r.w, r.grads[2], r.align);
        auto src = [&](int64_t i, float s, int64_t n) {
          const float f = r.half_pixel ? (static_cast<float>(i) + 0.5f) * s : static_cast<float>(i) * s;
          int64_t v = r.align ? static_cast<int64_t>(std::round(f)) : static_cast<int64_t>(std::floor(f));
          return std::max<int64_t>(std::min(v, n - 1), 0);
        };
        for (int64_t k = 0; k < in[0].num_elements(); ++k) {
          const Dims i = Unravel(k, r.grads);
          acc[static_cast<size_t>(Ravel({i[0], src(i[1], sy, r.h), src(i[2], sx, r.w), i[3]},
                                        image))] += ElementAsDouble(in[0], k);
        }
        return Floats(t, image, acc);
      };
      cases->push_back(c);
    }
  }
}

// ---- NCHW variants: the NHWC case with its 4-D tensors transposed ----

// t with dims permuted: out.dim(i) == t.dim(perm[i]).
Tensor Permute4(const Tensor& t, const std::vector<int>& perm) {
  Dims d(4);
  for (size_t i = 0; i < 4; ++i) d[i] = t.dims()[static_cast<size_t>(perm[i])];
  Tensor out(t.dtype(), d);
  for (int64_t k = 0; k < out.num_elements(); ++k) {
    const Dims o = Unravel(k, d);
    Dims src(4);
    for (size_t i = 0; i < 4; ++i) src[static_cast<size_t>(perm[i])] = o[i];
    SetFromDouble(out, k, At(t, src));
  }
  return out;
}

// An NCHW copy of an NHWC case: the image placeholders (`images`) and shape consts transposed, the
// per-dim attrs permuted, the reference run on NHWC and its (4-D) result transposed back.
OpCase AsNchw(OpCase c, const std::vector<size_t>& images, const std::vector<size_t>& const_shapes,
              bool output_4d) {
  const std::vector<int> to_nchw = {0, 3, 1, 2}, to_nhwc = {0, 2, 3, 1};
  c.name += "_nchw";
  c.attrs["data_format"] = StringAttr("NCHW");
  for (const char* a : {"ksize", "strides", "dilations"}) {
    auto it = c.attrs.find(a);
    if (it == c.attrs.end()) continue;
    auto* l = it->second.mutable_list();
    const int64_t h = l->i(1), w = l->i(2);
    l->set_i(1, l->i(3));
    l->set_i(2, h);
    l->set_i(3, w);
  }
  std::vector<bool> four_d(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    four_d[i] = std::find(images.begin(), images.end(), i) != images.end();
    if (four_d[i]) c.inputs[i] = {c.inputs[i][0], c.inputs[i][3], c.inputs[i][1], c.inputs[i][2]};
  }
  for (size_t k : const_shapes) {  // shape vectors given in NHWC order
    std::vector<int32_t> v;
    for (int64_t i = 0; i < 4; ++i) v.push_back(static_cast<int32_t>(ElementAsDouble(c.consts[k], i)));
    c.consts[k] = Ints({v[0], v[3], v[1], v[2]});
  }
  const RefFn nhwc_ref = c.reference;
  const size_t n_placeholders = c.inputs.size();
  const std::vector<size_t> shapes = const_shapes;
  c.reference = [=](const std::vector<Tensor>& in) {
    std::vector<Tensor> x = in;
    for (size_t i = 0; i < n_placeholders; ++i) {
      if (four_d[i]) x[i] = Permute4(in[i], to_nhwc);
    }
    for (size_t k : shapes) {
      const Tensor& s = in[n_placeholders + k];
      x[n_placeholders + k] = Ints({static_cast<int32_t>(ElementAsDouble(s, 0)),
                                    static_cast<int32_t>(ElementAsDouble(s, 2)),
                                    static_cast<int32_t>(ElementAsDouble(s, 3)),
                                    static_cast<int32_t>(ElementAsDouble(s, 1))});
    }
    const Tensor r = nhwc_ref(x);
    return output_4d ? Permute4(r, to_nchw) : r;
  };
  return c;
}

void AddNchwCases(std::vector<OpCase>* cases) {
  std::vector<OpCase> more;
  for (const OpCase& c : *cases) {
    const bool pool = c.op == "MaxPoolGrad" || c.op == "AvgPoolGrad";
    const bool conv = c.op == "Conv2DBackpropFilter" || c.op == "DepthwiseConv2dNativeBackpropInput";
    if (c.dtype != DType::kFloat32 || (!pool && !conv)) continue;
    if (c.op == "AvgPoolGrad") more.push_back(AsNchw(c, {0}, {0}, true));
    if (c.op == "MaxPoolGrad") more.push_back(AsNchw(c, {0, 1, 2}, {}, true));
    if (c.op == "DepthwiseConv2dNativeBackpropInput") more.push_back(AsNchw(c, {1}, {0}, true));
  }
  cases->insert(cases->end(), more.begin(), more.end());
}

// ---- MaxPoolGradGrad / V2 ----

// Each output (orig_output's shape) takes grad (orig_input's shape) at the first maximum of its
// window of orig_input in row-major window order; TF's CPU kernel takes the first cell equal
// to orig_output, XLA the first maximum, so a tie goes to the first. The random f32/f64 feeds
// have no ties; the f16/int32 ones may, and every side takes the first.
RefFn MaxPoolGradGradRef(const PoolSpec& p) {
  return [p](const std::vector<Tensor>& in) {
    const Dims od = PoolOut(p);
    std::vector<double> out(static_cast<size_t>(od[0] * od[1] * od[2] * od[3]), 0.0);
    ForEachPoolOutput(p, [&](int64_t n, int64_t oh, int64_t ow, int64_t c, int64_t h0,
                             int64_t h1, int64_t w0, int64_t w1) {
      Dims best;
      for (int64_t i = h0; i < h1; ++i) {
        for (int64_t j = w0; j < w1; ++j) {
          if (best.empty() || At(in[0], {n, i, j, c}) > At(in[0], best)) best = {n, i, j, c};
        }
      }
      out[static_cast<size_t>(Ravel({n, oh, ow, c}, od))] = best.empty() ? 0.0 : At(in[2], best);
    });
    return Floats(in[0].dtype(), od, out);
  };
}

void AddMaxPoolGradGradCases(std::vector<OpCase>* cases) {
  for (const PoolSpec& p : PoolSpecs()) {
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32}) {
      OpCase c{absl::StrCat("MaxPoolGradGrad_", p.name, "_", TypeName(t)), "MaxPoolGradGrad", t,
               {p.in, PoolOut(p), p.in}};
      SetPoolAttrs(&c, p);
      c.reference = MaxPoolGradGradRef(p);
      if (t == DType::kFloat32 || t == DType::kInt32) {  // ksize and strides as constant inputs
        OpCase v2 = c;
        v2.name = absl::StrCat("MaxPoolGradGradV2_", p.name, "_", TypeName(t));
        v2.op = "MaxPoolGradGradV2";
        v2.attrs.erase("ksize");
        v2.attrs.erase("strides");
        v2.consts = {Ints({1, static_cast<int32_t>(p.k), static_cast<int32_t>(p.k), 1}),
                     Ints({1, static_cast<int32_t>(p.s), static_cast<int32_t>(p.s), 1})};
        cases->push_back(v2);
      }
      cases->push_back(c);
    }
  }
  PoolSpec empty{"empty_batch", {0, 4, 4, 2}, 2, 2, false};
  OpCase e{"MaxPoolGradGrad_empty_batch_f32", "MaxPoolGradGrad", DType::kFloat32,
           {empty.in, PoolOut(empty), empty.in}};
  SetPoolAttrs(&e, empty);
  e.reference = MaxPoolGradGradRef(empty);
  cases->push_back(e);
}

// ---- LRNGrad ----

tensorflow::AttrValue FloatAttrV(float f) {
  tensorflow::AttrValue a;
  a.set_f(f);
  return a;
}

// TF's lrn_op.cc formula in double (see gradients_kernels.cc): in = {input_grads, input_image,
// output_image}.
RefFn LrnGradRef(int64_t r, double bias, double alpha, double beta) {
  return [=](const std::vector<Tensor>& in) {
    const Dims d = in[0].dims();
    const int64_t depth = d[3], rows = depth == 0 ? 0 : in[0].num_elements() / depth;
    std::vector<double> out(static_cast<size_t>(in[0].num_elements()), 0.0);
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t off = row * depth;
      auto x = [&](int64_t k) { return ElementAsDouble(in[1], off + k); };
      for (int64_t j = 0; j < depth; ++j) {
        double norm = 0;
        for (int64_t k = std::max<int64_t>(0, j - r); k <= std::min(depth - 1, j + r); ++k) {
          norm += x(k) * x(k);
        }
        norm = bias + alpha * norm;
        const double g = ElementAsDouble(in[0], off + j), y = ElementAsDouble(in[2], off + j);
        for (int64_t k = std::max<int64_t>(0, j - r); k <= std::min(depth - 1, j + r); ++k) {
          double v = -2.0 * alpha * beta * x(k) * y / norm;
          if (k == j) v += std::pow(norm, -beta);
          out[static_cast<size_t>(off + k)] += v * g;
        }
      }
    }
    return Floats(in[0].dtype(), d, out);
  };
}

void AddLrnGradCases(std::vector<OpCase>* cases) {
  struct Lrn {
    const char* name;
    Dims d;
    int64_t r;
    float bias, alpha, beta;
    bool defaults;
  };
  const std::vector<Lrn> specs = {
      {"r2", {2, 3, 4, 7}, 2, 1.5f, 0.25f, 0.75f, false},
      {"defaults", {1, 2, 3, 12}, 5, 1.0f, 1.0f, 0.5f, true},
      {"r0", {1, 2, 2, 5}, 0, 2.0f, 0.5f, 1.0f, false},
      {"depth1", {2, 2, 2, 1}, 3, 1.0f, 2.0f, 0.5f, false},
      {"empty", {0, 2, 2, 3}, 2, 1.0f, 1.0f, 0.5f, false},
  };
  for (const Lrn& l : specs) {
    for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
      if (t != DType::kFloat32 && std::string(l.name) != "r2") continue;
      OpCase c{absl::StrCat("LRNGrad_", l.name, "_", TypeName(t)), "LRNGrad", t, {l.d, l.d, l.d}};
      if (!l.defaults) {
        c.attrs["depth_radius"] = IntAttr(l.r);
        c.attrs["bias"] = FloatAttrV(l.bias);
        c.attrs["alpha"] = FloatAttrV(l.alpha);
        c.attrs["beta"] = FloatAttrV(l.beta);
      }
      c.reference = LrnGradRef(l.r, l.bias, l.alpha, l.beta);
      cases->push_back(c);
    }
  }
}

// ---- 3-D pooling and convolution gradients (NDHWC; NCDHW copies) ----

// t with its dims permuted: out dims[i] = t.dims[perm[i]].
Tensor PermuteN(const Tensor& t, const std::vector<int>& perm) {
  const size_t r = perm.size();
  Dims d(r);
  for (size_t i = 0; i < r; ++i) d[i] = t.dims()[static_cast<size_t>(perm[i])];
  Tensor out(t.dtype(), d);
  for (int64_t k = 0; k < out.num_elements(); ++k) {
    const Dims o = Unravel(k, d);
    Dims src(r);
    for (size_t i = 0; i < r; ++i) src[static_cast<size_t>(perm[i])] = o[i];
    SetFromDouble(out, k, At(t, src));
  }
  return out;
}

struct Spec3D {
  const char* name;
  Dims x;  // NDHWC
  Dims k;  // pool window, or the filter [kd, kh, kw, in_c, out_c]
  Dims s, dil;
  bool same;
};

// The output size and padding before of one spatial dim (with dilation).
std::pair<int64_t, int64_t> Dim3(const Spec3D& p, int i) {
  const size_t u = static_cast<size_t>(i);
  return ConvDim(p.x[u + 1], p.k[u], p.s[u], p.dil[u], p.same);
}

Dims Out3D(const Spec3D& p, int64_t channels) {
  return {p.x[0], Dim3(p, 0).first, Dim3(p, 1).first, Dim3(p, 2).first, channels};
}

// f(n, o[3], i[3], tap[3]) for every output position and window tap inside the input.
template <typename F>
void ForEachTap3D(const Spec3D& p, F f) {
  const Dims od = Out3D(p, 1);
  const int64_t pad[3] = {Dim3(p, 0).second, Dim3(p, 1).second, Dim3(p, 2).second};
  for (int64_t n = 0; n < p.x[0]; ++n) {
    for (int64_t a = 0; a < od[1]; ++a) {
      for (int64_t b = 0; b < od[2]; ++b) {
        for (int64_t c = 0; c < od[3]; ++c) {
          const int64_t o[3] = {a, b, c};
          for (int64_t t0 = 0; t0 < p.k[0]; ++t0) {
            for (int64_t t1 = 0; t1 < p.k[1]; ++t1) {
              for (int64_t t2 = 0; t2 < p.k[2]; ++t2) {
                const int64_t tap[3] = {t0, t1, t2};
                int64_t i[3];
                bool inside = true;
                for (int d = 0; d < 3; ++d) {
                  i[d] = o[d] * p.s[static_cast<size_t>(d)] +
                         tap[d] * p.dil[static_cast<size_t>(d)] - pad[d];
                  inside = inside && i[d] >= 0 && i[d] < p.x[static_cast<size_t>(d + 1)];
                }
                if (inside) f(n, o, i, tap);
              }
            }
          }
        }
      }
    }
  }
}

void SetAttrs3D(OpCase* c, const Spec3D& p, bool pool) {
  if (pool) c->attrs["ksize"] = IntListAttr({1, p.k[0], p.k[1], p.k[2], 1});
  c->attrs["strides"] = IntListAttr({1, p.s[0], p.s[1], p.s[2], 1});
  if (!pool) c->attrs["dilations"] = IntListAttr({1, p.dil[0], p.dil[1], p.dil[2], 1});
  c->attrs["padding"] = StringAttr(p.same ? "SAME" : "VALID");
}

// An NCDHW copy of an NDHWC case: the 5-D placeholders (`images`), the 5-D constants
// (`const_images`) and the shape constants (`const_shapes`) transposed, the per-dim attrs
// permuted, the reference run on NDHWC and its result transposed back when `output_5d`.
OpCase AsNcdhw(OpCase c, const std::vector<size_t>& images, const std::vector<size_t>& const_images,
               const std::vector<size_t>& const_shapes, bool output_5d) {
  const std::vector<int> to_first = {0, 4, 1, 2, 3}, to_last = {0, 2, 3, 4, 1};
  c.name += "_ncdhw";
  c.attrs["data_format"] = StringAttr("NCDHW");
  for (const char* a : {"ksize", "strides", "dilations"}) {
    auto it = c.attrs.find(a);
    if (it == c.attrs.end()) continue;
    std::vector<int64_t> v(it->second.list().i().begin(), it->second.list().i().end());
    it->second = IntListAttr({v[0], v[4], v[1], v[2], v[3]});
  }
  std::vector<bool> five_d(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    five_d[i] = std::find(images.begin(), images.end(), i) != images.end();
    const Dims d = c.inputs[i];
    if (five_d[i]) c.inputs[i] = {d[0], d[4], d[1], d[2], d[3]};
  }
  for (size_t k : const_images) c.consts[k] = PermuteN(c.consts[k], to_first);
  for (size_t k : const_shapes) {
    std::vector<int32_t> v;
    for (int64_t i = 0; i < 5; ++i) v.push_back(static_cast<int32_t>(ElementAsDouble(c.consts[k], i)));
    c.consts[k] = Ints({v[0], v[4], v[1], v[2], v[3]});
  }
  const RefFn ref = c.reference;
  const size_t np = c.inputs.size();
  c.reference = [=](const std::vector<Tensor>& in) {
    std::vector<Tensor> x = in;
    for (size_t i = 0; i < np; ++i) {
      if (five_d[i]) x[i] = PermuteN(in[i], to_last);
    }
    for (size_t k : const_images) x[np + k] = PermuteN(in[np + k], to_last);
    for (size_t k : const_shapes) {
      const Tensor& s = in[np + k];
      std::vector<int32_t> v;
      for (int64_t i : {0, 2, 3, 4, 1}) v.push_back(static_cast<int32_t>(ElementAsDouble(s, i)));
      x[np + k] = Ints(v);
    }
    const Tensor r = ref(x);
    return output_5d ? PermuteN(r, to_first) : r;
  };
  return c;
}

const std::vector<Spec3D>& PoolSpecs3D() {
  static const std::vector<Spec3D> specs = {
      {"k2s2_valid", {2, 4, 5, 4, 3}, {2, 2, 2}, {2, 2, 2}, {1, 1, 1}, false},
      {"k3s2_same", {1, 5, 5, 6, 2}, {3, 3, 2}, {2, 2, 1}, {1, 1, 1}, true},
      {"k1x2x3_s1_same", {1, 3, 4, 5, 2}, {1, 2, 3}, {1, 1, 2}, {1, 1, 1}, true},
  };
  return specs;
}

// The first maximum of window (n, o, c) of x (NDHWC), -1 for an empty window.
int64_t FirstMax3D(const Spec3D& p, const Tensor& x, int64_t n, const int64_t* o, int64_t c) {
  int64_t best = -1;
  double bv = 0;
  ForEachTap3D(Spec3D{p.name, {1, p.x[1], p.x[2], p.x[3], p.x[4]}, p.k, p.s, p.dil, p.same},
               [&](int64_t, const int64_t* oo, const int64_t* i, const int64_t*) {
    if (oo[0] != o[0] || oo[1] != o[1] || oo[2] != o[2]) return;
    const int64_t at = Ravel({n, i[0], i[1], i[2], c}, p.x);
    const double v = ElementAsDouble(x, at);
    if (best < 0 || v > bv) {
      best = at;
      bv = v;
    }
  });
  return best;
}

void AddPool3DGradCases(std::vector<OpCase>* cases) {
  for (const Spec3D& p : PoolSpecs3D()) {
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
      OpCase c{absl::StrCat("AvgPool3DGrad_", p.name, "_", TypeName(t)), "AvgPool3DGrad", t,
               {Out3D(p, p.x[4])}, {Ints(std::vector<int32_t>(p.x.begin(), p.x.end()))}};
      c.consts_first = true;
      SetAttrs3D(&c, p, true);
      c.reference = [p](const std::vector<Tensor>& in) {
        const Dims od = Out3D(p, p.x[4]);
        std::vector<double> count(static_cast<size_t>(od[1] * od[2] * od[3]), 0.0);
        std::vector<double> acc(static_cast<size_t>(p.x[0] * p.x[1] * p.x[2] * p.x[3] * p.x[4]));
        ForEachTap3D(p, [&](int64_t n, const int64_t* o, const int64_t*, const int64_t*) {
          if (n == 0) count[static_cast<size_t>((o[0] * od[2] + o[1]) * od[3] + o[2])] += 1;
        });
        ForEachTap3D(p, [&](int64_t n, const int64_t* o, const int64_t* i, const int64_t*) {
          const double cnt = count[static_cast<size_t>((o[0] * od[2] + o[1]) * od[3] + o[2])];
          for (int64_t ch = 0; ch < p.x[4]; ++ch) {
            acc[static_cast<size_t>(Ravel({n, i[0], i[1], i[2], ch}, p.x))] +=
                At(in[0], {n, o[0], o[1], o[2], ch}) / cnt;
          }
        });
        return Floats(in[0].dtype(), p.x, acc);
      };
      cases->push_back(c);
      if (t == DType::kFloat32) cases->push_back(AsNcdhw(c, {0}, {}, {0}, true));
    }
    // MaxPool3DGrad: each gradient to the first maximum of its window. TF's CPU kernel credits
    // every tied cell, XLA (and tfjit) the first; the random f32 feeds have no ties, the 16-bit
    // ones may and every side here takes the first.
    for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
      OpCase c{absl::StrCat("MaxPool3DGrad_", p.name, "_", TypeName(t)), "MaxPool3DGrad", t,
               {p.x, Out3D(p, p.x[4]), Out3D(p, p.x[4])}};
      c.attrs["TInput"] = TypeAttr(t);
      SetAttrs3D(&c, p, true);
      c.reference = [p](const std::vector<Tensor>& in) {
        std::vector<double> acc(static_cast<size_t>(in[0].num_elements()), 0.0);
        const Dims od = Out3D(p, p.x[4]);
        for (int64_t k = 0; k < in[2].num_elements(); ++k) {
          const Dims o = Unravel(k, od);
          const int64_t oo[3] = {o[1], o[2], o[3]};
          const int64_t best = FirstMax3D(p, in[0], o[0], oo, o[4]);
          if (best >= 0) acc[static_cast<size_t>(best)] += ElementAsDouble(in[2], k);
        }
        return Floats(in[2].dtype(), p.x, acc);
      };
      cases->push_back(c);
      if (t == DType::kFloat32) {
        cases->push_back(AsNcdhw(c, {0, 1, 2}, {}, {}, true));
        // TInput (orig_input, orig_output) differs from T (grad, output).
        OpCase mixed = c;
        mixed.name = absl::StrCat("MaxPool3DGrad_", p.name, "_f16_input_f32_grad");
        mixed.attrs["TInput"] = TypeAttr(DType::kFloat16);
        mixed.input_dtypes = {DType::kFloat16, DType::kFloat16, DType::kFloat32};
        cases->push_back(mixed);
      }
    }
  }
}

void AddConv3DBackpropCases(std::vector<OpCase>* cases) {
  const std::vector<Spec3D> specs = {
      {"s1_same", {2, 3, 4, 4, 2}, {2, 3, 2, 2, 3}, {1, 1, 1}, {1, 1, 1}, true},
      {"s2_valid", {1, 5, 5, 6, 3}, {3, 2, 2, 3, 2}, {2, 2, 2}, {1, 1, 1}, false},
      {"s121_same", {1, 4, 5, 5, 2}, {2, 2, 3, 2, 2}, {1, 2, 1}, {1, 1, 1}, true},
      {"dilated_valid", {1, 5, 5, 5, 2}, {2, 2, 2, 2, 3}, {1, 1, 1}, {2, 1, 2}, false},
      {"dilated_same_s2", {1, 6, 5, 4, 1}, {2, 2, 2, 1, 2}, {2, 2, 1}, {2, 2, 1}, true},
      {"18_taps_same", {1, 4, 5, 6, 3}, {3, 3, 2, 3, 2}, {1, 2, 1}, {1, 1, 1}, true},
  };
  for (const Spec3D& p : specs) {
    const Dims f = p.k;
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
      if (t == DType::kBFloat16 && std::string(p.name) != "s1_same") continue;
      OpCase bi{absl::StrCat("Conv3DBackpropInputV2_", p.name, "_", TypeName(t)),
                "Conv3DBackpropInputV2", t, {f, Out3D(p, f[4])},
                {Ints(std::vector<int32_t>(p.x.begin(), p.x.end()))}};
      bi.consts_first = true;
      SetAttrs3D(&bi, p, false);
      bi.reference = [p](const std::vector<Tensor>& in) {
        const Tensor &w = in[0], &dy = in[1];
        std::vector<double> acc(static_cast<size_t>(p.x[0] * p.x[1] * p.x[2] * p.x[3] * p.x[4]));
        ForEachTap3D(p, [&](int64_t n, const int64_t* o, const int64_t* i, const int64_t* tap) {
          for (int64_t c = 0; c < p.k[3]; ++c) {
            for (int64_t oc = 0; oc < p.k[4]; ++oc) {
              acc[static_cast<size_t>(Ravel({n, i[0], i[1], i[2], c}, p.x))] +=
                  At(dy, {n, o[0], o[1], o[2], oc}) * At(w, {tap[0], tap[1], tap[2], c, oc});
            }
          }
        });
        return Floats(w.dtype(), p.x, acc);
      };
      cases->push_back(bi);
      if (t == DType::kFloat32) {
        cases->push_back(AsNcdhw(bi, {1}, {}, {0}, true));
        OpCase i64 = bi;  // Tshape int64
        i64.name += "_int64_sizes";
        i64.attrs["Tshape"] = TypeAttr(DType::kInt64);
        i64.consts = {Ints64(std::vector<int64_t>(p.x.begin(), p.x.end()))};
        cases->push_back(i64);
      }

      OpCase bf{absl::StrCat("Conv3DBackpropFilterV2_", p.name, "_", TypeName(t)),
                "Conv3DBackpropFilterV2", t, {Out3D(p, f[4])},
                {Wavy(t, p.x, 0.7), Ints(std::vector<int32_t>(f.begin(), f.end()))}};
      bf.consts_first = true;  // input (as a constant), filter_sizes, then the fed out_backprop
      SetAttrs3D(&bf, p, false);
      bf.reference = [p](const std::vector<Tensor>& in) {
        const Tensor &dy = in[0], &x = in[1];
        std::vector<double> acc(static_cast<size_t>(p.k[0] * p.k[1] * p.k[2] * p.k[3] * p.k[4]));
        ForEachTap3D(p, [&](int64_t n, const int64_t* o, const int64_t* i, const int64_t* tap) {
          for (int64_t c = 0; c < p.k[3]; ++c) {
            for (int64_t oc = 0; oc < p.k[4]; ++oc) {
              acc[static_cast<size_t>(Ravel({tap[0], tap[1], tap[2], c, oc}, p.k))] +=
                  At(x, {n, i[0], i[1], i[2], c}) * At(dy, {n, o[0], o[1], o[2], oc});
            }
          }
        });
        return Floats(x.dtype(), p.k, acc);
      };
      cases->push_back(bf);
      if (t == DType::kFloat32) cases->push_back(AsNcdhw(bf, {0}, {0}, {}, false));
    }
  }
}

// ---- Dilation2DBackpropInput / Filter (kernel only) ----

// `v` rounded to dtype `t` (TF adds input and filter in T).
double RoundTo(DType t, double v) {
  Tensor one(t, {1});
  SetFromDouble(one, 0, v);
  return ElementAsDouble(one, 0);
}

// TF's dilation_ops.cc: each out_backprop value goes to the (input cell, filter tap) of the
// first maximum of input + filter over its window's in-bounds taps, in (row, col) scan order
// (strict >, so a tie goes to the first tap). in = {input, filter, out_backprop}.
RefFn Dilation2DGradRef(bool filter_grad, int64_t s, int64_t r, bool same) {
  return [=](const std::vector<Tensor>& in) {
    const Tensor &x = in[0], &f = in[1], &dy = in[2];
    const Dims xd = x.dims(), fd = f.dims();
    const auto [oh, ph] = ConvDim(xd[1], fd[0], s, r, same);
    const auto [ow, pw] = ConvDim(xd[2], fd[1], s, r, same);
    const Dims od = filter_grad ? fd : xd;
    std::vector<double> acc(static_cast<size_t>(od[0] * od[1] * od[2] * (od.size() > 3 ? od[3] : 1)));
    for (int64_t n = 0; n < xd[0]; ++n) {
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t z = 0; z < ow; ++z) {
          for (int64_t c = 0; c < xd[3]; ++c) {
            bool found = false;
            double best = 0;
            int64_t bi = 0, bj = 0, by = 0, bz = 0;
            for (int64_t i = 0; i < fd[0]; ++i) {
              for (int64_t j = 0; j < fd[1]; ++j) {
                const int64_t iy = y * s + i * r - ph, iz = z * s + j * r - pw;
                if (iy < 0 || iy >= xd[1] || iz < 0 || iz >= xd[2]) continue;
                const double v = RoundTo(x.dtype(), At(x, {n, iy, iz, c}) + At(f, {i, j, c}));
                if (!found || v > best) {
                  found = true;
                  best = v;
                  bi = i;
                  bj = j;
                  by = iy;
                  bz = iz;
                }
              }
            }
            if (!found) {  // no tap inside: TF credits tap (0, 0) and the clamped start
              by = std::max<int64_t>(y * s - ph, 0);
              bz = std::max<int64_t>(z * s - pw, 0);
            }
            const double g = At(dy, {n, y, z, c});
            if (filter_grad) {
              acc[static_cast<size_t>(Ravel({bi, bj, c}, fd))] += g;
            } else if (by < xd[1] && bz < xd[2]) {
              acc[static_cast<size_t>(Ravel({n, by, bz, c}, xd))] += g;
            }
          }
        }
      }
    }
    return Floats(x.dtype(), od, acc);
  };
}

void AddDilation2DGradCases(std::vector<OpCase>* cases) {
  struct Dil {
    const char* name;
    Dims x, f;
    int64_t s, r;
    bool same;
  };
  const std::vector<Dil> specs = {
      {"s1_same", {2, 5, 6, 3}, {3, 3, 3}, 1, 1, true},
      {"s2_valid", {1, 7, 7, 2}, {2, 3, 2}, 2, 1, false},
      {"rate2_same", {1, 6, 5, 2}, {2, 2, 2}, 1, 2, true},
      {"s2_rate2_valid", {2, 8, 7, 1}, {2, 2, 1}, 2, 2, false},
      {"no_tap_inside", {1, 1, 1, 2}, {2, 2, 2}, 1, 3, true},  // both taps fall in the padding
      {"empty_batch", {0, 4, 4, 2}, {2, 2, 2}, 1, 1, true},
  };
  for (const char* op : {"Dilation2DBackpropInput", "Dilation2DBackpropFilter"}) {
    const bool filter_grad = std::string(op) == "Dilation2DBackpropFilter";
    for (const Dil& d : specs) {
      for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32}) {
        const Dims od = {d.x[0], ConvDim(d.x[1], d.f[0], d.s, d.r, d.same).first,
                         ConvDim(d.x[2], d.f[1], d.s, d.r, d.same).first, d.x[3]};
        OpCase c{absl::StrCat(op, "_", d.name, "_", TypeName(t)), op, t, {d.x, d.f, od}};
        c.attrs["strides"] = IntListAttr({1, d.s, d.s, 1});
        c.attrs["rates"] = IntListAttr({1, d.r, d.r, 1});
        c.attrs["padding"] = StringAttr(d.same ? "SAME" : "VALID");
        c.kernel_only = true;
        c.reference = Dilation2DGradRef(filter_grad, d.s, d.r, d.same);
        cases->push_back(c);
      }
    }
  }
}

}  // namespace

std::vector<OpCase> GradientsCases() {
  std::vector<OpCase> cases;
  AddElementwiseCases(&cases);
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                  DType::kInt32, DType::kInt64}) {
    cases.push_back(BiasAddGradCase(t, {4, 5, 3}, "NHWC"));
  }
  cases.push_back(BiasAddGradCase(DType::kFloat32, {7, 33}, "NHWC"));
  cases.push_back(BiasAddGradCase(DType::kFloat32, {2, 3, 4, 5}, "NCHW"));
  cases.push_back(BiasAddGradCase(DType::kFloat32, {3, 4}, "NCHW"));
  cases.push_back(BiasAddGradCase(DType::kFloat16, {2, 6, 5}, "NCHW"));
  cases.push_back(BiasAddGradCase(DType::kFloat32, {0, 3}, "NHWC"));
  cases.push_back(BiasAddGradCase(DType::kInt8, {2, 2, 3}, "NHWC"));
  AddBroadcastGradientArgsCases(&cases);
  AddXentCases(&cases);
  AddSparseXentCases(&cases);
  AddStitchCases(&cases);
  AddConcatOffsetCases(&cases);
  AddStridedSliceGradCases(&cases);
  AddMirrorPadGradCases(&cases);
  AddPoolGradCases(&cases);
  AddBatchNormGradCases(&cases);
  AddConvBackpropCases(&cases);
  AddResizeGradCases(&cases);
  AddNchwCases(&cases);
  {
    std::vector<OpCase> mpgg;
    AddMaxPoolGradGradCases(&mpgg);
    for (const OpCase& c : mpgg) {
      cases.push_back(c);
      if (c.op == "MaxPoolGradGrad" && c.dtype == DType::kFloat32 && c.inputs[0][0] > 0) {
        cases.push_back(AsNchw(c, {0, 1, 2}, {}, true));
      }
    }
  }
  AddLrnGradCases(&cases);
  AddPool3DGradCases(&cases);
  AddConv3DBackpropCases(&cases);
  AddDilation2DGradCases(&cases);
  return cases;
}

}  // namespace tfjit::optest

// TF's errors on bad inputs, from the fallback kernel and in must-compile mode, and the one
// place the two differ by design (out-of-range sparse labels: TF's CPU kernel fails, XLA gives
// NaN rows).
namespace tfjit {
namespace {

using ::tfjit::testing::WriteTempFile;

std::string Placeholder(const std::string& name, const std::string& dtype) {
  return absl::StrCat("node { name: \"", name, "\" op: \"Placeholder\" attr { key: \"dtype\" ",
                      "value { type: ", dtype, " } } }\n");
}

std::string IntConst(const std::string& name, const std::vector<int>& v) {
  std::string s = absl::StrCat("node { name: \"", name, "\" op: \"Const\" attr { key: \"dtype\" ",
                               "value { type: DT_INT32 } } attr { key: \"value\" value { tensor { ",
                               "dtype: DT_INT32 tensor_shape { dim { size: ", v.size(), " } }");
  for (int x : v) absl::StrAppend(&s, " int_val: ", x);
  return s + " } } } }\n";
}

absl::StatusOr<std::vector<Tensor>> RunGraph(const std::string& graph, JitMode jit,
                                             std::vector<std::pair<std::string, Tensor>> feeds,
                                             std::vector<std::string> fetches) {
  const std::string path = WriteTempFile("gradients_errors.pbtxt", graph);
  SessionOptions options;
  options.jit = jit;
  options.backend = "interpreter";
  auto session = Session::Load(path, options);
  std::filesystem::remove(path);
  if (!session.ok()) return session.status();
  return (*session)->Run(feeds, fetches);
}

void ExpectError(const absl::StatusOr<std::vector<Tensor>>& r, const std::string& text) {
  ASSERT_FALSE(r.ok()) << "expected an error containing: " << text;
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), text)) << r.status();
}

TEST(GradientsErrors, SparseXentOutOfRangeLabelFailsInTheKernelAndIsNanCompiled) {
  const std::string graph = absl::StrCat(
      Placeholder("x", "DT_FLOAT"), Placeholder("l", "DT_INT32"),
      "node { name: \"xent\" op: \"SparseSoftmaxCrossEntropyWithLogits\" input: \"x\" input: "
      "\"l\" attr { key: \"T\" value { type: DT_FLOAT } } attr { key: \"Tlabels\" value { type: "
      "DT_INT32 } } }\n");
  const Tensor x = Tensor::FromVector<float>(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor l = Tensor::FromVector<int32_t>(DType::kInt32, {2}, {0, 3});
  ExpectError(RunGraph(graph, JitMode::kNone, {{"x", x}, {"l", l}}, {"xent"}),
              "Received a label value of 3 which is outside the valid range of [0, 3)");
  auto compiled = RunGraph(graph, JitMode::kAll, {{"x", x}, {"l", l}}, {"xent", "xent:1"});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_FALSE(std::isnan((*compiled)[0].data<float>()[0]));
  EXPECT_TRUE(std::isnan((*compiled)[0].data<float>()[1]));
  for (int j = 0; j < 3; ++j) {
    EXPECT_FALSE(std::isnan((*compiled)[1].data<float>()[j]));
    EXPECT_TRUE(std::isnan((*compiled)[1].data<float>()[3 + j]));
  }
}

TEST(GradientsErrors, BadShapesFailAsTfDoesInBothModes) {
  const std::string bga = absl::StrCat(
      IntConst("s0", {2, 3}), IntConst("s1", {4}),
      "node { name: \"bga\" op: \"BroadcastGradientArgs\" input: \"s0\" input: \"s1\" attr { "
      "key: \"T\" value { type: DT_INT32 } } }\n");
  const std::string relu = absl::StrCat(
      Placeholder("g", "DT_FLOAT"), Placeholder("f", "DT_FLOAT"),
      "node { name: \"rg\" op: \"ReluGrad\" input: \"g\" input: \"f\" attr { key: \"T\" value { "
      "type: DT_FLOAT } } }\n");
  const std::string stitch = absl::StrCat(
      IntConst("i0", {0, 1}), IntConst("i1", {2}), Placeholder("d0", "DT_FLOAT"),
      Placeholder("d1", "DT_FLOAT"),
      "node { name: \"ds\" op: \"DynamicStitch\" input: \"i0\" input: \"i1\" input: \"d0\" "
      "input: \"d1\" attr { key: \"T\" value { type: DT_FLOAT } } attr { key: \"N\" value { i: 2 "
      "} } }\n");
  const std::string mirror = absl::StrCat(
      Placeholder("y", "DT_FLOAT"),
      "node { name: \"p\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } } attr { "
      "key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } dim { "
      "size: 2 } } int_val: 2 int_val: 1 } } } }\n",
      "node { name: \"mp\" op: \"MirrorPadGrad\" input: \"y\" input: \"p\" attr { key: \"T\" "
      "value { type: DT_FLOAT } } attr { key: \"mode\" value { s: \"REFLECT\" } } }\n");
  const Tensor a = Tensor::FromVector<float>(DType::kFloat32, {2, 2}, {1, -1, 2, -2});
  const Tensor b = Tensor::FromVector<float>(DType::kFloat32, {4}, {1, -1, 2, -2});
  const Tensor five = Tensor::FromVector<float>(DType::kFloat32, {5}, {1, 2, 3, 4, 5});
  for (JitMode jit : {JitMode::kNone, JitMode::kAll}) {
    ExpectError(RunGraph(bga, jit, {}, {"bga"}), "Incompatible shapes: [2,3] vs. [4]");
    ExpectError(RunGraph(relu, jit, {{"g", a}, {"f", b}}, {"rg"}), "g and a must be the same size");
    ExpectError(RunGraph(stitch, jit, {{"d0", a}, {"d1", b}}, {"ds"}),
                "data[1].shape = [4] does not start with indices[1].shape = [1]");
    // 5 = 2 + out + 1 leaves out = 2, and REFLECT needs pads < 2.
    ExpectError(RunGraph(mirror, jit, {{"y", five}}, {"mp"}),
                "paddings must be less than the output dimension size");
  }
}

std::string ListAttr(const std::string& key, const std::vector<int>& v) {
  std::string s = absl::StrCat("attr { key: \"", key, "\" value { list {");
  for (int x : v) absl::StrAppend(&s, " i: ", x);
  return s + " } } } ";
}

std::string StrAttr(const std::string& key, const std::string& v) {
  return absl::StrCat("attr { key: \"", key, "\" value { s: \"", v, "\" } } ");
}

Tensor Ones(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return Tensor::FromVector<float>(DType::kFloat32, dims, std::vector<float>(static_cast<size_t>(n), 1.0f));
}

// The later window gradients (LRNGrad, MaxPoolGradGrad, the 3-D backprops, Dilation2D's).
TEST(GradientsErrors, WindowGradientsRejectBadShapesAsTfDoes) {
  const std::string t = "attr { key: \"T\" value { type: DT_FLOAT } } ";
  const std::string lrn = absl::StrCat(
      Placeholder("g", "DT_FLOAT"), Placeholder("x", "DT_FLOAT"), Placeholder("y", "DT_FLOAT"),
      "node { name: \"l\" op: \"LRNGrad\" input: \"g\" input: \"x\" input: \"y\" ", t, "}\n");
  const std::string mpgg = absl::StrCat(
      Placeholder("x", "DT_FLOAT"), Placeholder("y", "DT_FLOAT"), Placeholder("g", "DT_FLOAT"),
      "node { name: \"m\" op: \"MaxPoolGradGrad\" input: \"x\" input: \"y\" input: \"g\" ", t,
      ListAttr("ksize", {1, 2, 2, 1}), ListAttr("strides", {1, 2, 2, 1}),
      StrAttr("padding", "VALID"), "}\n");
  const std::string conv = absl::StrCat(
      IntConst("s", {1, 2, 2, 2, 3}), Placeholder("f", "DT_FLOAT"), Placeholder("dy", "DT_FLOAT"),
      "node { name: \"c\" op: \"Conv3DBackpropInputV2\" input: \"s\" input: \"f\" input: \"dy\" ",
      t, ListAttr("strides", {1, 1, 1, 1, 1}), StrAttr("padding", "VALID"), "}\n");
  const std::string avg = absl::StrCat(
      IntConst("s", {1, 2, 2, 2, 1}), Placeholder("g", "DT_FLOAT"),
      "node { name: \"a\" op: \"AvgPool3DGrad\" input: \"s\" input: \"g\" ", t,
      ListAttr("ksize", {1, 2, 2, 1}), ListAttr("strides", {1, 1, 1, 1, 1}),
      StrAttr("padding", "VALID"), "}\n");
  const std::string dil = absl::StrCat(
      Placeholder("x", "DT_FLOAT"), Placeholder("f", "DT_FLOAT"), Placeholder("dy", "DT_FLOAT"),
      "node { name: \"d\" op: \"Dilation2DBackpropInput\" input: \"x\" input: \"f\" input: \"dy\" ",
      t, ListAttr("strides", {1, 1, 1, 1}), ListAttr("rates", {1, 1, 1, 1}),
      StrAttr("padding", "VALID"), "}\n");
  for (JitMode jit : {JitMode::kNone, JitMode::kAll}) {
    ExpectError(RunGraph(lrn, jit, {{"g", Ones({1, 1, 1, 2})}, {"x", Ones({1, 1, 1, 3})},
                                    {"y", Ones({1, 1, 1, 2})}}, {"l"}),
                "input_grads, input_image, and out_image should have the same shape");
    ExpectError(RunGraph(mpgg, jit, {{"x", Ones({1, 2, 2, 1})}, {"y", Ones({1, 1, 1, 1})},
                                     {"g", Ones({1, 2, 2, 2})}}, {"m"}),
                "Expected grad shape to be");
    ExpectError(RunGraph(conv, jit, {{"f", Ones({1, 1, 1, 2, 1})}, {"dy", Ones({1, 2, 2, 2, 1})}},
                         {"c"}),
                "Input depth must be equal to filter depth");
    ExpectError(RunGraph(avg, jit, {{"g", Ones({1, 1, 1, 1, 1})}}, {"a"}),
                "Sliding window ksize field must specify 5 dimensions");
  }
  ExpectError(RunGraph(dil, JitMode::kNone, {{"x", Ones({1, 3, 3, 1})}, {"f", Ones({2, 2, 1})},
                                              {"dy", Ones({1, 3, 3, 1})}}, {"d"}),
              "out_backprop has incompatible size");
}

}  // namespace
}  // namespace tfjit
