// Tests for runtime/kernels/nn_conv_kernels.cc against naive references written here (nested
// loops over TF's definitions): Conv2D (SAME/VALID/EXPLICIT, strides, dilations, groups, batch,
// multi-chunk and threaded), DepthwiseConv2dNative, Conv2DBackpropInput (a scatter-form
// reference, unlike the kernel's transposed convolution), every fused_ops combination of
// _FusedConv2D, FusedDepthwiseConv2dNative and _FusedMatMul, Prelu, and the errors.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/runtime/kernel_test_util.h"

namespace tfjit::runtime {
namespace {

using ::testing::ElementsAre;
using namespace ::tfjit::runtime::testing;  // NOLINT: test builders

using Dims = std::vector<int64_t>;

Tensor Random(const Dims& dims, uint64_t seed) {
  Tensor t(DType::kFloat32, dims);
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    t.data<float>()[i] = static_cast<float>(static_cast<double>(s >> 40) / (1 << 24) * 2.0 - 1.0);
  }
  return t;
}

// TF's window geometry for one spatial dim: output size and leading pad.
struct Geo {
  int64_t out = 0, pad = 0;
};
Geo Geometry(const std::string& padding, int64_t in, int64_t k, int64_t s, int64_t d,
             int64_t pad_lo = 0, int64_t pad_hi = 0) {
  const int64_t eff = (k - 1) * d + 1;
  if (padding == "SAME") {
    const int64_t out = (in + s - 1) / s;
    return {out, std::max<int64_t>((out - 1) * s + eff - in, 0) / 2};
  }
  return {(in + pad_lo + pad_hi - eff) / s + 1, pad_lo};
}

struct ConvSpec {
  Dims x, f;  // NHWC input; HWIO filter (I = C / groups)
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  std::string padding = "SAME";
  std::vector<int64_t> explicit_pads;  // 8 entries when padding == EXPLICIT
};

// y[n, oy, ox, o] = sum x[n, oy*sh + kh*dh - pt, ox*sw + kw*dw - pl, g*I + i] * f[kh, kw, i, o]
// with g = o / (O / groups).
Tensor NaiveConv(const ConvSpec& c, const Tensor& x, const Tensor& f) {
  const int64_t n_ = c.x[0], h = c.x[1], w = c.x[2], ch = c.x[3];
  const int64_t kh_ = c.f[0], kw_ = c.f[1], gi = c.f[2], oc = c.f[3];
  const int64_t per_group_out = oc / (ch / gi);
  const bool ex = c.padding == "EXPLICIT";
  const Geo gh = Geometry(c.padding, h, kh_, c.sh, c.dh, ex ? c.explicit_pads[2] : 0,
                          ex ? c.explicit_pads[3] : 0);
  const Geo gw = Geometry(c.padding, w, kw_, c.sw, c.dw, ex ? c.explicit_pads[4] : 0,
                          ex ? c.explicit_pads[5] : 0);
  Tensor y(DType::kFloat32, {n_, gh.out, gw.out, oc});
  for (int64_t n = 0; n < n_; ++n)
    for (int64_t oy = 0; oy < gh.out; ++oy)
      for (int64_t ox = 0; ox < gw.out; ++ox)
        for (int64_t o = 0; o < oc; ++o) {
          double acc = 0;
          const int64_t g = o / per_group_out;
          for (int64_t kh = 0; kh < kh_; ++kh)
            for (int64_t kw = 0; kw < kw_; ++kw)
              for (int64_t i = 0; i < gi; ++i) {
                const int64_t iy = oy * c.sh + kh * c.dh - gh.pad;
                const int64_t ix = ox * c.sw + kw * c.dw - gw.pad;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                acc += double(x.data<float>()[((n * h + iy) * w + ix) * ch + g * gi + i]) *
                       f.data<float>()[((kh * kw_ + kw) * gi + i) * oc + o];
              }
          y.data<float>()[((n * gh.out + oy) * gw.out + ox) * oc + o] = static_cast<float>(acc);
        }
  return y;
}

// Depthwise: y[n, oy, ox, c*M + m] = sum x[.., c] * f[kh, kw, c, m].
Tensor NaiveDepthwise(const ConvSpec& c, const Tensor& x, const Tensor& f) {
  const int64_t n_ = c.x[0], h = c.x[1], w = c.x[2], ch = c.x[3], m_ = c.f[3];
  const Geo gh = Geometry(c.padding, h, c.f[0], c.sh, c.dh);
  const Geo gw = Geometry(c.padding, w, c.f[1], c.sw, c.dw);
  Tensor y(DType::kFloat32, {n_, gh.out, gw.out, ch * m_});
  for (int64_t n = 0; n < n_; ++n)
    for (int64_t oy = 0; oy < gh.out; ++oy)
      for (int64_t ox = 0; ox < gw.out; ++ox)
        for (int64_t k = 0; k < ch; ++k)
          for (int64_t m = 0; m < m_; ++m) {
            double acc = 0;
            for (int64_t kh = 0; kh < c.f[0]; ++kh)
              for (int64_t kw = 0; kw < c.f[1]; ++kw) {
                const int64_t iy = oy * c.sh + kh * c.dh - gh.pad;
                const int64_t ix = ox * c.sw + kw * c.dw - gw.pad;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                acc += double(x.data<float>()[((n * h + iy) * w + ix) * ch + k]) *
                       f.data<float>()[((kh * c.f[1] + kw) * ch + k) * m_ + m];
              }
            y.data<float>()[((n * gh.out + oy) * gw.out + ox) * ch * m_ + k * m_ + m] =
                static_cast<float>(acc);
          }
  return y;
}

// Conv2DBackpropInput by scattering every (output pixel, tap) product back to its input.
Tensor NaiveBackpropInput(const ConvSpec& c, const Tensor& f, const Tensor& dy) {
  const int64_t n_ = c.x[0], h = c.x[1], w = c.x[2], ch = c.x[3], oc = c.f[3];
  const bool ex = c.padding == "EXPLICIT";
  const Geo gh = Geometry(c.padding, h, c.f[0], c.sh, c.dh, ex ? c.explicit_pads[2] : 0,
                          ex ? c.explicit_pads[3] : 0);
  const Geo gw = Geometry(c.padding, w, c.f[1], c.sw, c.dw, ex ? c.explicit_pads[4] : 0,
                          ex ? c.explicit_pads[5] : 0);
  std::vector<double> dx(static_cast<size_t>(n_ * h * w * ch), 0.0);
  for (int64_t n = 0; n < n_; ++n)
    for (int64_t oy = 0; oy < gh.out; ++oy)
      for (int64_t ox = 0; ox < gw.out; ++ox)
        for (int64_t kh = 0; kh < c.f[0]; ++kh)
          for (int64_t kw = 0; kw < c.f[1]; ++kw)
            for (int64_t i = 0; i < ch; ++i)
              for (int64_t o = 0; o < oc; ++o) {
                const int64_t iy = oy * c.sh + kh * c.dh - gh.pad;
                const int64_t ix = ox * c.sw + kw * c.dw - gw.pad;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                dx[static_cast<size_t>(((n * h + iy) * w + ix) * ch + i)] +=
                    double(dy.data<float>()[((n * gh.out + oy) * gw.out + ox) * oc + o]) *
                    f.data<float>()[((kh * c.f[1] + kw) * ch + i) * oc + o];
              }
  Tensor out(DType::kFloat32, c.x);
  for (size_t i = 0; i < dx.size(); ++i) out.data<float>()[i] = static_cast<float>(dx[i]);
  return out;
}

::testing::AssertionResult Near(const Tensor& want, const Tensor& got, double tol = 1e-5) {
  if (want.ShapeString() != got.ShapeString()) {
    return ::testing::AssertionFailure() << want.ShapeString() << " vs " << got.ShapeString();
  }
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    const double a = ElementAsDouble(want, i), b = ElementAsDouble(got, i);
    if (std::abs(a - b) > tol * std::max(1.0, std::abs(a))) {
      return ::testing::AssertionFailure() << "element " << i << ": want " << a << " got " << b;
    }
  }
  return ::testing::AssertionSuccess();
}

OpRunner ConvRunner(const std::string& op, const ConvSpec& c) {
  OpRunner r(op);
  r.T(DType::kFloat32)
      .Ints("strides", {1, c.sh, c.sw, 1})
      .Ints("dilations", {1, c.dh, c.dw, 1})
      .Str("padding", c.padding);
  if (!c.explicit_pads.empty()) r.Ints("explicit_paddings", c.explicit_pads);
  return r;
}

OpRunner& FusedOps(OpRunner& r, const std::vector<std::string>& ops, int num_args) {
  std::string list = "list { ";
  for (const std::string& s : ops) absl::StrAppend(&list, "s: \"", s, "\" ");
  return r.RawAttr("fused_ops", list + "}").Int("num_args", num_args);
}

TEST(ConvKernelsTest, Conv2DHandComputedSame) {
  // x = 1..9 (3x3), 2x2 ones, SAME: TF pads 0 before and 1 after.
  std::vector<float> v(9);
  for (int i = 0; i < 9; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  ConvSpec c{{1, 3, 3, 1}, {2, 2, 1, 1}};
  auto out = ConvRunner("Conv2D", c)
                 .Input(F32({1, 3, 3, 1}, v))
                 .Input(F32({2, 2, 1, 1}, {1, 1, 1, 1}))
                 .Run0();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values(*out), ElementsAre(12, 16, 9, 24, 28, 15, 15, 17, 9));
}

TEST(ConvKernelsTest, Conv2DMatchesNaive) {
  ThreadPool pool(3);
  std::vector<ConvSpec> specs = {
      {{1, 7, 9, 3}, {3, 3, 3, 5}, 1, 1, 1, 1, "SAME"},
      {{1, 7, 9, 3}, {3, 3, 3, 5}, 1, 1, 1, 1, "VALID"},
      {{2, 8, 10, 4}, {3, 3, 4, 6}, 2, 2, 1, 1, "SAME"},
      {{1, 9, 11, 3}, {3, 3, 3, 4}, 2, 2, 1, 1, "VALID"},
      {{1, 13, 12, 2}, {5, 4, 2, 3}, 3, 3, 1, 1, "SAME"},
      {{1, 17, 16, 2}, {3, 3, 2, 3}, 4, 4, 1, 1, "SAME"},
      {{1, 17, 16, 2}, {4, 4, 2, 3}, 4, 3, 1, 1, "VALID"},
      {{1, 9, 9, 3}, {3, 3, 3, 4}, 1, 1, 2, 2, "SAME"},
      {{2, 10, 9, 3}, {3, 2, 3, 4}, 2, 1, 2, 3, "VALID"},
      {{2, 5, 6, 37}, {1, 1, 37, 11}, 1, 1, 1, 1, "SAME"},   // pointwise
      {{1, 40, 40, 16}, {3, 3, 16, 8}, 1, 1, 1, 1, "SAME"},  // several GEMM chunks
      {{1, 6, 6, 8}, {3, 3, 4, 6}, 1, 1, 1, 1, "SAME"},      // 2 groups
      {{1, 7, 6, 2}, {3, 3, 2, 3}, 1, 2, 1, 1, "EXPLICIT", {0, 0, 2, 1, 0, 3, 0, 0}},
  };
  uint64_t seed = 1;
  for (const ConvSpec& c : specs) {
    const Tensor x = Random(c.x, seed++), f = Random(c.f, seed++);
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      auto out = ConvRunner("Conv2D", c).Input(x).Input(f).Pool(p).Run0();
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_TRUE(Near(NaiveConv(c, x, f), *out)) << "spec " << seed / 2 << " " << c.padding;
    }
  }
}

TEST(ConvKernelsTest, DepthwiseMatchesNaive) {
  ThreadPool pool(2);
  std::vector<ConvSpec> specs = {
      {{1, 7, 8, 6}, {3, 3, 6, 1}, 1, 1, 1, 1, "SAME"},
      {{2, 9, 7, 5}, {3, 3, 5, 2}, 2, 2, 1, 1, "SAME"},
      {{1, 9, 7, 5}, {3, 3, 5, 2}, 2, 2, 1, 1, "VALID"},
      {{1, 12, 12, 4}, {5, 5, 4, 1}, 3, 3, 1, 1, "SAME"},
      {{1, 11, 10, 3}, {3, 3, 3, 1}, 1, 1, 2, 2, "SAME"},
      {{1, 8, 8, 3}, {3, 3, 3, 2}, 2, 2, 1, 1, "SAME"},  // odd total padding: 0 before, 1 after
  };
  uint64_t seed = 100;
  for (const ConvSpec& c : specs) {
    const Tensor x = Random(c.x, seed++), f = Random(c.f, seed++);
    auto out = ConvRunner("DepthwiseConv2dNative", c).Input(x).Input(f).Pool(&pool).Run0();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(Near(NaiveDepthwise(c, x, f), *out)) << seed;
  }
}

TEST(ConvKernelsTest, BackpropInputMatchesScatterReference) {
  std::vector<ConvSpec> specs = {
      {{1, 8, 8, 3}, {3, 3, 3, 4}, 2, 2, 1, 1, "SAME"},
      {{2, 7, 9, 3}, {3, 3, 3, 4}, 2, 2, 1, 1, "SAME"},
      {{1, 9, 9, 2}, {3, 3, 2, 5}, 2, 2, 1, 1, "VALID"},
      {{1, 8, 8, 2}, {4, 4, 2, 3}, 2, 2, 1, 1, "VALID"},
      {{1, 6, 7, 2}, {3, 3, 2, 2}, 1, 1, 1, 1, "SAME"},
      {{1, 9, 9, 2}, {3, 3, 2, 2}, 1, 1, 2, 2, "SAME"},
      {{1, 10, 11, 2}, {3, 2, 2, 3}, 3, 2, 1, 1, "SAME"},
      {{2, 5, 6, 7}, {1, 1, 7, 9}, 1, 1, 1, 1, "SAME"},     // 1x1 stride 1: a plain GEMM of dy
      {{1, 9, 8, 3}, {1, 1, 3, 4}, 2, 2, 1, 1, "VALID"},    // 1x1 strided: holes in dx
      {{1, 40, 40, 8}, {3, 3, 8, 16}, 1, 1, 1, 1, "SAME"},  // several GEMM chunks, threaded
      // Forward padding wider than the window: the transposed padding is negative.
      {{1, 7, 6, 2}, {3, 2, 2, 3}, 2, 1, 1, 1, "EXPLICIT", {0, 0, 4, 1, 0, 3, 0, 0}},
      {{1, 8, 9, 2}, {2, 3, 2, 2}, 1, 2, 2, 1, "EXPLICIT", {0, 0, 1, 2, 3, 0, 0, 0}},
  };
  ThreadPool pool(3);
  uint64_t seed = 200;
  for (const ConvSpec& c : specs) {
    const bool ex = c.padding == "EXPLICIT";
    const Geo gh = Geometry(c.padding, c.x[1], c.f[0], c.sh, c.dh, ex ? c.explicit_pads[2] : 0,
                            ex ? c.explicit_pads[3] : 0);
    const Geo gw = Geometry(c.padding, c.x[2], c.f[1], c.sw, c.dw, ex ? c.explicit_pads[4] : 0,
                            ex ? c.explicit_pads[5] : 0);
    const Tensor f = Random(c.f, seed++);
    const Tensor dy = Random({c.x[0], gh.out, gw.out, c.f[3]}, seed++);
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      auto out = ConvRunner("Conv2DBackpropInput", c)
                     .Input(I32({4}, {static_cast<int32_t>(c.x[0]), static_cast<int32_t>(c.x[1]),
                                      static_cast<int32_t>(c.x[2]), static_cast<int32_t>(c.x[3])}))
                     .Input(f)
                     .Input(dy)
                     .Pool(p)
                     .Run0();
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_TRUE(Near(NaiveBackpropInput(c, f, dy), *out)) << seed;
    }
  }
}

// The epilogue reference: fused_ops applied to the unfused contraction, channels last.
Tensor ApplyReference(const Tensor& in, const std::vector<std::string>& ops,
                      const std::vector<Tensor>& args, float leaky_alpha = 0.2f,
                      float epsilon = 1e-4f) {
  Tensor y = in.Clone();  // copies share buffers
  const int64_t c_n = y.dim(y.rank() - 1);
  float* p = y.data<float>();
  size_t next = 0;
  const std::string first = ops.empty() ? "" : ops[0];
  const Tensor* bias = first == "BiasAdd" ? &args[next++] : nullptr;
  const Tensor* bn = first == "FusedBatchNorm" ? &args[next] : nullptr;
  if (bn != nullptr) next += 4;
  for (int64_t i = 0; i < y.num_elements(); ++i) {
    const int64_t c = i % c_n;
    double v = p[i];
    if (bias != nullptr) v += bias->data<float>()[c];
    if (bn != nullptr) {
      const float scale = bn[0].data<float>()[c], offset = bn[1].data<float>()[c];
      const float mean = bn[2].data<float>()[c], var = bn[3].data<float>()[c];
      v = (v - mean) * scale / std::sqrt(var + epsilon) + offset;
    }
    const std::string act = ops.size() > 1 ? ops[1] : "";
    if (act == "Relu") v = std::max(v, 0.0);
    if (act == "Relu6") v = std::min(std::max(v, 0.0), 6.0);
    if (act == "Elu") v = v < 0 ? std::expm1(v) : v;
    if (act == "LeakyRelu") v = v > 0 ? v : v * leaky_alpha;
    if (act == "Sigmoid") v = 1 / (1 + std::exp(-v));
    if (act == "Tanh") v = std::tanh(v);
    if (act == "Prelu") {
      const Tensor& a = args[next];
      v = v >= 0 ? v : v * a.data<float>()[a.num_elements() == 1 ? 0 : c];
    }
    p[i] = static_cast<float>(v);
  }
  return y;
}

// Args of a fused op with `ops` over `channels`: bias / batch-norm stats / prelu alpha.
std::vector<Tensor> FusedArgs(const std::vector<std::string>& ops, int64_t channels,
                              uint64_t seed) {
  std::vector<Tensor> args;
  if (ops.empty()) return args;
  if (ops[0] == "BiasAdd") args.push_back(Random({channels}, seed));
  if (ops[0] == "FusedBatchNorm") {
    for (int i = 0; i < 4; ++i) args.push_back(Random({channels}, seed + i));
    for (int64_t c = 0; c < channels; ++c) {
      args[3].data<float>()[c] = std::abs(args[3].data<float>()[c]) + 0.5f;  // variance > 0
    }
  }
  if (ops.size() > 1 && ops[1] == "Prelu") args.push_back(Random({1, 1, channels}, seed + 9));
  return args;
}

const std::vector<std::vector<std::string>>& FusedCombos() {
  static const auto* combos = new std::vector<std::vector<std::string>>{{"BiasAdd"},
                                                                        {"BiasAdd", "Relu"},
                                                                        {"BiasAdd", "Relu6"},
                                                                        {"BiasAdd", "Prelu"},
                                                                        {"BiasAdd", "LeakyRelu"},
                                                                        {"BiasAdd", "Elu"},
                                                                        {"BiasAdd", "Sigmoid"},
                                                                        {"BiasAdd", "Tanh"},
                                                                        {"FusedBatchNorm"},
                                                                        {"FusedBatchNorm", "Relu"},
                                                                        {"NoOp", "Relu"},
                                                                        {}};
  return *combos;
}

TEST(ConvKernelsTest, FusedConv2DEveryCombination) {
  ThreadPool pool(2);
  const ConvSpec c{{2, 9, 8, 3}, {3, 3, 3, 5}, 2, 1, 1, 1, "SAME"};
  const Tensor x = Random(c.x, 300), f = Random(c.f, 301);
  // Scale up so that activations see both signs and Relu6 clips.
  Tensor big = x.Clone();
  for (int64_t i = 0; i < big.num_elements(); ++i) big.data<float>()[i] *= 4;
  const Tensor base = NaiveConv(c, big, f);
  for (const auto& ops : FusedCombos()) {
    const std::vector<Tensor> args = FusedArgs(ops, 5, 400);
    OpRunner r = ConvRunner("_FusedConv2D", c);
    FusedOps(r, ops, static_cast<int>(args.size())).Input(big).Input(f).Pool(&pool);
    r.RawAttr("leakyrelu_alpha", "f: 0.3").RawAttr("epsilon", "f: 0.001");
    for (const Tensor& a : args) r.Input(a);
    auto out = r.Run0();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(Near(ApplyReference(base, ops, args, 0.3f, 0.001f), *out))
        << absl::StrJoin(ops, ",");
  }
}

TEST(ConvKernelsTest, FusedDepthwiseCombinations) {
  const ConvSpec c{{1, 9, 9, 4}, {3, 3, 4, 2}, 2, 2, 1, 1, "SAME"};
  Tensor x = Random(c.x, 500);
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] *= 5;
  const Tensor f = Random(c.f, 501);
  const Tensor base = NaiveDepthwise(c, x, f);
  for (const std::vector<std::string>& ops :
       std::vector<std::vector<std::string>>{{"BiasAdd"},
                                             {"BiasAdd", "Relu"},
                                             {"BiasAdd", "Relu6"},
                                             {"NoOp", "Relu6"},
                                             {"BiasAdd", "Prelu"}}) {
    const std::vector<Tensor> args = FusedArgs(ops, 8, 600);
    OpRunner r = ConvRunner("FusedDepthwiseConv2dNative", c);
    FusedOps(r, ops, static_cast<int>(args.size())).Input(x).Input(f);
    for (const Tensor& a : args) r.Input(a);
    auto out = r.Run0();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(Near(ApplyReference(base, ops, args), *out)) << absl::StrJoin(ops, ",");
  }
}

TEST(ConvKernelsTest, FusedMatMulTransposesAndEpilogues) {
  const Tensor a = Random({7, 5}, 700), b = Random({5, 6}, 701);
  Tensor want(DType::kFloat32, {7, 6});
  for (int64_t i = 0; i < 7; ++i)
    for (int64_t j = 0; j < 6; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < 5; ++k)
        acc += double(a.data<float>()[i * 5 + k]) * b.data<float>()[k * 6 + j];
      want.data<float>()[i * 6 + j] = static_cast<float>(acc * 3);
    }
  Tensor a3 = a.Clone();  // scaled so that Relu6 clips
  for (int64_t i = 0; i < a3.num_elements(); ++i) a3.data<float>()[i] *= 3;
  // Transposed copies of a3 and b.
  Tensor at(DType::kFloat32, {5, 7}), bt(DType::kFloat32, {6, 5});
  for (int64_t i = 0; i < 7; ++i)
    for (int64_t k = 0; k < 5; ++k) at.data<float>()[k * 7 + i] = a3.data<float>()[i * 5 + k];
  for (int64_t k = 0; k < 5; ++k)
    for (int64_t j = 0; j < 6; ++j) bt.data<float>()[j * 5 + k] = b.data<float>()[k * 6 + j];
  for (const auto& ops : FusedCombos()) {
    const std::vector<Tensor> args = FusedArgs(ops, 6, 800);
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      OpRunner r("_FusedMatMul");
      r.T(DType::kFloat32).Bool("transpose_a", ta).Bool("transpose_b", tb);
      FusedOps(r, ops, static_cast<int>(args.size())).Input(ta ? at : a3).Input(tb ? bt : b);
      for (const Tensor& arg : args) r.Input(arg);
      auto out = r.Run0();
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_TRUE(Near(ApplyReference(want, ops, args), *out))
          << absl::StrJoin(ops, ",") << " ta=" << ta << " tb=" << tb;
    }
  }
}

TEST(ConvKernelsTest, PreluBroadcastsAlpha) {
  auto out = OpRunner("Prelu")
                 .Input(F32({2, 3}, {-1, 2, -3, 4, -5, 0}))
                 .Input(F32({3}, {0.5f, 10, 2}))
                 .Run0();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values(*out), ElementsAre(-0.5, 2, -6, 4, -50, 0));
}

TEST(ConvKernelsTest, Errors) {
  const ConvSpec c{{1, 4, 4, 2}, {3, 3, 2, 2}};
  // NCHW runs (transposed); other layouts do not.
  auto nchw = ConvRunner("Conv2D", c)
                  .Str("data_format", "NCHW_VECT_C")
                  .Input(Random(c.x, 1))
                  .Input(Random(c.f, 2))
                  .Run0();
  TFJIT_EXPECT_ERROR(nchw, absl::StatusCode::kUnimplemented, "data_format 'NCHW_VECT_C'");
  ConvSpec valid = c;
  valid.padding = "VALID";
  auto negative = ConvRunner("Conv2D", valid)
                      .Input(Random({1, 1, 1, 2}, 1))
                      .Input(Random({3, 3, 2, 2}, 2))
                      .Run0();
  TFJIT_EXPECT_ERROR(negative, absl::StatusCode::kInvalidArgument, "would be negative");
  // TF's size (1 - 4 + 2) / 2 truncates to 0: a window that misses by less than a stride gives
  // an empty output, not an error (frontend/conv_attrs.h).
  ConvSpec strided = valid;
  strided.sh = strided.sw = 2;
  auto empty = ConvRunner("Conv2D", strided)
                   .Input(Random({1, 1, 1, 2}, 1))
                   .Input(Random({4, 4, 2, 2}, 2))
                   .Run0();
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->ShapeString(), "float32[1,0,0,2]");
  auto depth = ConvRunner("Conv2D", c).Input(Random({1, 4, 4, 3}, 1)).Input(Random(c.f, 2)).Run0();
  TFJIT_EXPECT_ERROR(depth, absl::StatusCode::kInvalidArgument, "evenly divisible");
  OpRunner bad = ConvRunner("_FusedConv2D", c);
  FusedOps(bad, {"BiasAdd", "Add"}, 2)
      .Input(Random(c.x, 1))
      .Input(Random(c.f, 2))
      .Input(Random({2}, 3))
      .Input(Random({1, 4, 4, 2}, 4));
  TFJIT_EXPECT_ERROR(bad.Run0(), absl::StatusCode::kUnimplemented, "fused_ops [BiasAdd,Add]");
  OpRunner bias = ConvRunner("_FusedConv2D", c);
  FusedOps(bias, {"BiasAdd"}, 1).Input(Random(c.x, 1)).Input(Random(c.f, 2)).Input(Random({3}, 3));
  TFJIT_EXPECT_ERROR(bias.Run0(), absl::StatusCode::kInvalidArgument, "bias must be a vector");
  auto mismatch = ConvRunner("Conv2DBackpropInput", c)
                      .Input(I32({4}, {1, 4, 4, 2}))
                      .Input(Random(c.f, 2))
                      .Input(Random({1, 3, 4, 2}, 3))
                      .Run0();
  TFJIT_EXPECT_ERROR(mismatch, absl::StatusCode::kInvalidArgument, "does not match");
}

}  // namespace
}  // namespace tfjit::runtime
