// Known issue A (compiler/rules/a_variable_device.h): TF's message, and auto-clustering's check
// that a resource op and its variable's creator are on one device.
#include "compiler/rules/a_variable_device.h"

#include <map>
#include <string>

#include "tests/unit/rules/rules_test_util.h"

namespace tfjit::rules {
namespace {

using testing::BuildGraph;

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

// v: a float variable; read: ReadVariableOp(v); id: Identity(read).
constexpr char kVariable[] = R"pb(
  node { name: "v" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: 2 } } } }
         attr { key: "shared_name" value { s: "v" } } }
  node { name: "read" op: "ReadVariableOp" input: "v"
         attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "id" op: "Identity" input: "read" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

TEST(VariableDeviceRuleTest, MessageIsTfsWithTheLink) {
  auto g = BuildGraph(kVariable);
  ASSERT_NE(g, nullptr);
  const absl::Status status =
      VariableOnOtherDeviceError("v", kCpu0, kCpu1, *g->FindNode("read"), "v", "cluster_0");
  testing::ExpectRuleError(
      status, RuleId::kVariableDevice, absl::StatusCode::kInvalidArgument,
      std::string("Trying to access resource v located in device ") + kCpu0 + " from device " +
          kCpu1 +
          "\n Cf. https://www.tensorflow.org/xla/known_issues#tfvariable_on_a_different_device");
  EXPECT_TRUE(absl::StrContains(status.message(), "--autofix")) << status;
}

TEST(VariableDeviceRuleTest, FiresOnlyWhenTheCreatorIsElsewhere) {
  auto g = BuildGraph(kVariable);
  ASSERT_NE(g, nullptr);
  std::map<std::string, std::string> devices = {{"v", kCpu0}, {"read", kCpu0}, {"id", kCpu1}};
  auto device_of = [&](const tf::Node& n) -> const std::string& { return devices[n.name()]; };
  EXPECT_EQ(VariableOnOtherDevice(*g->FindNode("read"), device_of), std::nullopt);
  // Input 0 of Identity is not a VarHandleOp: the rule is about variables only.
  EXPECT_EQ(VariableOnOtherDevice(*g->FindNode("id"), device_of), std::nullopt);
  EXPECT_EQ(VariableOnOtherDevice(*g->FindNode("v"), device_of), std::nullopt);
  devices["read"] = kCpu1;
  const std::optional<std::string> why = VariableOnOtherDevice(*g->FindNode("read"), device_of);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, std::string("its variable 'v' lives on ") + kCpu0 + ", the node runs on " +
                      kCpu1 + " (a cluster touches only variables on its own device)");
}

}  // namespace
}  // namespace tfjit::rules
