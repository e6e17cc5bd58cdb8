// Errors the known-issue rules (compiler/rules) raise while a cluster is lowered carry the rule
// that fired. Each rule's own message and check are tested in tests/unit/rules/.
#include "compiler/rules/rule.h"

#include <string>

#include "absl/strings/match.h"
#include "compiler/tf2hlo/lowering.h"
#include "core/status.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace tfjit::rules {
namespace {

std::unique_ptr<tf::Graph> BuildGraph(const std::string& text) {
  tensorflow::GraphDef def;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def));
  auto graph = tf::Graph::Build(def, "rules_test.pbtxt");
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : nullptr;
}

// x: f32[2] placeholder; n = Const -1; l = EmptyTensorList(shape [2], max_num_elements n);
// push x; stack. Unbounded: known issue C when lowered.
constexpr char kUnboundedList[] = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: 2 } } } } }
  node { name: "shape" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } }
                                              int_val: 2 } } } }
  node { name: "n" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: -1 } } } }
  node { name: "l" op: "EmptyTensorList" input: "shape" input: "n"
         attr { key: "element_dtype" value { type: DT_FLOAT } }
         attr { key: "shape_type" value { type: DT_INT32 } } }
  node { name: "push" op: "TensorListPushBack" input: "l" input: "x"
         attr { key: "element_dtype" value { type: DT_FLOAT } } }
  node { name: "stack" op: "TensorListStack" input: "push" input: "shape"
         attr { key: "element_dtype" value { type: DT_FLOAT } } }
)pb";

// Lowering raises the rules' errors: an unbounded list (C) and a shape computed inside the
// cluster from nothing known at compile time (F).
TEST(RulesLoweringTest, LoweringNamesTheRuleThatFired) {
  auto g = BuildGraph(kUnboundedList);
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

}  // namespace
}  // namespace tfjit::rules
