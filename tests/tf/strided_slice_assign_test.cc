// Strided-slice assignment to variables through the Session: ResourceStridedSliceAssign (what
// `v[1:3, ::2].assign(x)` writes in TF2; uncompiled, auto-clustered and must-compile) and the
// TF1 reference form StridedSliceAssign on a VariableV2 (its output_ref fetched). Every
// expected value is worked out by hand below. TF's errors: a value whose shape is not the
// slice's is UNIMPLEMENTED ("Automatic broadcasting not yet implemented"), except for an empty
// slice, which assigns nothing; a shrunk index out of range is INVALID_ARGUMENT; a failed
// assignment leaves the variable as it was.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tests/tf/graph_text.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

using ::testing::HasSubstr;
using ::tfjit::testing::ConstNode;
using ::tfjit::testing::LoadGraphText;
using ::tfjit::testing::ShapeText;
using ::tfjit::testing::WriteTempFile;

// Every graph's variable: a float [4, 5] holding 0, 1, ..., 19 (row r = 5r .. 5r + 4).
const std::vector<int64_t> kVarDims = {4, 5};

std::vector<float> Initial() {
  std::vector<float> v(20);
  for (int i = 0; i < 20; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

// One assignment: the sparse spec (begin/end/strides and masks), the value and the variable
// after it (empty `after` for a case that must fail with `error`).
struct AssignCase {
  std::string label;
  std::vector<int32_t> begin, end, strides;
  int begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_mask = 0;
  std::vector<int64_t> value_dims;
  std::vector<float> value;
  std::vector<float> after;
  absl::StatusCode code = absl::StatusCode::kOk;
  std::string error;
};

std::vector<AssignCase> Cases() {
  std::vector<AssignCase> cases;
  {
    // v[1:3, ::2] = [[-1, -2, -3], [-4, -5, -6]].
    AssignCase c{"rows_every_other_column", {1, 0}, {3, 0}, {1, 2}};
    c.end_mask = 2;
    c.value_dims = {2, 3};
    c.value = {-1, -2, -3, -4, -5, -6};
    c.after = {0, 1, 2, 3, 4, -1, 6, -2, 8, -3, -4, 11, -5, 13, -6, 15, 16, 17, 18, 19};
    cases.push_back(c);
  }
  {
    // v[::-2, 1] = [-1, -2]: rows 3 then 1 of column 1.
    AssignCase c{"reversed_rows_shrunk_column", {0, 1}, {0, 2}, {-2, 1}};
    c.begin_mask = 1;
    c.end_mask = 1;
    c.shrink_mask = 2;
    c.value_dims = {2};
    c.value = {-1, -2};
    c.after = {0, 1, 2, 3, 4, 5, -2, 7, 8, 9, 10, 11, 12, 13, 14, 15, -1, 17, 18, 19};
    cases.push_back(c);
  }
  {
    // v[..., tf.newaxis, -1] = [[-1], [-2], [-3], [-4]]: the last column, through a new axis.
    AssignCase c{"ellipsis_new_axis_last_column", {0, 0, -1}, {0, 0, 0}, {1, 1, 1}};
    c.ellipsis_mask = 1;
    c.new_axis_mask = 2;
    c.shrink_mask = 4;
    c.value_dims = {4, 1};
    c.value = {-1, -2, -3, -4};
    c.after = {0, 1, 2, 3, -1, 5, 6, 7, 8, -2, 10, 11, 12, 13, -3, 15, 16, 17, 18, -4};
    cases.push_back(c);
  }
  {
    // v[3:1] is empty: nothing is written, whatever the value's shape.
    AssignCase c{"empty_slice_any_value", {3}, {1}, {1}};
    c.value_dims = {3};
    c.value = {-1, -2, -3};
    c.after = Initial();
    cases.push_back(c);
  }
  {
    AssignCase c{"value_shape_mismatch", {0}, {2}, {1}};
    c.value_dims = {2, 3};
    c.value = {-1, -2, -3, -4, -5, -6};
    c.code = absl::StatusCode::kUnimplemented;
    c.error =
        "sliced l-value shape [2,5] does not match r-value shape [2,3]. Automatic "
        "broadcasting not yet implemented.";
    cases.push_back(c);
  }
  {
    AssignCase c{"shrunk_index_out_of_range", {7}, {8}, {1}};
    c.shrink_mask = 1;
    c.value_dims = {5};
    c.value = {-1, -2, -3, -4, -5};
    c.code = absl::StatusCode::kInvalidArgument;
    c.error = "slice index 7 of dimension 0 out of bounds";
    cases.push_back(c);
  }
  return cases;
}

// The spec's Const nodes and the assignment node `assign` on variable `var`.
std::string AssignNodes(const AssignCase& c, const std::string& op, const std::string& var) {
  const std::vector<int64_t> n = {static_cast<int64_t>(c.begin.size())};
  std::string g = ConstNode("begin", "DT_INT32", "int_val", n, c.begin);
  g += ConstNode("end", "DT_INT32", "int_val", n, c.end);
  g += ConstNode("strides", "DT_INT32", "int_val", n, c.strides);
  g += ConstNode("value", "DT_FLOAT", "float_val", c.value_dims, c.value);
  absl::StrAppend(&g, "node { name: \"assign\" op: \"", op, "\" input: \"", var,
                  "\" input: \"begin\" input: \"end\" input: \"strides\" input: \"value\" ",
                  "attr { key: \"T\" value { type: DT_FLOAT } } ",
                  "attr { key: \"Index\" value { type: DT_INT32 } } ");
  for (const auto& [key, mask] : {std::pair<const char*, int>{"begin_mask", c.begin_mask},
                                  {"end_mask", c.end_mask},
                                  {"ellipsis_mask", c.ellipsis_mask},
                                  {"new_axis_mask", c.new_axis_mask},
                                  {"shrink_axis_mask", c.shrink_mask}}) {
    absl::StrAppend(&g, "attr { key: \"", key, "\" value { i: ", mask, " } } ");
  }
  return g + "}\n";
}

// VarHandleOp v, its initializer "init", the assignment, `read` (after it, by a control edge)
// and `peek` (a plain read).
std::string ResourceGraph(const AssignCase& c) {
  std::string g = absl::StrCat(
      "node { name: \"v\" op: \"VarHandleOp\" attr { key: \"dtype\" value { type: DT_FLOAT } } "
      "attr { key: \"shape\" value { ",
      ShapeText("shape", kVarDims),
      " } } attr { key: "
      "\"shared_name\" value { s: \"v\" } } attr { key: \"container\" value { s: \"\" } } }\n");
  g += ConstNode("v/init_value", "DT_FLOAT", "float_val", kVarDims, Initial());
  g += "node { name: \"v/Assign\" op: \"AssignVariableOp\" input: \"v\" input: \"v/init_value\" "
       "attr { key: \"dtype\" value { type: DT_FLOAT } } }\n";
  g += "node { name: \"init\" op: \"NoOp\" input: \"^v/Assign\" }\n";
  g += AssignNodes(c, "ResourceStridedSliceAssign", "v");
  g += "node { name: \"read\" op: \"ReadVariableOp\" input: \"v\" input: \"^assign\" "
       "attr { key: \"dtype\" value { type: DT_FLOAT } } }\n";
  g += "node { name: \"peek\" op: \"ReadVariableOp\" input: \"v\" "
       "attr { key: \"dtype\" value { type: DT_FLOAT } } }\n";
  return g;
}

// VariableV2 w, its Assign initializer "init", StridedSliceAssign (output_ref fetched), `read`
// (Identity after it) and `peek`.
std::string RefGraph(const AssignCase& c) {
  std::string g = absl::StrCat(
      "node { name: \"w\" op: \"VariableV2\" attr { key: \"dtype\" value { type: DT_FLOAT } } "
      "attr { key: \"shape\" value { ",
      ShapeText("shape", kVarDims),
      " } } attr { key: "
      "\"container\" value { s: \"\" } } attr { key: \"shared_name\" value { s: \"\" } } }\n");
  g += ConstNode("w/initial_value", "DT_FLOAT", "float_val", kVarDims, Initial());
  g += "node { name: \"w/Assign\" op: \"Assign\" input: \"w\" input: \"w/initial_value\" "
       "attr { key: \"T\" value { type: DT_FLOAT } } }\n";
  g += "node { name: \"init\" op: \"NoOp\" input: \"^w/Assign\" }\n";
  g += AssignNodes(c, "StridedSliceAssign", "w");
  g += "node { name: \"read\" op: \"Identity\" input: \"w\" input: \"^assign\" "
       "attr { key: \"T\" value { type: DT_FLOAT } } }\n";
  g += "node { name: \"peek\" op: \"Identity\" input: \"w\" "
       "attr { key: \"T\" value { type: DT_FLOAT } } }\n";
  return g;
}

// The graph loaded with `mode` and its "init" run; null (and a test failure) otherwise.
std::unique_ptr<Session> LoadInitialized(const std::string& file, const std::string& graph,
                                         JitMode mode) {
  auto session = LoadGraphText(file, graph, mode);
  if (session == nullptr) return nullptr;
  const absl::Status init = session->Run({}, {}, {"init"}).status();
  EXPECT_TRUE(init.ok()) << StatusToString(init);
  return init.ok() ? std::move(session) : nullptr;
}

void ExpectResourceAssign(const AssignCase& c, JitMode mode) {
  SCOPED_TRACE(absl::StrCat("ResourceStridedSliceAssign ", c.label, " jit ", JitModeName(mode)));
  auto session = LoadInitialized(absl::StrCat("rssa_", c.label, ".pbtxt"), ResourceGraph(c), mode);
  ASSERT_NE(session, nullptr);
  for (int run = 1; run <= 2; ++run) {  // the second run assigns the same values again
    RunStats stats;
    auto out = session->Run({}, {"read"}, &stats);
    if (c.code != absl::StatusCode::kOk) {
      ASSERT_EQ(out.status().code(), c.code) << out.status();
      EXPECT_THAT(std::string(out.status().message()), HasSubstr(c.error));
      continue;
    }
    ASSERT_TRUE(out.ok()) << StatusToString(out.status());
    EXPECT_EQ((*out)[0].dims(), kVarDims);
    EXPECT_EQ(Floats((*out)[0]), c.after) << "run " << run;
    if (mode != JitMode::kNone) {
      EXPECT_GT(stats.nodes_compiled, 0) << "the assignment should compile";
    } else {
      EXPECT_EQ(stats.nodes_compiled, 0);
    }
  }
  auto peek = session->Run({}, {"peek"});
  ASSERT_TRUE(peek.ok()) << StatusToString(peek.status());
  EXPECT_EQ(Floats((*peek)[0]), c.code == absl::StatusCode::kOk ? c.after : Initial())
      << "a failed assignment must leave the variable as it was";
}

TEST(StridedSliceAssignTest, ResourceVariableUncompiled) {
  for (const AssignCase& c : Cases()) ExpectResourceAssign(c, JitMode::kNone);
}

TEST(StridedSliceAssignTest, ResourceVariableCompiled) {
  for (const AssignCase& c : Cases()) {
    ExpectResourceAssign(c, JitMode::kAuto);
    ExpectResourceAssign(c, JitMode::kAll);
  }
}

TEST(StridedSliceAssignTest, RefVariableOutputsTheNewValue) {
  for (const AssignCase& c : Cases()) {
    for (JitMode mode : {JitMode::kNone, JitMode::kAuto}) {
      SCOPED_TRACE(absl::StrCat("StridedSliceAssign ", c.label, " jit ", JitModeName(mode)));
      auto session = LoadInitialized(absl::StrCat("ssa_", c.label, ".pbtxt"), RefGraph(c), mode);
      ASSERT_NE(session, nullptr);
      auto out = session->Run({}, {"assign", "read"});
      if (c.code != absl::StatusCode::kOk) {
        ASSERT_EQ(out.status().code(), c.code) << out.status();
        EXPECT_THAT(std::string(out.status().message()), HasSubstr(c.error));
      } else {
        ASSERT_TRUE(out.ok()) << StatusToString(out.status());
        EXPECT_EQ(Floats((*out)[0]), c.after) << "output_ref";
        EXPECT_EQ(Floats((*out)[1]), c.after) << "read";
      }
      auto peek = session->Run({}, {"peek"});
      ASSERT_TRUE(peek.ok()) << StatusToString(peek.status());
      EXPECT_EQ(Floats((*peek)[0]), c.code == absl::StatusCode::kOk ? c.after : Initial());
    }
  }
}

TEST(StridedSliceAssignTest, UninitializedResourceVariableIsTfsError) {
  AssignCase c = Cases()[0];
  for (JitMode mode : {JitMode::kNone, JitMode::kAll}) {
    SCOPED_TRACE(JitModeName(mode));
    SessionOptions options;
    options.jit = mode;
    auto session = Session::Load(WriteTempFile("rssa_uninit.pbtxt", ResourceGraph(c)), options);
    ASSERT_TRUE(session.ok()) << StatusToString(session.status());
    auto out = (*session)->Run({}, {"read"});  // without running "init"
    EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition) << out.status();
    EXPECT_THAT(std::string(out.status().message()), HasSubstr("Could not find variable v"));
  }
}

}  // namespace
}  // namespace tfjit
