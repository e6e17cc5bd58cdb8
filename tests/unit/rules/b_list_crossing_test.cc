// Known issue B (compiler/rules/b_list_crossing.h): TF's message, the boundary check, which
// nodes carry lists, and the autofix that keeps every list on one side of the boundary.
#include "compiler/rules/b_list_crossing.h"

#include <string>
#include <vector>

#include "tests/unit/rules/rules_test_util.h"

namespace tfjit::rules {
namespace {

using testing::BuildGraph;
using testing::ListGraph;

constexpr char kTfText[] = "Support for TensorList crossing the XLA/TF boundary is not implemented";

TEST(ListCrossingRuleTest, BoundaryCheckNamesTheListAndTheDirection) {
  auto g = BuildGraph(ListGraph(4));
  ASSERT_NE(g, nullptr);
  const tf::Output list = *g->FindOutput("push");
  const tf::Output x = *g->FindOutput("x");
  const tf::Output stack = *g->FindOutput("stack");
  EXPECT_TRUE(CheckNoListCrosses({x}, {stack}, "c").ok());
  const absl::Status out = CheckNoListCrosses({x}, {stack, list}, "c");
  testing::ExpectRuleError(out, RuleId::kListCrossing, absl::StatusCode::kUnimplemented, kTfText);
  EXPECT_TRUE(absl::StrContains(out.message(),
                                "push:0 (from 'push' (TensorListPushBack)) "
                                "would leave the compiled c"))
      << out;
  const absl::Status in = CheckNoListCrosses({list}, {stack}, "c");
  testing::ExpectRuleError(in, RuleId::kListCrossing, absl::StatusCode::kUnimplemented, kTfText);
  EXPECT_TRUE(absl::StrContains(in.message(), "would enter the compiled c")) << in;
}

TEST(ListCrossingRuleTest, CarriesTensorListSeesVariantsOnEitherSide) {
  auto g = BuildGraph(ListGraph(4));
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(CarriesTensorList(*g->FindNode("x")));
  EXPECT_FALSE(CarriesTensorList(*g->FindNode("shape")));
  EXPECT_TRUE(CarriesTensorList(*g->FindNode("l")));      // gives one
  EXPECT_TRUE(CarriesTensorList(*g->FindNode("push")));   // takes and gives
  EXPECT_TRUE(CarriesTensorList(*g->FindNode("stack")));  // takes one
}

// With the stack left to the runtime, the push would give it a list, and then the list's
// creator would give the push one: both follow, and nothing else moves.
TEST(ListCrossingRuleTest, AutofixMovesTheWholePathToTheRuntime) {
  auto g = BuildGraph(ListGraph(4));
  ASSERT_NE(g, nullptr);
  std::vector<bool> compiled(g->num_nodes(), true);
  compiled[g->FindNode("stack")->id()] = false;
  const std::vector<KeptInRuntime> kept =
      KeepListsOnOneSide(*g, [](const tf::Node&) { return true; }, {}, compiled);
  std::vector<std::string> names;
  for (const KeptInRuntime& k : kept) names.push_back(k.node->name());
  EXPECT_EQ(names, (std::vector<std::string>{"push", "l"}));
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].why,
            "its TensorList goes to 'stack' (TensorListStack), which runs in the "
            "runtime");
  EXPECT_TRUE(compiled[g->FindNode("x")->id()]);
  EXPECT_TRUE(compiled[g->FindNode("shape")->id()]);
  EXPECT_FALSE(compiled[g->FindNode("l")->id()]);
}

TEST(ListCrossingRuleTest, AutofixLeavesAListThatStaysInside) {
  auto g = BuildGraph(ListGraph(4));
  ASSERT_NE(g, nullptr);
  std::vector<bool> compiled(g->num_nodes(), true);
  EXPECT_TRUE(KeepListsOnOneSide(*g, [](const tf::Node&) { return true; }, {}, compiled).empty());
  // A consumer that does not run (outside the pruned subgraph) takes nothing across.
  compiled[g->FindNode("stack")->id()] = false;
  const tf::Node* stack = g->FindNode("stack");
  EXPECT_TRUE(
      KeepListsOnOneSide(*g, [&](const tf::Node& n) { return &n != stack; }, {}, compiled).empty());
}

TEST(ListCrossingRuleTest, AutofixKeepsAFetchedListInTheRuntime) {
  auto g = BuildGraph(ListGraph(4));
  ASSERT_NE(g, nullptr);
  std::vector<bool> compiled(g->num_nodes(), true);
  const std::vector<KeptInRuntime> kept = KeepListsOnOneSide(
      *g, [](const tf::Node&) { return true; }, {{g->FindNode("l"), 0}}, compiled);
  ASSERT_FALSE(kept.empty());
  EXPECT_EQ(kept[0].node->name(), "l");
  EXPECT_EQ(kept[0].why, "its TensorList is an output of the function");
  // The push then takes its list from the runtime, and the stack from the push.
  EXPECT_FALSE(compiled[g->FindNode("push")->id()]);
  EXPECT_FALSE(compiled[g->FindNode("stack")->id()]);
}

}  // namespace
}  // namespace tfjit::rules
