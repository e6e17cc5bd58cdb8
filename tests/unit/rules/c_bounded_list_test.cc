// Known issue C (compiler/rules/c_bounded_list.h): TF's message in both ops' words, and the
// check a list's lowering makes.
#include "compiler/rules/c_bounded_list.h"

#include "tests/unit/rules/rules_test_util.h"

namespace tfjit::rules {
namespace {

using testing::BuildGraph;
using testing::ListGraph;

constexpr char kEmptyListText[] =
    "XLA compilation requires a fixed tensor list size. Set the max number of elements. This "
    "could also happen if you're using a TensorArray in a while loop that does not have its "
    "maximum_iteration set, you can fix this by setting maximum_iteration to a suitable value.";

TEST(BoundedListRuleTest, MessageIsTfsInEachOpsWords) {
  auto g = BuildGraph(ListGraph(-1));
  ASSERT_NE(g, nullptr);
  const tf::Node& list = *g->FindNode("l");
  testing::ExpectRuleError(UnboundedListError(list, /*reserve=*/false), RuleId::kBoundedList,
                           absl::StatusCode::kInvalidArgument, kEmptyListText);
  testing::ExpectRuleError(UnboundedListError(list, /*reserve=*/true), RuleId::kBoundedList,
                           absl::StatusCode::kInvalidArgument,
                           "XLA compilation requires a fixed tensor list size. Set the number "
                           "of elements. This could also happen");
}

TEST(BoundedListRuleTest, FiresOnlyWithoutASizeOrABound) {
  auto g = BuildGraph(ListGraph(-1));
  ASSERT_NE(g, nullptr);
  const tf::Node& list = *g->FindNode("l");
  EXPECT_TRUE(CheckListBounded(list, /*declared=*/4, /*has_bound=*/false).ok());
  EXPECT_TRUE(CheckListBounded(list, /*declared=*/0, /*has_bound=*/false).ok());
  EXPECT_TRUE(CheckListBounded(list, /*declared=*/-1, /*has_bound=*/true).ok());
  testing::ExpectRuleError(CheckListBounded(list, -1, false), RuleId::kBoundedList,
                           absl::StatusCode::kInvalidArgument, kEmptyListText);
}

TEST(BoundedListRuleTest, ReserveGetsItsOwnWording) {
  auto g = BuildGraph(testing::IntConst("shape", 2) + testing::IntConst("n", -1, true) + R"pb(
    node { name: "r" op: "TensorListReserve" input: "shape" input: "n"
           attr { key: "element_dtype" value { type: DT_FLOAT } }
           attr { key: "shape_type" value { type: DT_INT32 } } }
  )pb");
  ASSERT_NE(g, nullptr);
  const absl::Status status = CheckListBounded(*g->FindNode("r"), -1, false);
  EXPECT_TRUE(absl::StrContains(status.message(), "Set the number of elements.")) << status;
  EXPECT_EQ(RuleOfError(status), RuleId::kBoundedList);
}

}  // namespace
}  // namespace tfjit::rules
