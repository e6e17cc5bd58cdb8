// The unsupported-op rule (compiler/rules/unsupported_ops.h): TF's message, listing every op
// that has no lowering in must-compile code.
#include "compiler/rules/unsupported_ops.h"

#include "tests/unit/rules/rules_test_util.h"

namespace tfjit::rules {
namespace {

TEST(UnsupportedOpsRuleTest, MessageListsEveryOpInTfsWords) {
  const absl::Status status =
      UnsupportedOpsError("g.pb", "/job:localhost/replica:0/task:0/device:CPU:0",
                          {"Foo (no lowering){{node a}}", "Bar (no lowering){{node b}}"});
  testing::ExpectRuleError(status, RuleId::kUnsupportedOps, absl::StatusCode::kInvalidArgument,
                           "Detected unsupported operations when trying to compile graph g.pb on "
                           "/job:localhost/replica:0/task:0/device:CPU:0: Foo (no "
                           "lowering){{node a}}; Bar (no lowering){{node b}}");
}

}  // namespace
}  // namespace tfjit::rules
