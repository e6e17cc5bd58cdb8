// Differential cases of the gradients ops (docs/DESIGN.md, "Op families"): the elementwise
// activation gradients, BiasAddGrad, BroadcastGradientArgs, the cross-entropy losses,
// (Parallel)DynamicStitch, ConcatOffset, StridedSliceGrad and MirrorPadGrad. Kernel vs evaluator
// vs CPU JIT, each against an independent reference: TF's formulas written out in double
// precision (relu_op_functor.h, cwise_ops.h, xent_op.cc) and hand-computed values for the shape
// ops. The windowed ops' gradients (pooling, convolution, resize, batch norm, LRN, Dilation2D)
// are in op_cases_gradients_window.cc. GradientsErrors checks TF's errors in both modes.
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
  OpCase c{absl::StrCat(op, "_", DTypeHloName(t), "_", DimsName(dims)), op, t, {dims, dims}};
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
      {"SoftsignGrad",
       [](double g, double f) { return g / ((1 + std::abs(f)) * (1 + std::abs(f))); }, false},
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
    OpCase c = GradCase(
        "LeakyReluGrad", DType::kFloat32, {6, 11},
        [alpha](double g, double f) { return f > 0 ? g : g * alpha; }, true);
    c.name += alpha > 0 ? "_alpha1_5" : "_alpha_neg";
    c.attrs["alpha"].set_f(static_cast<float>(alpha));
    cases->push_back(c);
  }
}

// BiasAddGrad: the sum over every dim but the channel dim.
OpCase BiasAddGradCase(DType t, const Dims& dims, const std::string& format) {
  OpCase c{absl::StrCat("BiasAddGrad_", DTypeHloName(t), "_", DimsName(dims), "_", format),
           "BiasAddGrad",
           t,
           {dims}};
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
  OpCase c{absl::StrCat("BroadcastGradientArgs_", name, "_", DTypeHloName(t), "_r", output),
           "BroadcastGradientArgs",
           t,
           {},
           {vec(s0), vec(s1)}};
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
      {"bias", {2, 3, 4}, {4}, {}, {0, 1}},        {"both", {2, 1, 4}, {3, 1}, {1}, {0, 2}},
      {"equal_with_ones", {2, 1}, {2, 1}, {}, {}},  // equal shapes reduce nothing
      {"scalar", {}, {5, 2}, {0, 1}, {}},          {"ones", {1}, {1, 1}, {0, 1}, {0, 1}},
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
      {{4, 5}, {4, 5}}, {{3, 17}, {3, 17}}, {{4, 5}, {5}},    {{1, 6}, {3, 6}},
      {{3, 1}, {3, 4}}, {{0, 5}, {0, 5}},   {{2, 1}, {2, 1}},
  };
  for (int output : {0, 1}) {
    for (const Shapes& s : shapes) {
      OpCase c{absl::StrCat("SoftmaxCrossEntropyWithLogits_f32_", DimsName(s.logits), "_",
                            DimsName(s.labels), "_out", output),
               "SoftmaxCrossEntropyWithLogits",
               DType::kFloat32,
               {s.logits, s.labels}};
      c.output = output;
      c.reference = XentRef(output);
      cases->push_back(c);
    }
    for (DType t : {DType::kFloat16, DType::kBFloat16, DType::kFloat64}) {
      OpCase c{absl::StrCat("SoftmaxCrossEntropyWithLogits_", DTypeHloName(t), "_out", output),
               "SoftmaxCrossEntropyWithLogits",
               t,
               {{3, 7}, {3, 7}}};
      c.output = output;
      c.reference = XentRef(output);
      cases->push_back(c);
    }
    // Large logits: the max shift keeps exp finite.
    OpCase big{absl::StrCat("SoftmaxCrossEntropyWithLogits_f32_large_out", output),
               "SoftmaxCrossEntropyWithLogits",
               DType::kFloat32,
               {{2, 3}, {2, 3}}};
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
      OpCase c{absl::StrCat("SparseSoftmaxCrossEntropyWithLogits_", DTypeHloName(s.t), "_",
                            DTypeHloName(s.tl), "_", DimsName(s.logits), "_out", output),
               "SparseSoftmaxCrossEntropyWithLogits",
               s.t,
               {s.logits, ld}};
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
  OpCase c{absl::StrCat(op, "_", name, "_", DTypeHloName(t)), op, t, data, indices};
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
      cases->push_back(StitchCase(
          op, "interleaved", t, {Ints({0, 2, 4}), IntMatrix({1, 2}, {1, 3})}, {{3, 2}, {1, 2, 2}}));
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
    cases->push_back(
        StitchCase(op, "empty_part", DType::kFloat32, {Ints({}), Ints({1, 0})}, {{0, 5}, {2, 5}}));
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
        OpCase c{absl::StrCat("ConcatOffset_", co.name, "_", DTypeHloName(st), "_out", out),
                 "ConcatOffset",
                 DType::kInt32,
                 {},
                 consts};
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
  OpCase c{absl::StrCat("StridedSliceGrad_", name, "_", DTypeHloName(t)),
           "StridedSliceGrad",
           t,
           {dy},
           {Ints(std::vector<int32_t>(shape.begin(), shape.end())), Ints(begin), Ints(end),
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
OpCase MpgCase(const std::string& mode, DType t, const Dims& in, const std::vector<int32_t>& pads) {
  OpCase c{absl::StrCat("MirrorPadGrad_", mode, "_", DTypeHloName(t), "_", DimsName(in)),
           "MirrorPadGrad",
           t,
           {in},
           {IntMatrix({static_cast<int64_t>(in.size()), 2}, pads)}};
  c.attrs["mode"] = StringAttr(mode);
  c.attrs["Tpaddings"] = TypeAttr(DType::kInt32);
  const int64_t offset = mode == "REFLECT" ? 1 : 0;
  c.reference = [pads, offset](const std::vector<Tensor>& x) {
    const Dims& d = x[0].dims();
    Dims out_dims(d.size());
    for (size_t k = 0; k < d.size(); ++k) out_dims[k] = d[k] - pads[2 * k] - pads[2 * k + 1];
    std::vector<double> sum(static_cast<size_t>(std::max<int64_t>(0,
                                                                  [&] {
                                                                    int64_t n = 1;
                                                                    for (int64_t v : out_dims)
                                                                      n *= v;
                                                                    return n;
                                                                  }())),
                            0.0);
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
  AddWindowGradientsCases(&cases);  // op_cases_gradients_window.cc
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
  return Tensor::FromVector<float>(DType::kFloat32, dims,
                                   std::vector<float>(static_cast<size_t>(n), 1.0f));
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
  const std::string avg =
      absl::StrCat(IntConst("s", {1, 2, 2, 2, 1}), Placeholder("g", "DT_FLOAT"),
                   "node { name: \"a\" op: \"AvgPool3DGrad\" input: \"s\" input: \"g\" ", t,
                   ListAttr("ksize", {1, 2, 2, 1}), ListAttr("strides", {1, 1, 1, 1, 1}),
                   StrAttr("padding", "VALID"), "}\n");
  const std::string dil = absl::StrCat(
      Placeholder("x", "DT_FLOAT"), Placeholder("f", "DT_FLOAT"), Placeholder("dy", "DT_FLOAT"),
      "node { name: \"d\" op: \"Dilation2DBackpropInput\" input: \"x\" input: \"f\" input: \"dy\" ",
      t, ListAttr("strides", {1, 1, 1, 1}), ListAttr("rates", {1, 1, 1, 1}),
      StrAttr("padding", "VALID"), "}\n");
  for (JitMode jit : {JitMode::kNone, JitMode::kAll}) {
    ExpectError(
        RunGraph(lrn, jit,
                 {{"g", Ones({1, 1, 1, 2})}, {"x", Ones({1, 1, 1, 3})}, {"y", Ones({1, 1, 1, 2})}},
                 {"l"}),
        "input_grads, input_image, and out_image should have the same shape");
    ExpectError(
        RunGraph(mpgg, jit,
                 {{"x", Ones({1, 2, 2, 1})}, {"y", Ones({1, 1, 1, 1})}, {"g", Ones({1, 2, 2, 2})}},
                 {"m"}),
        "Expected grad shape to be");
    ExpectError(
        RunGraph(conv, jit, {{"f", Ones({1, 1, 1, 2, 1})}, {"dy", Ones({1, 2, 2, 2, 1})}}, {"c"}),
        "Input depth must be equal to filter depth");
    ExpectError(RunGraph(avg, jit, {{"g", Ones({1, 1, 1, 1, 1})}}, {"a"}),
                "Sliding window ksize field must specify 5 dimensions");
  }
  ExpectError(
      RunGraph(dil, JitMode::kNone,
               {{"x", Ones({1, 3, 3, 1})}, {"f", Ones({2, 2, 1})}, {"dy", Ones({1, 3, 3, 1})}},
               {"d"}),
      "out_backprop has incompatible size");
}

}  // namespace
}  // namespace tfjit
