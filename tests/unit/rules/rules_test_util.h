// Helpers for the rules' tests: graphs from inline GraphDef text, and the check that an error
// came from the rule it should name, with that name surviving added context.
#ifndef TFJIT_TESTS_UNIT_RULES_RULES_TEST_UTIL_H_
#define TFJIT_TESTS_UNIT_RULES_RULES_TEST_UTIL_H_

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "compiler/rules/rule.h"
#include "core/status.h"
#include "frontend/graph.h"
#include "frontend/proto/graph.pb.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace tfjit::rules::testing {

inline std::unique_ptr<tf::Graph> BuildGraph(const std::string& text) {
  tensorflow::GraphDef def;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def)) << text;
  auto graph = tf::Graph::Build(def, "rules_test.pbtxt");
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : nullptr;
}

// `status` has `code`, starts with `prefix` (TF's text) and names `rule`, also once a caller
// has added context on the way up.
inline void ExpectRuleError(const absl::Status& status, RuleId rule, absl::StatusCode code,
                            const std::string& prefix) {
  EXPECT_EQ(status.code(), code) << status;
  EXPECT_TRUE(absl::StartsWith(status.message(), prefix)) << status;
  EXPECT_EQ(RuleOfError(status), rule) << status;
  EXPECT_EQ(RuleOfError(AppendContext(status, "while compiling cluster_0")), rule);
}

// A float32 placeholder `name` of shape [2].
inline std::string Placeholder(const std::string& name) {
  return "node { name: '" + name +
         "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' "
         "value { shape { dim { size: 2 } } } } }\n";
}

// An int32 constant `name` holding `value` as a 1-element vector (or a scalar when `scalar`).
inline std::string IntConst(const std::string& name, int value, bool scalar = false) {
  return "node { name: '" + name +
         "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value "
         "{ tensor { dtype: DT_INT32 tensor_shape { " +
         (scalar ? std::string() : std::string("dim { size: 1 } ")) +
         "} int_val: " + std::to_string(value) + " } } } }\n";
}

// x -> EmptyTensorList(shape, max) -> TensorListPushBack -> TensorListStack, with
// max_num_elements `max`.
inline std::string ListGraph(int max) {
  return Placeholder("x") + IntConst("shape", 2) + IntConst("n", max, /*scalar=*/true) + R"pb(
    node { name: "l" op: "EmptyTensorList" input: "shape" input: "n"
           attr { key: "element_dtype" value { type: DT_FLOAT } }
           attr { key: "shape_type" value { type: DT_INT32 } } }
    node { name: "push" op: "TensorListPushBack" input: "l" input: "x"
           attr { key: "element_dtype" value { type: DT_FLOAT } } }
    node { name: "stack" op: "TensorListStack" input: "push" input: "shape"
           attr { key: "element_dtype" value { type: DT_FLOAT } } }
  )pb";
}

}  // namespace tfjit::rules::testing

#endif  // TFJIT_TESTS_UNIT_RULES_RULES_TEST_UTIL_H_
