// Functional control flow through the Session: TF 2.x While/StatelessWhile and If/StatelessIf
// graphs (tests/tf/control_flow/*.pbtxt) in every jit mode, on the interpreter and cpu
// backends, against hand-computed values; TF's truthiness rule; the compiled-loop errors.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/dtype.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "runtime/control_flow.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

using ::tfjit::testing::WriteTempFile;

std::string GraphPath(const std::string& name) {
  return (std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "tf" / "control_flow" / name)
      .string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Tensor Scalar(DType dtype, double v) {
  Tensor t(dtype, {});
  DispatchNumeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    *t.data<T>() = static_cast<T>(v);
  });
  return t;
}

// (backend, jit mode).
class ControlFlowTest : public ::testing::TestWithParam<std::tuple<std::string, JitMode>> {
 protected:
  const std::string& backend() const { return std::get<0>(GetParam()); }
  JitMode mode() const { return std::get<1>(GetParam()); }

  std::unique_ptr<Session> Load(const std::string& path) {
    SessionOptions options;
    options.jit = mode();
    options.backend = backend();
    auto session = Session::Load(path, options);
    EXPECT_TRUE(session.ok()) << StatusToString(session.status());
    return session.ok() ? std::move(*session) : nullptr;
  }

  // The CPU backend does not compile while/conditional/tuples yet: it says UNIMPLEMENTED
  // ("cpu backend: ..."). Only that case may skip.
  bool CpuCannotCompileYet(const absl::Status& s) const {
    return backend() == "cpu" && s.code() == absl::StatusCode::kUnimplemented &&
           absl::StrContains(s.message(), "cpu backend");
  }
};

#define TFJIT_SKIP_IF_CPU_CANNOT_COMPILE_YET(status)                                            \
  if (CpuCannotCompileYet(status)) {                                                            \
    GTEST_SKIP() << "cpu backend cannot compile while/conditional yet: " << (status).message(); \
  }

TEST_P(ControlFlowTest, WhileSumsARangeLikeTf) {
  auto session = Load(GraphPath("while_sum.pbtxt"));
  ASSERT_NE(session, nullptr);
  for (int n : {10, 0, 1, 7}) {
    SCOPED_TRACE(n);
    RunStats stats;
    auto out = session->Run({{"n", Scalar(DType::kInt32, n)}},
                            {"Identity", "Identity_1", "Identity_2"}, &stats);
    TFJIT_SKIP_IF_CPU_CANNOT_COMPILE_YET(out.status());
    ASSERT_TRUE(out.ok()) << StatusToString(out.status());
    EXPECT_EQ(*(*out)[0].data<int32_t>(), n * (n - 1) / 2) << "sum";
    EXPECT_EQ(*(*out)[1].data<int32_t>(), n) << "i";
    EXPECT_EQ(*(*out)[2].data<int32_t>(), n) << "loop_counter";
    if (mode() == JitMode::kNone || mode() == JitMode::kOff) {
      EXPECT_EQ(stats.clusters, 0);
    } else if (backend() == "interpreter") {
      EXPECT_GE(stats.clusters, 1);  // the StatelessWhile compiles with its cluster
      EXPECT_EQ(stats.fallbacks, 0);
    }
  }
}

TEST_P(ControlFlowTest, JitFunctionWithBoundedLoopAndCondIsTfsTestControlFlow) {
  auto session = Load(GraphPath("jit_loop.pbtxt"));
  ASSERT_NE(session, nullptr);
  // f(x) = 3 + 3 * 3 + 7 * x^2: i = 0, 1, 2 add 3; i = 3..9 add x^2.
  for (float x : {2.0f, 1.0f, -0.5f}) {
    SCOPED_TRACE(x);
    RunStats stats;
    auto out = session->Run({{"x", Scalar(DType::kFloat32, x)}}, {"Identity"}, &stats);
    TFJIT_SKIP_IF_CPU_CANNOT_COMPILE_YET(out.status());
    ASSERT_TRUE(out.ok()) << StatusToString(out.status());
    EXPECT_FLOAT_EQ(*(*out)[0].data<float>(), 12.0f + 7.0f * x * x);
    if (mode() == JitMode::kNone) {
      EXPECT_EQ(stats.clusters, 0);
    } else if (backend() == "interpreter") {
      EXPECT_GE(stats.clusters, 1);  // the must-compile body, loop and If included
    }
  }
}

TEST_P(ControlFlowTest, IfChoosesTheBranchByTfTruthiness) {
  auto session = Load(GraphPath("if.pbtxt"));
  ASSERT_NE(session, nullptr);
  const std::vector<float> x = {1.5f, -2.0f, 3.0f};
  for (bool p : {true, false}) {
    for (int k : {0, 5, -1}) {
      SCOPED_TRACE(::testing::Message() << "p=" << p << " k=" << k);
      auto out = session->Run({{"p", Scalar(DType::kBool, p)},
                               {"k", Scalar(DType::kInt32, k)},
                               {"x", Tensor::FromVector(DType::kFloat32, {3}, x)}},
                              {"Identity", "Identity_1"});
      TFJIT_SKIP_IF_CPU_CANNOT_COMPILE_YET(out.status());
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_FLOAT_EQ((*out)[0].data<float>()[i], p ? x[i] * 2 : x[i] - 1);
        EXPECT_FLOAT_EQ((*out)[1].data<float>()[i], k != 0 ? x[i] + 10 : x[i] * x[i]);
      }
    }
  }
}

// Branches of different shapes whose predicate's value is part of the compile (k also tiles):
// the If compiles as its taken branch, once per k, in every mode; hand-computed answers.
TEST_P(ControlFlowTest, IfWithBranchesOfDifferentShapesTakesItsKnownBranch) {
  auto session = Load(GraphPath("if_shapes.pbtxt"));
  ASSERT_NE(session, nullptr);
  const std::vector<float> x = {1.5f, -2.0f, 3.0f};
  for (int k : {2, 0, 3, -1, 2}) {
    SCOPED_TRACE(::testing::Message() << "k=" << k);
    RunStats stats;
    auto out = session->Run(
        {{"k", Scalar(DType::kInt32, k)}, {"x", Tensor::FromVector(DType::kFloat32, {3}, x)}},
        {"y"}, &stats);
    TFJIT_SKIP_IF_CPU_CANNOT_COMPILE_YET(out.status());
    ASSERT_TRUE(out.ok()) << StatusToString(out.status());
    const Tensor& y = (*out)[0];
    ASSERT_EQ(y.num_elements(), k > 0 ? 3 * k : 3);
    for (int64_t i = 0; i < y.num_elements(); ++i) {
      EXPECT_FLOAT_EQ(y.data<float>()[i], k > 0 ? x[static_cast<size_t>(i % 3)] : 3 * x[i]);
    }
    if (mode() == JitMode::kAuto || mode() == JitMode::kAll) {
      EXPECT_EQ(stats.nodes_compiled, stats.nodes_total);
      EXPECT_EQ(stats.fallbacks, 0);
    }
  }
}

TEST_P(ControlFlowTest, LoopNestedInIfBranch) {
  auto session = Load(GraphPath("if_loop.pbtxt"));
  ASSERT_NE(session, nullptr);
  for (bool p : {true, false}) {
    for (int n : {10, 4}) {
      SCOPED_TRACE(::testing::Message() << "p=" << p << " n=" << n);
      RunStats stats;
      auto out = session->Run({{"p", Scalar(DType::kBool, p)}, {"n", Scalar(DType::kInt32, n)}},
                              {"Identity"}, &stats);
      TFJIT_SKIP_IF_CPU_CANNOT_COMPILE_YET(out.status());
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      EXPECT_EQ(*(*out)[0].data<int32_t>(), p ? n * (n - 1) / 2 : -n);
      if (mode() == JitMode::kAll || (mode() == JitMode::kAuto && backend() == "interpreter")) {
        EXPECT_GE(stats.clusters, 1);  // the If, its loop included, compiles as one cluster
      }
    }
  }
}

TEST_P(ControlFlowTest, LoopVariableThatChangesShapeRunsUncompiledAndFailsMustCompile) {
  auto session = Load(GraphPath("while_grow.pbtxt"));
  ASSERT_NE(session, nullptr);
  auto out = session->Run(
      {{"x", Tensor::FromVector(DType::kFloat32, {1}, std::vector<float>{1.5f})}}, {"Identity"});
  if (mode() == JitMode::kAll) {
    ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument)
        << StatusToString(out.status());
    EXPECT_TRUE(absl::StrContains(out.status().message(),
                                  "Input and output shapes of loop body do not match: "
                                  "(s32[], s32[], f32[1]) vs. (s32[], s32[], f32[2])"))
        << out.status();
    EXPECT_TRUE(absl::StrContains(out.status().message(), "loop variable 2 of node 'while'"))
        << out.status();
    return;
  }
  ASSERT_TRUE(out.ok()) << StatusToString(out.status());
  ASSERT_EQ((*out)[0].dims(), std::vector<int64_t>{8});
  for (int i = 0; i < 8; ++i) EXPECT_EQ((*out)[0].data<float>()[i], 1.5f);
  if (mode() == JitMode::kAuto) {
    auto explain = session->Explain({"Identity"});
    ASSERT_TRUE(explain.ok()) << StatusToString(explain.status());
    EXPECT_TRUE(absl::StrContains(*explain, "loop variable 2 has no fixed shape")) << *explain;
  }
}

TEST_P(ControlFlowTest, ReshapeByLoopCounterIsTfsCompileTimeConstantErrorWhenCompiled) {
  auto session = Load(GraphPath("while_reshape.pbtxt"));
  ASSERT_NE(session, nullptr);
  const std::vector<float> x = {1, 2, 3, -4, 5, 0.5f};
  auto out = session->Run({{"x", Tensor::FromVector(DType::kFloat32, {2, 3}, x)}}, {"Identity"});
  if (mode() == JitMode::kAll) {
    ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument)
        << StatusToString(out.status());
    EXPECT_TRUE(absl::StrContains(out.status().message(),
                                  "Input 1 to node `Reshape` with op Reshape must be a "
                                  "compile-time constant."))
        << out.status();
    EXPECT_TRUE(absl::StrContains(out.status().message(), "in function 'while_body_3'"))
        << out.status();
    return;
  }
  ASSERT_TRUE(out.ok()) << StatusToString(out.status());
  ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 3}));
  for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ((*out)[0].data<float>()[i], x[i] * 8);
  if (mode() == JitMode::kAuto) {
    auto explain = session->Explain({"Identity"});
    ASSERT_TRUE(explain.ok()) << StatusToString(explain.status());
    EXPECT_TRUE(absl::StrContains(*explain, "must be a compile-time constant")) << *explain;
  }
}

TEST_P(ControlFlowTest, UnloweredOpInLoopBodyIsReportedWithItsFunction) {
  if (mode() != JitMode::kAll) GTEST_SKIP() << "must-compile behaviour only";
  const std::string text =
      absl::StrReplaceAll(ReadFile(GraphPath("while_sum.pbtxt")),
                          // ListDiff (x, y) -> (out, idx) has no lowering (XLA leaves it to TF).
                          {{"name: \"add_1\" op: \"AddV2\"", "name: \"add_1\" op: \"ListDiff\""},
                           {"add_1:z:0", "add_1:out:0"}});
  const std::string path = WriteTempFile("cf_floormod.pbtxt", text);
  auto session = Load(path);
  ASSERT_NE(session, nullptr);
  auto out = session->Run({{"n", Scalar(DType::kInt32, 3)}}, {"Identity"});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument)
      << StatusToString(out.status());
  EXPECT_TRUE(absl::StartsWith(out.status().message(),
                               "Detected unsupported operations when trying to compile graph"))
      << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(),
                                "node 'add_1' (ListDiff) of function 'while_body_8'"))
      << out.status();
}

INSTANTIATE_TEST_SUITE_P(BackendsAndModes, ControlFlowTest,
                         ::testing::Combine(::testing::Values("interpreter", "cpu"),
                                            ::testing::Values(JitMode::kNone, JitMode::kOff,
                                                              JitMode::kAuto, JitMode::kAll)),
                         [](const ::testing::TestParamInfo<ControlFlowTest::ParamType>& info) {
                           return std::get<0>(info.param) + "_" +
                                  JitModeName(std::get<1>(info.param));
                         });

// TF's functional_ops ToBool: scalars by value, other tensors by element count.
TEST(ControlFlowToBoolTest, FollowsTfTruthiness) {
  EXPECT_TRUE(*runtime::ToBool(Scalar(DType::kBool, 1)));
  EXPECT_FALSE(*runtime::ToBool(Scalar(DType::kBool, 0)));
  EXPECT_TRUE(*runtime::ToBool(Scalar(DType::kInt32, -3)));
  EXPECT_FALSE(*runtime::ToBool(Scalar(DType::kInt64, 0)));
  EXPECT_TRUE(*runtime::ToBool(Scalar(DType::kFloat32, 0.25)));
  EXPECT_FALSE(*runtime::ToBool(Scalar(DType::kFloat64, 0)));
  EXPECT_TRUE(*runtime::ToBool(Scalar(DType::kUInt8, 2)));
  EXPECT_TRUE(*runtime::ToBool(Tensor(DType::kFloat32, {2})));  // zeros, but non-empty
  EXPECT_FALSE(*runtime::ToBool(Tensor(DType::kInt32, {0, 3})));
  absl::StatusOr<bool> half = runtime::ToBool(Scalar(DType::kUInt16, 1));
  ASSERT_EQ(half.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(half.status().message(), "cannot be converted to a boolean"))
      << half.status();
}

// Known issue F: a shape from a jit function's argument passed unchanged through a loop is
// not an error; the launch reads the argument and compiles for its value (a new value
// compiles again).
TEST(ControlFlowArgumentTest, LoopInvariantShapeFromAnArgumentCompiles) {
  for (JitMode mode : {JitMode::kNone, JitMode::kOff, JitMode::kAll}) {
    SessionOptions options;
    options.jit = mode;
    auto session = Session::Load(GraphPath("loop_invariant_shape.pbtxt"), options);
    ASSERT_TRUE(session.ok()) << session.status();
    for (int n : {2, 5}) {
      RunStats stats;
      auto out =
          (*session)->Run({{"x", Tensor::FromVector(DType::kFloat32, {}, std::vector<float>{0.5f})},
                           {"n", Tensor::FromVector(DType::kInt32, {}, std::vector<int32_t>{n})}},
                          {"Identity"}, &stats);
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      EXPECT_EQ((*out)[0].data<float>()[0], 0.5f + 3.0f * static_cast<float>(n));
      if (mode != JitMode::kNone) {
        EXPECT_GT(stats.nodes_compiled, 0);
      }
    }
  }
}

// An If whose branches return different shapes, without output_shapes (so clustering cannot
// tell), inside an auto cluster with a Relu, a Mul and an Exp: the first run's cluster fails
// to compile at the If and runs on kernels; the session learns the node, and from the second
// run on the If runs in the runtime while the rest compiles. Every run gives the kernels'
// values.
constexpr char kUnequalBranchesGraph[] = R"pb(
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: 2 } } } } }
node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } }
       attr { key: "shape" value { shape { } } } }
node { name: "r" op: "Relu" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "cond" op: "If" input: "p" input: "r"
       attr { key: "Tcond" value { type: DT_BOOL } }
       attr { key: "Tin" value { list { type: DT_FLOAT } } }
       attr { key: "Tout" value { list { type: DT_FLOAT } } }
       attr { key: "then_branch" value { func { name: "same" } } }
       attr { key: "else_branch" value { func { name: "twice" } } } }
node { name: "m" op: "Mul" input: "cond" input: "cond" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "out" op: "Exp" input: "m" attr { key: "T" value { type: DT_FLOAT } } }
library {
  function {
    signature { name: "same" input_arg { name: "a" type: DT_FLOAT }
                output_arg { name: "y" type: DT_FLOAT } }
    node_def { name: "id" op: "Identity" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
    ret { key: "y" value: "id:output:0" }
  }
  function {
    signature { name: "twice" input_arg { name: "a" type: DT_FLOAT }
                output_arg { name: "y" type: DT_FLOAT } }
    node_def { name: "axis" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
               attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
    node_def { name: "cat" op: "ConcatV2" input: "a" input: "a" input: "axis:output:0"
               attr { key: "T" value { type: DT_FLOAT } } attr { key: "N" value { i: 2 } }
               attr { key: "Tidx" value { type: DT_INT32 } } }
    ret { key: "y" value: "cat:output:0" }
  }
}
)pb";

TEST(ControlFlowTest, AClusterThatFailsAtOneNodeLeavesItOutFromTheNextRun) {
  const std::string path = WriteTempFile("unequal_branches.pbtxt", kUnequalBranchesGraph);
  auto feeds = [](bool p) {
    return std::vector<std::pair<std::string, Tensor>>{
        {"x", Tensor::FromVector<float>(DType::kFloat32, {2}, {0.5f, -1.0f})},
        {"p", Tensor::FromVector<bool>(DType::kBool, {}, {p})}};
  };
  SessionOptions none_options;
  none_options.jit = JitMode::kNone;
  auto reference = Session::Load(path, none_options);
  ASSERT_TRUE(reference.ok()) << reference.status();
  SessionOptions options;
  options.jit = JitMode::kAuto;
  auto session = Session::Load(path, options);
  ASSERT_TRUE(session.ok()) << session.status();
  for (int run = 0; run < 3; ++run) {
    for (bool p : {true, false}) {
      SCOPED_TRACE(absl::StrCat("run ", run, " p=", p));
      auto want = (*reference)->Run(feeds(p), {"out"});
      ASSERT_TRUE(want.ok()) << want.status();
      RunStats stats;
      auto got = (*session)->Run(feeds(p), {"out"}, &stats);
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ((*got)[0].ShapeString(), (*want)[0].ShapeString());
      for (int64_t i = 0; i < (*want)[0].num_elements(); ++i) {
        EXPECT_FLOAT_EQ((*got)[0].data<float>()[i], (*want)[0].data<float>()[i]);
      }
      if (run == 0 && p) {
        EXPECT_EQ(stats.fallbacks, 1);  // the whole cluster, once
      } else {
        EXPECT_EQ(stats.fallbacks, 0);
        // Relu, Mul and Exp compile (in two clusters, either side of the If; the runtime's
        // If adds the else branch's ConcatV2 when it runs).
        EXPECT_EQ(stats.clusters, p ? 2 : 3);
        EXPECT_EQ(stats.nodes_compiled, p ? 3 : 5) << stats.nodes_total << " nodes in all";
      }
    }
  }
  auto explain = (*session)->Explain({"out"});
  ASSERT_TRUE(explain.ok()) << explain.status();
  EXPECT_TRUE(absl::StrContains(*explain,
                                "its cluster failed to compile, so it runs in the "
                                "runtime"))
      << *explain;
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tfjit
