// Known issues B, C, D and F (shared/docs/known-issues.md) on graphs shaped as TF 2.x writes
// them (jit functions, while_v2 loop variables, TensorList accumulators): without autofix,
// TF's code, exact first line and the node; with autofix, the values of the uncompiled run
// and of a hand computation. Each case runs on the CPU JIT and on the HLO interpreter.
#include <cmath>
#include <filesystem>
#include <fstream>
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

struct Case {
  const char* graph;
  absl::StatusCode code;
  const char* first_line;  // the message starts with it
  const char* node;        // the node the error names
};

const Case kCases[] = {
    {"list_crossing.pbtxt", absl::StatusCode::kUnimplemented,
     "Support for TensorList crossing the XLA/TF boundary is not implemented\n", "Identity"},
    {"unbounded_list.pbtxt", absl::StatusCode::kInvalidArgument,
     "XLA compilation requires a fixed tensor list size. Set the max number of elements. This "
     "could also happen if you're using a TensorArray in a while loop that does not have its "
     "maximum_iteration set, you can fix this by setting maximum_iteration to a suitable "
     "value.\n",
     "TensorArrayV2"},
    {"dynamic_array.pbtxt", absl::StatusCode::kUnimplemented,
     "TensorArrays with dynamic size are not supported by XLA.\n", "write"},
    {"dynamic_array_unshaped.pbtxt", absl::StatusCode::kUnimplemented,
     "TensorArrays with dynamic size are not supported by XLA.\n", "write"},
    {"empty_list_no_max.pbtxt", absl::StatusCode::kInvalidArgument,
     "XLA compilation requires a fixed tensor list size. Set the max number of elements.",
     "EmptyTensorList"},
    {"loop_shape.pbtxt", absl::StatusCode::kInvalidArgument,
     "Input 0 to node `ones` with op Fill must be a compile-time constant.\n\nXLA compilation "
     "requires that operator arguments that represent shapes or dimensions be evaluated to "
     "concrete values at compile time.",
     "ones"},
};

std::string Graph(const std::string& name) {
  return (std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "tf" / "known_issues" / name)
      .string();
}

absl::StatusOr<Tensor> RunOnce(const Case& c, JitMode mode, bool autofix,
                               const std::string& backend, const Tensor& x) {
  SessionOptions options;
  options.jit = mode;
  options.autofix = autofix;
  options.backend = backend;
  auto session = Session::Load(Graph(c.graph), options);
  if (!session.ok()) return session.status();
  auto out = (*session)->Run({{"x", x}}, {"Identity"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

Tensor Input(const Case& c) {
  if (std::string(c.graph) == "loop_shape.pbtxt") {
    return Tensor::FromVector(DType::kFloat32, {}, std::vector<float>{0.75f});
  }
  return Tensor::FromVector(DType::kFloat32, {3}, std::vector<float>{0.5f, -2.0f, 3.0f});
}

// What TF computes for each graph (see the comment at the top of each .pbtxt).
std::vector<float> Expected(const Case& c, const std::vector<float>& x) {
  const std::string g = c.graph;
  std::vector<float> out;
  if (g == "loop_shape.pbtxt") return {x[0] * 1 * 2 * 3 * 4};
  if (g == "empty_list_no_max.pbtxt") return x;  // pushed, then popped back
  const int rows = g == "list_crossing.pbtxt" ? 2 : g == "unbounded_list.pbtxt" ? 5 : 4;  // D: 4
  for (int i = 0; i < rows; ++i) {
    const float scale =
        g == "list_crossing.pbtxt" ? static_cast<float>(i + 1) : static_cast<float>(i);
    for (float v : x) out.push_back(v * scale);
  }
  return out;
}

class KnownIssuesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(KnownIssuesTest, WithoutAutofixTfsErrorNamingTheNode) {
  for (const Case& c : kCases) {
    for (JitMode mode : {JitMode::kOff, JitMode::kAuto, JitMode::kAll}) {
      SCOPED_TRACE(std::string(c.graph) + " mode " + std::to_string(static_cast<int>(mode)));
      absl::StatusOr<Tensor> out = RunOnce(c, mode, /*autofix=*/false, GetParam(), Input(c));
      ASSERT_EQ(out.status().code(), c.code) << StatusToString(out.status());
      EXPECT_TRUE(absl::StartsWith(out.status().message(), c.first_line)) << out.status().message();
      EXPECT_TRUE(absl::StrContains(out.status().message(), c.node)) << out.status().message();
    }
  }
}

TEST_P(KnownIssuesTest, WithAutofixSameValuesAsTheUncompiledRun) {
  for (const Case& c : kCases) {
    const Tensor x = Input(c);
    absl::StatusOr<Tensor> reference = RunOnce(c, JitMode::kNone, false, GetParam(), x);
    ASSERT_TRUE(reference.ok()) << StatusToString(reference.status());
    const std::vector<float> xv(x.data<float>(), x.data<float>() + x.num_elements());
    const std::vector<float> want = Expected(c, xv);
    ASSERT_EQ(reference->num_elements(), static_cast<int64_t>(want.size())) << c.graph;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_FLOAT_EQ(reference->data<float>()[i], want[i]) << c.graph << " element " << i;
    }
    for (JitMode mode : {JitMode::kOff, JitMode::kAuto, JitMode::kAll}) {
      SCOPED_TRACE(std::string(c.graph) + " mode " + std::to_string(static_cast<int>(mode)));
      absl::StatusOr<Tensor> out = RunOnce(c, mode, /*autofix=*/true, GetParam(), x);
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      ASSERT_EQ(out->dims(), reference->dims());
      for (int64_t i = 0; i < out->num_elements(); ++i) {
        EXPECT_FLOAT_EQ(out->data<float>()[i], reference->data<float>()[i]) << "element " << i;
      }
    }
  }
}

// TF's documented workarounds compile as they are, with the error variant's values.
TEST_P(KnownIssuesTest, WorkaroundsCompileWithoutAutofix) {
  const std::pair<const char*, const Case*> kWorkarounds[] = {
      {"list_inside.pbtxt", &kCases[0]},
      {"bounded_list.pbtxt", &kCases[1]},
      {"static_array.pbtxt", &kCases[2]},
  };
  for (const auto& [graph, error_case] : kWorkarounds) {
    Case c = *error_case;
    c.graph = graph;
    const Tensor x = Input(*error_case);
    const std::vector<float> xv(x.data<float>(), x.data<float>() + x.num_elements());
    const std::vector<float> want = Expected(*error_case, xv);
    for (JitMode mode : {JitMode::kNone, JitMode::kOff, JitMode::kAuto, JitMode::kAll}) {
      SCOPED_TRACE(std::string(graph) + " mode " + std::to_string(static_cast<int>(mode)));
      absl::StatusOr<Tensor> out = RunOnce(c, mode, /*autofix=*/false, GetParam(), x);
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      ASSERT_EQ(out->num_elements(), static_cast<int64_t>(want.size()));
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_FLOAT_EQ(out->data<float>()[i], want[i]) << "element " << i;
      }
    }
  }
}

// Known issue D in TF1 form: a TensorArrayV3 with dynamic_size=true in must-compile code.
TEST(KnownIssuesTf1Test, DynamicTensorArrayV3IsIssueD) {
  const std::string path = WriteTempFile("ta_v3.pbtxt", R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "size" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
    node { name: "zero" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
    node { name: "ta" op: "TensorArrayV3" input: "size"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "dynamic_size" value { b: true } } }
    node { name: "write" op: "TensorArrayWriteV3" input: "ta" input: "zero" input: "x"
           input: "ta:1" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "read" op: "TensorArrayReadV3" input: "ta" input: "zero" input: "write"
           attr { key: "dtype" value { type: DT_FLOAT } } }
  )pb");
  const Tensor x = Tensor::FromVector(DType::kFloat32, {2}, std::vector<float>{1.5f, -2.0f});
  for (JitMode mode : {JitMode::kNone, JitMode::kAuto, JitMode::kAll}) {
    SessionOptions options;
    options.jit = mode;
    auto session = Session::Load(path, options);
    ASSERT_TRUE(session.ok()) << session.status();
    auto out = (*session)->Run({{"x", x}}, {"read"});
    if (mode != JitMode::kAll) {  // the runtime runs TF1 TensorArrays
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      EXPECT_EQ((*out)[0].data<float>()[1], -2.0f);
      continue;
    }
    ASSERT_EQ(out.status().code(), absl::StatusCode::kUnimplemented) << out.status();
    EXPECT_TRUE(absl::StartsWith(out.status().message(),
                                 "TensorArrays with dynamic size are not supported by XLA."))
        << out.status().message();
    EXPECT_TRUE(absl::StrContains(out.status().message(), "{{node ta}}")) << out.status();
  }
}

// An auto cluster that cannot compile (here: with autofix, lists join clusters, but this
// list's bound depends on a fed value) runs on kernels instead of failing.
TEST(KnownIssuesAutofixTest, UnprovableListInAutoModeFallsBackToKernels) {
  const std::string path = WriteTempFile("fed_max.pbtxt", R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: 3 } } } } }
    node { name: "max" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "shape" value { shape { } } } }
    node { name: "element_shape" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 3 } } } }
    node { name: "neg_one" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: -1 } } } }
    node { name: "empty" op: "EmptyTensorList" input: "element_shape" input: "neg_one"
           attr { key: "element_dtype" value { type: DT_FLOAT } } attr { key: "shape_type" value { type: DT_INT32 } } }
    node { name: "push" op: "TensorListPushBack" input: "empty" input: "x"
           attr { key: "element_dtype" value { type: DT_FLOAT } } }
    node { name: "push2" op: "TensorListPushBack" input: "push" input: "x"
           attr { key: "element_dtype" value { type: DT_FLOAT } } }
    node { name: "resize" op: "TensorListResize" input: "push2" input: "max" }
    node { name: "stack" op: "TensorListStack" input: "resize" input: "element_shape"
           attr { key: "element_dtype" value { type: DT_FLOAT } } attr { key: "num_elements" value { i: -1 } } }
  )pb");
  SessionOptions options;
  options.jit = JitMode::kAuto;
  options.autofix = true;
  auto session = Session::Load(path, options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto out =
      (*session)->Run({{"x", Tensor::FromVector(DType::kFloat32, {3}, std::vector<float>{1, 2, 3})},
                       {"max", Tensor::FromVector(DType::kInt32, {}, std::vector<int32_t>{3})}},
                      {"stack"});
  ASSERT_TRUE(out.ok()) << StatusToString(out.status());
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ((*out)[0].data<float>()[3], 1.0f);
  EXPECT_EQ((*out)[0].data<float>()[8], 0.0f);  // the resized-in element is unset: zeros
}

// explain lists the known-issue rules that kept nodes out of clusters, by letter and name
// (compiler/rules): auto-clustering leaves TensorList values in the runtime (B), and the
// stateful random op of a seeded graph (E).
TEST(KnownIssuesExplainTest, ExplainListsTheRulesThatFired) {
  SessionOptions options;
  options.jit = JitMode::kAuto;
  auto session = Session::Load(Graph("list_crossing.pbtxt"), options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto text = (*session)->Explain({"Identity"});
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_TRUE(absl::StrContains(*text, "rules that fired:\n")) << *text;
  EXPECT_TRUE(absl::StrContains(*text, "B list-crossing: ")) << *text;
  EXPECT_FALSE(absl::StrContains(*text, "E random-seeds")) << *text;

  const std::string random = WriteTempFile("tfjit_known_issue_e.pbtxt", R"pb(
    node { name: "shape" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } }
                                                int_val: 4 } } } }
    node { name: "u" op: "RandomUniform" input: "shape"
           attr { key: "T" value { type: DT_INT32 } } attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "seed" value { i: 1 } } attr { key: "seed2" value { i: 2 } } }
    node { name: "y" op: "Mul" input: "u" input: "u" attr { key: "T" value { type: DT_FLOAT } } }
  )pb");
  auto seeded = Session::Load(random, options);
  ASSERT_TRUE(seeded.ok()) << seeded.status();
  auto explained = (*seeded)->Explain({"y"});
  ASSERT_TRUE(explained.ok()) << explained.status();
  EXPECT_TRUE(absl::StrContains(*explained, "E random-seeds: 1 node(s), e.g. 'u' (RandomUniform)"))
      << *explained;
}

INSTANTIATE_TEST_SUITE_P(Backends, KnownIssuesTest, ::testing::Values("cpu", "interpreter"));

}  // namespace
}  // namespace tfjit
