// The basic op-case families and the helpers both case files share (see op_cases.h).
#include "tests/tf/op_cases.h"
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/dtype.h"
#include "core/status.h"
#include "examples/cli_output.h"
#include "frontend/proto/graph.pb.h"
#include "frontend/tensor_proto.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tfjit/session.h"

namespace tfjit::optest {

void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name; }

tensorflow::AttrValue TypeAttr(DType t) {
  tensorflow::AttrValue a;
  a.set_type(static_cast<tensorflow::DataType>(DTypeToTfEnum(t)));
  return a;
}
tensorflow::AttrValue BoolAttr(bool b) {
  tensorflow::AttrValue a;
  a.set_b(b);
  return a;
}
tensorflow::AttrValue IntAttr(int64_t i) {
  tensorflow::AttrValue a;
  a.set_i(i);
  return a;
}
tensorflow::AttrValue FloatAttr(float f) {
  tensorflow::AttrValue a;
  a.set_f(f);
  return a;
}

tensorflow::AttrValue FloatListAttr(const std::vector<float>& v) {
  tensorflow::AttrValue a;
  a.mutable_list();
  for (float x : v) a.mutable_list()->add_f(x);
  return a;
}

Tensor Bools(const std::vector<bool>& v) {
  return Build(DType::kBool, {static_cast<int64_t>(v.size())},
               [&](const Dims& i) { return v[static_cast<size_t>(i[0])] ? 1.0 : 0.0; });
}

tensorflow::AttrValue StringAttr(const std::string& s) {
  tensorflow::AttrValue a;
  a.set_s(s);
  return a;
}
Tensor Ints(const std::vector<int32_t>& v, bool scalar) {
  return Tensor::FromVector<int32_t>(DType::kInt32,
                                     scalar ? Dims{} : Dims{static_cast<int64_t>(v.size())}, v);
}

std::string DimsName(const Dims& d) { return d.empty() ? "scalar" : absl::StrJoin(d, "x"); }

std::vector<OpCase> BinaryCases() {
  const std::vector<std::pair<Dims, Dims>> shapes = {
      {{}, {}},      {{5}, {}},  {{}, {5}},    {{2, 3}, {3}},    {{2, 1}, {1, 3}},
      {{0, 3}, {3}}, {{1}, {7}}, {{33}, {33}}, {{4, 17}, {4, 1}}};
  std::vector<OpCase> cases;
  for (const char* op : {"Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum"}) {
    for (DType t :
         {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32, DType::kInt64}) {
      if (std::string(op) == "RealDiv" && IsIntegerDType(t)) continue;
      for (const auto& [a, b] : shapes) {
        cases.push_back({absl::StrCat(op, "_", DTypeName(t), "_", DimsName(a), "_", DimsName(b)),
                         op,
                         t,
                         {a, b}});
      }
    }
  }
  return cases;
}

std::vector<OpCase> UnaryCases() {
  const std::vector<Dims> shapes = {{}, {0}, {1}, {7}, {3, 17}, {2, 1, 33}};
  std::vector<OpCase> cases;
  for (const char* op : {"Neg", "Abs", "Exp", "Log", "Tanh", "Sigmoid", "Relu", "Relu6", "Sqrt",
                         "Rsqrt", "Square"}) {
    const bool int_ok = std::string(op) == "Neg" || std::string(op) == "Abs" ||
                        std::string(op) == "Relu" || std::string(op) == "Relu6" ||
                        std::string(op) == "Square";
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32}) {
      if (t == DType::kInt32 && !int_ok) continue;
      for (const Dims& s : shapes) {
        cases.push_back({absl::StrCat(op, "_", DTypeName(t), "_", DimsName(s)), op, t, {s}});
      }
    }
  }
  return cases;
}

std::vector<OpCase> MatMulCases() {
  struct M {
    Dims a, b;
    bool ta, tb;
  };
  const std::vector<M> ms = {{{2, 3}, {3, 4}, false, false}, {{3, 2}, {3, 4}, true, false},
                             {{2, 3}, {4, 3}, false, true},  {{3, 2}, {4, 3}, true, true},
                             {{1, 1}, {1, 1}, false, false}, {{0, 3}, {3, 5}, false, false},
                             {{5, 0}, {0, 2}, false, false}, {{17, 33}, {33, 9}, false, false}};
  std::vector<OpCase> cases;
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kInt32}) {
    for (const M& m : ms) {
      OpCase c{absl::StrCat("MatMul_", DTypeName(t), "_", DimsName(m.a), "_", DimsName(m.b),
                            m.ta ? "_ta" : "", m.tb ? "_tb" : ""),
               "MatMul",
               t,
               {m.a, m.b}};
      c.attrs["transpose_a"] = BoolAttr(m.ta);
      c.attrs["transpose_b"] = BoolAttr(m.tb);
      cases.push_back(c);
    }
  }
  OpCase nhwc{"BiasAdd_NHWC", "BiasAdd", DType::kFloat32, {{2, 3, 5}, {5}}};
  OpCase nchw{"BiasAdd_NCHW", "BiasAdd", DType::kFloat32, {{2, 5, 3, 3}, {5}}};
  nchw.attrs["data_format"] = StringAttr("NCHW");
  OpCase bias64{"BiasAdd_float64_1x1", "BiasAdd", DType::kFloat64, {{1, 1}, {1}}};
  // BiasAddV1: the bias on the last dim; value + bias, computed here.
  OpCase v1{"BiasAddV1_float32", "BiasAddV1", DType::kFloat32, {{2, 3, 5}, {5}}};
  v1.reference = [](const std::vector<Tensor>& in) {
    Tensor out(in[0].dtype(), in[0].dims());
    for (int64_t k = 0; k < out.num_elements(); ++k) {
      SetFromDouble(out, k, ElementAsDouble(in[0], k) + ElementAsDouble(in[1], k % 5));
    }
    return out;
  };
  cases.insert(cases.end(), {nhwc, nchw, bias64, v1});
  return cases;
}

std::vector<OpCase> ReductionCases() {
  struct R {
    Dims shape;
    std::vector<int32_t> axes;
    bool scalar_axis;
  };
  const std::vector<R> rs = {{{2, 3, 5}, {0}, true},     {{2, 3, 5}, {-1}, false},
                             {{2, 3, 5}, {0, 2}, false}, {{2, 3, 5}, {0, 1, 2}, false},
                             {{0, 4}, {0}, true},        {{4, 0}, {1}, true},
                             {{1, 33}, {1}, true},       {{7}, {}, false}};
  std::vector<OpCase> cases;
  for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod"}) {
    for (DType t : {DType::kFloat32, DType::kInt32}) {
      for (const R& r : rs) {
        for (bool keep : {false, true}) {
          OpCase c{absl::StrCat(op, "_", DTypeName(t), "_", DimsName(r.shape), "_axes",
                                absl::StrJoin(r.axes, "_"), keep ? "_keep" : ""),
                   op,
                   t,
                   {r.shape},
                   {Ints(r.axes, r.scalar_axis && r.axes.size() == 1)}};
          c.attrs["keep_dims"] = BoolAttr(keep);
          c.attrs["Tidx"] = TypeAttr(DType::kInt32);
          cases.push_back(c);
        }
      }
    }
  }
  return cases;
}

std::vector<OpCase> ArrayCases() {
  std::vector<OpCase> cases;
  auto reshape = [&](const std::string& name, Dims in, std::vector<int32_t> to) {
    OpCase c{name, "Reshape", DType::kFloat32, {in}, {Ints(to)}};
    c.attrs["Tshape"] = TypeAttr(DType::kInt32);
    cases.push_back(c);
  };
  reshape("Reshape_minus1", {2, 3, 4}, {-1, 4});
  reshape("Reshape_flat", {2, 3, 4}, {24});
  reshape("Reshape_middle", {2, 3, 4}, {4, -1, 2});
  reshape("Reshape_empty", {0, 3}, {3, 0});
  // TF leaves zero-sized requested dims out when it infers -1 (reshape_op.h): the expected
  // shapes are TF's answers.
  for (const auto& [name, in, to, want] :
       std::vector<std::tuple<std::string, Dims, std::vector<int32_t>, Dims>>{
           {"Reshape_empty_infer_last", {0, 3}, {-1, 3}, {0, 3}},
           {"Reshape_empty_infer_flat", {0}, {-1}, {0}},
           {"Reshape_empty_infer_beside_zero", {0, 3}, {0, -1}, {0, 3}},
           {"Reshape_empty_infer_before_zero", {0, 3}, {-1, 0}, {3, 0}},
           {"Reshape_empty_infer_rank3", {2, 0, 5}, {5, -1, 0}, {5, 2, 0}}}) {
    OpCase c{name, "Reshape", DType::kFloat32, {in}, {Ints(to)}};
    c.attrs["Tshape"] = TypeAttr(DType::kInt32);
    const Dims expected = want;
    c.reference = [expected](const std::vector<Tensor>&) {
      return Tensor(DType::kFloat32, expected);
    };
    cases.push_back(c);
  }
  reshape("Reshape_scalar", {1, 1}, {});
  auto transpose = [&](const std::string& name, Dims in, std::vector<int32_t> perm) {
    OpCase c{name, "Transpose", DType::kFloat32, {in}, {Ints(perm)}};
    c.attrs["Tperm"] = TypeAttr(DType::kInt32);
    cases.push_back(c);
  };
  transpose("Transpose_3d", {2, 3, 4}, {2, 0, 1});
  transpose("Transpose_2d_row", {1, 5}, {1, 0});
  transpose("Transpose_odd", {17, 9}, {1, 0});
  {
    // ConjugateTranspose on a real type is Transpose: checked against Transpose's values.
    OpCase c{"ConjugateTranspose_real",
             "ConjugateTranspose",
             DType::kFloat32,
             {{2, 3, 4}},
             {Ints({2, 0, 1})}};
    c.attrs["Tperm"] = TypeAttr(DType::kInt32);
    c.reference = [](const std::vector<Tensor>& in) {
      return Build(DType::kFloat32, {4, 2, 3},
                   [&](const Dims& o) { return At(in[0], {o[1], o[2], o[0]}); });
    };
    cases.push_back(c);
  }
  for (auto [src, dst] : std::vector<std::pair<DType, DType>>{{DType::kFloat32, DType::kInt32},
                                                              {DType::kInt32, DType::kFloat32},
                                                              {DType::kFloat32, DType::kFloat16},
                                                              {DType::kFloat16, DType::kFloat32},
                                                              {DType::kFloat32, DType::kBool},
                                                              {DType::kBool, DType::kFloat32},
                                                              {DType::kInt32, DType::kInt64},
                                                              {DType::kFloat32, DType::kFloat64},
                                                              {DType::kUInt8, DType::kFloat32},
                                                              {DType::kInt64, DType::kInt32}}) {
    OpCase c{absl::StrCat("Cast_", DTypeName(src), "_to_", DTypeName(dst)), "Cast", src, {{3, 7}}};
    c.has_t = false;
    c.attrs["SrcT"] = TypeAttr(src);
    c.attrs["DstT"] = TypeAttr(dst);
    cases.push_back(c);
  }
  for (Dims d : std::vector<Dims>{{3, 7}, {1, 1}, {2, 3, 17}}) {
    cases.push_back({absl::StrCat("Softmax_", DimsName(d)), "Softmax", DType::kFloat32, {d}});
    cases.push_back({absl::StrCat("Softmax_f64_", DimsName(d)), "Softmax", DType::kFloat64, {d}});
  }
  auto concat = [&](const std::string& name, Dims a, Dims b, int32_t axis) {
    OpCase c{name, "ConcatV2", DType::kFloat32, {a, b}, {Ints({axis}, true)}};
    c.attrs["N"] = IntAttr(2);
    c.attrs["Tidx"] = TypeAttr(DType::kInt32);
    cases.push_back(c);
  };
  concat("ConcatV2_axis0", {2, 3}, {4, 3}, 0);
  concat("ConcatV2_axis_neg1", {2, 3}, {2, 5}, -1);
  concat("ConcatV2_empty", {0, 3}, {2, 3}, 0);
  for (DType out : {DType::kInt32, DType::kInt64}) {
    OpCase c{absl::StrCat("Shape_", DTypeName(out)), "Shape", DType::kFloat32, {{2, 0, 3}}};
    c.attrs["out_type"] = TypeAttr(out);
    cases.push_back(c);
  }
  for (int axis : {0, 1, -1}) {
    OpCase c{absl::StrCat("Pack_axis", axis < 0 ? "_neg1" : std::to_string(axis)),
             "Pack",
             DType::kFloat32,
             {{2, 3}, {2, 3}, {2, 3}}};
    c.attrs["N"] = IntAttr(3);
    c.attrs["axis"] = IntAttr(axis);
    cases.push_back(c);
  }
  return cases;
}

// ---- Reference helpers for ops without a fallback kernel -------------------------------

Dims Unravel(int64_t k, const Dims& dims) {
  Dims idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = dims[d] == 0 ? 0 : k % dims[d];
    k = dims[d] == 0 ? 0 : k / dims[d];
  }
  return idx;
}

int64_t Ravel(const Dims& idx, const Dims& dims) {
  int64_t k = 0;
  for (size_t d = 0; d < dims.size(); ++d) k = k * dims[d] + idx[d];
  return k;
}

void SetFromDouble(Tensor& t, int64_t k, double v) {
  DispatchNumeric(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, double> || std::is_integral_v<T>) {
      t.data<T>()[k] = static_cast<T>(v);
    } else {
      t.data<T>()[k] = static_cast<T>(static_cast<float>(v));
    }
  });
}

// A tensor of `dtype` and `dims` whose element at multi-index i is f(i).
Tensor Build(DType dtype, const Dims& dims, const std::function<double(const Dims&)>& f) {
  Tensor t(dtype, dims);
  for (int64_t k = 0; k < t.num_elements(); ++k) SetFromDouble(t, k, f(Unravel(k, dims)));
  return t;
}

double At(const Tensor& t, const Dims& idx) { return ElementAsDouble(t, Ravel(idx, t.dims())); }

RefFn UnaryRef(std::function<double(double)> f, DType out) {
  return [f, out](const std::vector<Tensor>& in) {
    return Build(out == DType::kInvalid ? in[0].dtype() : out, in[0].dims(),
                 [&](const Dims& i) { return f(At(in[0], i)); });
  };
}

// NumPy broadcasting of in[0] and in[1]; f computes in double.
RefFn BinaryRef(std::function<double(double, double)> f) {
  return [f](const std::vector<Tensor>& in) {
    const Dims &a = in[0].dims(), &b = in[1].dims();
    const size_t rank = std::max(a.size(), b.size());
    Dims out(rank);
    for (size_t k = 0; k < rank; ++k) {
      const int64_t da = k < rank - a.size() ? 1 : a[k - (rank - a.size())];
      const int64_t db = k < rank - b.size() ? 1 : b[k - (rank - b.size())];
      out[k] = da == 1 ? db : da;
    }
    auto pick = [&](const Dims& idx, const Dims& d) {
      Dims r(d.size());
      for (size_t k = 0; k < d.size(); ++k) r[k] = d[k] == 1 ? 0 : idx[k + rank - d.size()];
      return r;
    };
    return Build(in[0].dtype(), out,
                 [&](const Dims& i) { return f(At(in[0], pick(i, a)), At(in[1], pick(i, b))); });
  };
}

Tensor Floats(DType t, const Dims& dims, const std::vector<double>& v) {
  Tensor x(t, dims);
  for (size_t k = 0; k < v.size(); ++k) SetFromDouble(x, static_cast<int64_t>(k), v[k]);
  return x;
}

// Ints(v) as int64.
Tensor Ints64(const std::vector<int64_t>& v, bool scalar) {
  return Tensor::FromVector<int64_t>(DType::kInt64,
                                     scalar ? Dims{} : Dims{static_cast<int64_t>(v.size())}, v);
}

double FloorMod(double x, double y) {
  const double r = std::fmod(x, y);
  return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}

std::vector<OpCase> ElementwiseCases() {
  std::vector<OpCase> cases;
  const std::vector<Dims> shapes = {{}, {0}, {7}, {3, 17}};
  struct U {
    const char* op;
    std::function<double(double)> f;
    bool ints;
  };
  const double kSeluA = 1.6732632423543772848170429916717,
               kSeluS = 1.0507009873554804934193349852946;
  const std::vector<U> unary = {
      {"Floor", [](double x) { return std::floor(x); }, false},
      {"Ceil", [](double x) { return std::ceil(x); }, false},
      {"Round", [](double x) { return std::nearbyint(x); }, true},
      {"Rint", [](double x) { return std::nearbyint(x); }, false},
      {"Sign", [](double x) { return (x > 0) - (x < 0); }, true},
      {"Sin", [](double x) { return std::sin(x); }, false},
      {"Cos", [](double x) { return std::cos(x); }, false},
      {"Tan", [](double x) { return std::tan(x); }, false},
      {"Erf", [](double x) { return std::erf(x); }, false},
      {"Expm1", [](double x) { return std::expm1(x); }, false},
      {"Log1p", [](double x) { return std::log1p(x); }, false},
      {"Reciprocal", [](double x) { return 1 / x; }, false},
      {"Inv", [](double x) { return 1 / x; }, false},
      {"Asin", [](double x) { return std::asin(x); }, false},
      {"Acos", [](double x) { return std::acos(x); }, false},
      {"Atan", [](double x) { return std::atan(x); }, false},
      {"Sinh", [](double x) { return std::sinh(x); }, false},
      {"Cosh", [](double x) { return std::cosh(x); }, false},
      {"Asinh", [](double x) { return std::asinh(x); }, false},
      {"Acosh", [](double x) { return std::acosh(x); }, false},
      {"Atanh", [](double x) { return std::atanh(x); }, false},
      {"Elu", [](double x) { return x < 0 ? std::expm1(x) : x; }, false},
      {"Selu", [=](double x) { return x < 0 ? kSeluS * kSeluA * std::expm1(x) : kSeluS * x; },
       false},
      {"Softplus", [](double x) { return std::log1p(std::exp(x)); }, false},
      {"Softsign", [](double x) { return x / (1 + std::abs(x)); }, false},
      {"LeakyRelu", [](double x) { return x > 0 ? x : x * 0.2f; }, false},
      {"ZerosLike", [](double) { return 0.0; }, true},
      {"OnesLike", [](double) { return 1.0; }, true},
  };
  for (const U& u : unary) {
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32}) {
      if (t == DType::kInt32 && !u.ints) continue;
      for (const Dims& s : shapes) {
        OpCase c{absl::StrCat(u.op, "_", DTypeName(t), "_", DimsName(s)), u.op, t, {s}};
        if (t == DType::kFloat32 && s.size() == 1 && s[0] == 7 && std::string(u.op) != "Sign") {
          // Values at and beyond the interesting points (ties, ±0, softplus thresholds).
          c.feed_values = {Floats(t, s, {-2.5, -0.5, 0.5, 1.5, -0.0, 20.0, -20.0})};
          if (std::string(u.op) == "Asin" || std::string(u.op) == "Acos") {
            c.feed_values = {Floats(t, s, {-1, -0.5, 0.5, 1, -0.0, 2, -2})};
          }
          // The inverse hyperbolics at their edges, tiny and huge values (the lowering's
          // far-field form starts at 1e4).
          if (std::string(u.op) == "Asinh") {
            c.feed_values = {Floats(t, s, {-1e-6, -0.0, 0.75, 9999, 1e4 + 1, -3e7, 1e30})};
          }
          if (std::string(u.op) == "Acosh") {
            c.feed_values = {Floats(t, s, {1, 1.0001, 0.5, 2, 9999, 3e7, 1e30})};
          }
          if (std::string(u.op) == "Atanh") {
            c.feed_values = {Floats(t, s, {-1, 1, -0.0, 1e-6, 0.999, -0.5, 2})};
          }
        }
        c.reference = UnaryRef(u.f);
        cases.push_back(c);
      }
    }
  }
  OpCase alpha{"LeakyRelu_alpha", "LeakyRelu", DType::kFloat32, {{4, 5}}};
  alpha.attrs["alpha"] = tensorflow::AttrValue();
  alpha.attrs["alpha"].set_f(0.5f);
  alpha.reference = UnaryRef([](double x) { return x > 0 ? x : x * 0.5; });
  cases.push_back(alpha);
  const double inf = std::numeric_limits<double>::infinity();
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    const Tensor special = Floats(t, {6}, {1.0, -inf, inf, std::nan(""), 0.0, -3.0});
    for (auto [op, f] : std::vector<std::pair<const char*, std::function<double(double)>>>{
             {"IsFinite", [](double x) { return std::isfinite(x) ? 1.0 : 0.0; }},
             {"IsNan", [](double x) { return std::isnan(x) ? 1.0 : 0.0; }},
             {"IsInf", [](double x) { return std::isinf(x) ? 1.0 : 0.0; }}}) {
      OpCase c{absl::StrCat(op, "_", DTypeName(t)), op, t, {{6}}};
      c.feed_values = {special};
      c.reference = UnaryRef(f, DType::kBool);
      cases.push_back(c);
    }
  }
  const std::vector<std::pair<Dims, Dims>> bshapes = {
      {{}, {}}, {{5}, {}}, {{2, 1}, {1, 3}}, {{0, 3}, {3}}, {{4, 17}, {4, 1}}};
  struct B {
    const char* op;
    std::function<double(double, double)> f;
  };
  const std::vector<B> fbin = {
      {"FloorDiv", [](double x, double y) { return std::floor(x / y); }},
      {"FloorMod", FloorMod},
      {"Mod", [](double x, double y) { return std::fmod(x, y); }},
      {"TruncateMod", [](double x, double y) { return std::fmod(x, y); }},
      {"Atan2", [](double y, double x) { return std::atan2(y, x); }},
      {"DivNoNan", [](double x, double y) { return y == 0 ? 0.0 : x / y; }},
      {"MulNoNan", [](double x, double y) { return y == 0 ? 0.0 : x * y; }},
      {"Xdivy", [](double x, double y) { return x == 0 ? 0.0 : x / y; }},
      {"Xlogy", [](double x, double y) { return x == 0 ? 0.0 : x * std::log(y); }},
      {"SquaredDifference", [](double x, double y) { return (x - y) * (x - y); }},
      {"Pow", [](double x, double y) { return std::pow(x, y); }},
      {"Div", [](double x, double y) { return x / y; }}};
  for (const B& b : fbin) {
    for (DType t : {DType::kFloat32, DType::kFloat64}) {
      for (const auto& [sa, sb] : bshapes) {
        OpCase c{absl::StrCat(b.op, "_", DTypeName(t), "_", DimsName(sa), "_", DimsName(sb)),
                 b.op,
                 t,
                 {sa, sb}};
        c.reference = BinaryRef(b.f);
        cases.push_back(c);
      }
    }
  }
  // Zeros in y (random floats have none) for the *NoNan ops; negatives for the mods.
  for (const char* op : {"DivNoNan", "MulNoNan", "Xdivy", "FloorMod", "FloorDiv"}) {
    OpCase c{absl::StrCat(op, "_zeros"), op, DType::kFloat32, {{6}, {6}}};
    c.feed_values = {Floats(DType::kFloat32, {6}, {0, 1, -7, 7, -7.5, 0}),
                     Floats(DType::kFloat32, {6}, {0, 0, 2, -2, 2, 3})};
    for (const B& b : fbin) {
      if (std::string(b.op) == op) c.reference = BinaryRef(b.f);
    }
    cases.push_back(c);
  }
  // Float TruncateDiv (TF's kernels from 2.16): the quotient rounded toward zero, both signs,
  // halves, a division by zero.
  for (DType t : {DType::kFloat16, DType::kFloat32, DType::kFloat64}) {
    OpCase c{absl::StrCat("TruncateDiv_", DTypeName(t), "_signs"), "TruncateDiv", t, {{8}, {8}}};
    c.feed_values = {Floats(t, {8}, {-7, 7, -0.5, 0.5, 7.5, -7.5, 1, -3}),
                     Floats(t, {8}, {2, -2, 1, 1, 2, 2, 0, 0.25})};
    c.reference = BinaryRef([](double x, double y) { return std::trunc(x / y); });
    cases.push_back(c);
  }
  // Integer division and modulus: a constant divisor (negative values included).
  const std::vector<int64_t> xs = {-7, -6, -1, 0, 1, 5, 7, 9};
  const std::vector<int64_t> ys = {2, -2, 3, -3, 7, 1, -1, 4};
  struct I {
    const char* op;
    std::function<double(double, double)> f;
  };
  const std::vector<I> ibin = {
      {"FloorDiv", [](double x, double y) { return std::floor(x / y); }},
      {"FloorMod", FloorMod},
      {"TruncateDiv", [](double x, double y) { return std::trunc(x / y); }},
      {"Div", [](double x, double y) { return std::trunc(x / y); }},
      {"TruncateMod", [](double x, double y) { return std::fmod(x, y); }},
      {"Mod", [](double x, double y) { return std::fmod(x, y); }},
      {"Pow", [](double x, double y) { return std::pow(x, std::abs(y)); }},
      {"BitwiseAnd",
       [](double x, double y) {
         return static_cast<double>(static_cast<int64_t>(x) & static_cast<int64_t>(y));
       }},
      {"BitwiseOr",
       [](double x, double y) {
         return static_cast<double>(static_cast<int64_t>(x) | static_cast<int64_t>(y));
       }},
      {"BitwiseXor", [](double x, double y) {
         return static_cast<double>(static_cast<int64_t>(x) ^ static_cast<int64_t>(y));
       }}};
  for (const I& b : ibin) {
    for (DType t : {DType::kInt32, DType::kInt64}) {
      std::vector<int64_t> y = ys;
      if (std::string(b.op) == "Pow") {
        for (int64_t& v : y) v = std::abs(v);
      }
      Tensor xv(t, {8}), yv(t, {8});
      for (int k = 0; k < 8; ++k) {
        SetFromDouble(xv, k, static_cast<double>(xs[k]));
        SetFromDouble(yv, k, static_cast<double>(y[k]));
      }
      OpCase c{absl::StrCat(b.op, "_", DTypeName(t), "_const_divisor"), b.op, t, {{8}}, {yv}};
      c.feed_values = {xv};
      c.reference = BinaryRef(b.f);
      cases.push_back(c);
      Tensor scalar(t, {});
      SetFromDouble(scalar, 0, std::string(b.op) == "Pow" ? 3 : -3);
      OpCase s{absl::StrCat(b.op, "_", DTypeName(t), "_scalar_divisor"), b.op, t, {{8}}, {scalar}};
      s.feed_values = {xv};
      s.reference = BinaryRef(b.f);
      cases.push_back(s);
      OpCase dyn{absl::StrCat(b.op, "_", DTypeName(t), "_fed_divisor"), b.op, t, {{8}, {8}}};
      dyn.feed_values = {xv, yv};
      dyn.reference = BinaryRef(b.f);
      cases.push_back(dyn);
    }
  }
  // Shifts: amounts below 0 and at or past the width clamp to [0, bits - 1] (TF's functors),
  // right shifts of negatives are arithmetic; int8, int32, int64 and uint8.
  const std::vector<int64_t> sx = {-7, -128, 1, 5, 100, -1, 3, 127};
  const std::vector<int64_t> sy = {1, 3, 0, 7, 8, -2, 70, 2};
  for (bool left : {true, false}) {
    for (DType t : {DType::kInt8, DType::kInt32, DType::kInt64, DType::kUInt8}) {
      const int bits = static_cast<int>(DTypeSize(t)) * 8;
      const bool is_unsigned = t == DType::kUInt8;
      Tensor xv(t, {8}), yv(t, {8});
      for (int k = 0; k < 8; ++k) {
        SetFromDouble(xv, k, static_cast<double>(is_unsigned ? (sx[k] & 0xff) : sx[k]));
        SetFromDouble(yv, k, static_cast<double>(is_unsigned ? std::abs(sy[k]) : sy[k]));
      }
      const char* op = left ? "LeftShift" : "RightShift";
      OpCase c{absl::StrCat(op, "_", DTypeName(t), "_fed"), op, t, {{8}, {8}}};
      c.feed_values = {xv, yv};
      c.reference = [left, bits, is_unsigned](const std::vector<Tensor>& in) {
        Tensor out(in[0].dtype(), in[0].dims());
        for (int64_t k = 0; k < out.num_elements(); ++k) {
          const int64_t a = ElementAsInt64(in[0], k);
          const int64_t n = std::clamp<int64_t>(ElementAsInt64(in[1], k), 0, bits - 1);
          // Left: the low `bits` bits of a * 2^n, read back as the type; right: floor division.
          const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
          uint64_t v =
              left ? (static_cast<uint64_t>(a) << n) & mask : static_cast<uint64_t>(a >> n) & mask;
          int64_t r = static_cast<int64_t>(v);
          if (!is_unsigned && bits < 64 && (v >> (bits - 1)) != 0) r -= int64_t{1} << bits;
          SetFromDouble(out, k, static_cast<double>(r));
        }
        return out;
      };
      cases.push_back(c);
    }
  }
  return cases;
}

std::vector<OpCase> MathCases() {
  std::vector<OpCase> cases;
  // Select (v1): same shape, scalar and row-vector conditions; SelectV2 broadcasts.
  struct S {
    const char* op;
    Dims c, t, e;
  };
  for (const S& s : std::vector<S>{{"Select", {3, 4}, {3, 4}, {3, 4}},
                                   {"Select", {}, {3, 4}, {3, 4}},
                                   {"Select", {3}, {3, 4}, {3, 4}},
                                   {"Select", {0}, {0, 2}, {0, 2}},
                                   {"SelectV2", {3, 1}, {1, 4}, {}},
                                   {"SelectV2", {4}, {3, 4}, {3, 1}},
                                   {"SelectV2", {}, {5}, {5}}}) {
    for (DType t : {DType::kFloat32, DType::kInt32}) {
      OpCase c{absl::StrCat(s.op, "_", DTypeName(t), "_", DimsName(s.c), "_", DimsName(s.t), "_",
                            DimsName(s.e)),
               s.op,
               t,
               {s.c, s.t, s.e}};
      c.input_dtypes = {DType::kBool, t, t};
      cases.push_back(c);
    }
  }
  for (int n : {1, 2, 4}) {
    for (DType t : {DType::kFloat32, DType::kInt64}) {
      OpCase c{absl::StrCat("AddN_", n, "_", DTypeName(t)), "AddN", t,
               std::vector<Dims>(static_cast<size_t>(n), Dims{3, 5})};
      c.attrs["N"] = IntAttr(n);
      c.reference = [](const std::vector<Tensor>& in) {
        return Build(in[0].dtype(), in[0].dims(), [&](const Dims& i) {
          double sum = 0;
          for (const Tensor& x : in) sum += At(x, i);
          return sum;
        });
      };
      cases.push_back(c);
    }
  }
  auto clip_ref = [](const std::vector<Tensor>& in) {
    return Build(in[0].dtype(), in[0].dims(), [&](const Dims& i) {
      const double lo = in[1].rank() == 0 ? At(in[1], {}) : At(in[1], i);
      const double hi = in[2].rank() == 0 ? At(in[2], {}) : At(in[2], i);
      return std::max(std::min(At(in[0], i), hi), lo);
    });
  };
  for (DType t : {DType::kFloat32, DType::kInt32}) {
    Tensor lo(t, {}), hi(t, {});
    SetFromDouble(lo, 0, t == DType::kInt32 ? 2 : -0.25);
    SetFromDouble(hi, 0, t == DType::kInt32 ? 6 : 0.5);
    OpCase c{
        absl::StrCat("ClipByValue_scalar_", DTypeName(t)), "ClipByValue", t, {{4, 9}}, {lo, hi}};
    c.reference = clip_ref;
    cases.push_back(c);
  }
  OpCase clip_t{"ClipByValue_tensor_bounds", "ClipByValue", DType::kFloat32, {{5}, {5}, {5}}};
  clip_t.reference = clip_ref;
  cases.push_back(clip_t);
  // ArgMax/ArgMin: ties (small random ints) pick the first index; NaN handling is XLA's.
  struct A {
    Dims shape;
    int32_t axis;
  };
  for (const char* op : {"ArgMax", "ArgMin"}) {
    const bool is_max = std::string(op) == "ArgMax";
    for (const A& a :
         std::vector<A>{{{7}, 0}, {{3, 17}, 1}, {{3, 17}, 0}, {{2, 3, 4}, -2}, {{0, 4}, 1}}) {
      for (DType t : {DType::kFloat32, DType::kInt32}) {
        for (DType out : {DType::kInt64, DType::kInt32}) {
          OpCase c{absl::StrCat(op, "_", DTypeName(t), "_", DimsName(a.shape), "_axis",
                                a.axis < 0 ? "_neg" : "", std::abs(a.axis), "_", DTypeName(out)),
                   op,
                   t,
                   {a.shape},
                   {Ints({a.axis}, true)}};
          c.attrs["output_type"] = TypeAttr(out);
          c.attrs["Tidx"] = TypeAttr(DType::kInt32);
          c.reference = [is_max, out](const std::vector<Tensor>& in) {
            const Dims& d = in[0].dims();
            int64_t axis = ElementAsInt64(in[1], 0);
            if (axis < 0) axis += static_cast<int64_t>(d.size());
            Dims od = d;
            od.erase(od.begin() + axis);
            return Build(out, od, [&](const Dims& o) {
              Dims i = o;
              i.insert(i.begin() + axis, 0);
              int64_t best = 0;
              for (int64_t k = 0; k < d[static_cast<size_t>(axis)]; ++k) {
                Dims j = i, b = i;
                j[static_cast<size_t>(axis)] = k;
                b[static_cast<size_t>(axis)] = best;
                if (is_max ? At(in[0], j) > At(in[0], b) : At(in[0], j) < At(in[0], b)) best = k;
              }
              return static_cast<double>(best);
            });
          };
          cases.push_back(c);
        }
      }
    }
  }
  // All/Any: bool reductions (kernels exist).
  struct R {
    Dims shape;
    std::vector<int32_t> axes;
  };
  for (const char* op : {"All", "Any"}) {
    for (const R& r : std::vector<R>{
             {{2, 3, 5}, {1}}, {{2, 3, 5}, {0, -1}}, {{4, 0}, {1}}, {{0, 4}, {0}}, {{9}, {}}}) {
      for (bool keep : {false, true}) {
        OpCase c{absl::StrCat(op, "_", DimsName(r.shape), "_axes", absl::StrJoin(r.axes, "_"),
                              keep ? "_keep" : ""),
                 op,
                 DType::kBool,
                 {r.shape},
                 {Ints(r.axes)}};
        c.has_t = false;
        c.attrs["keep_dims"] = BoolAttr(keep);
        c.attrs["Tidx"] = TypeAttr(DType::kInt32);
        cases.push_back(c);
      }
    }
  }
  return cases;
}

// Python's slice semantics for one dim: the input indices [b:e:s] selects.
std::vector<int64_t> PySlice(int64_t b, int64_t e, int64_t s, int64_t dim, bool bmask, bool emask) {
  auto fix = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v += dim;
    return std::clamp(v, lo, hi);
  };
  int64_t start, stop;
  if (s > 0) {
    start = bmask ? 0 : fix(b, 0, dim);
    stop = emask ? dim : fix(e, 0, dim);
  } else {
    start = bmask ? dim - 1 : fix(b, -1, dim - 1);
    stop = emask ? -1 : fix(e, -1, dim - 1);
  }
  std::vector<int64_t> out;
  for (int64_t i = start; s > 0 ? i < stop : i > stop; i += s) out.push_back(i);
  return out;
}

// The positions a strided slice of an input of dims `d` takes, expanding the spec the way NumPy
// indexing reads it: the slice's dims, and the input index each slice index reads.
StridedPicks PickStridedSlice(const Dims& d, const std::vector<int64_t>& b,
                              const std::vector<int64_t>& e, const std::vector<int64_t>& s, int bm,
                              int em, int ellipsis, int newaxis, int shrink) {
  std::vector<std::vector<int64_t>> picks(d.size());  // per input dim
  std::vector<int> out_src;                           // input dim per output dim, -1 = new
  int spec_after_ellipsis = 0;
  bool seen = ellipsis == 0;
  for (size_t i = 0; i < b.size(); ++i) {
    if (seen && !((newaxis >> i) & 1)) ++spec_after_ellipsis;
    if ((ellipsis >> i) & 1) seen = true;
  }
  size_t dim = 0;
  auto whole = [&](size_t k) {
    for (int64_t j = 0; j < d[k]; ++j) picks[k].push_back(j);
    out_src.push_back(static_cast<int>(k));
  };
  for (size_t i = 0; i < b.size(); ++i) {
    if ((ellipsis >> i) & 1) {
      while (dim < d.size() - static_cast<size_t>(spec_after_ellipsis)) whole(dim++);
    } else if ((newaxis >> i) & 1) {
      out_src.push_back(-1);
    } else if ((shrink >> i) & 1) {
      picks[dim].push_back(b[i] < 0 ? b[i] + d[dim] : b[i]);
      ++dim;
    } else {
      picks[dim] = PySlice(b[i], e[i], s[i], d[dim], (bm >> i) & 1, (em >> i) & 1);
      out_src.push_back(static_cast<int>(dim++));
    }
  }
  while (dim < d.size()) whole(dim++);
  StridedPicks r;
  for (int src : out_src) {
    r.dims.push_back(src < 0 ? 1 : static_cast<int64_t>(picks[static_cast<size_t>(src)].size()));
  }
  r.source = [picks, out_src, n = d.size()](const Dims& o) {
    Dims idx(n);
    for (size_t k = 0; k < n; ++k) idx[k] = picks[k].empty() ? 0 : picks[k][0];
    for (size_t k = 0; k < o.size(); ++k) {
      if (out_src[k] >= 0) idx[out_src[k]] = picks[out_src[k]][o[k]];
    }
    return idx;
  };
  return r;
}

// Reference for StridedSlice: in[0] read at PickStridedSlice's positions.
RefFn StridedSliceRef(std::vector<int64_t> b, std::vector<int64_t> e, std::vector<int64_t> s,
                      int bm, int em, int ellipsis, int newaxis, int shrink) {
  return [=](const std::vector<Tensor>& in) {
    const StridedPicks p =
        PickStridedSlice(in[0].dims(), b, e, s, bm, em, ellipsis, newaxis, shrink);
    return Build(in[0].dtype(), p.dims, [&](const Dims& o) { return At(in[0], p.source(o)); });
  };
}

std::vector<OpCase> AllCases() {
  std::vector<OpCase> all;
  for (auto cases : {BinaryCases(), UnaryCases(), MatMulCases(), ReductionCases(), ArrayCases(),
                     ElementwiseCases(), MathCases(), SliceCases(), ShapeOpCases(),
                     MoreArrayCases(), MiscCases(), NnCases(), BatchMatMulCases()}) {
    all.insert(all.end(), cases.begin(), cases.end());
  }
  for (OpCase& c : ImageCases()) all.push_back(std::move(c));
  for (OpCase& c : ConvCases()) all.push_back(std::move(c));
  for (OpCase& c : TopKCases()) all.push_back(std::move(c));
  for (OpCase& c : GradientsCases()) all.push_back(std::move(c));
  for (OpCase& c : OptimizersCases()) all.push_back(std::move(c));
  for (OpCase& c : LinalgCases()) all.push_back(std::move(c));
  for (OpCase& c : LinalgComplexCases()) all.push_back(std::move(c));
  for (OpCase& c : ScatterSegmentCases()) all.push_back(std::move(c));
  for (OpCase& c : ArrayMoreCases()) all.push_back(std::move(c));
  for (OpCase& c : SpecialCases()) all.push_back(std::move(c));
  for (OpCase& c : RandomMoreCases()) all.push_back(std::move(c));
  for (OpCase& c : ImageMoreCases()) all.push_back(std::move(c));
  for (OpCase& c : NnMoreCases()) all.push_back(std::move(c));
  for (OpCase& c : FftCases()) all.push_back(std::move(c));
  for (OpCase& c : XlaCases()) all.push_back(std::move(c));
  for (OpCase& c : BasicMoreCases()) all.push_back(std::move(c));
  return all;
}

}  // namespace tfjit::optest
