// The known-issue rules (compiler/rules): the table names each rule once, every rule's error
// carries TF's exact text (shared/docs/known-issues.md) and names its rule in a payload that
// survives added context, and errors raised while lowering carry the rule that fired.
#include "compiler/rules/rule.h"

#include <set>
#include <string>

#include "absl/strings/match.h"
#include "compiler/rules/a_variable_device.h"
#include "compiler/rules/b_list_crossing.h"
#include "compiler/rules/c_bounded_list.h"
#include "compiler/rules/d_dynamic_array.h"
#include "compiler/rules/e_random_seeds.h"
#include "compiler/rules/f_constant_inputs.h"
#include "compiler/rules/unsupported_ops.h"
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

TEST(RulesTest, TableNamesEachRuleOnce) {
  const std::vector<RuleInfo>& rules = AllRules();
  ASSERT_EQ(rules.size(), 7u);
  const std::string letters = "ABCDEF-";
  std::set<std::string> names;
  for (size_t i = 0; i < rules.size(); ++i) {
    EXPECT_EQ(rules[i].letter, std::string(1, letters[i]));
    EXPECT_EQ(Info(rules[i].id).name, rules[i].name);
    EXPECT_TRUE(names.insert(rules[i].name).second) << rules[i].name;
    EXPECT_GT(std::string(rules[i].summary).size(), 10u);
  }
  EXPECT_EQ(RuleOfError(Internal("no rule")), std::nullopt);
  EXPECT_EQ(RuleOfError(absl::OkStatus()), std::nullopt);
}

TEST(RulesTest, EachRuleRaisesTfsTextAndNamesItself) {
  auto g = BuildGraph(kUnboundedList);
  ASSERT_NE(g, nullptr);
  const tf::Node& list = *g->FindNode("l");
  struct Case {
    absl::Status status;
    RuleId rule;
    absl::StatusCode code;
    std::string starts;
  };
  const std::vector<Case> cases = {
      {VariableOnOtherDeviceError("v", "/job:localhost/replica:0/task:0/device:CPU:0",
                                  "/job:localhost/replica:0/task:0/device:CPU:1", list, "v",
                                  "cluster_0"),
       RuleId::kVariableDevice, absl::StatusCode::kInvalidArgument,
       "Trying to access resource v located in device /job:localhost/replica:0/task:0/device:CPU:0 "
       "from device /job:localhost/replica:0/task:0/device:CPU:1\n Cf. "
       "https://www.tensorflow.org/xla/known_issues#tfvariable_on_a_different_device"},
      {ListCrossingError(tf::Output{const_cast<tf::Node*>(&list), 0}, "cluster_0", true),
       RuleId::kListCrossing, absl::StatusCode::kUnimplemented,
       "Support for TensorList crossing the XLA/TF boundary is not implemented"},
      {UnboundedListError(list, /*reserve=*/false), RuleId::kBoundedList,
       absl::StatusCode::kInvalidArgument,
       "XLA compilation requires a fixed tensor list size. Set the max number of elements. This "
       "could also happen if you're using a TensorArray in a while loop that does not have its "
       "maximum_iteration set, you can fix this by setting maximum_iteration to a suitable "
       "value."},
      {DynamicArrayError(list), RuleId::kDynamicArray, absl::StatusCode::kUnimplemented,
       "TensorArrays with dynamic size are not supported by XLA."},
      {NotConstantError(list, 1), RuleId::kConstantInputs, absl::StatusCode::kInvalidArgument,
       "Input 1 to node `l` with op EmptyTensorList must be a compile-time constant.\n\nXLA "
       "compilation requires that operator arguments that represent shapes or dimensions be "
       "evaluated to concrete values at compile time."},
      {UnsupportedOpsError("g.pb", "/job:localhost/replica:0/task:0/device:CPU:0",
                           {"Foo (no lowering){{node a}}", "Bar (no lowering){{node b}}"}),
       RuleId::kUnsupportedOps, absl::StatusCode::kInvalidArgument,
       "Detected unsupported operations when trying to compile graph g.pb on "
       "/job:localhost/replica:0/task:0/device:CPU:0: Foo (no lowering){{node a}}; Bar"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.status.code(), c.code) << c.status;
    EXPECT_TRUE(absl::StartsWith(c.status.message(), c.starts)) << c.status;
    EXPECT_EQ(RuleOfError(c.status), c.rule) << c.status;
    // The payload outlives the context callers add on the way up.
    EXPECT_EQ(RuleOfError(AppendContext(c.status, "while compiling cluster_0")), c.rule);
  }
  EXPECT_EQ(UnboundedListError(list, /*reserve=*/true).message().substr(0, 69),
            "XLA compilation requires a fixed tensor list size. Set the number of ");
  const tf::Node& x = *g->FindNode("x");
  EXPECT_EQ(IgnoredSeedsWarning(x),
            "Warning: Using tf.random.uniform with XLA compilation will ignore seeds; consider "
            "using tf.random.stateless_uniform instead if reproducible behavior is desired. x");
}

// Lowering raises the rules' errors: an unbounded list (C) and a shape computed inside the
// cluster from nothing known at compile time (F).
TEST(RulesTest, LoweringNamesTheRuleThatFired) {
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
