// Errors the known-issue rules (compiler/rules) raise while a cluster is lowered carry the rule
// that fired. Each rule's own message and check are tested in tests/unit/rules/.
#include "compiler/rules/rule.h"

#include <string>

#include "absl/strings/match.h"
#include "compiler/tf2hlo/lowering.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "tests/unit/rules/rules_test_util.h"

namespace tfjit::rules {
namespace {

// Lowering raises the rules' errors: an unbounded list (C), and a shape that is not known when
// compiling (F).
TEST(RulesLoweringTest, LoweringNamesTheRuleThatFired) {
  auto g = testing::BuildGraph(testing::ListGraph(-1));
  ASSERT_NE(g, nullptr);
  tf2hlo::ClusterSpec spec;
  spec.name = "lists";
  for (const tf::Node* n : g->topological_order()) {
    if (n->op() == "Placeholder") {
      spec.inputs.push_back({const_cast<tf::Node*>(n), 0});
    } else {
      spec.nodes.push_back(n);
    }
  }
  spec.outputs.push_back(*g->FindOutput("stack"));
  auto lowered = tf2hlo::LowerCluster(spec, {{DType::kFloat32, {2}, std::nullopt}});
  ASSERT_FALSE(lowered.ok());
  EXPECT_EQ(RuleOfError(lowered.status()), RuleId::kBoundedList) << lowered.status();
  EXPECT_TRUE(absl::StrContains(lowered.status().message(), "fixed tensor list size"))
      << lowered.status();
}

TEST(RulesLoweringTest, AShapeUnknownWhenCompilingNamesRuleF) {
  auto g = testing::BuildGraph(testing::Placeholder("x") + R"pb(
    node { name: "s" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
    node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
    node { name: "add" op: "AddV2" input: "s" input: "one"
           attr { key: "T" value { type: DT_INT32 } } }
    node { name: "r" op: "Reshape" input: "x" input: "add"
           attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT32 } } }
  )pb");
  ASSERT_NE(g, nullptr);
  tf2hlo::ClusterSpec spec;
  spec.name = "shapes";
  spec.inputs = {*g->FindOutput("x"), *g->FindOutput("s")};
  spec.nodes = {g->FindNode("one"), g->FindNode("add"), g->FindNode("r")};
  spec.outputs = {*g->FindOutput("r")};
  // s must be constant (MustBeConstantInputs says so), but no value is given for it.
  EXPECT_EQ(tf2hlo::MustBeConstantInputs(spec), std::vector<int>{1});
  auto lowered = tf2hlo::LowerCluster(
      spec, {{DType::kFloat32, {2}, std::nullopt}, {DType::kInt32, {1}, std::nullopt}});
  ASSERT_FALSE(lowered.ok());
  EXPECT_EQ(RuleOfError(lowered.status()), RuleId::kConstantInputs) << lowered.status();
  EXPECT_TRUE(absl::StrContains(lowered.status().message(), "must be a compile-time constant"))
      << lowered.status();
}

}  // namespace
}  // namespace tfjit::rules
