// ClusterShapes (runtime/shape_policy.h): which executable each launch's shapes get under the
// three modes, the batch inputs a second batch size reveals, the guard at batch sizes 0 and 1,
// a class that failed, TF's brake on clusters that compile more than they run, and buckets.
#include "runtime/shape_policy.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace tfjit::runtime {
namespace {

using Dims = std::vector<std::vector<int64_t>>;
using Kind = ShapeChoice::Kind;

// Inputs: x [b, 4] (data), w [4, 2] (a variable's value: never the batch), n [b] (data).
Dims Launch(int64_t b) { return {{b, 4}, {4, 2}, {b}}; }
const std::vector<bool> kEligible = {true, false, true};

TEST(ClusterShapesTest, AutoCompilesStaticFirstThenOneSymbolicClass) {
  ClusterShapes shapes;
  EXPECT_EQ(shapes.Choose(ShapeMode::kAuto, Launch(4), kEligible).kind, Kind::kStatic);
  EXPECT_EQ(shapes.Choose(ShapeMode::kAuto, Launch(4), kEligible).kind, Kind::kStatic);
  const ShapeChoice second = shapes.Choose(ShapeMode::kAuto, Launch(6), kEligible);
  ASSERT_EQ(second.kind, Kind::kSymbolic);
  EXPECT_EQ(second.batch, 6);
  EXPECT_EQ(second.batch_inputs, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(second.class_key, "|?b,4|[4,2]|?b");
  // Every later size >= 2 is the same class, the first one included.
  for (int64_t b : {2, 3, 4, 17, 1000}) {
    const ShapeChoice c = shapes.Choose(ShapeMode::kAuto, Launch(b), kEligible);
    EXPECT_EQ(c.kind, Kind::kSymbolic) << b;
    EXPECT_EQ(c.batch, b);
    EXPECT_EQ(c.class_key, second.class_key);
  }
  // 0 and 1 stay static; so does a shape that differs elsewhere.
  EXPECT_EQ(shapes.Choose(ShapeMode::kAuto, Launch(1), kEligible).kind, Kind::kStatic);
  EXPECT_EQ(shapes.Choose(ShapeMode::kAuto, Launch(0), kEligible).kind, Kind::kStatic);
  EXPECT_EQ(shapes.Choose(ShapeMode::kAuto, {{4, 5}, {4, 2}, {4}}, kEligible).kind, Kind::kStatic);
  // x and n disagreeing on the batch size is not the class.
  EXPECT_EQ(shapes.Choose(ShapeMode::kAuto, {{5, 4}, {4, 2}, {6}}, kEligible).kind, Kind::kStatic);
  // The class counts once a launch ran on its executable.
  EXPECT_EQ(shapes.Summary(), "static x5");
  shapes.MarkServed(second.class_key, 0);
  EXPECT_EQ(shapes.Summary(), "static x5, symbolic (batch >= 2) x1");
}

// Buckets: the smallest that holds a batch size; padding repeats the last row (or, for the
// tests, is NaN); the first rows come back; the summary lists the buckets that served and why
// a class could not use them.
TEST(ClusterShapesTest, BucketsPadAndSummarize) {
  const std::vector<int64_t> buckets = {4, 8, 16};
  EXPECT_EQ(BucketFor(buckets, 2), 4);
  EXPECT_EQ(BucketFor(buckets, 4), 4);
  EXPECT_EQ(BucketFor(buckets, 5), 8);
  EXPECT_EQ(BucketFor(buckets, 16), 16);
  EXPECT_EQ(BucketFor(buckets, 17), 0);
  const Tensor x = Tensor::FromVector<int32_t>(DType::kInt32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor padded = PadRows(x, 4);
  EXPECT_EQ(padded.dims(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(std::vector<int32_t>(padded.data<int32_t>(), padded.data<int32_t>() + 12),
            (std::vector<int32_t>{1, 2, 3, 4, 5, 6, 4, 5, 6, 4, 5, 6}));
  const Tensor back = FirstRows(padded, 2);
  EXPECT_EQ(back.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(std::vector<int32_t>(back.data<int32_t>(), back.data<int32_t>() + 6),
            (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  SetPaddingForTesting(PaddingFill::kNaN);
  const Tensor f = PadRows(Tensor::FromVector<float>(DType::kFloat32, {1, 2}, {1, 2}), 3);
  SetPaddingForTesting(PaddingFill::kRepeatLastRow);
  EXPECT_EQ(f.data<float>()[1], 2.0f);
  EXPECT_TRUE(std::isnan(f.data<float>()[2]) && std::isnan(f.data<float>()[5]));

  ClusterShapes shapes;
  shapes.Choose(ShapeMode::kAuto, Launch(4), kEligible);
  const ShapeChoice c = shapes.Choose(ShapeMode::kAuto, Launch(6), kEligible);
  ASSERT_EQ(c.kind, Kind::kSymbolic);
  EXPECT_EQ(shapes.RowsOf(c.class_key), nullptr);
  hlo::RowAnalysis rows;
  rows.reason = "%sum reduces over the batch (dim 0)";
  shapes.SetRows(c.class_key, rows);
  ASSERT_NE(shapes.RowsOf(c.class_key), nullptr);
  EXPECT_FALSE(shapes.RowsOf(c.class_key)->independent);
  shapes.MarkServed(c.class_key, 8);
  shapes.MarkServed(c.class_key, 4);
  shapes.MarkServed(c.class_key, 8);
  EXPECT_EQ(shapes.Summary(),
            "static x1, buckets 4, 8 (padded)\n  no buckets|?b,4|[4,2]|?b: %sum reduces over "
            "the batch (dim 0)");
}

TEST(ClusterShapesTest, OnlyEligibleInputsCarryTheBatch) {
  ClusterShapes shapes;
  EXPECT_EQ(shapes.Choose(ShapeMode::kAuto, Launch(4), kEligible).kind, Kind::kStatic);
  // The variable's dim 0 changed too: not a batch, so no class.
  EXPECT_EQ(shapes.Choose(ShapeMode::kAuto, {{6, 4}, {6, 2}, {6}}, kEligible).kind, Kind::kStatic);
  // Only n changed: n alone is the batch input.
  const ShapeChoice c = shapes.Choose(ShapeMode::kAuto, {{4, 4}, {4, 2}, {9}}, kEligible);
  ASSERT_EQ(c.kind, Kind::kSymbolic);
  EXPECT_EQ(c.batch_inputs, (std::vector<bool>{false, false, true}));
}

TEST(ClusterShapesTest, SymbolicModeStartsSymbolicAndStaticModeNeverIs) {
  ClusterShapes symbolic;
  const ShapeChoice first = symbolic.Choose(ShapeMode::kSymbolic, Launch(3), kEligible);
  EXPECT_EQ(first.kind, Kind::kSymbolic);
  EXPECT_EQ(first.batch_inputs, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(symbolic.Choose(ShapeMode::kSymbolic, Launch(1), kEligible).kind, Kind::kStatic);
  ClusterShapes fixed;
  for (int64_t b : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}) {
    EXPECT_EQ(fixed.Choose(ShapeMode::kStatic, Launch(b), kEligible).kind, Kind::kStatic);
  }
}

TEST(ClusterShapesTest, AFailedClassCompilesStatically) {
  ClusterShapes shapes;
  shapes.Choose(ShapeMode::kAuto, Launch(4), kEligible);
  const ShapeChoice c = shapes.Choose(ShapeMode::kAuto, Launch(6), kEligible);
  ASSERT_EQ(c.kind, Kind::kSymbolic);
  EXPECT_TRUE(shapes.MarkFailed(c.class_key, "dim 1 of %r depends on the batch size"));
  EXPECT_FALSE(shapes.MarkFailed(c.class_key, "again"));
  EXPECT_EQ(shapes.Choose(ShapeMode::kAuto, Launch(6), kEligible).kind, Kind::kStatic);
  EXPECT_EQ(shapes.Choose(ShapeMode::kAuto, Launch(7), kEligible).kind, Kind::kStatic);
  EXPECT_EQ(shapes.Summary(),
            "static x3\n  not symbolic|?b,4|[4,2]|?b: dim 1 of %r depends on the batch size");
}

// Past 8 static executables a cluster that launched fewer than 50 times per compile runs new
// shapes on kernels; one that ran often enough keeps compiling.
TEST(ClusterShapesTest, TheBrakeStopsClustersThatCompileMoreThanTheyRun) {
  ClusterShapes shapes;
  const std::vector<bool> none = {false, false, false};  // no batch inputs: every shape static
  for (int64_t b = 1; b <= 8; ++b) {
    EXPECT_EQ(shapes.Choose(ShapeMode::kAuto, Launch(b), none).kind, Kind::kStatic) << b;
  }
  EXPECT_EQ(shapes.Choose(ShapeMode::kAuto, Launch(9), none).kind, Kind::kTooMany);
  EXPECT_EQ(shapes.Choose(ShapeMode::kAuto, Launch(3), none).kind, Kind::kStatic);  // compiled
  for (int i = 0; i < 8 * 50; ++i) shapes.Choose(ShapeMode::kAuto, Launch(3), none);
  EXPECT_EQ(shapes.Choose(ShapeMode::kAuto, Launch(9), none).kind, Kind::kStatic);
  EXPECT_EQ(shapes.Choose(ShapeMode::kStatic, Launch(20), none).kind, Kind::kStatic);
}

}  // namespace
}  // namespace tfjit::runtime
