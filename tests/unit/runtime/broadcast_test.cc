// Tests for runtime/kernels/broadcast: result shapes, incompatibility and collapsed strides.
#include "runtime/kernels/broadcast.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tfjit::runtime {
namespace {

using ::testing::ElementsAre;

// The offset of operand k for every output element, by brute force through Offsets().
std::vector<int64_t> AllOffsets(const BroadcastPlan& plan, int k) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < plan.num_elements; ++i) {
    int64_t offsets[4];
    plan.Offsets(i, offsets);
    out.push_back(offsets[k]);
  }
  return out;
}

TEST(BroadcastTest, MatrixPlusRowVector) {
  auto plan = MakeBroadcastPlan({{2, 3}, {3}});
  ASSERT_TRUE(plan.has_value());
  EXPECT_THAT(plan->out_dims, ElementsAre(2, 3));
  EXPECT_EQ(plan->num_elements, 6);
  EXPECT_THAT(AllOffsets(*plan, 0), ElementsAre(0, 1, 2, 3, 4, 5));
  EXPECT_THAT(AllOffsets(*plan, 1), ElementsAre(0, 1, 2, 0, 1, 2));
}

TEST(BroadcastTest, ColumnTimesRowIsOuterProduct) {
  auto plan = MakeBroadcastPlan({{2, 1}, {1, 3}});
  ASSERT_TRUE(plan.has_value());
  EXPECT_THAT(plan->out_dims, ElementsAre(2, 3));
  EXPECT_THAT(AllOffsets(*plan, 0), ElementsAre(0, 0, 0, 1, 1, 1));
  EXPECT_THAT(AllOffsets(*plan, 1), ElementsAre(0, 1, 2, 0, 1, 2));
}

TEST(BroadcastTest, ScalarAndSameShapeCollapseToOneDim) {
  auto plan = MakeBroadcastPlan({{}, {2, 3, 4}});
  ASSERT_TRUE(plan.has_value());
  EXPECT_THAT(plan->dims, ElementsAre(24));
  EXPECT_EQ(plan->inner_stride(0), 0);
  EXPECT_EQ(plan->inner_stride(1), 1);
  auto same = MakeBroadcastPlan({{2, 3, 4}, {2, 3, 4}});
  ASSERT_TRUE(same.has_value());
  EXPECT_THAT(same->dims, ElementsAre(24));
  auto scalars = MakeBroadcastPlan({{}, {}});
  ASSERT_TRUE(scalars.has_value());
  EXPECT_TRUE(scalars->out_dims.empty());
  EXPECT_EQ(scalars->num_elements, 1);
}

TEST(BroadcastTest, MiddleDimBroadcast) {
  // [2,1,2] with [2,3,2]: operand 0 repeats along the middle dim.
  auto plan = MakeBroadcastPlan({{2, 1, 2}, {2, 3, 2}});
  ASSERT_TRUE(plan.has_value());
  EXPECT_THAT(AllOffsets(*plan, 0), ElementsAre(0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3));
}

TEST(BroadcastTest, ZeroSizedDims) {
  auto plan = MakeBroadcastPlan({{0, 3}, {3}});
  ASSERT_TRUE(plan.has_value());
  EXPECT_THAT(plan->out_dims, ElementsAre(0, 3));
  EXPECT_EQ(plan->num_elements, 0);
  auto one_vs_zero = MakeBroadcastPlan({{1}, {0}});
  ASSERT_TRUE(one_vs_zero.has_value());
  EXPECT_THAT(one_vs_zero->out_dims, ElementsAre(0));
  EXPECT_FALSE(MakeBroadcastPlan({{2}, {0}}).has_value());
}

TEST(BroadcastTest, IncompatibleShapes) {
  EXPECT_FALSE(MakeBroadcastPlan({{2, 3}, {4}}).has_value());
  EXPECT_FALSE(MakeBroadcastPlan({{2, 3}, {3, 3}}).has_value());
  EXPECT_FALSE(MakeBroadcastPlan({{3}, {2}, {3}}).has_value());
}

TEST(BroadcastTest, ThreeOperands) {
  auto plan = MakeBroadcastPlan({{2, 1}, {3}, {}});
  ASSERT_TRUE(plan.has_value());
  EXPECT_THAT(plan->out_dims, ElementsAre(2, 3));
  EXPECT_THAT(AllOffsets(*plan, 0), ElementsAre(0, 0, 0, 1, 1, 1));
  EXPECT_THAT(AllOffsets(*plan, 1), ElementsAre(0, 1, 2, 0, 1, 2));
  EXPECT_THAT(AllOffsets(*plan, 2), ElementsAre(0, 0, 0, 0, 0, 0));
}

TEST(BroadcastTest, ForEachRunSplitsAtRowBoundaries) {
  auto plan = MakeBroadcastPlan({{2, 1}, {1, 3}});
  ASSERT_TRUE(plan.has_value());
  std::vector<std::vector<int64_t>> runs;
  ForEachRun(*plan, 1, 5, [&](int64_t o, const int64_t* off, int64_t len) {
    runs.push_back({o, off[0], off[1], len});
  });
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_THAT(runs[0], ElementsAre(1, 0, 1, 2));
  EXPECT_THAT(runs[1], ElementsAre(3, 1, 0, 2));
}

}  // namespace
}  // namespace tfjit::runtime
