// Gathers whose indices are computed at run time compile with a run-time range check (the
// cluster returns the first bad index; the executor raises the kernel's INVALID_ARGUMENT).
// Every mode must agree with the uncompiled run (--jit none): the values for good indices,
// and the error code, message and node for bad ones. Inside compiled While and If bodies the
// checks are carried out of the body.
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

using ::tfjit::testing::WriteTempFile;

// p: float32 [5,2] = [[0,1],[10,11],...,[40,41]]; idx = i + 1 (computed at run time);
// g = GatherV2(p, idx, axis 0); out = g * 2.
constexpr char kGatherV2Graph[] = R"pb(
node { name: "i" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
node { name: "idx" op: "AddV2" input: "i" input: "one" attr { key: "T" value { type: DT_INT32 } } }
node { name: "p" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT
         tensor_shape { dim { size: 5 } dim { size: 2 } }
         float_val: [0, 1, 10, 11, 20, 21, 30, 31, 40, 41] } } } }
node { name: "axis" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
node { name: "g" op: "GatherV2" input: "p" input: "idx" input: "axis"
       attr { key: "Tparams" value { type: DT_FLOAT } }
       attr { key: "Tindices" value { type: DT_INT32 } }
       attr { key: "Taxis" value { type: DT_INT32 } }
       attr { key: "batch_dims" value { i: 0 } } }
node { name: "two" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }
node { name: "out" op: "Mul" input: "g" input: "two" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

// p: float32 [3,3] = 0..8; idx = i + 1 (int64); nd = GatherNd(p, idx); out = nd * 2.
constexpr char kGatherNdGraph[] = R"pb(
node { name: "i" op: "Placeholder" attr { key: "dtype" value { type: DT_INT64 } } }
node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
       attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { } int64_val: 1 } } } }
node { name: "idx" op: "AddV2" input: "i" input: "one" attr { key: "T" value { type: DT_INT64 } } }
node { name: "p" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT
         tensor_shape { dim { size: 3 } dim { size: 3 } }
         float_val: [0, 1, 2, 3, 4, 5, 6, 7, 8] } } } }
node { name: "nd" op: "GatherNd" input: "p" input: "idx"
       attr { key: "Tparams" value { type: DT_FLOAT } }
       attr { key: "Tindices" value { type: DT_INT64 } } }
node { name: "two" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }
node { name: "out" op: "Mul" input: "nd" input: "two" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

// v: float32 [5] variable, init [0,1,2,3,4]; each run: g = GatherV2(read(v), i + 1); out = g * 2;
// then (after g, by a control edge) v += 1. A run whose gather fails must not update v.
constexpr char kVariableGraph[] = R"pb(
node { name: "i" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
node { name: "idx" op: "AddV2" input: "i" input: "one" attr { key: "T" value { type: DT_INT32 } } }
node { name: "v" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: 5 } } } }
       attr { key: "shared_name" value { s: "v" } } }
node { name: "v/init_value" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 5 } }
                                            float_val: [0, 1, 2, 3, 4] } } } }
node { name: "init" op: "AssignVariableOp" input: "v" input: "v/init_value"
       attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "read" op: "ReadVariableOp" input: "v" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "axis" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
node { name: "g" op: "GatherV2" input: "read" input: "idx" input: "axis"
       attr { key: "Tparams" value { type: DT_FLOAT } }
       attr { key: "Tindices" value { type: DT_INT32 } }
       attr { key: "Taxis" value { type: DT_INT32 } }
       attr { key: "batch_dims" value { i: 0 } } }
node { name: "two" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }
node { name: "out" op: "Mul" input: "g" input: "two" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "ones" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 5 } }
                                            float_val: 1 } } } }
node { name: "update" op: "AssignAddVariableOp" input: "v" input: "ones" input: "^g"
       attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "peek" op: "ReadVariableOp" input: "v" attr { key: "dtype" value { type: DT_FLOAT } } }
)pb";

std::string WriteGraph(const std::string& text, const std::string& tag) {
  return WriteTempFile(absl::StrCat("gather_check_", tag, ".pbtxt"), text);
}

std::unique_ptr<Session> Open(const std::string& path, JitMode jit,
                              const std::string& backend = "cpu") {
  SessionOptions options;
  options.jit = jit;
  options.backend = backend;
  auto s = Session::Load(path, options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

struct Mode {
  JitMode jit;
  const char* backend;
};
const Mode kCompiledModes[] = {
    {JitMode::kAuto, "cpu"}, {JitMode::kAll, "cpu"}, {JitMode::kAll, "interpreter"}};

// Runs `feed` in --jit none and every compiled mode: good indices give `want` everywhere (and
// the gather node runs compiled), bad ones the same INVALID_ARGUMENT as the kernel.
void CheckAllModes(const std::string& path, const std::string& gather_node, const Tensor& feed,
                   const std::vector<float>* want, const std::string& want_message) {
  auto reference = Open(path, JitMode::kNone);
  ASSERT_NE(reference, nullptr);
  auto ref = reference->Run({{"i", feed}}, {"out"});
  if (want != nullptr) {
    ASSERT_TRUE(ref.ok()) << StatusToString(ref.status());
    EXPECT_EQ(Floats((*ref)[0]), *want);
  } else {
    ASSERT_EQ(ref.status().code(), absl::StatusCode::kInvalidArgument)
        << StatusToString(ref.status());
    EXPECT_TRUE(absl::StrContains(ref.status().message(), want_message)) << ref.status().message();
    EXPECT_EQ(NodeOfError(ref.status()).first, gather_node);
  }
  for (const Mode& mode : kCompiledModes) {
    SCOPED_TRACE(absl::StrCat("jit mode ", static_cast<int>(mode.jit), " on ", mode.backend));
    auto s = Open(path, mode.jit, mode.backend);
    ASSERT_NE(s, nullptr);
    RunStats stats;
    auto got = s->Run({{"i", feed}}, {"out"}, &stats);
    if (want != nullptr) {
      ASSERT_TRUE(got.ok()) << StatusToString(got.status());
      EXPECT_EQ(Floats((*got)[0]), Floats((*ref)[0]));
      // idx, the gather and out (and their constants) compile in one cluster.
      EXPECT_EQ(stats.clusters, 1);
      EXPECT_GE(stats.nodes_compiled, 3);
      EXPECT_EQ(stats.fallbacks, 0);
      auto explain = s->Explain({"out"});
      ASSERT_TRUE(explain.ok()) << StatusToString(explain.status());
      EXPECT_FALSE(absl::StrContains(*explain, "computed at run time")) << *explain;
      // Second run: the cached executable, checks included.
      auto again = s->Run({{"i", feed}}, {"out"});
      ASSERT_TRUE(again.ok()) << StatusToString(again.status());
      EXPECT_EQ(Floats((*again)[0]), Floats((*ref)[0]));
    } else {
      ASSERT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument)
          << StatusToString(got.status());
      EXPECT_EQ(got.status().message(), ref.status().message());
      EXPECT_EQ(NodeOfError(got.status()).first, gather_node);
      EXPECT_EQ(NodeOfError(got.status()).second, NodeOfError(ref.status()).second);
      EXPECT_EQ(stats.fallbacks, 0);
    }
  }
}

TEST(GatherCheckTest, GatherV2InRangeComputedIndicesCompile) {
  const std::string path = WriteGraph(kGatherV2Graph, "v2_ok");
  // i = [[3,-1],[0,2]] -> idx = [[4,0],[1,3]]; rows doubled, hand-computed.
  const Tensor i = Tensor::FromVector<int32_t>(DType::kInt32, {2, 2}, {3, -1, 0, 2});
  const std::vector<float> want = {80, 82, 0, 2, 20, 22, 60, 62};
  CheckAllModes(path, "g", i, &want, "");
  std::filesystem::remove(path);
}

TEST(GatherCheckTest, GatherV2OutOfRangeIsKernelError) {
  const std::string path = WriteGraph(kGatherV2Graph, "v2_bad");
  // idx = [[1,2],[7,-2]]: the first bad one is [1,0] (too large) before [1,1] (negative).
  CheckAllModes(path, "g", Tensor::FromVector<int32_t>(DType::kInt32, {2, 2}, {0, 1, 6, -3}),
                nullptr, "indices[1,0] = 7 is not in [0, 5)");
  // Negative only: idx = [[1,1],[1,-1]].
  CheckAllModes(path, "g", Tensor::FromVector<int32_t>(DType::kInt32, {2, 2}, {0, 0, 0, -2}),
                nullptr, "indices[1,1] = -1 is not in [0, 5)");
  // Exactly the limit, 1-D indices: idx = [0, 5].
  CheckAllModes(path, "g", Tensor::FromVector<int32_t>(DType::kInt32, {2}, {-1, 4}), nullptr,
                "indices[1] = 5 is not in [0, 5)");
  std::filesystem::remove(path);
}

TEST(GatherCheckTest, GatherNdComputedIndices) {
  const std::string path = WriteGraph(kGatherNdGraph, "nd");
  // idx = [[1,1],[2,0],[0,2]] -> p[1,1], p[2,0], p[0,2] = 4, 6, 2; doubled.
  const std::vector<float> want = {8, 12, 4};
  CheckAllModes(path, "nd",
                Tensor::FromVector<int64_t>(DType::kInt64, {3, 2}, {0, 0, 1, -1, -1, 1}), &want,
                "");
  // idx = [[1,1],[4,0],[0,-1]]: row 1 is the first bad one.
  CheckAllModes(path, "nd",
                Tensor::FromVector<int64_t>(DType::kInt64, {3, 2}, {0, 0, 3, -1, -1, -2}), nullptr,
                "indices[1] = [4, 0] does not index into param shape [3,3]");
  std::filesystem::remove(path);
}

// The executor reads a cluster's checks before it writes back variables: a failing run leaves
// the variable as it was, as the kernels do (the update runs after the gather).
TEST(GatherCheckTest, FailedCheckLeavesVariablesUnchanged) {
  const std::string path = WriteGraph(kVariableGraph, "variable");
  for (JitMode jit : {JitMode::kNone, JitMode::kAuto, JitMode::kAll}) {
    SCOPED_TRACE(static_cast<int>(jit));
    std::unique_ptr<Session> s = Open(path, jit);
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(s->Run({}, {}, {"init"}).ok());
    auto scalar = [](int v) { return Tensor::FromVector<int32_t>(DType::kInt32, {}, {v}); };
    auto peek = [&]() {
      auto r = s->Run({}, {"peek"});
      EXPECT_TRUE(r.ok()) << r.status();
      return r.ok() ? std::vector<float>((*r)[0].data<float>(), (*r)[0].data<float>() + 5)
                    : std::vector<float>();
    };
    RunStats stats;
    auto good = s->Run({{"i", scalar(0)}}, {"out"}, {"update"}, &stats);
    ASSERT_TRUE(good.ok()) << good.status();
    EXPECT_EQ((*good)[0].data<float>()[0], 2.0f);  // v[1] * 2
    if (jit != JitMode::kNone) {
      EXPECT_GE(stats.clusters, 1);
      EXPECT_EQ(stats.fallbacks, 0);
    }
    EXPECT_EQ(peek(), (std::vector<float>{1, 2, 3, 4, 5}));
    auto bad = s->Run({{"i", scalar(9)}}, {"out"}, {"update"});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
    // A scalar index has no position in TF's message.
    EXPECT_TRUE(absl::StrContains(bad.status().message(), "indices = 10 is not in [0, 5)"))
        << bad.status();
    EXPECT_EQ(peek(), (std::vector<float>{1, 2, 3, 4, 5}));
  }
}

// While body: s += table[i] for i in range(n), table = [5, 7, 11, 13] a body constant and i a
// loop variable: the body's gather compiles with a run-time check carried out of the loop.
TEST(GatherCheckTest, GatherInWhileBodyChecksItsIndices) {
  std::ifstream in(std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "tf" / "control_flow" /
                   "while_sum.pbtxt");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  const std::string add_1 =
      R"(node_def { name: "add_1" op: "AddV2" input: "placeholder_1" input: "placeholder")";
  ASSERT_TRUE(absl::StrContains(text, add_1));
  text = absl::StrReplaceAll(text, {{add_1, R"(
    node_def { name: "table" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
               attr { key: "value" value { tensor { dtype: DT_INT32
                 tensor_shape { dim { size: 4 } } int_val: [5, 7, 11, 13] } } } }
    node_def { name: "axis" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
               attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
    node_def { name: "pick" op: "GatherV2" input: "table:output:0" input: "placeholder"
               input: "axis:output:0"
               attr { key: "Tparams" value { type: DT_INT32 } }
               attr { key: "Tindices" value { type: DT_INT32 } }
               attr { key: "Taxis" value { type: DT_INT32 } }
               attr { key: "batch_dims" value { i: 0 } } }
    node_def { name: "add_1" op: "AddV2" input: "placeholder_1" input: "pick:output:0")"}});
  const std::string path = WriteGraph(text, "while");
  auto run = [&](JitMode jit, const char* backend, int n) {
    auto s = Open(path, jit, backend);
    EXPECT_NE(s, nullptr);
    RunStats stats;
    auto out =
        s->Run({{"n", Tensor::FromVector<int32_t>(DType::kInt32, {}, {n})}}, {"Identity"}, &stats);
    if (jit != JitMode::kNone && out.ok()) {
      EXPECT_EQ(stats.fallbacks, 0);
      EXPECT_GE(stats.clusters, 1);
    }
    return out;
  };
  // n = 4: every index is good.
  for (const Mode& mode : kCompiledModes) {
    SCOPED_TRACE(absl::StrCat("jit mode ", static_cast<int>(mode.jit), " on ", mode.backend));
    auto out = run(mode.jit, mode.backend, 4);
    ASSERT_TRUE(out.ok()) << StatusToString(out.status());
    EXPECT_EQ((*out)[0].data<int32_t>()[0], 5 + 7 + 11 + 13);
  }
  // n = 5: the fifth iteration's index 4 is out of range; the check is carried out of the
  // loop (which stops there) and the run fails with the kernel's error.
  auto ref = run(JitMode::kNone, "cpu", 5);
  ASSERT_EQ(ref.status().code(), absl::StatusCode::kInvalidArgument) << ref.status();
  EXPECT_TRUE(absl::StrContains(ref.status().message(), "indices = 4 is not in [0, 4)"))
      << ref.status();
  for (const Mode& mode : kCompiledModes) {
    SCOPED_TRACE(absl::StrCat("jit mode ", static_cast<int>(mode.jit), " on ", mode.backend));
    auto out = run(mode.jit, mode.backend, 5);
    ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
    EXPECT_TRUE(absl::StrContains(out.status().message(), "indices = 4 is not in [0, 4)"))
        << out.status();
    EXPECT_EQ(NodeOfError(out.status()).first, "pick") << out.status();
  }
  std::filesystem::remove(path);
}

// If branch: out = p ? table[i] : 0. The then branch's check leaves the conditional as a result
// (passed when the else branch runs), so a bad index fails only when its branch is taken.
constexpr char kGatherInIfGraph[] = R"pb(
node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } }
       attr { key: "shape" value { shape { } } } }
node { name: "i" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "shape" value { shape { } } } }
node { name: "cond" op: "If" input: "p" input: "i"
       attr { key: "Tcond" value { type: DT_BOOL } }
       attr { key: "Tin" value { list { type: DT_INT32 } } }
       attr { key: "Tout" value { list { type: DT_INT32 } } }
       attr { key: "output_shapes" value { list { shape { } } } }
       attr { key: "then_branch" value { func { name: "pick" } } }
       attr { key: "else_branch" value { func { name: "zero" } } } }
node { name: "out" op: "Identity" input: "cond" attr { key: "T" value { type: DT_INT32 } } }
library {
  function {
    signature { name: "pick" input_arg { name: "i" type: DT_INT32 }
                output_arg { name: "y" type: DT_INT32 } }
    node_def { name: "table" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
               attr { key: "value" value { tensor { dtype: DT_INT32
                 tensor_shape { dim { size: 4 } } int_val: [5, 7, 11, 13] } } } }
    node_def { name: "axis" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
               attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
    node_def { name: "g" op: "GatherV2" input: "table:output:0" input: "i" input: "axis:output:0"
               attr { key: "Tparams" value { type: DT_INT32 } }
               attr { key: "Tindices" value { type: DT_INT32 } }
               attr { key: "Taxis" value { type: DT_INT32 } }
               attr { key: "batch_dims" value { i: 0 } } }
    ret { key: "y" value: "g:output:0" }
  }
  function {
    signature { name: "zero" input_arg { name: "i" type: DT_INT32 }
                output_arg { name: "y" type: DT_INT32 } }
    node_def { name: "z" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
               attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
    ret { key: "y" value: "z:output:0" }
  }
}
)pb";

TEST(GatherCheckTest, GatherInIfBranchChecksItsIndices) {
  const std::string path = WriteGraph(kGatherInIfGraph, "if");
  auto feeds = [](bool p, int i) {
    return std::vector<std::pair<std::string, Tensor>>{
        {"p", Tensor::FromVector<bool>(DType::kBool, {}, {p})},
        {"i", Tensor::FromVector<int32_t>(DType::kInt32, {}, {i})}};
  };
  std::vector<std::pair<JitMode, const char*>> modes = {{JitMode::kNone, "cpu"}};
  for (const Mode& mode : kCompiledModes) modes.push_back({mode.jit, mode.backend});
  for (const auto& [jit, backend] : modes) {
    SCOPED_TRACE(absl::StrCat("jit mode ", static_cast<int>(jit), " on ", backend));
    auto s = Open(path, jit, backend);
    ASSERT_NE(s, nullptr);
    RunStats stats;
    auto taken = s->Run(feeds(true, 2), {"out"}, &stats);
    ASSERT_TRUE(taken.ok()) << StatusToString(taken.status());
    EXPECT_EQ((*taken)[0].data<int32_t>()[0], 11);
    if (jit != JitMode::kNone) {
      EXPECT_EQ(stats.fallbacks, 0);
    }
    auto not_taken = s->Run(feeds(false, 9), {"out"});
    ASSERT_TRUE(not_taken.ok()) << StatusToString(not_taken.status());
    EXPECT_EQ((*not_taken)[0].data<int32_t>()[0], 0);
    auto bad = s->Run(feeds(true, 9), {"out"});
    ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
    EXPECT_TRUE(absl::StrContains(bad.status().message(), "indices = 9 is not in [0, 4)"))
        << bad.status();
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tfjit
