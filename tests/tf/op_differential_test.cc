// Per-op differential tests: every op of the walking skeleton, as a one-op TF graph, runs on
// three paths — the fallback kernel (--jit none), the HLO evaluator (interpreter backend) and
// the CPU JIT — over seeded random inputs including scalars, size-0 and size-1 dims,
// broadcasting and widths that are not multiples of the vector width. Integers must match
// exactly; floats within a per-dtype bound.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

struct OpCase {
  std::string name;
  std::string op;
  DType dtype = DType::kFloat32;     // attr T and the placeholders' dtype
  std::vector<Dims> inputs;          // placeholder shapes
  std::vector<Tensor> consts;        // extra inputs after the placeholders (axes, shapes, ...)
  std::map<std::string, tensorflow::AttrValue> attrs;
  bool has_t = true;                 // whether the op has a "T" attr
  DType input_dtype = DType::kInvalid;  // placeholders' dtype when it differs from T
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
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    auto* p = g.add_node();
    p->set_name(absl::StrCat("p", i));
    p->set_op("Placeholder");
    (*p->mutable_attr())["dtype"] = TypeAttr(in_type);
    auto* shape = (*p->mutable_attr())["shape"].mutable_shape();
    for (int64_t d : c.inputs[i]) shape->add_dim()->set_size(d);
    op->add_input(p->name());
  }
  for (size_t i = 0; i < c.consts.size(); ++i) {
    auto* k = g.add_node();
    k->set_name(absl::StrCat("k", i));
    k->set_op("Const");
    (*k->mutable_attr())["dtype"] = TypeAttr(c.consts[i].dtype());
    *(*k->mutable_attr())["value"].mutable_tensor() = tf::TensorToProto(c.consts[i]);
    op->add_input(k->name());
  }
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

std::vector<OpCase> AllCases() {
  std::vector<OpCase> all;
  for (auto cases : {BinaryCases(), UnaryCases(), MatMulCases(), ReductionCases(), ArrayCases()}) {
    all.insert(all.end(), cases.begin(), cases.end());
  }
  return all;
}

struct PathResult {
  absl::Status status;
  Tensor output;
};

PathResult RunPath(const std::string& path, const OpCase& c, JitMode jit,
                   const std::string& backend) {
  SessionOptions options;
  options.jit = jit;
  options.backend = backend;
  auto session = Session::Load(path, options);
  if (!session.ok()) return {session.status(), {}};
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const InputInfo& in : (*session)->Inputs()) {
    feeds.push_back({in.name, cli::RandomTensor(in.dtype, in.dims, 17 + feeds.size() * 101)});
  }
  auto out = (*session)->Run(feeds, {"op"});
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
  ASSERT_TRUE(kernel.status.ok()) << "fallback kernel: " << StatusToString(kernel.status);
  PathResult evaluator = RunPath(path, c, JitMode::kAll, "interpreter");
  ASSERT_TRUE(evaluator.status.ok()) << "evaluator: " << StatusToString(evaluator.status);
  PathResult jit = RunPath(path, c, JitMode::kAll, "cpu");
  ASSERT_TRUE(jit.status.ok()) << "cpu jit: " << StatusToString(jit.status);
  EXPECT_TRUE(SameTensor(kernel.output, evaluator.output)) << "kernel vs evaluator\n"
                                                           << GraphText(c);
  EXPECT_TRUE(SameTensor(evaluator.output, jit.output)) << "evaluator vs cpu jit\n"
                                                        << GraphText(c);
  std::filesystem::remove(path);
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
