// Scatter ops on variables through the Session: the resource ops ResourceScatter{Update,Add,
// Sub,Mul,Div,Min,Max} and ResourceScatterNd{Update,Add,Sub} (uncompiled and compiled), and the
// TF1 reference-variable ops Scatter* / ScatterNd* on a VariableV2. Every expected value is
// worked out by hand below; updates persist across runs; an out-of-range index fails with TF's
// INVALID_ARGUMENT naming it and leaves the variable as it was.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tf/graph_text.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

using ::testing::HasSubstr;
using ::tfjit::testing::ConstNode;
using ::tfjit::testing::LoadGraphText;
using ::tfjit::testing::PlaceholderNode;
using ::tfjit::testing::ShapeText;

// Every graph's variable: a float [4, 2] starting at [[1, 2], [3, 4], [5, 6], [7, 8]].
const std::vector<int64_t> kVarDims = {4, 2};
const std::vector<float> kInitial = {1, 2, 3, 4, 5, 6, 7, 8};

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

// One scatter into the variable: `op` is the TF1 name ("ScatterAdd", "ScatterNdSub"); the
// resource form is "Resource" + op.
struct ScatterCase {
  std::string op;
  std::vector<int64_t> index_dims;
  std::vector<int32_t> indices;
  std::vector<int64_t> update_dims;
  std::vector<float> updates;
  std::vector<float> after_one;  // the variable after one run of the update
  std::vector<float> after_two;  // ... and after a second run
  std::string label;
};

bool IsNd(const std::string& op) { return op.rfind("ScatterNd", 0) == 0; }

// The indices and updates nodes (indices a Placeholder when fed) and the scatter node.
std::string ScatterNodes(const ScatterCase& c, const std::string& op, const std::string& var,
                         const char* type_attr, bool feed_indices) {
  std::string g = feed_indices
                      ? PlaceholderNode("indices", "DT_INT32", c.index_dims)
                      : ConstNode("indices", "DT_INT32", "int_val", c.index_dims, c.indices);
  g += ConstNode("updates", "DT_FLOAT", "float_val", c.update_dims, c.updates);
  absl::StrAppend(&g, "node { name: \"scatter\" op: \"", op, "\" input: \"", var,
                  "\" input: \"indices\" input: \"updates\" attr { key: \"", type_attr,
                  "\" value { type: DT_FLOAT } } attr { key: \"Tindices\" value { type: DT_INT32 "
                  "} } }\n");
  return g;
}

// VarHandleOp v with an AssignVariableOp initializer ("init"), the scatter, `read` (the value
// after the scatter, by a control edge) and `peek` (a plain read).
std::string ResourceGraph(const ScatterCase& c, bool feed_indices) {
  const std::string op = "Resource" + c.op;
  std::string g = absl::StrCat(
      "node { name: \"v\" op: \"VarHandleOp\" attr { key: \"dtype\" value { type: DT_FLOAT } } "
      "attr { key: \"shape\" value { ",
      ShapeText("shape", kVarDims),
      " } } attr { key: \"shared_name\" "
      "value { s: \"v\" } } attr { key: \"container\" value { s: \"\" } } }\n");
  g += ConstNode("v/init_value", "DT_FLOAT", "float_val", kVarDims, kInitial);
  g += "node { name: \"v/Assign\" op: \"AssignVariableOp\" input: \"v\" input: \"v/init_value\" "
       "attr { key: \"dtype\" value { type: DT_FLOAT } } }\n";
  g += "node { name: \"init\" op: \"NoOp\" input: \"^v/Assign\" }\n";
  // ResourceScatter* name the value type `dtype`, ResourceScatterNd* `T` (TF's registry).
  g += ScatterNodes(c, op, "v", IsNd(c.op) ? "T" : "dtype", feed_indices);
  g += "node { name: \"read\" op: \"ReadVariableOp\" input: \"v\" input: \"^scatter\" "
       "attr { key: \"dtype\" value { type: DT_FLOAT } } }\n";
  g += "node { name: \"peek\" op: \"ReadVariableOp\" input: \"v\" "
       "attr { key: \"dtype\" value { type: DT_FLOAT } } }\n";
  return g;
}

// VariableV2 w with an Assign initializer ("init"), the scatter (whose output_ref is fetched),
// `read` (Identity after the scatter) and `peek` (a plain Identity).
std::string RefGraph(const ScatterCase& c, bool feed_indices) {
  std::string g = absl::StrCat(
      "node { name: \"w\" op: \"VariableV2\" attr { key: \"dtype\" value { type: DT_FLOAT } } "
      "attr { key: \"shape\" value { ",
      ShapeText("shape", kVarDims),
      " } } attr { key: \"container\" "
      "value { s: \"\" } } attr { key: \"shared_name\" value { s: \"\" } } }\n");
  g += ConstNode("w/initial_value", "DT_FLOAT", "float_val", kVarDims, kInitial);
  g += "node { name: \"w/Assign\" op: \"Assign\" input: \"w\" input: \"w/initial_value\" "
       "attr { key: \"T\" value { type: DT_FLOAT } } attr { key: \"validate_shape\" value { b: "
       "true } } attr { key: \"use_locking\" value { b: true } } }\n";
  g += "node { name: \"init\" op: \"NoOp\" input: \"^w/Assign\" }\n";
  g += ScatterNodes(c, c.op, "w", "T", feed_indices);
  g += "node { name: \"read\" op: \"Identity\" input: \"w\" input: \"^scatter\" "
       "attr { key: \"T\" value { type: DT_FLOAT } } }\n";
  g += "node { name: \"peek\" op: \"Identity\" input: \"w\" "
       "attr { key: \"T\" value { type: DT_FLOAT } } }\n";
  return g;
}

Tensor IndexTensor(const ScatterCase& c) {
  return Tensor::FromVector(DType::kInt32, c.index_dims, c.indices);
}

// Dim-0 scatters (Scatter*), each with a duplicate index where the combiner allows one
// (Update's result with duplicates is unspecified in TF), and each with a scalar `updates`
// broadcast to every picked row. Variable rows: r0 = [1,2], r1 = [3,4], r2 = [5,6], r3 = [7,8].
std::vector<ScatterCase> RowCases() {
  return {
      // r3 = [10,11], r1 = [12,13].
      {"ScatterUpdate",
       {2},
       {3, 1},
       {2, 2},
       {10, 11, 12, 13},
       {1, 2, 12, 13, 5, 6, 10, 11},
       {1, 2, 12, 13, 5, 6, 10, 11},
       "rows"},
      // r1 += [1,1] + [3,3] = [4,4]; r3 += [2,2].
      {"ScatterAdd",
       {3},
       {1, 3, 1},
       {3, 2},
       {1, 1, 2, 2, 3, 3},
       {1, 2, 7, 8, 5, 6, 9, 10},
       {1, 2, 11, 12, 5, 6, 11, 12},
       "rows"},
      // r0 -= [4,4]; r2 -= [2,2].
      {"ScatterSub",
       {3},
       {0, 2, 0},
       {3, 2},
       {1, 1, 2, 2, 3, 3},
       {-3, -2, 3, 4, 3, 4, 7, 8},
       {-7, -6, 3, 4, 1, 2, 7, 8},
       "rows"},
      // r2 *= [2,3] * [0.5,2] = [1,6]; r0 *= [10,10].
      {"ScatterMul",
       {3},
       {2, 0, 2},
       {3, 2},
       {2, 3, 10, 10, 0.5f, 2},
       {10, 20, 3, 4, 5, 36, 7, 8},
       {100, 200, 3, 4, 5, 216, 7, 8},
       "rows"},
      // r1 /= [2,4] * [0.5,0.5] = [1,2]; r3 /= [8,2]: [7/8, 4], then [7/64, 2].
      {"ScatterDiv",
       {3},
       {1, 3, 1},
       {3, 2},
       {2, 4, 8, 2, 0.5f, 0.5f},
       {1, 2, 3, 2, 5, 6, 0.875f, 4},
       {1, 2, 3, 1, 5, 6, 0.109375f, 2},
       "rows"},
      // r0 = min([1,2], [0,5], [3,1]) = [0,1]; r3 = min([7,8], [7.5,-1]) = [7,-1].
      {"ScatterMin",
       {3},
       {0, 3, 0},
       {3, 2},
       {0, 5, 7.5f, -1, 3, 1},
       {0, 1, 3, 4, 5, 6, 7, -1},
       {0, 1, 3, 4, 5, 6, 7, -1},
       "rows"},
      // r1 = max([3,4], [0,9], [4,2]) = [4,9]; r2 = max([5,6], [6,0]) = [6,6].
      {"ScatterMax",
       {3},
       {1, 2, 1},
       {3, 2},
       {0, 9, 6, 0, 4, 2},
       {1, 2, 4, 9, 6, 6, 7, 8},
       {1, 2, 4, 9, 6, 6, 7, 8},
       "rows"},
      // Rank-2 indices [[2],[0]], updates [2,1,2]: r2 += [5,10]; r0 += [0.5,0.5].
      {"ScatterAdd",
       {2, 1},
       {2, 0},
       {2, 1, 2},
       {5, 10, 0.5f, 0.5f},
       {1.5f, 2.5f, 3, 4, 10, 16, 7, 8},
       {2, 3, 3, 4, 15, 26, 7, 8},
       "rank2_indices"},
      // Scalar updates, broadcast to every picked row.
      {"ScatterUpdate",
       {2},
       {1, 2},
       {},
       {0},
       {1, 2, 0, 0, 0, 0, 7, 8},
       {1, 2, 0, 0, 0, 0, 7, 8},
       "scalar"},
      // r0 += 1.5 twice; r2 += 1.5.
      {"ScatterAdd",
       {3},
       {0, 2, 0},
       {},
       {1.5f},
       {4, 5, 3, 4, 6.5f, 7.5f, 7, 8},
       {7, 8, 3, 4, 8, 9, 7, 8},
       "scalar"},
      {"ScatterSub",
       {1},
       {3},
       {},
       {2},
       {1, 2, 3, 4, 5, 6, 5, 6},
       {1, 2, 3, 4, 5, 6, 3, 4},
       "scalar"},
      // r1 *= 2 twice.
      {"ScatterMul",
       {2},
       {1, 1},
       {},
       {2},
       {1, 2, 12, 16, 5, 6, 7, 8},
       {1, 2, 48, 64, 5, 6, 7, 8},
       "scalar"},
      {"ScatterDiv",
       {1},
       {2},
       {},
       {4},
       {1, 2, 3, 4, 1.25f, 1.5f, 7, 8},
       {1, 2, 3, 4, 0.3125f, 0.375f, 7, 8},
       "scalar"},
      {"ScatterMin",
       {3},
       {0, 3, 0},
       {},
       {1.5f},
       {1, 1.5f, 3, 4, 5, 6, 1.5f, 1.5f},
       {1, 1.5f, 3, 4, 5, 6, 1.5f, 1.5f},
       "scalar"},
      {"ScatterMax",
       {2},
       {0, 3},
       {},
       {6.5f},
       {6.5f, 6.5f, 3, 4, 5, 6, 7, 8},
       {6.5f, 6.5f, 3, 4, 5, 6, 7, 8},
       "scalar"},
  };
}

// ScatterNd*: index rows of k = 2 (elements) and k = 1 (whole rows).
std::vector<ScatterCase> NdCases() {
  return {
      // v[0][1] = 20, v[3][0] = 30.
      {"ScatterNdUpdate",
       {2, 2},
       {0, 1, 3, 0},
       {2},
       {20, 30},
       {1, 20, 3, 4, 5, 6, 30, 8},
       {1, 20, 3, 4, 5, 6, 30, 8},
       "elements"},
      // r2 = [9,-9].
      {"ScatterNdUpdate",
       {1, 1},
       {2},
       {1, 2},
       {9, -9},
       {1, 2, 3, 4, 9, -9, 7, 8},
       {1, 2, 3, 4, 9, -9, 7, 8},
       "rows"},
      // v[1][1] += 1 + 3; v[2][0] += 2.
      {"ScatterNdAdd",
       {3, 2},
       {1, 1, 2, 0, 1, 1},
       {3},
       {1, 2, 3},
       {1, 2, 3, 8, 7, 6, 7, 8},
       {1, 2, 3, 12, 9, 6, 7, 8},
       "elements"},
      // r3 += [1,2] + [3,4] = [4,6].
      {"ScatterNdAdd",
       {2, 1},
       {3, 3},
       {2, 2},
       {1, 2, 3, 4},
       {1, 2, 3, 4, 5, 6, 11, 14},
       {1, 2, 3, 4, 5, 6, 15, 20},
       "rows"},
      // v[0][0] -= 0.5 + 0.25; v[3][1] -= 8.
      {"ScatterNdSub",
       {3, 2},
       {0, 0, 3, 1, 0, 0},
       {3},
       {0.5f, 8, 0.25f},
       {0.25f, 2, 3, 4, 5, 6, 7, 0},
       {-0.5f, 2, 3, 4, 5, 6, 7, -8},
       "elements"},
      // Rank-3 indices [1,2,1] picking r1 twice, updates [1,2,2]: r1 -= [1,1] + [1,1].
      {"ScatterNdSub",
       {1, 2, 1},
       {1, 1},
       {1, 2, 2},
       {1, 1, 1, 1},
       {1, 2, 1, 2, 5, 6, 7, 8},
       {1, 2, -1, 0, 5, 6, 7, 8},
       "rank3_indices"},
  };
}

std::vector<ScatterCase> AllCases() {
  std::vector<ScatterCase> all = RowCases();
  for (ScatterCase& c : NdCases()) all.push_back(std::move(c));
  return all;
}

std::string CaseName(const ScatterCase& c, const std::string& prefix) {
  return absl::StrCat(prefix, c.op, "_", c.label);
}

// Loads the resource graph of `c`, initializes it, runs the scatter twice (checking the value
// read after each run) and reads the variable once more.
void ExpectResourceScatter(const ScatterCase& c, JitMode mode, bool fed) {
  const std::string name = CaseName(c, "Resource");
  SCOPED_TRACE(absl::StrCat(name, " jit ", JitModeName(mode), fed ? " fed" : " const"));
  auto session = LoadGraphText(name + (fed ? "_fed" : "") + ".pbtxt", ResourceGraph(c, fed), mode);
  ASSERT_NE(session, nullptr);
  ASSERT_TRUE(session->Run({}, {}, {"init"}).ok());
  std::vector<std::pair<std::string, Tensor>> feeds;
  if (fed) feeds.push_back({"indices", IndexTensor(c)});
  for (int run = 1; run <= 2; ++run) {
    RunStats stats;
    auto out = session->Run(feeds, {"read"}, &stats);
    ASSERT_TRUE(out.ok()) << StatusToString(out.status());
    EXPECT_EQ((*out)[0].dims(), kVarDims);
    EXPECT_EQ(Floats((*out)[0]), run == 1 ? c.after_one : c.after_two) << "run " << run;
    if (mode != JitMode::kNone) {
      EXPECT_GT(stats.nodes_compiled, 0) << "the resource scatter should compile";
    } else {
      EXPECT_EQ(stats.nodes_compiled, 0);
    }
  }
  // A later plain read sees the value the two runs left.
  auto peek = session->Run({}, {"peek"});
  ASSERT_TRUE(peek.ok()) << StatusToString(peek.status());
  EXPECT_EQ(Floats((*peek)[0]), c.after_two);
}

TEST(ScatterVariableTest, ResourceScattersUncompiled) {
  for (const ScatterCase& c : AllCases()) {
    for (bool fed : {false, true}) ExpectResourceScatter(c, JitMode::kNone, fed);
  }
}

TEST(ScatterVariableTest, ResourceScattersCompiled) {
  for (const ScatterCase& c : AllCases()) {
    // Indices constant (checked at compile time) and fed (checked when the cluster runs).
    ExpectResourceScatter(c, JitMode::kAuto, /*fed=*/false);
    ExpectResourceScatter(c, JitMode::kAll, /*fed=*/false);
    ExpectResourceScatter(c, JitMode::kAll, /*fed=*/true);
  }
}

TEST(ScatterVariableTest, RefVariableScattersAgreeWithHandComputedValues) {
  for (const ScatterCase& c : AllCases()) {
    for (JitMode mode : {JitMode::kNone, JitMode::kAuto}) {
      const std::string name = CaseName(c, "Ref");
      SCOPED_TRACE(absl::StrCat(name, " jit ", JitModeName(mode)));
      auto session = LoadGraphText(name + ".pbtxt", RefGraph(c, /*feed_indices=*/false), mode);
      ASSERT_NE(session, nullptr);
      ASSERT_TRUE(session->Run({}, {}, {"init"}).ok());
      for (int run = 1; run <= 2; ++run) {
        auto out = session->Run({}, {"scatter", "read"});
        ASSERT_TRUE(out.ok()) << StatusToString(out.status());
        const std::vector<float>& want = run == 1 ? c.after_one : c.after_two;
        // output_ref: the updated variable.
        EXPECT_EQ((*out)[0].dims(), kVarDims);
        EXPECT_EQ(Floats((*out)[0]), want) << "output_ref, run " << run;
        EXPECT_EQ(Floats((*out)[1]), want) << "read, run " << run;
      }
      auto peek = session->Run({}, {"peek"});
      ASSERT_TRUE(peek.ok()) << StatusToString(peek.status());
      EXPECT_EQ(Floats((*peek)[0]), c.after_two);
    }
  }
}

// Out-of-range indices: TF's kernels fail (INVALID_ARGUMENT naming the index); HLO's scatter
// would skip them, so the compiled form checks them too. The variable keeps its value.
struct BadIndexCase {
  ScatterCase scatter;               // indices hold one bad entry; after_* unused
  std::vector<std::string> message;  // TF's message naming the bad index (pieces of it)
};

std::vector<BadIndexCase> BadIndexCases() {
  return {
      {{"ScatterUpdate", {2}, {1, 7}, {2, 2}, {9, 9, 9, 9}, {}, {}, "too_big"},
       {"indices[1] = 7 is not in [0, 4)"}},
      {{"ScatterAdd", {3}, {0, -1, 2}, {}, {1}, {}, {}, "negative_scalar_updates"},
       {"indices[1] = -1 is not in [0, 4)"}},
      {{"ScatterMax",
        {2, 2},
        {0, 1, 2, 4},
        {2, 2, 2},
        {9, 9, 9, 9, 9, 9, 9, 9},
        {},
        {},
        "rank2_indices"},
       {"indices[1,1] = 4 is not in [0, 4)"}},
      {{"ScatterNdUpdate", {3, 1}, {0, 4, 1}, {3, 2}, {9, 9, 9, 9, 9, 9}, {}, {}, "rows"},
       {"indices[1] = [4] does not index into shape [4,2]"}},
      // k = 2: the separator between the index components is checked separately below.
      {{"ScatterNdAdd", {2, 2}, {1, 0, 3, 2}, {2}, {9, 9}, {}, {}, "elements"},
       {"indices[1] = [3,", "2] does not index into shape [4,2]"}},
  };
}

// k = 2 index rows: TF joins the components with ", " ("[1, 2]").
BadIndexCase BadNdElementCase() {
  return {{"ScatterNdAdd", {2, 2}, {1, 0, 3, 2}, {2}, {9, 9}, {}, {}, "elements"},
          {"indices[1] = [3, 2] does not index into shape [4,2]"}};
}

void ExpectBadIndexFails(const BadIndexCase& bad, bool resource, JitMode mode, bool fed) {
  const ScatterCase& c = bad.scatter;
  const std::string name = CaseName(c, resource ? "BadResource" : "BadRef");
  SCOPED_TRACE(absl::StrCat(name, " jit ", JitModeName(mode), fed ? " fed" : " const"));
  const std::string graph = resource ? ResourceGraph(c, fed) : RefGraph(c, fed);
  auto session = LoadGraphText(absl::StrCat(name, fed ? "_fed" : "", ".pbtxt"), graph, mode);
  ASSERT_NE(session, nullptr);
  ASSERT_TRUE(session->Run({}, {}, {"init"}).ok());
  std::vector<std::pair<std::string, Tensor>> feeds;
  if (fed) feeds.push_back({"indices", IndexTensor(c)});
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto out = session->Run(feeds, {"read"});
    ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
    for (const std::string& piece : bad.message) {
      EXPECT_THAT(std::string(out.status().message()), HasSubstr(piece));
    }
  }
  auto peek = session->Run({}, {"peek"});
  ASSERT_TRUE(peek.ok()) << StatusToString(peek.status());
  EXPECT_EQ(Floats((*peek)[0]), kInitial) << "the failed scatter must not change the variable";
}

TEST(ScatterVariableTest, OutOfRangeIndexIsInvalidArgumentAndLeavesTheVariable) {
  for (const BadIndexCase& bad : BadIndexCases()) {
    for (JitMode mode : {JitMode::kNone, JitMode::kAuto, JitMode::kAll}) {
      for (bool fed : {false, true}) ExpectBadIndexFails(bad, /*resource=*/true, mode, fed);
    }
    for (JitMode mode : {JitMode::kNone, JitMode::kAuto}) {
      ExpectBadIndexFails(bad, /*resource=*/false, mode, /*fed=*/true);
    }
  }
}

TEST(ScatterVariableTest, OutOfRangeNdElementIndexUsesTfsMessage) {
  const BadIndexCase bad = BadNdElementCase();
  for (JitMode mode : {JitMode::kNone, JitMode::kAuto, JitMode::kAll}) {
    for (bool fed : {false, true}) ExpectBadIndexFails(bad, /*resource=*/true, mode, fed);
  }
  ExpectBadIndexFails(bad, /*resource=*/false, JitMode::kNone, /*fed=*/true);
}

}  // namespace
}  // namespace tfjit
