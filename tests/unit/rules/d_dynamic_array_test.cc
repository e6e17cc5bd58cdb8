// Known issue D (compiler/rules/d_dynamic_array.h): the message, and which nodes grow an array
// in TF1's and TF2's forms.
#include "compiler/rules/d_dynamic_array.h"

#include <string>

#include "tests/unit/rules/rules_test_util.h"

namespace tfjit::rules {
namespace {

using testing::BuildGraph;

constexpr char kText[] = "TensorArrays with dynamic size are not supported by XLA.";

std::string TensorArray(const std::string& name, bool dynamic) {
  return "node { name: '" + name +
         "' op: 'TensorArrayV3' input: 'size' attr { key: 'dtype' value { type: DT_FLOAT } } "
         "attr { key: 'dynamic_size' value { b: " +
         (dynamic ? "true" : "false") + " } } }\n";
}

// Two TF1 arrays, and a TF2 list with a growing and a plain write and a resize.
std::string Graph() {
  return testing::Placeholder("x") + testing::IntConst("shape", 2) +
         testing::IntConst("size", 3, true) + testing::IntConst("i", 5, true) +
         TensorArray("grows", true) + TensorArray("fixed", false) + R"pb(
    node { name: "l" op: "TensorListReserve" input: "shape" input: "size"
           attr { key: "element_dtype" value { type: DT_FLOAT } }
           attr { key: "shape_type" value { type: DT_INT32 } } }
    node { name: "grow" op: "TensorListSetItem" input: "l" input: "i" input: "x"
           attr { key: "element_dtype" value { type: DT_FLOAT } }
           attr { key: "resize_if_index_out_of_bounds" value { b: true } } }
    node { name: "set" op: "TensorListSetItem" input: "l" input: "i" input: "x"
           attr { key: "element_dtype" value { type: DT_FLOAT } } }
    node { name: "resize" op: "TensorListResize" input: "l" input: "size" }
  )pb";
}

TEST(DynamicArrayRuleTest, MessageNamesTheRule) {
  auto g = BuildGraph(Graph());
  ASSERT_NE(g, nullptr);
  const absl::Status status = DynamicArrayError(*g->FindNode("grows"));
  testing::ExpectRuleError(status, RuleId::kDynamicArray, absl::StatusCode::kUnimplemented, kText);
  EXPECT_TRUE(absl::StrContains(status.ToString(), "grows")) << status;
}

TEST(DynamicArrayRuleTest, TellsGrowingArraysFromFixedOnes) {
  auto g = BuildGraph(Graph());
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(IsDynamicTensorArray(*g->FindNode("grows")));
  EXPECT_FALSE(IsDynamicTensorArray(*g->FindNode("fixed")));
  EXPECT_FALSE(IsDynamicTensorArray(*g->FindNode("l")));
  EXPECT_TRUE(GrowsTensorList(*g->FindNode("grow")));
  EXPECT_TRUE(GrowsTensorList(*g->FindNode("resize")));
  EXPECT_FALSE(GrowsTensorList(*g->FindNode("set")));
  EXPECT_FALSE(GrowsTensorList(*g->FindNode("l")));
}

TEST(DynamicArrayRuleTest, OnlyABoundedGrowingWritePasses) {
  auto g = BuildGraph(Graph());
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(CheckListGrowth(*g->FindNode("set"), /*bounded=*/false).ok());
  EXPECT_TRUE(CheckListGrowth(*g->FindNode("grow"), /*bounded=*/true).ok());
  testing::ExpectRuleError(CheckListGrowth(*g->FindNode("grow"), false), RuleId::kDynamicArray,
                           absl::StatusCode::kUnimplemented, kText);
  // No autofix sizes a resize, even where the loop is bounded.
  testing::ExpectRuleError(CheckListGrowth(*g->FindNode("resize"), true), RuleId::kDynamicArray,
                           absl::StatusCode::kUnimplemented, kText);
}

}  // namespace
}  // namespace tfjit::rules
