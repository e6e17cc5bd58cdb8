// VariableShape and the TF1 stacks (StackV2, StackPushV2, StackPopV2, StackCloseV2) through
// the Session, against hand-computed values and TF's messages.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

using ::tfjit::testing::WriteTempFile;

std::unique_ptr<Session> Load(const std::string& name, const std::string& text, JitMode mode) {
  SessionOptions options;
  options.jit = mode;
  auto session = Session::Load(WriteTempFile(name, text), options);
  EXPECT_TRUE(session.ok()) << StatusToString(session.status());
  return session.ok() ? std::move(*session) : nullptr;
}

// v: float[2,3] variable; shape32/shape64: its VariableShape in int32 and int64.
constexpr char kVariableShapeGraph[] = R"pb(
node { name: "v" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: 2 } dim { size: 3 } } } }
       attr { key: "shared_name" value { s: "v" } } }
node { name: "zeros" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT
              tensor_shape { dim { size: 2 } dim { size: 3 } } float_val: 0 } } } }
node { name: "init" op: "AssignVariableOp" input: "v" input: "zeros"
       attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "shape32" op: "VariableShape" input: "v" }
node { name: "shape64" op: "VariableShape" input: "v"
       attr { key: "out_type" value { type: DT_INT64 } } }
)pb";

TEST(StateOpsTest, VariableShapeInEveryMode) {
  for (JitMode mode : {JitMode::kNone, JitMode::kAuto, JitMode::kAll}) {
    SCOPED_TRACE(JitModeName(mode));
    auto session = Load("variable_shape.pbtxt", kVariableShapeGraph, mode);
    ASSERT_NE(session, nullptr);
    auto uninitialized = session->Run({}, {"shape32"});
    EXPECT_EQ(uninitialized.status().code(), absl::StatusCode::kFailedPrecondition)
        << StatusToString(uninitialized.status());
    ASSERT_TRUE(session->Run({}, {}, {"init"}).ok());
    auto out = session->Run({}, {"shape32", "shape64"});
    ASSERT_TRUE(out.ok()) << StatusToString(out.status());
    ASSERT_EQ((*out)[0].ShapeString(), "int32[2]");
    EXPECT_EQ((*out)[0].data<int32_t>()[0], 2);
    EXPECT_EQ((*out)[0].data<int32_t>()[1], 3);
    ASSERT_EQ((*out)[1].ShapeString(), "int64[2]");
    EXPECT_EQ((*out)[1].data<int64_t>()[1], 3);
  }
}

// A stack of max_size 2: push a then b (ordered by a control edge), pop twice (b, then a).
std::string StackGraph(int max_size, bool third_push, bool third_pop) {
  std::string g = R"pb(
node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "max" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: MAX } } } }
node { name: "s" op: "StackV2" input: "max" attr { key: "elem_type" value { type: DT_FLOAT } }
       attr { key: "stack_name" value { s: "st" } } }
node { name: "push_a" op: "StackPushV2" input: "s" input: "a"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "push_b" op: "StackPushV2" input: "s" input: "b" input: "^push_a"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "pop1" op: "StackPopV2" input: "s" input: "^push_b" LAST_PUSH
       attr { key: "elem_type" value { type: DT_FLOAT } } }
node { name: "pop2" op: "StackPopV2" input: "s" input: "^pop1"
       attr { key: "elem_type" value { type: DT_FLOAT } } }
node { name: "close" op: "StackCloseV2" input: "s" input: "^pop2" LAST_POP }
)pb";
  g.replace(g.find("MAX"), 3, std::to_string(max_size));
  g.replace(g.find("LAST_PUSH"), 9, third_push ? "input: \"^push_c\"" : "");
  g.replace(g.find("LAST_POP"), 8, third_pop ? "input: \"^pop3\"" : "");
  if (third_push) {
    g += R"pb(node { name: "push_c" op: "StackPushV2" input: "s" input: "a" input: "^push_b"
       attr { key: "T" value { type: DT_FLOAT } } })pb";
  }
  if (third_pop) {
    g += R"pb(node { name: "pop3" op: "StackPopV2" input: "s" input: "^pop2"
       attr { key: "elem_type" value { type: DT_FLOAT } } })pb";
  }
  return g;
}

TEST(StateOpsTest, StackPopsInReverseOrder) {
  for (JitMode mode : {JitMode::kNone, JitMode::kAuto}) {
    SCOPED_TRACE(JitModeName(mode));
    auto session = Load("stack.pbtxt", StackGraph(2, false, false), mode);
    ASSERT_NE(session, nullptr);
    const Tensor a = Tensor::FromVector(DType::kFloat32, {2}, std::vector<float>{1, 2});
    const Tensor b = Tensor::FromVector(DType::kFloat32, {1}, std::vector<float>{7});
    for (int run = 0; run < 2; ++run) {  // each run makes a fresh stack
      auto out = session->Run({{"a", a}, {"b", b}}, {"pop1", "pop2"}, {"close"});
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      EXPECT_EQ((*out)[0].ShapeString(), "float32[1]");
      EXPECT_EQ((*out)[0].data<float>()[0], 7);
      EXPECT_EQ((*out)[1].ShapeString(), "float32[2]");
      EXPECT_EQ((*out)[1].data<float>()[1], 2);
    }
  }
}

TEST(StateOpsTest, StackOverflowAndEmptyAreTfsErrors) {
  const Tensor a = Tensor::FromVector(DType::kFloat32, {1}, std::vector<float>{1});
  auto overflow = Load("stack_overflow.pbtxt", StackGraph(2, true, false), JitMode::kNone);
  ASSERT_NE(overflow, nullptr);
  auto s = overflow->Run({{"a", a}, {"b", a}}, {"pop1"}, {"push_c"});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.status().message(), "overflowed its max_size (2)"))
      << StatusToString(s.status());
  auto empty = Load("stack_empty.pbtxt", StackGraph(-1, false, true), JitMode::kNone);
  ASSERT_NE(empty, nullptr);
  auto e = empty->Run({{"a", a}, {"b", a}}, {"pop3"});
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(e.status().message(), "] is empty.")) << StatusToString(e.status());
}

}  // namespace
}  // namespace tfjit
