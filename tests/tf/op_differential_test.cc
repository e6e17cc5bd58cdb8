// Per-op differential tests: every op of the walking skeleton, as a one-op TF graph, runs on
// three paths — the fallback kernel (--jit none), the HLO evaluator (interpreter backend) and
// the CPU JIT — over seeded random inputs including scalars, size-0 and size-1 dims,
// broadcasting and widths that are not multiples of the vector width. Integers must match
// exactly; floats within a per-dtype bound.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <tuple>
#include <limits>
#include <algorithm>
#include <string>
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

namespace tfjit {
namespace {

using Dims = std::vector<int64_t>;

// Computes the expected output from the placeholder feeds followed by the consts; used for
// ops without a fallback kernel (and checked against the kernel too when one exists).
using RefFn = std::function<Tensor(const std::vector<Tensor>& inputs)>;

struct OpCase {
  std::string name;
  std::string op;
  DType dtype = DType::kFloat32;     // attr T and the placeholders' dtype
  std::vector<Dims> inputs;          // placeholder shapes
  std::vector<Tensor> consts;        // extra inputs after the placeholders (axes, shapes, ...)
  std::map<std::string, tensorflow::AttrValue> attrs;
  bool has_t = true;                 // whether the op has a "T" attr
  DType input_dtype = DType::kInvalid;  // placeholders' dtype when it differs from T
  std::vector<DType> input_dtypes;   // per-placeholder dtypes (overrides input_dtype)
  std::vector<Tensor> feed_values;   // fixed feeds instead of random ones (shapes from these)
  int output = 0;                    // which output of the op is fetched
  bool consts_first = false;         // consts are the op's first inputs (Concat, Split)
  RefFn reference;                   // independent expected value (see RefFn)
};

// gtest prints the case by name in failure messages and test lists.
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
tensorflow::AttrValue StringAttr(const std::string& s) {
  tensorflow::AttrValue a;
  a.set_s(s);
  return a;
}
Tensor Ints(const std::vector<int32_t>& v, bool scalar = false) {
  return Tensor::FromVector<int32_t>(DType::kInt32,
                                     scalar ? Dims{} : Dims{static_cast<int64_t>(v.size())}, v);
}

std::string GraphText(const OpCase& c) {
  tensorflow::GraphDef g;
  auto* op = g.add_node();
  op->set_name("op");
  op->set_op(c.op);
  const DType in_type = c.input_dtype == DType::kInvalid ? c.dtype : c.input_dtype;
  auto add_placeholders = [&] {
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      auto* p = g.add_node();
      p->set_name(absl::StrCat("p", i));
      p->set_op("Placeholder");
      (*p->mutable_attr())["dtype"] =
          TypeAttr(i < c.input_dtypes.size() ? c.input_dtypes[i] : in_type);
      auto* shape = (*p->mutable_attr())["shape"].mutable_shape();
      for (int64_t d : c.inputs[i]) shape->add_dim()->set_size(d);
      op->add_input(p->name());
    }
  };
  auto add_consts = [&] {
    for (size_t i = 0; i < c.consts.size(); ++i) {
      auto* k = g.add_node();
      k->set_name(absl::StrCat("k", i));
      k->set_op("Const");
      (*k->mutable_attr())["dtype"] = TypeAttr(c.consts[i].dtype());
      *(*k->mutable_attr())["value"].mutable_tensor() = tf::TensorToProto(c.consts[i]);
      op->add_input(k->name());
    }
  };
  if (c.consts_first) add_consts();
  add_placeholders();
  if (!c.consts_first) add_consts();
  if (c.has_t) (*op->mutable_attr())["T"] = TypeAttr(c.dtype);
  for (const auto& [k, v] : c.attrs) (*op->mutable_attr())[k] = v;
  std::string text;
  google::protobuf::TextFormat::PrintToString(g, &text);
  return text;
}

std::string DimsName(const Dims& d) {
  return d.empty() ? "scalar" : absl::StrJoin(d, "x");
}

std::vector<OpCase> BinaryCases() {
  const std::vector<std::pair<Dims, Dims>> shapes = {
      {{}, {}}, {{5}, {}}, {{}, {5}}, {{2, 3}, {3}}, {{2, 1}, {1, 3}},
      {{0, 3}, {3}}, {{1}, {7}}, {{33}, {33}}, {{4, 17}, {4, 1}}};
  std::vector<OpCase> cases;
  for (const char* op : {"Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum"}) {
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32,
                    DType::kInt64}) {
      if (std::string(op) == "RealDiv" && IsIntegerDType(t)) continue;
      for (const auto& [a, b] : shapes) {
        cases.push_back({absl::StrCat(op, "_", DTypeName(t), "_", DimsName(a), "_", DimsName(b)),
                         op, t, {a, b}});
      }
    }
  }
  return cases;
}

std::vector<OpCase> UnaryCases() {
  const std::vector<Dims> shapes = {{}, {0}, {1}, {7}, {3, 17}, {2, 1, 33}};
  std::vector<OpCase> cases;
  for (const char* op : {"Neg", "Abs", "Exp", "Log", "Tanh", "Sigmoid", "Relu", "Relu6",
                         "Sqrt", "Rsqrt", "Square"}) {
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
  struct M { Dims a, b; bool ta, tb; };
  const std::vector<M> ms = {{{2, 3}, {3, 4}, false, false}, {{3, 2}, {3, 4}, true, false},
                             {{2, 3}, {4, 3}, false, true},  {{3, 2}, {4, 3}, true, true},
                             {{1, 1}, {1, 1}, false, false}, {{0, 3}, {3, 5}, false, false},
                             {{5, 0}, {0, 2}, false, false}, {{17, 33}, {33, 9}, false, false}};
  std::vector<OpCase> cases;
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kInt32}) {
    for (const M& m : ms) {
      OpCase c{absl::StrCat("MatMul_", DTypeName(t), "_", DimsName(m.a), "_", DimsName(m.b),
                            m.ta ? "_ta" : "", m.tb ? "_tb" : ""),
               "MatMul", t, {m.a, m.b}};
      c.attrs["transpose_a"] = BoolAttr(m.ta);
      c.attrs["transpose_b"] = BoolAttr(m.tb);
      cases.push_back(c);
    }
  }
  OpCase nhwc{"BiasAdd_NHWC", "BiasAdd", DType::kFloat32, {{2, 3, 5}, {5}}};
  OpCase nchw{"BiasAdd_NCHW", "BiasAdd", DType::kFloat32, {{2, 5, 3, 3}, {5}}};
  nchw.attrs["data_format"] = StringAttr("NCHW");
  OpCase bias64{"BiasAdd_float64_1x1", "BiasAdd", DType::kFloat64, {{1, 1}, {1}}};
  cases.insert(cases.end(), {nhwc, nchw, bias64});
  return cases;
}

std::vector<OpCase> ReductionCases() {
  struct R { Dims shape; std::vector<int32_t> axes; bool scalar_axis; };
  const std::vector<R> rs = {{{2, 3, 5}, {0}, true},    {{2, 3, 5}, {-1}, false},
                             {{2, 3, 5}, {0, 2}, false}, {{2, 3, 5}, {0, 1, 2}, false},
                             {{0, 4}, {0}, true},       {{4, 0}, {1}, true},
                             {{1, 33}, {1}, true},      {{7}, {}, false}};
  std::vector<OpCase> cases;
  for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod"}) {
    for (DType t : {DType::kFloat32, DType::kInt32}) {
      for (const R& r : rs) {
        for (bool keep : {false, true}) {
          OpCase c{absl::StrCat(op, "_", DTypeName(t), "_", DimsName(r.shape), "_axes",
                                absl::StrJoin(r.axes, "_"), keep ? "_keep" : ""),
                   op, t, {r.shape}, {Ints(r.axes, r.scalar_axis && r.axes.size() == 1)}};
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
  reshape("Reshape_scalar", {1, 1}, {});
  auto transpose = [&](const std::string& name, Dims in, std::vector<int32_t> perm) {
    OpCase c{name, "Transpose", DType::kFloat32, {in}, {Ints(perm)}};
    c.attrs["Tperm"] = TypeAttr(DType::kInt32);
    cases.push_back(c);
  };
  transpose("Transpose_3d", {2, 3, 4}, {2, 0, 1});
  transpose("Transpose_2d_row", {1, 5}, {1, 0});
  transpose("Transpose_odd", {17, 9}, {1, 0});
  for (auto [src, dst] : std::vector<std::pair<DType, DType>>{
           {DType::kFloat32, DType::kInt32}, {DType::kInt32, DType::kFloat32},
           {DType::kFloat32, DType::kFloat16}, {DType::kFloat16, DType::kFloat32},
           {DType::kFloat32, DType::kBool}, {DType::kBool, DType::kFloat32},
           {DType::kInt32, DType::kInt64}, {DType::kFloat32, DType::kFloat64},
           {DType::kUInt8, DType::kFloat32}, {DType::kInt64, DType::kInt32}}) {
    OpCase c{absl::StrCat("Cast_", DTypeName(src), "_to_", DTypeName(dst)), "Cast", src,
             {{3, 7}}};
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
    OpCase c{absl::StrCat("Pack_axis", axis < 0 ? "_neg1" : std::to_string(axis)), "Pack",
             DType::kFloat32, {{2, 3}, {2, 3}, {2, 3}}};
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

RefFn UnaryRef(std::function<double(double)> f, DType out = DType::kInvalid) {
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
    return Build(in[0].dtype(), out, [&](const Dims& i) {
      return f(At(in[0], pick(i, a)), At(in[1], pick(i, b)));
    });
  };
}

Tensor Floats(DType t, const Dims& dims, const std::vector<double>& v) {
  Tensor x(t, dims);
  for (size_t k = 0; k < v.size(); ++k) SetFromDouble(x, static_cast<int64_t>(k), v[k]);
  return x;
}

// Ints(v) as int64.
Tensor Ints64(const std::vector<int64_t>& v, bool scalar = false) {
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
  struct U { const char* op; std::function<double(double)> f; bool ints; };
  const double kSeluA = 1.6732632423543772848170429916717, kSeluS = 1.0507009873554804934193349852946;
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
  const std::vector<std::pair<Dims, Dims>> bshapes = {{{}, {}}, {{5}, {}}, {{2, 1}, {1, 3}},
                                                     {{0, 3}, {3}}, {{4, 17}, {4, 1}}};
  struct B { const char* op; std::function<double(double, double)> f; };
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
                 b.op, t, {sa, sb}};
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
  // Integer division and modulus: a constant divisor (negative values included).
  const std::vector<int64_t> xs = {-7, -6, -1, 0, 1, 5, 7, 9};
  const std::vector<int64_t> ys = {2, -2, 3, -3, 7, 1, -1, 4};
  struct I { const char* op; std::function<double(double, double)> f; };
  const std::vector<I> ibin = {
      {"FloorDiv", [](double x, double y) { return std::floor(x / y); }},
      {"FloorMod", FloorMod},
      {"TruncateDiv", [](double x, double y) { return std::trunc(x / y); }},
      {"Div", [](double x, double y) { return std::trunc(x / y); }},
      {"TruncateMod", [](double x, double y) { return std::fmod(x, y); }},
      {"Mod", [](double x, double y) { return std::fmod(x, y); }},
      {"Pow", [](double x, double y) { return std::pow(x, std::abs(y)); }},
      {"BitwiseAnd", [](double x, double y) {
         return static_cast<double>(static_cast<int64_t>(x) & static_cast<int64_t>(y)); }},
      {"BitwiseOr", [](double x, double y) {
         return static_cast<double>(static_cast<int64_t>(x) | static_cast<int64_t>(y)); }},
      {"BitwiseXor", [](double x, double y) {
         return static_cast<double>(static_cast<int64_t>(x) ^ static_cast<int64_t>(y)); }}};
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
      OpCase s{absl::StrCat(b.op, "_", DTypeName(t), "_scalar_divisor"), b.op, t, {{8}},
               {scalar}};
      s.feed_values = {xv};
      s.reference = BinaryRef(b.f);
      cases.push_back(s);
      OpCase dyn{absl::StrCat(b.op, "_", DTypeName(t), "_fed_divisor"), b.op, t, {{8}, {8}}};
      dyn.feed_values = {xv, yv};
      dyn.reference = BinaryRef(b.f);
      cases.push_back(dyn);
    }
  }
  return cases;
}

std::vector<OpCase> MathCases() {
  std::vector<OpCase> cases;
  // Select (v1): same shape, scalar and row-vector conditions; SelectV2 broadcasts.
  struct S { const char* op; Dims c, t, e; };
  for (const S& s : std::vector<S>{{"Select", {3, 4}, {3, 4}, {3, 4}},
                                   {"Select", {}, {3, 4}, {3, 4}},
                                   {"Select", {3}, {3, 4}, {3, 4}},
                                   {"Select", {0}, {0, 2}, {0, 2}},
                                   {"SelectV2", {3, 1}, {1, 4}, {}},
                                   {"SelectV2", {4}, {3, 4}, {3, 1}},
                                   {"SelectV2", {}, {5}, {5}}}) {
    for (DType t : {DType::kFloat32, DType::kInt32}) {
      OpCase c{absl::StrCat(s.op, "_", DTypeName(t), "_", DimsName(s.c), "_", DimsName(s.t),
                            "_", DimsName(s.e)),
               s.op, t, {s.c, s.t, s.e}};
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
    OpCase c{absl::StrCat("ClipByValue_scalar_", DTypeName(t)), "ClipByValue", t, {{4, 9}},
             {lo, hi}};
    c.reference = clip_ref;
    cases.push_back(c);
  }
  OpCase clip_t{"ClipByValue_tensor_bounds", "ClipByValue", DType::kFloat32, {{5}, {5}, {5}}};
  clip_t.reference = clip_ref;
  cases.push_back(clip_t);
  // ArgMax/ArgMin: ties (small random ints) pick the first index; NaN handling is XLA's.
  struct A { Dims shape; int32_t axis; };
  for (const char* op : {"ArgMax", "ArgMin"}) {
    const bool is_max = std::string(op) == "ArgMax";
    for (const A& a : std::vector<A>{{{7}, 0}, {{3, 17}, 1}, {{3, 17}, 0}, {{2, 3, 4}, -2},
                                     {{0, 4}, 1}}) {
      for (DType t : {DType::kFloat32, DType::kInt32}) {
        for (DType out : {DType::kInt64, DType::kInt32}) {
          OpCase c{absl::StrCat(op, "_", DTypeName(t), "_", DimsName(a.shape), "_axis",
                                a.axis < 0 ? "_neg" : "", std::abs(a.axis), "_", DTypeName(out)),
                   op, t, {a.shape}, {Ints({a.axis}, true)}};
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
  struct R { Dims shape; std::vector<int32_t> axes; };
  for (const char* op : {"All", "Any"}) {
    for (const R& r : std::vector<R>{{{2, 3, 5}, {1}}, {{2, 3, 5}, {0, -1}}, {{4, 0}, {1}},
                                     {{0, 4}, {0}}, {{9}, {}}}) {
      for (bool keep : {false, true}) {
        OpCase c{absl::StrCat(op, "_", DimsName(r.shape), "_axes", absl::StrJoin(r.axes, "_"),
                              keep ? "_keep" : ""),
                 op, DType::kBool, {r.shape}, {Ints(r.axes)}};
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
std::vector<int64_t> PySlice(int64_t b, int64_t e, int64_t s, int64_t dim, bool bmask,
                             bool emask) {
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

// Reference for StridedSlice: expands the spec the way NumPy indexing reads it.
RefFn StridedSliceRef(std::vector<int64_t> b, std::vector<int64_t> e, std::vector<int64_t> s,
                      int bm, int em, int ellipsis, int newaxis, int shrink) {
  return [=](const std::vector<Tensor>& in) {
    const Dims& d = in[0].dims();
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
    Dims od;
    for (int src : out_src) od.push_back(src < 0 ? 1 : static_cast<int64_t>(picks[src].size()));
    return Build(in[0].dtype(), od, [&](const Dims& o) {
      Dims idx(d.size());
      for (size_t k = 0; k < d.size(); ++k) idx[k] = picks[k].empty() ? 0 : picks[k][0];
      for (size_t k = 0; k < o.size(); ++k) {
        if (out_src[k] >= 0) idx[out_src[k]] = picks[out_src[k]][o[k]];
      }
      return At(in[0], idx);
    });
  };
}

std::vector<OpCase> SliceCases() {
  std::vector<OpCase> cases;
  auto slice = [&](const std::string& name, Dims in, std::vector<int32_t> begin,
                   std::vector<int32_t> size) {
    OpCase c{name, "Slice", DType::kFloat32, {in}, {Ints(begin), Ints(size)}};
    c.attrs["Index"] = TypeAttr(DType::kInt32);
    c.reference = [](const std::vector<Tensor>& x) {
      Dims od;
      for (int64_t d = 0; d < x[0].rank(); ++d) {
        const int64_t b = ElementAsInt64(x[1], d), n = ElementAsInt64(x[2], d);
        od.push_back(n == -1 ? x[0].dim(static_cast<int>(d)) - b : n);
      }
      return Build(x[0].dtype(), od, [&](const Dims& o) {
        Dims i = o;
        for (size_t d = 0; d < i.size(); ++d) i[d] += ElementAsInt64(x[1], d);
        return At(x[0], i);
      });
    };
    cases.push_back(c);
  };
  slice("Slice_2d", {4, 6}, {1, 2}, {2, 3});
  slice("Slice_minus1", {4, 6}, {1, 0}, {-1, -1});
  slice("Slice_empty", {4, 6}, {4, 2}, {0, 2});
  slice("Slice_3d", {3, 5, 7}, {0, 1, 2}, {3, 1, 5});
  struct SS {
    std::string name;
    Dims in;
    std::vector<int64_t> b, e, s;
    int bm = 0, em = 0, ell = 0, na = 0, sh = 0;
  };
  const std::vector<SS> ss = {
      {"basic", {10}, {2}, {8}, {2}},
      {"negative_stride", {10}, {8}, {1}, {-3}},
      {"reverse_all", {4, 5}, {0, 0}, {0, 0}, {-1, -1}, 3, 3},
      {"negative_indices", {10}, {-4}, {-1}, {1}},
      {"clamped", {6}, {-100}, {100}, {1}},
      {"empty", {6}, {4}, {2}, {1}},
      {"begin_end_mask", {5, 6}, {3, 1}, {1, 5}, {1, 2}, 1, 1},
      {"shrink", {4, 5}, {1, 0}, {2, 5}, {1, 1}, 0, 0, 0, 0, 1},
      {"shrink_negative", {4, 5}, {0, -1}, {0, 0}, {1, 1}, 1, 1, 0, 0, 2},
      {"new_axis", {4, 5}, {0, 0, 1}, {0, 0, 4}, {1, 1, 1}, 1, 1, 0, 2},
      {"ellipsis", {2, 3, 4, 5}, {0, 1}, {0, 3}, {1, 1}, 0, 0, 1},
      {"ellipsis_middle", {2, 3, 4, 5}, {1, 0, 4}, {2, 0, 0}, {1, 1, -2}, 0, 0, 2, 0, 1},
      {"ellipsis_new_axis", {2, 3, 4}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 4, 4, 1, 2},
      {"implicit_tail", {3, 4, 5}, {1}, {3}, {1}},
      {"stride_past_end", {7, 3}, {1}, {100}, {3}},
      {"neg_stride_masked_begin", {7}, {0}, {2}, {-2}, 1},
  };
  for (const SS& s : ss) {
    for (DType t : {DType::kFloat32, DType::kInt64}) {
      OpCase c{absl::StrCat("StridedSlice_", s.name, "_", DTypeName(t)), "StridedSlice", t,
               {s.in}, {Ints64(s.b), Ints64(s.e), Ints64(s.s)}};
      c.attrs["Index"] = TypeAttr(DType::kInt64);
      c.attrs["begin_mask"] = IntAttr(s.bm);
      c.attrs["end_mask"] = IntAttr(s.em);
      c.attrs["ellipsis_mask"] = IntAttr(s.ell);
      c.attrs["new_axis_mask"] = IntAttr(s.na);
      c.attrs["shrink_axis_mask"] = IntAttr(s.sh);
      c.reference = StridedSliceRef(s.b, s.e, s.s, s.bm, s.em, s.ell, s.na, s.sh);
      cases.push_back(c);
    }
  }
  return cases;
}

// Reference of ops whose output element is an input element (or a fill value): `src` maps
// an output index to an input index of in[0], or returns false for `fill`.
RefFn IndexRef(std::function<Dims(const std::vector<Tensor>&)> out_dims,
               std::function<bool(const std::vector<Tensor>&, const Dims&, Dims*)> src,
               double fill = 0) {
  return [=](const std::vector<Tensor>& in) {
    return Build(in[0].dtype(), out_dims(in), [&](const Dims& o) {
      Dims i;
      return src(in, o, &i) ? At(in[0], i) : fill;
    });
  };
}

std::vector<OpCase> ShapeOpCases() {
  std::vector<OpCase> cases;
  // Split (split_dim first), SplitV, Unpack: every output checked.
  for (auto [dims, axis, n] : std::vector<std::tuple<Dims, int32_t, int>>{
           {{6, 4}, 0, 3}, {{6, 4}, -1, 2}, {{2, 0, 3}, 2, 3}, {{5}, 0, 1}}) {
    for (int k = 0; k < n; ++k) {
      OpCase c{absl::StrCat("Split_", DimsName(dims), "_axis", axis < 0 ? "_neg" : "",
                            std::abs(axis), "_n", n, "_out", k),
               "Split", DType::kFloat32, {dims}, {Ints({axis}, true)}};
      c.consts_first = true;
      c.attrs["num_split"] = IntAttr(n);
      c.output = k;
      c.reference = IndexRef(
          [=](const std::vector<Tensor>& in) {
            Dims d = in[0].dims();
            const size_t a = static_cast<size_t>(axis < 0 ? axis + d.size() : axis);
            d[a] /= n;
            return d;
          },
          [=](const std::vector<Tensor>& in, const Dims& o, Dims* i) {
            *i = o;
            const size_t a = static_cast<size_t>(axis < 0 ? axis + o.size() : axis);
            (*i)[a] += k * (in[0].dim(static_cast<int>(a)) / n);
            return true;
          });
      cases.push_back(c);
    }
  }
  for (auto [sizes, axis] : std::vector<std::pair<std::vector<int64_t>, int32_t>>{
           {{1, 2, 3}, 1}, {{4, -1}, 1}, {{0, 6}, -1}}) {
    for (size_t k = 0; k < sizes.size(); ++k) {
      OpCase c{absl::StrCat("SplitV_", absl::StrJoin(sizes, "_"), "_out", k), "SplitV",
               DType::kInt32, {{2, 6}}, {Ints64(sizes), Ints({axis}, true)}};
      c.attrs["num_split"] = IntAttr(static_cast<int64_t>(sizes.size()));
      c.attrs["Tlen"] = TypeAttr(DType::kInt64);
      c.output = static_cast<int>(k);
      std::vector<int64_t> full = sizes;
      int64_t known = 0;
      for (int64_t v : full) known += v == -1 ? 0 : v;
      for (int64_t& v : full) v = v == -1 ? 6 - known : v;
      int64_t start = 0;
      for (size_t j = 0; j < k; ++j) start += full[j];
      const int64_t len = full[k];
      c.reference = IndexRef([=](const std::vector<Tensor>&) { return Dims{2, len}; },
                             [=](const std::vector<Tensor>&, const Dims& o, Dims* i) {
                               *i = {o[0], o[1] + start};
                               return true;
                             });
      cases.push_back(c);
    }
  }
  for (auto [dims, axis] : std::vector<std::pair<Dims, int>>{{{3, 4}, 0}, {{3, 4}, 1},
                                                             {{2, 3, 2}, -1}}) {
    const int n = static_cast<int>(dims[static_cast<size_t>(axis < 0 ? axis + 3 : axis)]);
    for (int k = 0; k < n; ++k) {
      OpCase c{absl::StrCat("Unpack_", DimsName(dims), "_axis", axis < 0 ? "_neg" : "",
                            std::abs(axis), "_out", k),
               "Unpack", DType::kFloat32, {dims}};
      c.attrs["num"] = IntAttr(n);
      c.attrs["axis"] = IntAttr(axis);
      c.output = k;
      const size_t a = static_cast<size_t>(axis < 0 ? axis + static_cast<int>(dims.size()) : axis);
      c.reference = IndexRef(
          [=](const std::vector<Tensor>& in) {
            Dims d = in[0].dims();
            d.erase(d.begin() + a);
            return d;
          },
          [=](const std::vector<Tensor>&, const Dims& o, Dims* i) {
            *i = o;
            i->insert(i->begin() + a, k);
            return true;
          });
      cases.push_back(c);
    }
  }
  return cases;
}

std::vector<OpCase> MoreArrayCases() {
  std::vector<OpCase> cases;
  // GatherV2 / Gather with constant indices (the compiled form; see slice_lowerings.cc).
  struct G { Dims params; Dims idx_dims; std::vector<int32_t> idx; int32_t axis; };
  for (const G& g : std::vector<G>{{{5, 3}, {4}, {4, 0, 0, 2}, 0},
                                   {{5, 3}, {2, 2}, {2, 1, 0, 2}, 1},
                                   {{2, 3, 4}, {}, {3}, -1},
                                   {{4, 2}, {0}, {}, 0},
                                   {{3, 4, 2}, {2, 3}, {1, 0, 2, 2, 1, 0}, 1}}) {
    OpCase c{absl::StrCat("GatherV2_", DimsName(g.params), "_", DimsName(g.idx_dims), "_axis",
                          g.axis < 0 ? "_neg" : "", std::abs(g.axis)),
             "GatherV2", DType::kFloat32, {g.params},
             {Tensor::FromVector<int32_t>(DType::kInt32, g.idx_dims, g.idx),
              Ints({g.axis}, true)}};
    c.has_t = false;
    c.attrs["Tparams"] = TypeAttr(DType::kFloat32);
    c.attrs["Tindices"] = TypeAttr(DType::kInt32);
    c.attrs["Taxis"] = TypeAttr(DType::kInt32);
    const size_t q = g.idx_dims.size();
    auto axis_of = [](const std::vector<Tensor>& in) {
      int64_t a = ElementAsInt64(in[2], 0);
      return static_cast<size_t>(a < 0 ? a + in[0].rank() : a);
    };
    c.reference = IndexRef(
        [=](const std::vector<Tensor>& in) {
          const size_t a = axis_of(in);
          Dims d(in[0].dims().begin(), in[0].dims().begin() + a);
          d.insert(d.end(), in[1].dims().begin(), in[1].dims().end());
          d.insert(d.end(), in[0].dims().begin() + a + 1, in[0].dims().end());
          return d;
        },
        [=](const std::vector<Tensor>& in, const Dims& o, Dims* i) {
          const size_t a = axis_of(in);
          Dims ii(o.begin() + a, o.begin() + a + q);
          *i = Dims(o.begin(), o.begin() + a);
          i->push_back(static_cast<int64_t>(At(in[1], ii)));
          i->insert(i->end(), o.begin() + a + q, o.end());
          return true;
        });
    cases.push_back(c);
  }
  // OneHot: out-of-range and negative indices give a row of off_value.
  for (int axis : {-1, 0, 1}) {
    OpCase c{absl::StrCat("OneHot_axis", axis < 0 ? "_neg1" : std::to_string(axis)), "OneHot",
             DType::kFloat32, {{2, 3}}, {Ints({4}, true), Floats(DType::kFloat32, {}, {5.0}),
                                         Floats(DType::kFloat32, {}, {-1.0})}};
    c.input_dtypes = {DType::kInt32};
    c.feed_values = {Tensor::FromVector<int32_t>(DType::kInt32, {2, 3}, {0, 3, -1, 4, 2, 1})};
    c.attrs["TI"] = TypeAttr(DType::kInt32);
    c.attrs["axis"] = IntAttr(axis);
    c.reference = [axis](const std::vector<Tensor>& in) {
      const size_t a = static_cast<size_t>(axis < 0 ? 2 : axis);
      Dims d = in[0].dims();
      d.insert(d.begin() + a, 4);
      return Build(DType::kFloat32, d, [&](const Dims& o) {
        Dims i = o;
        const int64_t j = o[a];
        i.erase(i.begin() + a);
        return At(in[0], i) == static_cast<double>(j) ? 5.0 : -1.0;
      });
    };
    cases.push_back(c);
  }
  for (auto [dims, mult] : std::vector<std::pair<Dims, std::vector<int32_t>>>{
           {{2, 3}, {2, 1}}, {{2, 3}, {1, 3}}, {{3}, {0}}, {{2, 1, 2}, {2, 3, 1}}}) {
    OpCase c{absl::StrCat("Tile_", DimsName(dims), "_", absl::StrJoin(mult, "_")), "Tile",
             DType::kInt32, {dims}, {Ints(mult)}};
    c.attrs["Tmultiples"] = TypeAttr(DType::kInt32);
    c.reference = IndexRef(
        [](const std::vector<Tensor>& in) {
          Dims d = in[0].dims();
          for (size_t k = 0; k < d.size(); ++k) d[k] *= ElementAsInt64(in[1], k);
          return d;
        },
        [](const std::vector<Tensor>& in, const Dims& o, Dims* i) {
          *i = o;
          for (size_t k = 0; k < o.size(); ++k) (*i)[k] %= in[0].dim(static_cast<int>(k));
          return true;
        });
    cases.push_back(c);
  }
  // Pad / PadV2 / MirrorPad (REFLECT, SYMMETRIC).
  const Tensor pads = Tensor::FromVector<int32_t>(DType::kInt32, {2, 2}, {1, 2, 0, 3});
  const Tensor mpads = Tensor::FromVector<int32_t>(DType::kInt32, {2, 2}, {2, 1, 0, 3});
  auto pad_dims = [](const std::vector<Tensor>& in) {
    Dims d = in[0].dims();
    for (size_t k = 0; k < d.size(); ++k) {
      d[k] += ElementAsInt64(in[1], 2 * k) + ElementAsInt64(in[1], 2 * k + 1);
    }
    return d;
  };
  auto pad_src = [](const std::vector<Tensor>& in, const Dims& o, Dims* i) {
    *i = o;
    for (size_t k = 0; k < o.size(); ++k) {
      (*i)[k] -= ElementAsInt64(in[1], 2 * k);
      if ((*i)[k] < 0 || (*i)[k] >= in[0].dim(static_cast<int>(k))) return false;
    }
    return true;
  };
  for (DType t : {DType::kFloat32, DType::kInt32}) {
    OpCase c{absl::StrCat("Pad_", DTypeName(t)), "Pad", t, {{3, 4}}, {pads}};
    c.attrs["Tpaddings"] = TypeAttr(DType::kInt32);
    c.reference = IndexRef(pad_dims, pad_src);
    cases.push_back(c);
    Tensor value(t, {});
    SetFromDouble(value, 0, 7);
    OpCase v2{absl::StrCat("PadV2_", DTypeName(t)), "PadV2", t, {{3, 4}}, {pads, value}};
    v2.attrs["Tpaddings"] = TypeAttr(DType::kInt32);
    v2.reference = IndexRef(pad_dims, pad_src, 7);
    cases.push_back(v2);
  }
  OpCase pad_empty{"Pad_empty_input", "Pad", DType::kFloat32, {{0, 4}}, {pads}};
  pad_empty.attrs["Tpaddings"] = TypeAttr(DType::kInt32);
  pad_empty.reference = IndexRef(pad_dims, pad_src);
  cases.push_back(pad_empty);
  for (const char* mode : {"REFLECT", "SYMMETRIC"}) {
    const bool reflect = std::string(mode) == "REFLECT";
    OpCase c{absl::StrCat("MirrorPad_", mode), "MirrorPad", DType::kFloat32, {{3, 4}}, {mpads}};
    c.attrs["Tpaddings"] = TypeAttr(DType::kInt32);
    c.attrs["mode"] = StringAttr(mode);
    c.reference = IndexRef(pad_dims, [reflect](const std::vector<Tensor>& in, const Dims& o,
                                               Dims* i) {
      *i = o;
      for (size_t k = 0; k < o.size(); ++k) {
        const int64_t n = in[0].dim(static_cast<int>(k));
        int64_t p = o[k] - ElementAsInt64(in[1], 2 * k);
        if (p < 0) p = reflect ? -p : -p - 1;
        if (p >= n) p = reflect ? 2 * n - 2 - p : 2 * n - 1 - p;
        (*i)[k] = p;
      }
      return true;
    });
    cases.push_back(c);
  }
  for (auto axes : std::vector<std::vector<int32_t>>{{0}, {1}, {-1, 0}, {}}) {
    OpCase c{absl::StrCat("ReverseV2_", axes.empty() ? "none" : absl::StrJoin(axes, "_")),
             "ReverseV2", DType::kFloat32, {{3, 5}}, {Ints(axes)}};
    c.attrs["Tidx"] = TypeAttr(DType::kInt32);
    c.reference = IndexRef([](const std::vector<Tensor>& in) { return in[0].dims(); },
                           [](const std::vector<Tensor>& in, const Dims& o, Dims* i) {
                             *i = o;
                             for (int64_t k = 0; k < in[1].num_elements(); ++k) {
                               int64_t a = ElementAsInt64(in[1], k);
                               if (a < 0) a += in[0].rank();
                               (*i)[a] = in[0].dim(static_cast<int>(a)) - 1 - o[a];
                             }
                             return true;
                           });
    cases.push_back(c);
  }
  for (auto [from, to] : std::vector<std::pair<Dims, std::vector<int32_t>>>{
           {{3}, {2, 3}}, {{2, 1}, {2, 4}}, {{}, {3, 2}}, {{1, 3}, {0, 3}}}) {
    OpCase c{absl::StrCat("BroadcastTo_", DimsName(from), "_", absl::StrJoin(to, "x")),
             "BroadcastTo", DType::kFloat32, {from}, {Ints(to)}};
    c.attrs["Tidx"] = TypeAttr(DType::kInt32);
    c.reference = IndexRef(
        [](const std::vector<Tensor>& in) {
          Dims d;
          for (int64_t k = 0; k < in[1].num_elements(); ++k) d.push_back(ElementAsInt64(in[1], k));
          return d;
        },
        [](const std::vector<Tensor>& in, const Dims& o, Dims* i) {
          const Dims& d = in[0].dims();
          i->assign(d.size(), 0);
          for (size_t k = 0; k < d.size(); ++k) {
            (*i)[k] = d[k] == 1 ? 0 : o[k + o.size() - d.size()];
          }
          return true;
        });
    cases.push_back(c);
  }
  return cases;
}

std::vector<OpCase> MiscCases() {
  std::vector<OpCase> cases;
  for (DType out : {DType::kInt32, DType::kInt64}) {
    OpCase size{absl::StrCat("Size_", DTypeName(out)), "Size", DType::kFloat32, {{2, 0, 3}}};
    size.attrs["out_type"] = TypeAttr(out);
    size.reference = [out](const std::vector<Tensor>&) {
      return Build(out, {}, [](const Dims&) { return 0.0; });
    };
    cases.push_back(size);
    OpCase size2{absl::StrCat("Size_3x4_", DTypeName(out)), "Size", DType::kFloat32, {{3, 4}}};
    size2.attrs["out_type"] = TypeAttr(out);
    size2.reference = [out](const std::vector<Tensor>&) {
      return Build(out, {}, [](const Dims&) { return 12.0; });
    };
    cases.push_back(size2);
    for (int k = 0; k < 2; ++k) {
      OpCase c{absl::StrCat("ShapeN_", DTypeName(out), "_out", k), "ShapeN", DType::kFloat32,
               {{2, 5}, {3, 0, 1}}};
      c.attrs["N"] = IntAttr(2);
      c.attrs["out_type"] = TypeAttr(out);
      c.output = k;
      c.reference = [out, k](const std::vector<Tensor>& in) {
        const Dims& d = in[static_cast<size_t>(k)].dims();
        return Build(out, {static_cast<int64_t>(d.size())},
                     [&](const Dims& i) { return static_cast<double>(d[i[0]]); });
      };
      cases.push_back(c);
    }
  }
  OpCase rank{"Rank_3d", "Rank", DType::kFloat32, {{2, 0, 3}}};
  rank.reference = [](const std::vector<Tensor>&) {
    return Build(DType::kInt32, {}, [](const Dims&) { return 3.0; });
  };
  cases.push_back(rank);
  for (auto [sq, in] : std::vector<std::pair<std::vector<int64_t>, Dims>>{
           {{}, {1, 3, 1, 2}}, {{0}, {1, 3, 1}}, {{-1, 0}, {1, 3, 1}}, {{}, {1, 1}}}) {
    OpCase c{absl::StrCat("Squeeze_", DimsName(in), "_", sq.empty() ? "all" : absl::StrJoin(sq, "_")),
             "Squeeze", DType::kFloat32, {in}};
    tensorflow::AttrValue dims;
    dims.mutable_list();
    for (int64_t d : sq) dims.mutable_list()->add_i(d);
    c.attrs["squeeze_dims"] = dims;
    cases.push_back(c);
  }
  for (const char* op : {"Snapshot", "PreventGradient"}) {
    OpCase c{absl::StrCat(op, "_3x4"), op, DType::kFloat32, {{3, 4}}};
    c.reference = UnaryRef([](double x) { return x; });
    cases.push_back(c);
  }
  for (int32_t axis : {0, 1, -1}) {
    OpCase c{absl::StrCat("Concat_axis", axis < 0 ? "_neg1" : std::to_string(axis)), "Concat",
             DType::kFloat32, {{2, 3}, {2, 3}}, {Ints({axis}, true)}};
    c.consts_first = true;
    c.attrs["N"] = IntAttr(2);
    c.reference = [axis](const std::vector<Tensor>& in) {
      const size_t a = static_cast<size_t>(axis < 0 ? axis + 2 : axis);
      Dims d = in[0].dims();
      d[a] *= 2;
      return Build(DType::kFloat32, d, [&](const Dims& o) {
        Dims i = o;
        const int second = o[a] >= in[0].dims()[a];
        if (second) i[a] -= in[0].dims()[a];
        return At(in[second], i);
      });
    };
    cases.push_back(c);
  }
  struct Rg { DType t; double start, limit, delta; };
  for (const Rg& r : std::vector<Rg>{{DType::kInt32, 0, 10, 3}, {DType::kInt32, 5, -4, -2},
                                     {DType::kInt64, 3, 3, 1}, {DType::kFloat32, 0, 1, 0.1},
                                     {DType::kFloat64, -1, 2, 0.3}}) {
    OpCase c{absl::StrCat("Range_", DTypeName(r.t), "_", r.start, "_", r.limit, "_",
                          r.delta),
             "Range", r.t, {},
             {Floats(r.t, {}, {r.start}), Floats(r.t, {}, {r.limit}),
              Floats(r.t, {}, {r.delta})}};
    c.has_t = false;
    c.attrs["Tidx"] = TypeAttr(r.t);
    c.reference = [r](const std::vector<Tensor>& in) {
      // TF's kernel accumulates value += delta in the output type.
      std::vector<double> values;
      Tensor acc = in[0];
      const double d = ElementAsDouble(in[2], 0), lim = ElementAsDouble(in[1], 0);
      const int64_t n = IsIntegerDType(r.t)
                            ? (std::abs(static_cast<int64_t>(lim - r.start)) +
                               std::abs(static_cast<int64_t>(d)) - 1) /
                                  std::abs(static_cast<int64_t>(d))
                            : static_cast<int64_t>(std::ceil(std::abs((lim - r.start) / d)));
      Tensor out(r.t, {n});
      for (int64_t k = 0; k < n; ++k) {
        SetFromDouble(out, k, ElementAsDouble(acc, 0));
        SetFromDouble(acc, 0, ElementAsDouble(acc, 0) + d);  // rounds to the type each step
      }
      return out;
    };
    cases.push_back(c);
  }
  return cases;
}

std::vector<OpCase> NnCases() {
  std::vector<OpCase> cases;
  for (Dims d : std::vector<Dims>{{3, 7}, {1, 1}, {2, 3, 17}, {0, 4}}) {
    for (DType t : {DType::kFloat32, DType::kFloat64}) {
      cases.push_back({absl::StrCat("LogSoftmax_", DTypeName(t), "_", DimsName(d)),
                       "LogSoftmax", t, {d}});
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
  // BatchMatMulV2 (broadcast batch dims, adjoints) and Einsum: reference by explicit sums.
  struct BM { Dims x, y; bool ax, ay; };
  for (const BM& m : std::vector<BM>{{{2, 3, 4}, {2, 4, 5}, false, false},
                                     {{2, 4, 3}, {4, 5}, true, false},
                                     {{1, 3, 4}, {3, 5, 4}, false, true},
                                     {{2, 1, 2, 3}, {3, 3, 2}, false, false},
                                     {{0, 2, 3}, {3, 4}, false, false}}) {
    for (const char* op : {"BatchMatMulV2", "BatchMatMulV3"}) {
      OpCase c{absl::StrCat(op, "_", DimsName(m.x), "_", DimsName(m.y), m.ax ? "_ax" : "",
                            m.ay ? "_ay" : ""),
               op, DType::kFloat32, {m.x, m.y}};
      c.attrs["adj_x"] = BoolAttr(m.ax);
      c.attrs["adj_y"] = BoolAttr(m.ay);
      if (std::string(op) == "BatchMatMulV3") {
        c.has_t = false;
        c.attrs["Ta"] = TypeAttr(DType::kFloat32);
        c.attrs["Tb"] = TypeAttr(DType::kFloat32);
        c.attrs["Tout"] = TypeAttr(DType::kFloat32);
      }
      const bool ax = m.ax, ay = m.ay;
      c.reference = [ax, ay](const std::vector<Tensor>& in) {
        Dims x = in[0].dims(), y = in[1].dims();
        const size_t rank = std::max(x.size(), y.size());
        x.insert(x.begin(), rank - x.size(), 1);
        y.insert(y.begin(), rank - y.size(), 1);
        Dims out(rank);
        for (size_t k = 0; k + 2 < rank; ++k) out[k] = std::max(x[k], y[k]);
        const int64_t rows = ax ? x[rank - 1] : x[rank - 2];
        const int64_t inner = ax ? x[rank - 2] : x[rank - 1];
        out[rank - 2] = rows;
        out[rank - 1] = ay ? y[rank - 2] : y[rank - 1];
        if (std::find(x.begin(), x.end() - 2, 0) != x.end() - 2) out[0] = 0;
        return Build(DType::kFloat32, out, [&](const Dims& o) {
          double sum = 0;
          for (int64_t k = 0; k < inner; ++k) {
            Dims xi(rank), yi(rank);
            for (size_t b = 0; b + 2 < rank; ++b) {
              xi[b] = x[b] == 1 ? 0 : o[b];
              yi[b] = y[b] == 1 ? 0 : o[b];
            }
            xi[rank - 2] = ax ? k : o[rank - 2];
            xi[rank - 1] = ax ? o[rank - 2] : k;
            yi[rank - 2] = ay ? o[rank - 1] : k;
            yi[rank - 1] = ay ? k : o[rank - 1];
            Dims xs(xi.end() - static_cast<int64_t>(in[0].rank()), xi.end());
            Dims ys(yi.end() - static_cast<int64_t>(in[1].rank()), yi.end());
            sum += At(in[0], xs) * At(in[1], ys);
          }
          return sum;
        });
      };
      cases.push_back(c);
    }
  }
  struct E { std::string eq; std::vector<Dims> in; };
  for (const E& e : std::vector<E>{{"ij,jk->ik", {{3, 4}, {4, 5}}},
                                   {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},
                                   {"ij,kj->ik", {{3, 4}, {5, 4}}},
                                   {"i,i->", {{7}, {7}}},
                                   {"i,j->ij", {{3}, {4}}},
                                   {"bij,jk->kbi", {{2, 3, 4}, {4, 5}}},
                                   {"abc,cd->abd", {{2, 3, 4}, {4, 2}}},
                                   {"ij->ji", {{3, 4}}},
                                   {"ij->i", {{3, 4}}},
                                   {"ijk,k->ij", {{2, 3, 4}, {4}}},
                                   {"ik,jkl->ijl", {{2, 3}, {4, 3, 5}}},
                                   {"...ij,...jk->...ik", {{2, 3, 4}, {2, 4, 5}}}}) {
    std::string name = e.eq;
    for (char& ch : name) {
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    }
    OpCase c{absl::StrCat("Einsum_", name), "Einsum", DType::kFloat32, e.in};
    c.attrs["N"] = IntAttr(static_cast<int64_t>(e.in.size()));
    c.attrs["equation"] = StringAttr(e.eq);
    const std::string eq = e.eq;
    c.reference = [eq](const std::vector<Tensor>& in) {
      // Brute force over all label values (no ellipsis after this rewrite: '...' -> 'Z').
      std::string q = eq;
      for (size_t p; (p = q.find("...")) != std::string::npos;) q.replace(p, 3, "Z");
      const size_t arrow = q.find("->");
      const std::string out = q.substr(arrow + 2);
      std::vector<std::string> terms = absl::StrSplit(q.substr(0, arrow), ',');
      std::map<char, int64_t> size;
      for (size_t t = 0; t < terms.size(); ++t) {
        for (size_t k = 0; k < terms[t].size(); ++k) size[terms[t][k]] = in[t].dims()[k];
      }
      Dims od;
      for (char l : out) od.push_back(size[l]);
      std::string sum_labels;
      for (auto [l, n] : size) {
        if (out.find(l) == std::string::npos) sum_labels.push_back(l);
      }
      Dims sd;
      for (char l : sum_labels) sd.push_back(size[l]);
      int64_t sn = 1;
      for (int64_t d : sd) sn *= d;
      return Build(DType::kFloat32, od, [&](const Dims& o) {
        double total = 0;
        for (int64_t s = 0; s < sn; ++s) {
          Dims si = Unravel(s, sd);
          std::map<char, int64_t> v;
          for (size_t k = 0; k < out.size(); ++k) v[out[k]] = o[k];
          for (size_t k = 0; k < sum_labels.size(); ++k) v[sum_labels[k]] = si[k];
          double prod = 1;
          for (size_t t = 0; t < terms.size(); ++t) {
            Dims ti;
            for (char l : terms[t]) ti.push_back(v[l]);
            prod *= At(in[t], ti);
          }
          total += prod;
        }
        return total;
      });
    };
    cases.push_back(c);
  }
  return cases;
}

std::vector<OpCase> AllCases() {
  std::vector<OpCase> all;
  for (auto cases : {BinaryCases(), UnaryCases(), MatMulCases(), ReductionCases(), ArrayCases(),
                     ElementwiseCases(), MathCases(), SliceCases(), ShapeOpCases(),
                     MoreArrayCases(), MiscCases(), NnCases()}) {
    all.insert(all.end(), cases.begin(), cases.end());
  }
  return all;
}

struct PathResult {
  absl::Status status;
  Tensor output;
};

// The placeholders' feeds: the case's fixed values, or seeded random tensors.
std::vector<Tensor> Feeds(const OpCase& c) {
  if (!c.feed_values.empty()) return c.feed_values;
  const DType in_type = c.input_dtype == DType::kInvalid ? c.dtype : c.input_dtype;
  std::vector<Tensor> feeds;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const DType t = i < c.input_dtypes.size() ? c.input_dtypes[i] : in_type;
    feeds.push_back(cli::RandomTensor(t, c.inputs[i], 17 + i * 101));
  }
  return feeds;
}

PathResult RunPath(const std::string& path, const OpCase& c, JitMode jit,
                   const std::string& backend) {
  SessionOptions options;
  options.jit = jit;
  options.backend = backend;
  auto session = Session::Load(path, options);
  if (!session.ok()) return {session.status(), {}};
  std::vector<Tensor> values = Feeds(c);
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < values.size(); ++i) feeds.push_back({absl::StrCat("p", i), values[i]});
  auto out = (*session)->Run(feeds, {c.output == 0 ? "op" : absl::StrCat("op:", c.output)});
  if (!out.ok()) return {out.status(), {}};
  return {absl::OkStatus(), (*out)[0]};
}

double Tolerance(DType t) {
  switch (t) {
    case DType::kFloat16: return 4e-3;
    case DType::kBFloat16: return 2e-2;
    case DType::kFloat64: return 1e-12;
    default: return 2e-6;
  }
}

::testing::AssertionResult SameTensor(const Tensor& e, const Tensor& a) {
  if (e.ShapeString() != a.ShapeString()) {
    return ::testing::AssertionFailure() << e.ShapeString() << " vs " << a.ShapeString();
  }
  const double tol = Tolerance(e.dtype());
  for (int64_t k = 0; k < e.num_elements(); ++k) {
    const double ev = ElementAsDouble(e, k), av = ElementAsDouble(a, k);
    if (std::isnan(ev) && std::isnan(av)) continue;
    if (ev == av) continue;
    const bool close = IsFloatingDType(e.dtype()) &&
                       std::abs(ev - av) <= tol * std::max(1.0, std::abs(ev));
    if (!close) {
      return ::testing::AssertionFailure() << "element " << k << ": " << ev << " vs " << av;
    }
  }
  return ::testing::AssertionSuccess();
}

class OpDifferentialTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpDifferentialTest, KernelEvaluatorAndCpuAgree) {
  const OpCase& c = GetParam();
  const std::string path =
      (std::filesystem::temp_directory_path() / absl::StrCat("tfjit_op_", c.name, ".pbtxt"))
          .string();
  std::ofstream(path) << GraphText(c);
  PathResult kernel = RunPath(path, c, JitMode::kNone, "cpu");
  // Ops without a fallback kernel are checked against the case's reference instead.
  const bool no_kernel = !kernel.status.ok() && kernel.status.code() ==
                             absl::StatusCode::kUnimplemented &&
                         absl::StrContains(kernel.status.message(), "no CPU kernel");
  if (!(no_kernel && c.reference)) {
    ASSERT_TRUE(kernel.status.ok()) << "fallback kernel: " << StatusToString(kernel.status);
  }
  PathResult evaluator = RunPath(path, c, JitMode::kAll, "interpreter");
  ASSERT_TRUE(evaluator.status.ok()) << "evaluator: " << StatusToString(evaluator.status);
  PathResult jit = RunPath(path, c, JitMode::kAll, "cpu");
  ASSERT_TRUE(jit.status.ok()) << "cpu jit: " << StatusToString(jit.status);
  if (c.reference) {
    std::vector<Tensor> inputs = Feeds(c);
    inputs.insert(inputs.end(), c.consts.begin(), c.consts.end());
    EXPECT_TRUE(SameTensor(c.reference(inputs), evaluator.output)) << "reference vs evaluator\n"
                                                                   << GraphText(c);
  }
  if (no_kernel) kernel.output = evaluator.output;
  EXPECT_TRUE(SameTensor(kernel.output, evaluator.output)) << "kernel vs evaluator\n"
                                                           << GraphText(c);
  EXPECT_TRUE(SameTensor(evaluator.output, jit.output)) << "evaluator vs cpu jit\n"
                                                        << GraphText(c);
  std::filesystem::remove(path);
}

// Runs a graph in must-compile mode on the interpreter; returns the status of the run.
absl::Status RunAll(const OpCase& c) {
  const std::string path =
      (std::filesystem::temp_directory_path() / absl::StrCat("tfjit_op_err_", c.name, ".pbtxt"))
          .string();
  std::ofstream(path) << GraphText(c);
  PathResult r = RunPath(path, c, JitMode::kAll, "interpreter");
  std::filesystem::remove(path);
  return r.status;
}

TEST(OpLoweringErrors, ConstantZeroDivisorFailsAsTheKernelDoes) {
  for (const char* op : {"FloorDiv", "FloorMod", "Div", "TruncateMod"}) {
    OpCase c{absl::StrCat(op, "_zero"), op, DType::kInt32, {{3}}, {Ints({1, 0, 2})}};
    absl::Status s = RunAll(c);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << op << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "Integer division by zero")) << s;
  }
  OpCase pow{"Pow_negative", "Pow", DType::kInt32, {{3}}, {Ints({1, -1, 2})}};
  EXPECT_TRUE(absl::StrContains(RunAll(pow).message(),
                                "Integers to negative integer powers are not allowed"));
}

TEST(OpLoweringErrors, GatherChecksConstantIndicesAndNeverClampsFedOnes) {
  OpCase oob{"GatherV2_oob", "GatherV2", DType::kFloat32, {{5, 3}},
             {Ints({1, 5}), Ints({0}, true)}};
  oob.has_t = false;
  oob.attrs["Tparams"] = TypeAttr(DType::kFloat32);
  oob.attrs["Tindices"] = TypeAttr(DType::kInt32);
  oob.attrs["Taxis"] = TypeAttr(DType::kInt32);
  absl::Status s = RunAll(oob);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "indices[1] = 5 is not in [0, 5)")) << s;
  // Fed indices could be out of range at run time, where HLO's gather would clamp: the
  // lowering refuses (UNIMPLEMENTED; auto-clustering runs the kernel instead).
  OpCase fed{"GatherV2_fed", "GatherV2", DType::kFloat32, {{5, 3}, {2}}, {Ints({0}, true)}};
  fed.has_t = false;
  fed.input_dtypes = {DType::kFloat32, DType::kInt32};
  fed.attrs = oob.attrs;
  s = RunAll(fed);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
}

TEST(OpLoweringErrors, StridedSliceShrinkOutOfRange) {
  OpCase c{"StridedSlice_oob", "StridedSlice", DType::kFloat32, {{4}},
           {Ints({4}), Ints({5}), Ints({1})}};
  c.attrs["Index"] = TypeAttr(DType::kInt32);
  c.attrs["shrink_axis_mask"] = IntAttr(1);
  absl::Status s = RunAll(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "out of bounds")) << s;
}

INSTANTIATE_TEST_SUITE_P(Ops, OpDifferentialTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace tfjit
