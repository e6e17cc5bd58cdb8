// Tests for runtime/kernels/array_shape_kernels.cc: Tile, Pad/PadV2, MirrorPad modes, ReverseV2,
// BroadcastTo, Size/Rank/ShapeN and Range, with hand-computed values and error paths.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/runtime/kernel_test_util.h"

namespace tfjit::runtime {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using namespace ::tfjit::runtime::testing;  // NOLINT: test builders

TEST(ShapeKernelsTest, Tile) {
  auto out = OpRunner("Tile").T(DType::kInt32).Input(I32({2}, {1, 2})).Input(I32({1}, {3})).Run0();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values(*out), ElementsAre(1, 2, 1, 2, 1, 2));
  auto zero = OpRunner("Tile").T(DType::kInt32).Input(I32({2}, {1, 2})).Input(I32({1}, {0})).Run0();
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(zero->ShapeString(), "int32[0]");
  auto neg = OpRunner("Tile").T(DType::kInt32).Input(I32({2}, {1, 2})).Input(I32({1}, {-1})).Run0();
  TFJIT_EXPECT_ERROR(neg, absl::StatusCode::kInvalidArgument, "Expected multiples[0] >= 0");
}

TEST(ShapeKernelsTest, PadAndPadV2) {
  const Tensor pads = I32({1, 2}, {1, 2});
  auto pad = OpRunner("Pad").T(DType::kFloat32).Input(F32({2}, {5, 6})).Input(pads).Run0();
  ASSERT_TRUE(pad.ok()) << pad.status();
  EXPECT_THAT(Values(*pad), ElementsAre(0, 5, 6, 0, 0));
  auto v2 = OpRunner("PadV2")
                .T(DType::kInt32)
                .Input(I32({2}, {5, 6}))
                .Input(pads)
                .Input(I32({}, {-1}))
                .Run0();
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_THAT(Values(*v2), ElementsAre(-1, 5, 6, -1, -1));
  auto empty =
      OpRunner("PadV2").T(DType::kInt32).Input(I32({0}, {})).Input(pads).Input(I32({}, {7})).Run0();
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_THAT(Values(*empty), ElementsAre(7, 7, 7));
  auto neg =
      OpRunner("Pad").T(DType::kFloat32).Input(F32({2}, {5, 6})).Input(I32({1, 2}, {-1, 0})).Run0();
  TFJIT_EXPECT_ERROR(neg, absl::StatusCode::kInvalidArgument, "Paddings must be non-negative");
}

TEST(ShapeKernelsTest, MirrorPadModes) {
  const Tensor in = I32({3}, {1, 2, 3});
  auto reflect = OpRunner("MirrorPad")
                     .T(DType::kInt32)
                     .Str("mode", "REFLECT")
                     .Input(in)
                     .Input(I32({1, 2}, {2, 2}))
                     .Run0();
  ASSERT_TRUE(reflect.ok()) << reflect.status();
  EXPECT_THAT(Values(*reflect), ElementsAre(3, 2, 1, 2, 3, 2, 1));
  auto sym = OpRunner("MirrorPad")
                 .T(DType::kInt32)
                 .Str("mode", "SYMMETRIC")
                 .Input(in)
                 .Input(I32({1, 2}, {3, 1}))
                 .Run0();
  ASSERT_TRUE(sym.ok()) << sym.status();
  EXPECT_THAT(Values(*sym), ElementsAre(3, 2, 1, 1, 2, 3, 3));
  auto too_big = OpRunner("MirrorPad")
                     .T(DType::kInt32)
                     .Str("mode", "REFLECT")
                     .Input(in)
                     .Input(I32({1, 2}, {3, 0}))
                     .Run0();
  TFJIT_EXPECT_ERROR(too_big, absl::StatusCode::kInvalidArgument, "less than the dimension size");
}

TEST(ShapeKernelsTest, ReverseV2AndBroadcastTo) {
  auto rev = OpRunner("ReverseV2")
                 .T(DType::kInt32)
                 .Input(I32({2, 2}, {1, 2, 3, 4}))
                 .Input(I32({1}, {-1}))
                 .Run0();
  ASSERT_TRUE(rev.ok()) << rev.status();
  EXPECT_THAT(Values(*rev), ElementsAre(2, 1, 4, 3));
  auto dup = OpRunner("ReverseV2")
                 .T(DType::kInt32)
                 .Input(I32({2, 2}, {1, 2, 3, 4}))
                 .Input(I32({2}, {1, -1}))
                 .Run0();
  TFJIT_EXPECT_ERROR(dup, absl::StatusCode::kInvalidArgument, "specified more than once");
  auto bt = OpRunner("BroadcastTo")
                .T(DType::kInt32)
                .Input(I32({2, 1}, {1, 2}))
                .Input(I32({3}, {2, 2, 3}))
                .Run0();
  ASSERT_TRUE(bt.ok()) << bt.status();
  EXPECT_EQ(bt->ShapeString(), "int32[2,2,3]");
  EXPECT_THAT(Values(*bt), ElementsAre(1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2));
  auto bad = OpRunner("BroadcastTo")
                 .T(DType::kInt32)
                 .Input(I32({3}, {1, 2, 3}))
                 .Input(I32({1}, {2}))
                 .Run0();
  TFJIT_EXPECT_ERROR(bad, absl::StatusCode::kInvalidArgument, "Unable to broadcast");
}

TEST(ShapeKernelsTest, SizeRankShapeN) {
  auto size = OpRunner("Size")
                  .T(DType::kFloat32)
                  .Type("out_type", DType::kInt64)
                  .Input(F32({2, 3}, {}))
                  .Run0();
  ASSERT_TRUE(size.ok()) << size.status();
  EXPECT_EQ(size->ShapeString(), "int64[]");
  EXPECT_THAT(Values(*size), ElementsAre(6));
  auto rank = OpRunner("Rank").T(DType::kFloat32).Input(F32({2, 0, 3}, {})).Run0();
  ASSERT_TRUE(rank.ok()) << rank.status();
  EXPECT_THAT(Values(*rank), ElementsAre(3));
  auto shapes = OpRunner("ShapeN")
                    .T(DType::kFloat32)
                    .Int("N", 2)
                    .Input(F32({2, 3}, {}))
                    .Input(F32({}, {1}))
                    .Run();
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_THAT(Values((*shapes)[0]), ElementsAre(2, 3));
  EXPECT_EQ((*shapes)[1].ShapeString(), "int32[0]");
}

TEST(ShapeKernelsTest, Range) {
  auto ints = OpRunner("Range")
                  .Type("Tidx", DType::kInt32)
                  .Input(I32({}, {5}))
                  .Input(I32({}, {-4}))
                  .Input(I32({}, {-2}))
                  .Run0();
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_THAT(Values(*ints), ElementsAre(5, 3, 1, -1, -3));
  auto floats = OpRunner("Range")
                    .Type("Tidx", DType::kFloat64)
                    .Input(F64({}, {0}))
                    .Input(F64({}, {1}))
                    .Input(F64({}, {0.25}))
                    .Run0();
  ASSERT_TRUE(floats.ok()) << floats.status();
  EXPECT_THAT(Values(*floats), ElementsAre(0, 0.25, 0.5, 0.75));
  auto zero = OpRunner("Range")
                  .Type("Tidx", DType::kInt32)
                  .Input(I32({}, {0}))
                  .Input(I32({}, {3}))
                  .Input(I32({}, {0}))
                  .Run0();
  TFJIT_EXPECT_ERROR(zero, absl::StatusCode::kInvalidArgument, "Requires delta != 0");
  auto wrong_way = OpRunner("Range")
                       .Type("Tidx", DType::kInt32)
                       .Input(I32({}, {0}))
                       .Input(I32({}, {3}))
                       .Input(I32({}, {-1}))
                       .Run0();
  TFJIT_EXPECT_ERROR(wrong_way, absl::StatusCode::kInvalidArgument, "Requires start >= limit");
}

}  // namespace
}  // namespace tfjit::runtime
