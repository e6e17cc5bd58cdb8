// Op cases of the convolution family (nn_conv_kernels.cc, nn_conv_lowerings.cc, elemental_conv.cc):
// Conv2D over SAME/VALID/EXPLICIT and strides 1..4, dilation, batch 2; DepthwiseConv2dNative
// with multipliers 1 and 2; Conv2DBackpropInput with SAME/VALID and stride 2; every fused_ops
// combination of _FusedConv2D, FusedDepthwiseConv2dNative and _FusedMatMul; Prelu. Most
// cases carry a naive reference (nested loops in double) besides the kernel/JIT agreement.
// Two graph tests check that auto-clustering compiles a tfjs block whole and leaves an
// unsupported layout (NCHW_VECT_C) out.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "examples/cli_output.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tests/tf/op_cases.h"
#include "tfjit/session.h"

namespace tfjit::optest {
namespace {

using ::tfjit::testing::WriteTempFile;

tensorflow::AttrValue IntList(const std::vector<int64_t>& v) {
  tensorflow::AttrValue a;
  a.mutable_list();
  for (int64_t x : v) a.mutable_list()->add_i(x);
  return a;
}
tensorflow::AttrValue StringList(const std::vector<std::string>& v) {
  tensorflow::AttrValue a;
  a.mutable_list();
  for (const std::string& s : v) a.mutable_list()->add_s(s);
  return a;
}
struct Window {
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  std::string padding = "SAME";
  std::vector<int64_t> explicit_pads;
};

// TF's output size and leading pad of one spatial dim (d = 1 height, 2 width).
std::pair<int64_t, int64_t> Geometry(const Window& w, int d, int64_t in, int64_t k) {
  const int64_t s = d == 1 ? w.sh : w.sw, dil = d == 1 ? w.dh : w.dw;
  const int64_t eff = (k - 1) * dil + 1;
  if (w.padding == "SAME") {
    const int64_t out = (in + s - 1) / s;
    return {out, std::max<int64_t>((out - 1) * s + eff - in, 0) / 2};
  }
  int64_t lo = 0, hi = 0;
  if (w.padding == "EXPLICIT") {
    lo = w.explicit_pads[static_cast<size_t>(2 * d)];
    hi = w.explicit_pads[static_cast<size_t>(2 * d + 1)];
  }
  return {(in + lo + hi - eff) / s + 1, lo};
}

void SetWindowAttrs(OpCase& c, const Window& w) {
  c.attrs["strides"] = IntList({1, w.sh, w.sw, 1});
  c.attrs["dilations"] = IntList({1, w.dh, w.dw, 1});
  c.attrs["padding"] = StringAttr(w.padding);
  if (!w.explicit_pads.empty()) c.attrs["explicit_paddings"] = IntList(w.explicit_pads);
}

// Naive NHWC convolution; depthwise filters are [h, w, C, M] with output channel c * M + m.
Tensor NaiveConv(const Tensor& x, const Tensor& f, const Window& w, bool depthwise) {
  const int64_t n_ = x.dim(0), h = x.dim(1), wd = x.dim(2), ch = x.dim(3);
  const int64_t kh_ = f.dim(0), kw_ = f.dim(1);
  const int64_t oc = depthwise ? ch * f.dim(3) : f.dim(3);
  const auto [oh, ph] = Geometry(w, 1, h, kh_);
  const auto [ow, pw] = Geometry(w, 2, wd, kw_);
  return Build(x.dtype(), {n_, oh, ow, oc}, [&](const Dims& o) {
    double acc = 0;
    for (int64_t kh = 0; kh < kh_; ++kh) {
      for (int64_t kw = 0; kw < kw_; ++kw) {
        const int64_t iy = o[1] * w.sh + kh * w.dh - ph, ix = o[2] * w.sw + kw * w.dw - pw;
        if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
        if (depthwise) {
          const int64_t m = o[3] % f.dim(3), c = o[3] / f.dim(3);
          acc += At(x, {o[0], iy, ix, c}) * At(f, {kh, kw, c, m});
        } else {
          for (int64_t c = 0; c < ch; ++c)
            acc += At(x, {o[0], iy, ix, c}) * At(f, {kh, kw, c, o[3]});
        }
      }
    }
    return acc;
  });
}

// fused_ops applied to y (channels last) with args, as formats.md 3.5 defines them.
Tensor Epilogue(const Tensor& y, const std::vector<std::string>& ops,
                const std::vector<Tensor>& args, double leaky = 0.2, double eps = 1e-4) {
  Tensor out = y.Clone();
  const int64_t cn = y.dim(y.rank() - 1);
  for (int64_t i = 0; i < y.num_elements(); ++i) {
    const int64_t c = i % cn;
    double v = ElementAsDouble(y, i);
    size_t next = 0;
    if (!ops.empty() && ops[0] == "BiasAdd") v += ElementAsDouble(args[next++], c);
    if (!ops.empty() && ops[0] == "FusedBatchNorm") {
      const double scale = ElementAsDouble(args[0], c), offset = ElementAsDouble(args[1], c);
      const double mean = ElementAsDouble(args[2], c), var = ElementAsDouble(args[3], c);
      v = (v - mean) * scale / std::sqrt(var + eps) + offset;
      next = 4;
    }
    const std::string act = ops.size() > 1 ? ops[1] : "";
    if (act == "Relu") v = std::max(v, 0.0);
    if (act == "Relu6") v = std::min(std::max(v, 0.0), 6.0);
    if (act == "Elu") v = v < 0 ? std::expm1(v) : v;
    if (act == "LeakyRelu") v = v > 0 ? v : v * leaky;
    if (act == "Sigmoid") v = 1 / (1 + std::exp(-v));
    if (act == "Tanh") v = std::tanh(v);
    if (act == "Prelu") {
      const Tensor& a = args[next];
      v = v >= 0 ? v : v * ElementAsDouble(a, a.num_elements() == 1 ? 0 : c);
    }
    SetFromDouble(out, i, v);
  }
  return out;
}

// Fixed feeds: x scaled so that activations see both signs and Relu6 clips; batch-norm
// variances positive.
std::vector<Tensor> FusedFeeds(const std::vector<Dims>& shapes, const std::vector<std::string>& ops,
                               double x_scale) {
  std::vector<Tensor> feeds;
  for (size_t i = 0; i < shapes.size(); ++i) {
    Tensor t = cli::RandomTensor(DType::kFloat32, shapes[i], 31 + i * 7);
    for (int64_t k = 0; k < t.num_elements(); ++k) {
      double v = ElementAsDouble(t, k);
      if (i == 0) v *= x_scale;
      if (!ops.empty() && ops[0] == "FusedBatchNorm" && i == 5) v = std::abs(v) + 0.5;
      SetFromDouble(t, k, v);
    }
    feeds.push_back(t);
  }
  return feeds;
}

std::vector<Dims> ArgShapes(const std::vector<std::string>& ops, int64_t channels) {
  std::vector<Dims> shapes;
  if (ops.empty()) return shapes;
  if (ops[0] == "BiasAdd") shapes.push_back({channels});
  if (ops[0] == "FusedBatchNorm") shapes.insert(shapes.end(), 4, Dims{channels});
  if (ops.size() > 1 && ops[1] == "Prelu") shapes.push_back({1, 1, channels});
  return shapes;
}

void ConvCasesInto(std::vector<OpCase>& cases) {
  struct C {
    std::string name;
    Dims x, f;
    Window w;
  };
  std::vector<C> convs;
  for (const char* pad : {"SAME", "VALID"}) {
    for (int64_t s : {1, 2, 3, 4}) {
      convs.push_back({absl::StrCat(pad, "_s", s), {1, 9, 10, 3}, {3, 3, 3, 4}, {s, s, 1, 1, pad}});
    }
  }
  convs.push_back({"SAME_dilation2", {1, 9, 9, 2}, {3, 3, 2, 3}, {1, 1, 2, 2, "SAME"}});
  convs.push_back({"VALID_batch2_5x4_s3x2", {2, 11, 10, 2}, {5, 4, 2, 3}, {3, 2, 1, 1, "VALID"}});
  convs.push_back({"pointwise_batch2", {2, 5, 6, 7}, {1, 1, 7, 5}, {1, 1, 1, 1, "VALID"}});
  convs.push_back(
      {"EXPLICIT", {1, 7, 6, 2}, {3, 3, 2, 3}, {1, 2, 1, 1, "EXPLICIT", {0, 0, 2, 1, 0, 3, 0, 0}}});
  // H: (1 - 4 + 2) / 2 truncates to 0 as in TF: an empty output, not a negative-size error.
  convs.push_back({"VALID_window_misses_by_less_than_a_stride",
                   {1, 1, 6, 2},
                   {4, 3, 2, 3},
                   {2, 1, 1, 1, "VALID"}});
  for (const C& v : convs) {
    OpCase c{absl::StrCat("Conv2D_", v.name), "Conv2D", DType::kFloat32, {v.x, v.f}};
    SetWindowAttrs(c, v.w);
    const Window w = v.w;
    c.reference = [w](const std::vector<Tensor>& in) { return NaiveConv(in[0], in[1], w, false); };
    cases.push_back(c);
  }
  // Depthwise, multipliers 1 and 2.
  std::vector<C> dws = {
      {"m1_SAME_s1", {1, 8, 9, 4}, {3, 3, 4, 1}, {1, 1, 1, 1, "SAME"}},
      {"m2_SAME_s2", {2, 9, 8, 3}, {3, 3, 3, 2}, {2, 2, 1, 1, "SAME"}},
      {"m1_VALID_s2", {1, 9, 9, 5}, {3, 3, 5, 1}, {2, 2, 1, 1, "VALID"}},
      {"m2_VALID_s1_5x5", {1, 8, 7, 2}, {5, 5, 2, 2}, {1, 1, 1, 1, "VALID"}},
  };
  for (const C& v : dws) {
    OpCase c{absl::StrCat("DepthwiseConv2dNative_", v.name),
             "DepthwiseConv2dNative",
             DType::kFloat32,
             {v.x, v.f}};
    SetWindowAttrs(c, v.w);
    const Window w = v.w;
    c.reference = [w](const std::vector<Tensor>& in) { return NaiveConv(in[0], in[1], w, true); };
    cases.push_back(c);
  }
}

void BackpropInputCasesInto(std::vector<OpCase>& cases) {
  struct B {
    std::string name;
    Dims x, f;
    Window w;
  };
  for (const B& v : std::vector<B>{
           {"SAME_s2", {1, 8, 8, 3}, {3, 3, 3, 2}, {2, 2, 1, 1, "SAME"}},
           {"SAME_s2_odd_batch2", {2, 7, 9, 2}, {3, 3, 2, 3}, {2, 2, 1, 1, "SAME"}},
           {"VALID_s2", {1, 9, 9, 2}, {3, 3, 2, 3}, {2, 2, 1, 1, "VALID"}},
           {"VALID_s2_k4", {1, 10, 10, 2}, {4, 4, 2, 2}, {2, 2, 1, 1, "VALID"}},
           {"SAME_s1", {1, 6, 7, 2}, {3, 3, 2, 2}, {1, 1, 1, 1, "SAME"}},
       }) {
    const auto [oh, ph] = Geometry(v.w, 1, v.x[1], v.f[0]);
    const auto [ow, pw] = Geometry(v.w, 2, v.x[2], v.f[1]);
    OpCase c{absl::StrCat("Conv2DBackpropInput_", v.name),
             "Conv2DBackpropInput",
             DType::kFloat32,
             {v.f, {v.x[0], oh, ow, v.f[3]}},
             {Ints({static_cast<int32_t>(v.x[0]), static_cast<int32_t>(v.x[1]),
                    static_cast<int32_t>(v.x[2]), static_cast<int32_t>(v.x[3])})}};
    c.consts_first = true;
    SetWindowAttrs(c, v.w);
    // Scatter form: every dy element times the filter tap, added at its input position.
    const Window w = v.w;
    const Dims xd = v.x;
    const int64_t phh = ph, pww = pw;
    c.reference = [w, xd, phh, pww](const std::vector<Tensor>& in) {
      const Tensor& f = in[0];
      const Tensor& dy = in[1];
      std::vector<double> dx(static_cast<size_t>(xd[0] * xd[1] * xd[2] * xd[3]), 0.0);
      for (int64_t k = 0; k < dy.num_elements(); ++k) {
        const Dims o = Unravel(k, dy.dims());
        for (int64_t kh = 0; kh < f.dim(0); ++kh) {
          for (int64_t kw = 0; kw < f.dim(1); ++kw) {
            const int64_t iy = o[1] * w.sh + kh * w.dh - phh, ix = o[2] * w.sw + kw * w.dw - pww;
            if (iy < 0 || iy >= xd[1] || ix < 0 || ix >= xd[2]) continue;
            for (int64_t ci = 0; ci < xd[3]; ++ci) {
              dx[static_cast<size_t>(Ravel({o[0], iy, ix, ci}, xd))] +=
                  ElementAsDouble(dy, k) * At(f, {kh, kw, ci, o[3]});
            }
          }
        }
      }
      return Build(DType::kFloat32, xd,
                   [&](const Dims& i) { return dx[static_cast<size_t>(Ravel(i, xd))]; });
    };
    cases.push_back(c);
  }
}

const std::vector<std::vector<std::string>> kFusedCombos = {{"BiasAdd"},
                                                            {"BiasAdd", "Relu"},
                                                            {"BiasAdd", "Relu6"},
                                                            {"BiasAdd", "Prelu"},
                                                            {"BiasAdd", "LeakyRelu"},
                                                            {"BiasAdd", "Elu"},
                                                            {"BiasAdd", "Sigmoid"},
                                                            {"BiasAdd", "Tanh"},
                                                            {"FusedBatchNorm"},
                                                            {"FusedBatchNorm", "Relu"}};

void FusedCasesInto(std::vector<OpCase>& cases) {
  // _FusedConv2D: every combination, SAME stride 1; a few with VALID stride 2.
  for (const auto& ops : kFusedCombos) {
    for (const Window& w : {Window{1, 1, 1, 1, "SAME"}, Window{2, 2, 1, 1, "VALID"}}) {
      if (w.padding == "VALID" && ops.size() < 2) continue;
      const Dims x = {1, 8, 9, 3}, f = {3, 3, 3, 4};
      std::vector<Dims> shapes = {x, f};
      for (const Dims& d : ArgShapes(ops, 4)) shapes.push_back(d);
      OpCase c{absl::StrCat("_FusedConv2D_", absl::StrJoin(ops, "_"), "_", w.padding),
               "_FusedConv2D", DType::kFloat32, shapes};
      SetWindowAttrs(c, w);
      c.attrs["fused_ops"] = StringList(ops);
      c.attrs["num_args"] = IntAttr(static_cast<int64_t>(shapes.size()) - 2);
      c.attrs["epsilon"] = FloatAttr(0.001f);
      c.attrs["leakyrelu_alpha"] = FloatAttr(0.3f);
      c.feed_values = FusedFeeds(shapes, ops, 3.0);
      c.reference = [w, ops](const std::vector<Tensor>& in) {
        std::vector<Tensor> args(in.begin() + 2, in.end());
        return Epilogue(NaiveConv(in[0], in[1], w, false), ops, args, 0.3, 0.001);
      };
      cases.push_back(c);
    }
  }
  // FusedDepthwiseConv2dNative: the tfjs converter's combinations (and NoOp = no bias).
  for (const auto& ops : std::vector<std::vector<std::string>>{{"BiasAdd"},
                                                               {"BiasAdd", "Relu"},
                                                               {"BiasAdd", "Relu6"},
                                                               {"NoOp", "Relu6"},
                                                               {"BiasAdd", "Prelu"}}) {
    const Dims x = {1, 9, 8, 3}, f = {3, 3, 3, 2};
    std::vector<Dims> shapes = {x, f};
    for (const Dims& d : ArgShapes(ops, 6)) shapes.push_back(d);
    OpCase c{absl::StrCat("FusedDepthwiseConv2dNative_", absl::StrJoin(ops, "_")),
             "FusedDepthwiseConv2dNative", DType::kFloat32, shapes};
    const Window w{2, 2, 1, 1, "SAME"};
    SetWindowAttrs(c, w);
    c.attrs["fused_ops"] = StringList(ops);
    c.attrs["num_args"] = IntAttr(static_cast<int64_t>(shapes.size()) - 2);
    c.feed_values = FusedFeeds(shapes, ops, 6.0);
    c.reference = [w, ops](const std::vector<Tensor>& in) {
      std::vector<Tensor> args(in.begin() + 2, in.end());
      return Epilogue(NaiveConv(in[0], in[1], w, true), ops, args);
    };
    cases.push_back(c);
  }
  // _FusedMatMul with each combination and the transposes.
  int variant = 0;
  for (const auto& ops : kFusedCombos) {
    const bool ta = variant % 2 == 1, tb = variant % 3 == 1;
    ++variant;
    const Dims a = ta ? Dims{6, 5} : Dims{5, 6}, b = tb ? Dims{7, 6} : Dims{6, 7};
    std::vector<Dims> shapes = {a, b};
    for (Dims d : ArgShapes(ops, 7)) {
      if (d.size() == 3) d = {7};  // a matmul's prelu alpha: one per column
      shapes.push_back(d);
    }
    OpCase c{
        absl::StrCat("_FusedMatMul_", absl::StrJoin(ops, "_"), ta ? "_ta" : "", tb ? "_tb" : ""),
        "_FusedMatMul", DType::kFloat32, shapes};
    c.attrs["transpose_a"] = BoolAttr(ta);
    c.attrs["transpose_b"] = BoolAttr(tb);
    c.attrs["fused_ops"] = StringList(ops);
    c.attrs["num_args"] = IntAttr(static_cast<int64_t>(shapes.size()) - 2);
    c.feed_values = FusedFeeds(shapes, ops, 3.0);
    c.reference = [ta, tb, ops](const std::vector<Tensor>& in) {
      const int64_t m = ta ? in[0].dim(1) : in[0].dim(0), k = ta ? in[0].dim(0) : in[0].dim(1);
      const int64_t n = tb ? in[1].dim(0) : in[1].dim(1);
      Tensor y = Build(DType::kFloat32, {m, n}, [&](const Dims& o) {
        double acc = 0;
        for (int64_t j = 0; j < k; ++j) {
          acc += At(in[0], ta ? Dims{j, o[0]} : Dims{o[0], j}) *
                 At(in[1], tb ? Dims{o[1], j} : Dims{j, o[1]});
        }
        return acc;
      });
      return Epilogue(y, ops, std::vector<Tensor>(in.begin() + 2, in.end()));
    };
    cases.push_back(c);
  }
}

void PreluCasesInto(std::vector<OpCase>& cases) {
  for (const auto& [x, alpha] :
       std::vector<std::pair<Dims, Dims>>{{{2, 3, 4}, {4}}, {{1, 5, 6, 3}, {1, 1, 3}}, {{7}, {}}}) {
    OpCase c{absl::StrCat("Prelu_", DimsName(x), "_alpha_", DimsName(alpha)),
             "Prelu",
             DType::kFloat32,
             {x, alpha}};
    c.has_t = false;  // the tfjs converter writes none
    c.reference = BinaryRef([](double v, double a) { return v >= 0 ? v : a * v; });
    cases.push_back(c);
  }
}

}  // namespace

std::vector<OpCase> ConvCases() {
  std::vector<OpCase> cases;
  ConvCasesInto(cases);
  BackpropInputCasesInto(cases);
  FusedCasesInto(cases);
  PreluCasesInto(cases);
  return cases;
}

}  // namespace tfjit::optest

// ---- Clustering of the family (beyond the one-op cases) ----

namespace tfjit::optest {
namespace {

std::string Placeholder(const std::string& name, const Dims& dims) {
  std::string shape;
  for (int64_t d : dims) absl::StrAppend(&shape, "dim { size: ", d, " } ");
  return absl::StrCat("node { name: \"", name, "\" op: \"Placeholder\" attr { key: \"dtype\" ",
                      "value { type: DT_FLOAT } } attr { key: \"shape\" value { shape { ", shape,
                      "} } } }\n");
}

std::string ConvNode(const std::string& name, const std::string& op,
                     const std::vector<std::string>& inputs, const std::string& extra) {
  std::string in;
  for (const std::string& i : inputs) absl::StrAppend(&in, "input: \"", i, "\" ");
  return absl::StrCat("node { name: \"", name, "\" op: \"", op, "\" ", in,
                      "attr { key: \"T\" value { type: DT_FLOAT } } ",
                      "attr { key: \"strides\" value { list { i: 1 i: 1 i: 1 i: 1 } } } ",
                      "attr { key: \"padding\" value { s: \"SAME\" } } ", extra, "}\n");
}

std::string WriteGraph(const std::string& name, const std::string& text) {
  return WriteTempFile(absl::StrCat("conv_", name, ".pbtxt"), text);
}

const char* kBiasRelu6 =
    "attr { key: \"fused_ops\" value { list { s: \"BiasAdd\" s: \"Relu6\" } } } "
    "attr { key: \"num_args\" value { i: 1 } } ";

// A MobileNet-like block (the tfjs converter's ops) clusters whole under auto-clustering and
// matches the fallback kernels.
TEST(ConvClusteringTest, TfjsBlockCompilesAsOneCluster) {
  const std::string text =
      Placeholder("x", {1, 12, 12, 3}) + Placeholder("f", {3, 3, 3, 8}) + Placeholder("b", {8}) +
      Placeholder("df", {3, 3, 8, 1}) + Placeholder("db", {8}) + Placeholder("alpha", {8}) +
      ConvNode("conv", "_FusedConv2D", {"x", "f", "b"}, kBiasRelu6) +
      ConvNode("dw", "FusedDepthwiseConv2dNative", {"conv", "df", "db"}, kBiasRelu6) +
      "node { name: \"prelu\" op: \"Prelu\" input: \"dw\" input: \"alpha\" }\n";
  const std::string path = WriteGraph("block", text);
  std::vector<std::pair<std::string, Tensor>> feeds;
  uint64_t seed = 5;
  for (const auto& [name, dims] : std::vector<std::pair<std::string, Dims>>{{"x", {1, 12, 12, 3}},
                                                                            {"f", {3, 3, 3, 8}},
                                                                            {"b", {8}},
                                                                            {"df", {3, 3, 8, 1}},
                                                                            {"db", {8}},
                                                                            {"alpha", {8}}}) {
    feeds.push_back({name, cli::RandomTensor(DType::kFloat32, dims, seed++)});
  }
  std::vector<Tensor> results;
  for (JitMode jit : {JitMode::kNone, JitMode::kAuto}) {
    SessionOptions options;
    options.jit = jit;
    auto session = Session::Load(path, options);
    ASSERT_TRUE(session.ok()) << session.status();
    RunStats stats;
    auto out = (*session)->Run(feeds, {"prelu"}, &stats);
    ASSERT_TRUE(out.ok()) << out.status();
    if (jit == JitMode::kAuto) {
      EXPECT_EQ(stats.clusters, 1);
      EXPECT_EQ(stats.nodes_compiled, 3);
      EXPECT_EQ(stats.fallbacks, 0);
    }
    results.push_back((*out)[0]);
  }
  ASSERT_EQ(results[0].ShapeString(), results[1].ShapeString());
  for (int64_t i = 0; i < results[0].num_elements(); ++i) {
    EXPECT_NEAR(ElementAsDouble(results[0], i), ElementAsDouble(results[1], i), 1e-5) << i;
  }
  std::filesystem::remove(path);
}

// A layout tfjit does not run (NCHW_VECT_C; NCHW itself compiles since issue 19) is not
// compiled: auto-clustering leaves the node out and says why; must-compile fails with TF's
// "unsupported operations" error naming the node and the reason.
TEST(ConvClusteringTest, NchwIsLeftOutWithTheReason) {
  const std::string text = Placeholder("x", {1, 3, 6, 6}) + Placeholder("f", {3, 3, 3, 2}) +
                           ConvNode("conv", "Conv2D", {"x", "f"},
                                    "attr { key: \"data_format\" value { s: \"NCHW_VECT_C\" } } ");
  const std::string path = WriteGraph("nchw", text);
  SessionOptions options;
  options.jit = JitMode::kAuto;
  auto session = Session::Load(path, options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto explain = (*session)->Explain({"conv"});
  ASSERT_TRUE(explain.ok()) << explain.status();
  EXPECT_TRUE(absl::StrContains(*explain, "data_format 'NCHW_VECT_C'")) << *explain;
  options.jit = JitMode::kAll;
  auto all = Session::Load(path, options);
  ASSERT_TRUE(all.ok()) << all.status();
  auto out = (*all)->Run({{"x", cli::RandomTensor(DType::kFloat32, {1, 3, 6, 6}, 1)},
                          {"f", cli::RandomTensor(DType::kFloat32, {3, 3, 3, 2}, 2)}},
                         {"conv"});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "unsupported operations")) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "node 'conv'")) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "data_format 'NCHW_VECT_C'"))
      << out.status();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tfjit::optest
