// Known issue F (compiler/rules/f_constant_inputs.h): TF's message, and the walk that finds
// which cluster inputs decide a shape.
#include "compiler/rules/f_constant_inputs.h"

#include <string>
#include <vector>

#include "tests/unit/rules/rules_test_util.h"

namespace tfjit::rules {
namespace {

using testing::BuildGraph;

// Cluster {add, reshape, shape_of, reshape2}, inputs x, y, s: reshape takes its shape from
// Add(s, one), reshape2 from Shape(y): s must be known when compiling, x and y need not be.
constexpr char kGraph[] = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "y" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "s" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
  node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } } }
  node { name: "add" op: "AddV2" input: "s" input: "one" attr { key: "T" value { type: DT_INT32 } } }
  node { name: "reshape" op: "Reshape" input: "x" input: "add"
         attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT32 } } }
  node { name: "shape_of" op: "Shape" input: "y" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "reshape2" op: "Reshape" input: "x" input: "shape_of"
         attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT32 } } }
)pb";

struct Cluster {
  std::vector<const tf::Node*> nodes;
  std::vector<tf::Output> inputs;
};

Cluster MakeCluster(const tf::Graph& g) {
  Cluster c;
  for (const char* name : {"one", "add", "reshape", "shape_of", "reshape2"}) {
    c.nodes.push_back(g.FindNode(name));
  }
  for (const char* name : {"x", "y", "s"}) c.inputs.push_back(*g.FindOutput(name));
  return c;
}

std::vector<int> ReshapeShapes(const tf::Node& node) {
  return node.op() == "Reshape" ? std::vector<int>{1} : std::vector<int>{};
}

TEST(ConstantInputsRuleTest, MessageIsTfsVerbatim) {
  auto g = BuildGraph(kGraph);
  ASSERT_NE(g, nullptr);
  testing::ExpectRuleError(
      NotConstantError(*g->FindNode("reshape"), 1), RuleId::kConstantInputs,
      absl::StatusCode::kInvalidArgument,
      "Input 1 to node `reshape` with op Reshape must be a compile-time constant.\n\nXLA "
      "compilation requires that operator arguments that represent shapes or dimensions be "
      "evaluated to concrete values at compile time. This error means that a shape or dimension "
      "argument could not be evaluated at compile time, usually because the value of the "
      "argument depends on a parameter to the computation, on a variable, or on a stateful "
      "operation such as a random number generator.");
}

TEST(ConstantInputsRuleTest, WalksBackThroughTheClusterAndStopsAtShapes) {
  auto g = BuildGraph(kGraph);
  ASSERT_NE(g, nullptr);
  const Cluster c = MakeCluster(*g);
  auto never = [](const tf::Output&) { return false; };
  // s reaches reshape's shape through add; y only through Shape, which needs no value.
  EXPECT_EQ(InputsThatMustBeConstant(c.nodes, c.inputs, ReshapeShapes, never), std::vector<int>{2});
  // Nothing asks for a value: nothing must be constant.
  EXPECT_TRUE(InputsThatMustBeConstant(
                  c.nodes, c.inputs, [](const tf::Node&) { return std::vector<int>{}; }, never)
                  .empty());
}

TEST(ConstantInputsRuleTest, StopsAtValuesSizedAtRunTime) {
  auto g = BuildGraph(kGraph);
  ASSERT_NE(g, nullptr);
  const Cluster c = MakeCluster(*g);
  const tf::Node* add = g->FindNode("add");
  EXPECT_TRUE(
      InputsThatMustBeConstant(c.nodes, c.inputs, ReshapeShapes, [&](const tf::Output& out) {
        return out.node == add;
      }).empty());
}

TEST(ConstantInputsRuleTest, AProducerOutsideTheClusterIsAnInputNotAWalk) {
  auto g = BuildGraph(kGraph);
  ASSERT_NE(g, nullptr);
  // With add outside the cluster, add:0 is the cluster's input and must be constant; s is
  // not the cluster's concern.
  Cluster c = MakeCluster(*g);
  c.nodes.erase(c.nodes.begin() + 1);
  c.inputs.push_back(*g->FindOutput("add"));
  EXPECT_EQ(InputsThatMustBeConstant(c.nodes, c.inputs, ReshapeShapes,
                                     [](const tf::Output&) { return false; }),
            std::vector<int>{3});
}

}  // namespace
}  // namespace tfjit::rules
