// Differential cases of the nn_more ops (docs/DESIGN.md, "Op families"): kernel vs evaluator
// vs CPU JIT, each against an independent reference where one is given. NCHW forms of the
// convolutions and pools (references: the NHWC formula on transposed tensors), FusedBatchNorm
// in inference and training, MaxPoolV2, MaxPool3D/AvgPool3D in both layouts and LRN.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "examples/cli_output.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tests/tf/op_cases.h"
#include "tfjit/session.h"

namespace tfjit::optest {
namespace {

tensorflow::AttrValue IntList(const std::vector<int64_t>& v) {
  tensorflow::AttrValue a;
  a.mutable_list();
  for (int64_t x : v) a.mutable_list()->add_i(x);
  return a;
}
// out.dim(k) == x.dim(perm[k]).
Tensor Permute(const Tensor& x, const std::vector<int>& perm) {
  Dims out;
  for (int p : perm) out.push_back(x.dim(p));
  return Build(x.dtype(), out, [&](const Dims& o) {
    Dims i(o.size());
    for (size_t k = 0; k < perm.size(); ++k) i[static_cast<size_t>(perm[k])] = o[k];
    return At(x, i);
  });
}
const std::vector<int> kToNhwc = {0, 2, 3, 1}, kToNchw = {0, 3, 1, 2};
const std::vector<int> kToNdhwc = {0, 2, 3, 4, 1}, kToNcdhw = {0, 4, 1, 2, 3};

// TF's output size and leading pad (SAME or VALID).
std::pair<int64_t, int64_t> OutAndPad(bool same, int64_t in, int64_t k, int64_t s,
                                      int64_t dil = 1) {
  const int64_t eff = (k - 1) * dil + 1;
  if (same) {
    const int64_t out = (in + s - 1) / s;
    return {out, std::max<int64_t>((out - 1) * s + eff - in, 0) / 2};
  }
  return {in >= eff ? (in - eff) / s + 1 : 0, 0};
}

// Naive NHWC convolution; depthwise filters [h, w, C, M] give channel c * M + m.
Tensor NaiveConv(const Tensor& x, const Tensor& f, bool same, int64_t s, int64_t dil,
                 bool depthwise) {
  const int64_t ch = x.dim(3), oc = depthwise ? ch * f.dim(3) : f.dim(3);
  const auto [oh, ph] = OutAndPad(same, x.dim(1), f.dim(0), s, dil);
  const auto [ow, pw] = OutAndPad(same, x.dim(2), f.dim(1), s, dil);
  return Build(x.dtype(), {x.dim(0), oh, ow, oc}, [&](const Dims& o) {
    double acc = 0;
    for (int64_t kh = 0; kh < f.dim(0); ++kh) {
      for (int64_t kw = 0; kw < f.dim(1); ++kw) {
        const int64_t iy = o[1] * s + kh * dil - ph, ix = o[2] * s + kw * dil - pw;
        if (iy < 0 || iy >= x.dim(1) || ix < 0 || ix >= x.dim(2)) continue;
        if (depthwise) {
          const int64_t c = o[3] / f.dim(3), m = o[3] % f.dim(3);
          acc += At(x, {o[0], iy, ix, c}) * At(f, {kh, kw, c, m});
        } else {
          for (int64_t c = 0; c < ch; ++c) {
            acc += At(x, {o[0], iy, ix, c}) * At(f, {kh, kw, c, o[3]});
          }
        }
      }
    }
    return acc;
  });
}

// dx of an NHWC convolution: every (dy, filter tap) pair scattered onto its input pixel.
Tensor NaiveBackpropInput(const Dims& sizes, const Tensor& f, const Tensor& dy, bool same,
                          int64_t s) {
  const int64_t ph = OutAndPad(same, sizes[1], f.dim(0), s).second;
  const int64_t pw = OutAndPad(same, sizes[2], f.dim(1), s).second;
  std::vector<double> dx(static_cast<size_t>(sizes[0] * sizes[1] * sizes[2] * sizes[3]), 0.0);
  for (int64_t n = 0; n < dy.dim(0); ++n) {
    for (int64_t oy = 0; oy < dy.dim(1); ++oy) {
      for (int64_t ox = 0; ox < dy.dim(2); ++ox) {
        for (int64_t kh = 0; kh < f.dim(0); ++kh) {
          for (int64_t kw = 0; kw < f.dim(1); ++kw) {
            const int64_t iy = oy * s + kh - ph, ix = ox * s + kw - pw;
            if (iy < 0 || iy >= sizes[1] || ix < 0 || ix >= sizes[2]) continue;
            for (int64_t c = 0; c < f.dim(2); ++c) {
              for (int64_t o = 0; o < f.dim(3); ++o) {
                dx[static_cast<size_t>(Ravel({n, iy, ix, c}, sizes))] +=
                    At(dy, {n, oy, ox, o}) * At(f, {kh, kw, c, o});
              }
            }
          }
        }
      }
    }
  }
  return Build(dy.dtype(), sizes,
               [&](const Dims& i) { return dx[static_cast<size_t>(Ravel(i, sizes))]; });
}

void AddConvCases(std::vector<OpCase>& cases) {
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    for (bool same : {true, false}) {
      for (int64_t s : {1, 2}) {
        const std::string tail = absl::StrCat(same ? "SAME" : "VALID", "_s", s, "_", DTypeName(t));
        OpCase c{absl::StrCat("Conv2D_NCHW_", tail), "Conv2D", t, {{2, 3, 7, 6}, {3, 2, 3, 4}}};
        c.attrs["data_format"] = StringAttr("NCHW");
        c.attrs["strides"] = IntList({1, 1, s, s});
        c.attrs["padding"] = StringAttr(same ? "SAME" : "VALID");
        c.reference = [same, s](const std::vector<Tensor>& in) {
          return Permute(NaiveConv(Permute(in[0], kToNhwc), in[1], same, s, 1, false), kToNchw);
        };
        cases.push_back(c);
        OpCase d{absl::StrCat("DepthwiseConv2dNative_NCHW_", tail),
                 "DepthwiseConv2dNative",
                 t,
                 {{1, 3, 6, 5}, {3, 3, 3, 2}}};
        d.attrs = c.attrs;
        d.reference = [same, s](const std::vector<Tensor>& in) {
          return Permute(NaiveConv(Permute(in[0], kToNhwc), in[1], same, s, 1, true), kToNchw);
        };
        cases.push_back(d);
        // Forward input NCHW [2, 3, 7, 6] with a 3x2 filter of 4 outputs.
        const Dims nhwc = {2, 7, 6, 3};
        const int64_t oh = OutAndPad(same, 7, 3, s).first, ow = OutAndPad(same, 6, 2, s).first;
        OpCase b{absl::StrCat("Conv2DBackpropInput_NCHW_", tail),
                 "Conv2DBackpropInput",
                 t,
                 {{3, 2, 3, 4}, {2, 4, oh, ow}},
                 {Ints({2, 3, 7, 6})}};
        b.attrs = c.attrs;
        b.consts_first = true;
        b.reference = [same, s, nhwc](const std::vector<Tensor>& in) {
          return Permute(NaiveBackpropInput(nhwc, in[0], Permute(in[1], kToNhwc), same, s),
                         kToNchw);
        };
        cases.push_back(b);
      }
    }
  }
  // Dilation in NCHW order ([1, 1, dh, dw]).
  OpCase dil{"Conv2D_NCHW_dilated", "Conv2D", DType::kFloat32, {{1, 2, 9, 8}, {3, 3, 2, 3}}};
  dil.attrs["data_format"] = StringAttr("NCHW");
  dil.attrs["strides"] = IntList({1, 1, 1, 1});
  dil.attrs["dilations"] = IntList({1, 1, 2, 2});
  dil.attrs["padding"] = StringAttr("SAME");
  dil.reference = [](const std::vector<Tensor>& in) {
    return Permute(NaiveConv(Permute(in[0], kToNhwc), in[1], true, 1, 2, false), kToNchw);
  };
  cases.push_back(dil);
}

// ---- Pools ----

// Naive channels-last pool of rank 4 or 5 over the clipped window.
Tensor NaivePool(const Tensor& x, const Dims& k, const Dims& s, bool same, bool max) {
  const size_t r = static_cast<size_t>(x.rank());
  Dims out = x.dims(), pad(r, 0);
  for (size_t d = 1; d + 1 < r; ++d) {
    std::tie(out[d], pad[d]) = OutAndPad(same, x.dim(static_cast<int>(d)), k[d], s[d]);
  }
  return Build(x.dtype(), out, [&](const Dims& o) {
    Dims lo(r), hi(r);
    for (size_t d = 0; d < r; ++d) {
      if (d == 0 || d + 1 == r) {
        lo[d] = o[d];
        hi[d] = o[d] + 1;
        continue;
      }
      const int64_t start = o[d] * s[d] - pad[d];
      lo[d] = std::max<int64_t>(start, 0);
      hi[d] = std::min(start + k[d], x.dim(static_cast<int>(d)));
    }
    double acc = max ? -INFINITY : 0.0;
    int64_t cells = 0;
    Dims i = lo;
    while (true) {
      const double v = At(x, i);
      acc = max ? std::max(acc, v) : acc + v;
      ++cells;
      size_t d = r;
      while (d-- > 0) {
        if (++i[d] < hi[d]) break;
        i[d] = lo[d];
      }
      if (d == static_cast<size_t>(-1)) break;
    }
    return max ? acc : acc / static_cast<double>(cells);
  });
}

void AddPoolCases(std::vector<OpCase>& cases) {
  // MaxPool / AvgPool in NCHW.
  for (const char* op : {"MaxPool", "AvgPool"}) {
    for (bool same : {true, false}) {
      OpCase c{
          absl::StrCat(op, "_NCHW_", same ? "SAME" : "VALID"), op, DType::kFloat32, {{2, 3, 7, 8}}};
      c.attrs["data_format"] = StringAttr("NCHW");
      c.attrs["ksize"] = IntList({1, 1, 3, 2});
      c.attrs["strides"] = IntList({1, 1, 2, 2});
      c.attrs["padding"] = StringAttr(same ? "SAME" : "VALID");
      const bool max = std::string(op) == "MaxPool";
      c.reference = [same, max](const std::vector<Tensor>& in) {
        return Permute(NaivePool(Permute(in[0], kToNhwc), {1, 3, 2, 1}, {1, 2, 2, 1}, same, max),
                       kToNchw);
      };
      cases.push_back(c);
    }
  }
  // MaxPoolV2: ksize and strides as inputs, both layouts, float and int.
  for (DType t : {DType::kFloat32, DType::kInt32, DType::kFloat16}) {
    for (bool nchw : {false, true}) {
      OpCase c{absl::StrCat("MaxPoolV2_", nchw ? "NCHW_" : "NHWC_", DTypeName(t)),
               "MaxPoolV2",
               t,
               {nchw ? Dims{1, 2, 7, 6} : Dims{1, 7, 6, 2}}};
      c.consts = nchw ? std::vector<Tensor>{Ints({1, 1, 3, 3}), Ints({1, 1, 2, 1})}
                      : std::vector<Tensor>{Ints({1, 3, 3, 1}), Ints({1, 2, 1, 1})};
      if (nchw) c.attrs["data_format"] = StringAttr("NCHW");
      c.attrs["padding"] = StringAttr("SAME");
      c.reference = [nchw](const std::vector<Tensor>& in) {
        const Tensor x = nchw ? Permute(in[0], kToNhwc) : in[0];
        const Tensor y = NaivePool(x, {1, 3, 3, 1}, {1, 2, 1, 1}, true, true);
        return nchw ? Permute(y, kToNchw) : y;
      };
      cases.push_back(c);
    }
  }
  // 3-D pools.
  for (const char* op : {"MaxPool3D", "AvgPool3D"}) {
    for (bool nc : {false, true}) {
      for (bool same : {true, false}) {
        for (DType t : {DType::kFloat32, DType::kFloat16}) {
          OpCase c{
              absl::StrCat(op, nc ? "_NCDHW_" : "_NDHWC_", same ? "SAME_" : "VALID_", DTypeName(t)),
              op,
              t,
              {nc ? Dims{2, 3, 5, 6, 4} : Dims{2, 5, 6, 4, 3}}};
          if (nc) c.attrs["data_format"] = StringAttr("NCDHW");
          c.attrs["ksize"] = IntList(nc ? std::vector<int64_t>{1, 1, 2, 3, 2}
                                        : std::vector<int64_t>{1, 2, 3, 2, 1});
          c.attrs["strides"] = IntList(nc ? std::vector<int64_t>{1, 1, 2, 2, 1}
                                          : std::vector<int64_t>{1, 2, 2, 1, 1});
          c.attrs["padding"] = StringAttr(same ? "SAME" : "VALID");
          const bool max = std::string(op) == "MaxPool3D";
          c.reference = [nc, same, max](const std::vector<Tensor>& in) {
            const Tensor x = nc ? Permute(in[0], kToNdhwc) : in[0];
            const Tensor y = NaivePool(x, {1, 2, 3, 2, 1}, {1, 2, 2, 1, 1}, same, max);
            return nc ? Permute(y, kToNcdhw) : y;
          };
          cases.push_back(c);
        }
      }
    }
  }
}

// ---- FusedBatchNorm ----

struct BnCase {
  std::string op;
  DType t;
  Dims x;
  bool nchw, training;
  float factor;
  int output;
};

// The expected output `output` in double, from the formulas of TF's op documentation.
Tensor BatchNormRef(const BnCase& b, float eps, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  const int feature = b.nchw ? 1 : x.rank() - 1;
  const int64_t c_n = x.dim(feature), n = x.num_elements() / std::max<int64_t>(c_n, 1);
  std::vector<double> mean(static_cast<size_t>(c_n), 0.0), var(mean.size(), 0.0);
  for (int64_t k = 0; k < x.num_elements(); ++k) {
    mean[static_cast<size_t>(Unravel(k, x.dims())[static_cast<size_t>(feature)])] +=
        ElementAsDouble(x, k) / static_cast<double>(n);
  }
  for (int64_t k = 0; k < x.num_elements(); ++k) {
    const size_t c = static_cast<size_t>(Unravel(k, x.dims())[static_cast<size_t>(feature)]);
    const double d = ElementAsDouble(x, k) - mean[c];
    var[c] += d * d / static_cast<double>(n);
  }
  auto vec = [&](const std::function<double(size_t)>& f) {
    return Build(DType::kFloat32, {c_n},
                 [&](const Dims& i) { return f(static_cast<size_t>(i[0])); });
  };
  auto stat = [&](int i, size_t c) {
    return At(in[static_cast<size_t>(i)], {static_cast<int64_t>(c)});
  };
  const double f = b.factor;
  const double bessel = static_cast<double>(n) / std::max<double>(static_cast<double>(n) - 1, 1);
  if (b.training && n == 0 && b.output > 0) {  // an empty batch has NaN statistics
    return Build(DType::kFloat32, {c_n}, [](const Dims&) { return std::nan(""); });
  }
  switch (b.output) {
    case 1:
      return vec([&](size_t c) {
        return !b.training ? stat(3, c) : (1 - f) * stat(3, c) * (f != 1) + f * mean[c];
      });
    case 2:
      return vec([&](size_t c) {
        return !b.training ? stat(4, c) : (1 - f) * stat(4, c) * (f != 1) + f * var[c] * bessel;
      });
    case 3:
      return vec([&](size_t c) { return b.training ? mean[c] : stat(3, c); });
    case 4:
      return vec([&](size_t c) { return b.training ? var[c] : stat(4, c); });
    default:
      break;
  }
  return Build(x.dtype(), x.dims(), [&](const Dims& i) {
    const size_t c = static_cast<size_t>(i[static_cast<size_t>(feature)]);
    const double m = b.training ? mean[c] : stat(3, c), v = b.training ? var[c] : stat(4, c);
    return (At(x, i) - m) / std::sqrt(v + eps) * stat(1, c) + stat(2, c);
  });
}

void AddBatchNormCases(std::vector<OpCase>& cases) {
  const std::vector<BnCase> specs = {
      {"FusedBatchNorm", DType::kFloat32, {2, 3, 4, 5}, false, false, 1, 0},
      {"FusedBatchNormV3", DType::kFloat32, {2, 5, 3, 4}, true, false, 1, 0},
      {"FusedBatchNormV3", DType::kFloat16, {1, 4, 3, 6}, false, false, 1, 0},
      {"FusedBatchNormV2", DType::kBFloat16, {1, 4, 3, 6}, false, false, 1, 0},
      {"FusedBatchNormV3", DType::kFloat32, {2, 3, 4, 5}, false, false, 1, 1},
      {"FusedBatchNormV3", DType::kFloat32, {2, 3, 4, 5}, false, false, 1, 4},
      {"FusedBatchNorm", DType::kFloat32, {2, 3, 4, 5}, false, true, 1, 0},
      {"FusedBatchNorm", DType::kFloat32, {2, 3, 4, 5}, false, true, 1, 1},
      {"FusedBatchNorm", DType::kFloat32, {2, 3, 4, 5}, false, true, 1, 2},
      {"FusedBatchNormV3", DType::kFloat32, {2, 5, 3, 4}, true, true, 1, 0},
      {"FusedBatchNormV3", DType::kFloat32, {2, 5, 3, 4}, true, true, 1, 2},
      {"FusedBatchNormV3", DType::kFloat32, {2, 5, 3, 4}, true, true, 1, 3},
      {"FusedBatchNormV3", DType::kFloat32, {2, 5, 3, 4}, true, true, 1, 4},
      {"FusedBatchNormV3", DType::kFloat32, {2, 3, 4, 5}, false, true, 0.25f, 1},
      {"FusedBatchNormV3", DType::kFloat32, {2, 3, 4, 5}, false, true, 0.25f, 2},
      {"FusedBatchNormV3", DType::kFloat16, {2, 3, 4, 6}, false, true, 1, 0},
      {"FusedBatchNormV2", DType::kBFloat16, {2, 3, 4, 6}, false, true, 0.5f, 1},
      {"FusedBatchNormV3", DType::kFloat32, {1, 1, 1, 3}, false, true, 1, 2},     // N = 1
      {"FusedBatchNormV3", DType::kFloat32, {2, 2, 3, 2, 4}, false, true, 1, 0},  // NDHWC
      {"FusedBatchNormV3", DType::kFloat32, {0, 2, 3, 4}, false, true, 1, 0},     // empty
      {"FusedBatchNormV3", DType::kFloat32, {0, 2, 3, 4}, false, true, 1, 2},
      {"FusedBatchNormV3", DType::kFloat32, {0, 2, 3, 4}, false, true, 0.5f, 1},
      {"FusedBatchNormV3", DType::kFloat32, {0, 2, 3, 4}, false, false, 1, 0},
  };
  const float eps = 0.001f;
  for (const BnCase& b : specs) {
    const int64_t ch = b.x[b.nchw ? 1 : b.x.size() - 1];
    OpCase c{absl::StrCat(b.op, b.training ? "_train_" : "_infer_", b.nchw ? "NCHW_" : "",
                          DimsName(b.x), "_", DTypeName(b.t), "_f", b.factor, "_out", b.output),
             b.op,
             b.t,
             {}};
    if (b.x.size() == 5) c.attrs["data_format"] = StringAttr("NDHWC");
    if (b.nchw) c.attrs["data_format"] = StringAttr("NCHW");
    c.attrs["is_training"] = BoolAttr(b.training);
    c.attrs["epsilon"] = FloatAttr(eps);
    c.attrs["exponential_avg_factor"] = FloatAttr(b.factor);
    if (b.op != "FusedBatchNorm") c.attrs["U"] = TypeAttr(DType::kFloat32);
    c.output = b.output;
    c.inputs = {b.x, {ch}, {ch}, {ch}, {ch}};
    c.input_dtypes = {b.t, DType::kFloat32, DType::kFloat32, DType::kFloat32, DType::kFloat32};
    c.feed_values = {cli::RandomTensor(b.t, b.x, 3)};
    for (uint64_t i = 1; i <= 4; ++i) {
      Tensor v = cli::RandomTensor(DType::kFloat32, {ch}, 3 + i);
      if (i == 4) {
        for (int64_t k = 0; k < ch; ++k) v.data<float>()[k] = std::abs(v.data<float>()[k]) + 0.5f;
      }
      c.feed_values.push_back(v);
    }
    c.reference = [b, eps](const std::vector<Tensor>& in) { return BatchNormRef(b, eps, in); };
    cases.push_back(c);
  }
}

// ---- Conv3D ----

// Naive NDHWC 3-D convolution with groups = C / filter in-depth.
Tensor NaiveConv3D(const Tensor& x, const Tensor& f, bool same, const Dims& s, const Dims& dil) {
  Dims out = {x.dim(0), 0, 0, 0, f.dim(4)}, pad(5, 0);
  for (int d = 1; d <= 3; ++d) {
    std::tie(out[static_cast<size_t>(d)], pad[static_cast<size_t>(d)]) = OutAndPad(
        same, x.dim(d), f.dim(d - 1), s[static_cast<size_t>(d)], dil[static_cast<size_t>(d)]);
  }
  const int64_t f_in = f.dim(3), per_group = f.dim(4) / (x.dim(4) / f_in);
  return Build(x.dtype(), out, [&](const Dims& o) {
    double acc = 0;
    for (int64_t a = 0; a < f.dim(0); ++a) {
      for (int64_t b = 0; b < f.dim(1); ++b) {
        for (int64_t c = 0; c < f.dim(2); ++c) {
          const Dims k = {a, b, c};
          Dims i = {o[0], 0, 0, 0, 0};
          bool inside = true;
          for (size_t d = 1; d <= 3; ++d) {
            i[d] = o[d] * s[d] + k[d - 1] * dil[d] - pad[d];
            inside = inside && i[d] >= 0 && i[d] < x.dim(static_cast<int>(d));
          }
          if (!inside) continue;
          for (int64_t ci = 0; ci < f_in; ++ci) {
            i[4] = (o[4] / per_group) * f_in + ci;
            acc += At(x, i) * At(f, {a, b, c, ci, o[4]});
          }
        }
      }
    }
    return acc;
  });
}

void AddConv3DCases(std::vector<OpCase>& cases) {
  struct C3 {
    const char* name;
    Dims x, f;
    bool same, nc;
    Dims s, dil;
    DType t;
  };
  for (const C3& c3 : std::vector<C3>{{"SAME",
                                       {2, 4, 5, 6, 3},
                                       {2, 3, 2, 3, 4},
                                       true,
                                       false,
                                       {1, 1, 1, 1, 1},
                                       {1, 1, 1, 1, 1},
                                       DType::kFloat32},
                                      {"VALID_s2",
                                       {1, 5, 6, 7, 2},
                                       {3, 2, 3, 2, 3},
                                       false,
                                       false,
                                       {1, 2, 2, 1, 1},
                                       {1, 1, 1, 1, 1},
                                       DType::kFloat32},
                                      {"dilated",
                                       {1, 6, 6, 6, 2},
                                       {2, 2, 2, 2, 2},
                                       true,
                                       false,
                                       {1, 1, 1, 1, 1},
                                       {1, 2, 1, 2, 1},
                                       DType::kFloat64},
                                      {"grouped",
                                       {1, 4, 4, 4, 4},
                                       {2, 2, 2, 2, 6},
                                       true,
                                       false,
                                       {1, 1, 2, 1, 1},
                                       {1, 1, 1, 1, 1},
                                       DType::kFloat32},
                                      {"NCDHW",
                                       {2, 3, 4, 5, 6},
                                       {2, 3, 2, 3, 4},
                                       true,
                                       true,
                                       {1, 1, 2, 1, 2},
                                       {1, 1, 1, 1, 1},
                                       DType::kFloat32},
                                      {"f16",
                                       {1, 3, 4, 4, 2},
                                       {2, 2, 2, 2, 2},
                                       false,
                                       false,
                                       {1, 1, 1, 1, 1},
                                       {1, 1, 1, 1, 1},
                                       DType::kFloat16}}) {
    OpCase c{absl::StrCat("Conv3D_", c3.name), "Conv3D", c3.t, {c3.x, c3.f}};
    c.attrs["strides"] = IntList(c3.s);
    c.attrs["dilations"] = IntList(c3.dil);
    c.attrs["padding"] = StringAttr(c3.same ? "SAME" : "VALID");
    if (c3.nc) c.attrs["data_format"] = StringAttr("NCDHW");
    c.reference = [c3](const std::vector<Tensor>& in) {
      auto last = [&](const Dims& v) { return c3.nc ? Dims{v[0], v[2], v[3], v[4], v[1]} : v; };
      const Tensor x = c3.nc ? Permute(in[0], kToNdhwc) : in[0];
      const Tensor y = NaiveConv3D(x, in[1], c3.same, last(c3.s), last(c3.dil));
      return c3.nc ? Permute(y, kToNcdhw) : y;
    };
    cases.push_back(c);
  }
}

// ---- MaxPoolWithArgmax / Dilation2D (kernel only) ----

void AddTfOnlyPoolCases(std::vector<OpCase>& cases) {
  for (bool same : {true, false}) {
    for (bool with_batch : {false, true}) {
      for (int output : {0, 1}) {
        for (DType idx : {DType::kInt64, DType::kInt32}) {
          if (idx == DType::kInt32 && output == 0) continue;
          OpCase c{absl::StrCat("MaxPoolWithArgmax_", same ? "SAME" : "VALID",
                                with_batch ? "_batch" : "", "_out", output, "_", DTypeName(idx)),
                   "MaxPoolWithArgmax",
                   DType::kFloat32,
                   {{2, 5, 6, 3}}};
          c.attrs["ksize"] = IntList({1, 2, 3, 1});
          c.attrs["strides"] = IntList({1, 2, 2, 1});
          c.attrs["padding"] = StringAttr(same ? "SAME" : "VALID");
          c.attrs["include_batch_in_index"] = BoolAttr(with_batch);
          c.attrs["Targmax"] = TypeAttr(idx);
          c.output = output;
          c.kernel_only = true;
          c.reference = [same, with_batch, output, idx](const std::vector<Tensor>& in) {
            const Tensor& x = in[0];
            const auto [oh, ph] = OutAndPad(same, x.dim(1), 2, 2);
            const auto [ow, pw] = OutAndPad(same, x.dim(2), 3, 2);
            return Build(
                output == 0 ? x.dtype() : idx, {x.dim(0), oh, ow, x.dim(3)}, [&](const Dims& o) {
                  double best = -INFINITY;
                  int64_t at = -1;
                  for (int64_t i = 0; i < 2; ++i) {
                    for (int64_t j = 0; j < 3; ++j) {
                      const int64_t y = o[1] * 2 + i - ph, xx = o[2] * 2 + j - pw;
                      if (y < 0 || y >= x.dim(1) || xx < 0 || xx >= x.dim(2)) continue;
                      const double v = At(x, {o[0], y, xx, o[3]});
                      if (at < 0 || v > best) {
                        best = v;
                        at = ((with_batch ? o[0] * x.dim(1) : 0) + y) * x.dim(2) * x.dim(3) +
                             xx * x.dim(3) + o[3];
                      }
                    }
                  }
                  return output == 0 ? best : static_cast<double>(at);
                });
          };
          cases.push_back(c);
        }
      }
    }
  }
  // Integer ties: the first maximum of the window wins.
  OpCase ties{"MaxPoolWithArgmax_int32_ties", "MaxPoolWithArgmax", DType::kInt32, {{1, 2, 2, 1}}};
  ties.feed_values = {Tensor::FromVector<int32_t>(DType::kInt32, {1, 2, 2, 1}, {3, 5, 5, 1})};
  ties.attrs["ksize"] = IntList({1, 2, 2, 1});
  ties.attrs["strides"] = IntList({1, 1, 1, 1});
  ties.attrs["padding"] = StringAttr("VALID");
  ties.output = 1;
  ties.kernel_only = true;
  ties.reference = [](const std::vector<Tensor>&) {
    return Tensor::FromVector<int64_t>(DType::kInt64, {1, 1, 1, 1}, {1});
  };
  cases.push_back(ties);

  for (bool same : {true, false}) {
    for (DType t : {DType::kFloat32, DType::kInt32, DType::kFloat64}) {
      OpCase c{absl::StrCat("Dilation2D_", same ? "SAME_" : "VALID_", DTypeName(t)),
               "Dilation2D",
               t,
               {{2, 6, 7, 2}, {2, 3, 2}}};
      c.attrs["strides"] = IntList({1, 2, 1, 1});
      c.attrs["rates"] = IntList({1, 1, 2, 1});
      c.attrs["padding"] = StringAttr(same ? "SAME" : "VALID");
      c.kernel_only = true;
      c.reference = [same](const std::vector<Tensor>& in) {
        const Tensor& x = in[0];
        const Tensor& f = in[1];
        const auto [oh, ph] = OutAndPad(same, x.dim(1), 2, 2, 1);
        const auto [ow, pw] = OutAndPad(same, x.dim(2), 3, 1, 2);
        return Build(x.dtype(), {x.dim(0), oh, ow, x.dim(3)}, [&](const Dims& o) {
          double best = -INFINITY;
          for (int64_t i = 0; i < 2; ++i) {
            for (int64_t j = 0; j < 3; ++j) {
              const int64_t y = o[1] * 2 + i - ph, xx = o[2] + j * 2 - pw;
              if (y < 0 || y >= x.dim(1) || xx < 0 || xx >= x.dim(2)) continue;
              best = std::max(best, At(x, {o[0], y, xx, o[3]}) + At(f, {i, j, o[3]}));
            }
          }
          return best;
        });
      };
      cases.push_back(c);
    }
  }
}

// ---- Recurrent cells (kernel only) ----

double Sig(double v) { return 1 / (1 + std::exp(-v)); }

// The seven LSTM outputs (i, cs, f, o, ci, co, h) of one step, [batch, cell] each, in double.
std::vector<std::vector<double>> LstmRef(const Tensor& x, int64_t t,
                                         const std::vector<double>& cs_prev,
                                         const std::vector<double>& h_prev, const Tensor& w,
                                         const Tensor& wci, const Tensor& wcf, const Tensor& wco,
                                         const Tensor& b, bool peephole, double clip) {
  const bool seq = x.rank() == 3;
  const int64_t batch = x.dim(seq ? 1 : 0), input = x.dim(seq ? 2 : 1), cell = b.dim(0) / 4;
  std::vector<std::vector<double>> out(7, std::vector<double>(static_cast<size_t>(batch * cell)));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < cell; ++c) {
      double g[4];
      for (int64_t k = 0; k < 4; ++k) {
        double acc = At(b, {k * cell + c});
        for (int64_t j = 0; j < input; ++j) {
          acc += (seq ? At(x, {t, n, j}) : At(x, {n, j})) * At(w, {j, k * cell + c});
        }
        for (int64_t j = 0; j < cell; ++j) {
          acc += h_prev[static_cast<size_t>(n * cell + j)] * At(w, {input + j, k * cell + c});
        }
        g[k] = acc;
      }
      const size_t at = static_cast<size_t>(n * cell + c);
      const double cp = cs_prev[at];
      const double i = Sig(g[0] + (peephole ? cp * At(wci, {c}) : 0));
      const double ci = std::tanh(g[1]);
      const double f = Sig(g[2] + 1.0 + (peephole ? cp * At(wcf, {c}) : 0));
      double cs = ci * i + cp * f;
      if (clip > 0) cs = std::min(std::max(cs, -clip), clip);
      const double o = Sig(g[3] + (peephole ? cs * At(wco, {c}) : 0));
      const double vals[7] = {i, cs, f, o, ci, std::tanh(cs), std::tanh(cs) * o};
      for (int k = 0; k < 7; ++k) out[static_cast<size_t>(k)][at] = vals[k];
    }
  }
  return out;
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = ElementAsDouble(t, static_cast<int64_t>(i));
  return v;
}

void AddRecurrentCases(std::vector<OpCase>& cases) {
  const int64_t batch = 2, input = 3, cell = 4;
  for (bool peephole : {false, true}) {
    for (int output : {0, 1, 4, 6}) {
      for (DType t : {DType::kFloat32, DType::kFloat16}) {
        if (t == DType::kFloat16 && output != 6) continue;
        OpCase c{absl::StrCat("LSTMBlockCell_", peephole ? "peephole_" : "", "out", output, "_",
                              DTypeName(t)),
                 "LSTMBlockCell",
                 t,
                 {{batch, input},
                  {batch, cell},
                  {batch, cell},
                  {input + cell, 4 * cell},
                  {cell},
                  {cell},
                  {cell},
                  {4 * cell}}};
        c.attrs["use_peephole"] = BoolAttr(peephole);
        c.attrs["cell_clip"] = FloatAttr(0.5f);
        c.output = output;
        c.kernel_only = true;
        c.reference = [peephole, output](const std::vector<Tensor>& in) {
          auto r = LstmRef(in[0], 0, Values(in[1]), Values(in[2]), in[3], in[4], in[5], in[6],
                           in[7], peephole, 0.5);
          return Build(in[0].dtype(), in[1].dims(), [&](const Dims& i) {
            return r[static_cast<size_t>(output)][static_cast<size_t>(Ravel(i, in[1].dims()))];
          });
        };
        cases.push_back(c);
      }
    }
  }
  // BlockLSTM over 4 steps with seq_len_max 3 (the last step is zero).
  for (int output : {1, 6, 3}) {
    OpCase c{absl::StrCat("BlockLSTM_out", output),
             "BlockLSTM",
             DType::kFloat32,
             {{4, batch, input},
              {batch, cell},
              {batch, cell},
              {input + cell, 4 * cell},
              {cell},
              {cell},
              {cell},
              {4 * cell}}};
    c.consts = {Tensor::FromVector<int64_t>(DType::kInt64, {}, {3})};
    c.consts_first = true;
    c.attrs["use_peephole"] = BoolAttr(true);
    c.output = output;
    c.kernel_only = true;
    c.reference = [output](const std::vector<Tensor>& in) {
      std::vector<double> cs = Values(in[1]), h = Values(in[2]), all;
      for (int64_t t = 0; t < 4; ++t) {
        std::vector<double> step(static_cast<size_t>(batch * cell), 0.0);
        if (t < 3) {
          auto r = LstmRef(in[0], t, cs, h, in[3], in[4], in[5], in[6], in[7], true, 3.0);
          cs = r[1];
          h = r[6];
          step = r[static_cast<size_t>(output)];
        }
        all.insert(all.end(), step.begin(), step.end());
      }
      const Dims dims = {4, batch, cell};
      return Build(DType::kFloat32, dims,
                   [&](const Dims& i) { return all[static_cast<size_t>(Ravel(i, dims))]; });
    };
    cases.push_back(c);
  }
  for (int output : {0, 1, 2, 3}) {
    OpCase c{absl::StrCat("GRUBlockCell_out", output),
             "GRUBlockCell",
             DType::kFloat32,
             {{batch, input},
              {batch, cell},
              {input + cell, 2 * cell},
              {input + cell, cell},
              {2 * cell},
              {cell}}};
    c.output = output;
    c.kernel_only = true;
    c.reference = [output](const std::vector<Tensor>& in) {
      return Build(DType::kFloat32, {batch, cell}, [&](const Dims& i) {
        const int64_t n = i[0];
        auto gate = [&](int64_t g) {
          double acc = At(in[4], {g});
          for (int64_t j = 0; j < input; ++j) acc += At(in[0], {n, j}) * At(in[2], {j, g});
          for (int64_t j = 0; j < cell; ++j) acc += At(in[1], {n, j}) * At(in[2], {input + j, g});
          return Sig(acc);
        };
        const double r = gate(i[1]), u = gate(cell + i[1]);
        double acc = At(in[5], {i[1]});
        for (int64_t j = 0; j < input; ++j) acc += At(in[0], {n, j}) * At(in[3], {j, i[1]});
        for (int64_t j = 0; j < cell; ++j) {
          acc += At(in[1], {n, j}) * gate(j) * At(in[3], {input + j, i[1]});
        }
        const double cv = std::tanh(acc);
        const double vals[4] = {r, u, cv, u * At(in[1], {n, i[1]}) + (1 - u) * cv};
        return vals[output];
      });
    };
    cases.push_back(c);
  }
}

// ---- LRN ----

void AddLrnCases(std::vector<OpCase>& cases) {
  struct L {
    int64_t radius;
    float bias, alpha, beta;
    DType t;
  };
  for (const L& l : std::vector<L>{{2, 1.0f, 0.5f, 0.75f, DType::kFloat32},
                                   {5, 1.0f, 1.0f, 0.5f, DType::kFloat32},
                                   {1, 2.0f, 0.1f, 0.5f, DType::kFloat16},
                                   {0, 1.0f, 1.0f, 1.0f, DType::kBFloat16}}) {
    OpCase c{absl::StrCat("LRN_r", l.radius, "_b", l.beta, "_", DTypeName(l.t)),
             "LRN",
             l.t,
             {{2, 3, 2, 7}}};
    c.attrs["depth_radius"] = IntAttr(l.radius);
    c.attrs["bias"] = FloatAttr(l.bias);
    c.attrs["alpha"] = FloatAttr(l.alpha);
    c.attrs["beta"] = FloatAttr(l.beta);
    c.reference = [l](const std::vector<Tensor>& in) {
      const Tensor& x = in[0];
      return Build(x.dtype(), x.dims(), [&](const Dims& i) {
        double sum = 0;
        for (int64_t j = std::max<int64_t>(i[3] - l.radius, 0);
             j <= std::min<int64_t>(i[3] + l.radius, x.dim(3) - 1); ++j) {
          const double v = At(x, {i[0], i[1], i[2], j});
          sum += v * v;
        }
        return At(x, i) / std::pow(l.bias + l.alpha * sum, l.beta);
      });
    };
    cases.push_back(c);
  }
}

// ---- Errors: the kernel and the lowering reject the same bad nodes ----

// Runs node `op` (attrs as text) on float placeholders of `shapes` in `jit` mode.
absl::Status RunBadNode(const std::string& op, const std::string& attrs,
                        const std::vector<Dims>& shapes, JitMode jit) {
  std::string text, inputs;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::string shape;
    for (int64_t d : shapes[i]) absl::StrAppend(&shape, "dim { size: ", d, " } ");
    absl::StrAppend(&text, "node { name: \"p", i, "\" op: \"Placeholder\" attr { key: \"dtype\" ",
                    "value { type: DT_FLOAT } } attr { key: \"shape\" value { shape { ", shape,
                    "} } } }\n");
    absl::StrAppend(&inputs, "input: \"p", i, "\" ");
    feeds.push_back({absl::StrCat("p", i), cli::RandomTensor(DType::kFloat32, shapes[i], i + 1)});
  }
  absl::StrAppend(&text, "node { name: \"op\" op: \"", op, "\" ", inputs,
                  "attr { key: \"T\" value { type: DT_FLOAT } } ", attrs, "}\n");
  const std::string path = testing::WriteTempFile(absl::StrCat("nn_more_err_", op, ".pbtxt"), text);
  SessionOptions options;
  options.jit = jit;
  auto session = Session::Load(path, options);
  absl::Status status = session.ok() ? (*session)->Run(feeds, {"op"}).status() : session.status();
  std::filesystem::remove(path);
  return status;
}

TEST(NnMoreErrors, KernelAndLoweringRejectBadNodes) {
  struct E {
    std::string op, attrs;
    std::vector<Dims> shapes;
    std::string message;
  };
  const std::string u = "attr { key: \"U\" value { type: DT_FLOAT } } ";
  const std::vector<E> errors = {
      {"FusedBatchNormV3",
       u + "attr { key: \"is_training\" value { b: false } } ",
       {{1, 2, 2, 3}, {4}, {3}, {3}, {3}},
       "scale must"},
      {"FusedBatchNormV3", u, {{2, 3}, {3}, {3}, {3}, {3}}, "input must be 4 or 5-dimensional"},
      {"Conv2D",
       "attr { key: \"data_format\" value { s: \"NCHW\" } } "
       "attr { key: \"strides\" value { list { i: 1 i: 1 i: 1 i: 1 } } } "
       "attr { key: \"padding\" value { s: \"SAME\" } } ",
       {{3, 5, 5}, {3, 3, 3, 2}},
       "4-D"},
      {"MaxPool3D",
       "attr { key: \"ksize\" value { list { i: 2 i: 1 i: 1 i: 1 i: 1 } } } "
       "attr { key: \"strides\" value { list { i: 1 i: 1 i: 1 i: 1 i: 1 } } } "
       "attr { key: \"padding\" value { s: \"VALID\" } } ",
       {{2, 3, 3, 3, 1}},
       "Pooling is not yet supported on the batch"},
      {"LRN",
       "attr { key: \"depth_radius\" value { i: -1 } } ",
       {{1, 2, 2, 3}},
       "depth_radius = -1"},
  };
  for (const E& e : errors) {
    for (JitMode jit : {JitMode::kNone, JitMode::kAll}) {
      const absl::Status s = RunBadNode(e.op, e.attrs, e.shapes, jit);
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument)
          << e.op << " " << JitModeName(jit) << ": " << s;
      EXPECT_TRUE(absl::StrContains(s.message(), e.message))
          << e.op << " " << JitModeName(jit) << ": " << s;
    }
  }
}

}  // namespace

// LogSoftmax (reference: the kernel's formula, op_cases.cc's default) and L2Loss.
std::vector<OpCase> NnCases() {
  std::vector<OpCase> cases;
  for (Dims d : std::vector<Dims>{{3, 7}, {1, 1}, {2, 3, 17}, {0, 4}}) {
    for (DType t : {DType::kFloat32, DType::kFloat64}) {
      cases.push_back(
          {absl::StrCat("LogSoftmax_", DTypeName(t), "_", DimsName(d)), "LogSoftmax", t, {d}});
    }
  }
  for (Dims d : std::vector<Dims>{{3, 7}, {}, {0}}) {
    OpCase c{absl::StrCat("L2Loss_", DimsName(d)), "L2Loss", DType::kFloat32, {d}};
    c.reference = [](const std::vector<Tensor>& in) {
      double sum = 0;
      for (int64_t k = 0; k < in[0].num_elements(); ++k) {
        sum += ElementAsDouble(in[0], k) * ElementAsDouble(in[0], k);
      }
      return Build(in[0].dtype(), {}, [&](const Dims&) { return sum / 2; });
    };
    cases.push_back(c);
  }
  return cases;
}

std::vector<OpCase> NnMoreCases() {
  std::vector<OpCase> cases;
  AddConvCases(cases);
  AddPoolCases(cases);
  AddBatchNormCases(cases);
  AddLrnCases(cases);
  AddConv3DCases(cases);
  AddTfOnlyPoolCases(cases);
  AddRecurrentCases(cases);
  return cases;
}

}  // namespace tfjit::optest
