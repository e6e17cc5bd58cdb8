// Tests for runtime/kernels/array_gather_kernels.cc: GatherV2 (negative axis, batch_dims,
// out-of-range error text), Gather, OneHot (negative/out-of-range indices, axis) and Where.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/runtime/kernel_test_util.h"

namespace tfjit::runtime {
namespace {

using ::testing::ElementsAre;
using namespace ::tfjit::runtime::testing;  // NOLINT: test builders

absl::StatusOr<Tensor> GatherV2(const Tensor& params, const Tensor& indices, int32_t axis,
                                int64_t batch_dims = 0) {
  return OpRunner("GatherV2")
      .Type("Tparams", params.dtype())
      .Type("Tindices", indices.dtype())
      .Type("Taxis", DType::kInt32)
      .Int("batch_dims", batch_dims)
      .Input(params)
      .Input(indices)
      .Input(I32({}, {axis}))
      .Run0();
}

TEST(GatherKernelsTest, GatherV2AlongNegativeAxis) {
  auto out = GatherV2(I32({2, 3}, {1, 2, 3, 4, 5, 6}), I64({2, 2}, {2, 0, 0, 0}), -1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ShapeString(), "int32[2,2,2]");
  EXPECT_THAT(Values(*out), ElementsAre(3, 1, 1, 1, 6, 4, 4, 4));
  auto empty = GatherV2(I32({2, 3}, {1, 2, 3, 4, 5, 6}), I32({0}, {}), 0);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->ShapeString(), "int32[0,3]");
}

TEST(GatherKernelsTest, GatherV2BatchDims) {
  // params [2, 3], indices [2, 2], batch_dims 1: row b gathers its own indices.
  auto out = GatherV2(I32({2, 3}, {1, 2, 3, 4, 5, 6}), I32({2, 2}, {2, 0, 1, 1}), 1, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ShapeString(), "int32[2,2]");
  EXPECT_THAT(Values(*out), ElementsAre(3, 1, 5, 5));
  auto negative = GatherV2(I32({2, 3}, {1, 2, 3, 4, 5, 6}), I32({2, 2}, {2, 0, 1, 1}), 1, -1);
  ASSERT_TRUE(negative.ok()) << negative.status();
  EXPECT_THAT(Values(*negative), ElementsAre(3, 1, 5, 5));
  auto bad = GatherV2(I32({2, 3}, {1, 2, 3, 4, 5, 6}), I32({2, 2}, {0, 0, 0, 0}), 0, 1);
  TFJIT_EXPECT_ERROR(bad, absl::StatusCode::kInvalidArgument, "batch_dims");
}

TEST(GatherKernelsTest, OutOfRangeIndicesFailWithTfText) {
  TFJIT_EXPECT_ERROR(GatherV2(F32({5, 3}, {}), I32({2}, {1, 5}), 0),
                     absl::StatusCode::kInvalidArgument, "indices[1] = 5 is not in [0, 5)");
  TFJIT_EXPECT_ERROR(GatherV2(F32({5, 3}, {}), I32({2, 2}, {0, 1, -1, 2}), 0),
                     absl::StatusCode::kInvalidArgument, "indices[1,0] = -1 is not in [0, 5)");
  auto v1 = OpRunner("Gather")
                .Type("Tparams", DType::kInt32)
                .Type("Tindices", DType::kInt32)
                .Input(I32({3}, {7, 8, 9}))
                .Input(I32({2}, {2, 3}))
                .Run0();
  TFJIT_EXPECT_ERROR(v1, absl::StatusCode::kInvalidArgument, "indices[1] = 3 is not in [0, 3)");
  auto ok = OpRunner("Gather")
                .Type("Tparams", DType::kInt32)
                .Type("Tindices", DType::kInt32)
                .Input(I32({3}, {7, 8, 9}))
                .Input(I32({2}, {2, 0}))
                .Run0();
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_THAT(Values(*ok), ElementsAre(9, 7));
}

absl::StatusOr<Tensor> OneHot(const Tensor& indices, int32_t depth, int64_t axis) {
  return OpRunner("OneHot")
      .T(DType::kFloat32)
      .Type("TI", indices.dtype())
      .Int("axis", axis)
      .Input(indices)
      .Input(I32({}, {depth}))
      .Input(F32({}, {5}))
      .Input(F32({}, {-1}))
      .Run0();
}

TEST(GatherKernelsTest, OneHotOnOffValuesAndAxis) {
  auto last = OneHot(I64({3}, {0, -1, 3}), 3, -1);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->ShapeString(), "float32[3,3]");
  EXPECT_THAT(Values(*last), ElementsAre(5, -1, -1, -1, -1, -1, -1, -1, -1));
  auto first = OneHot(I32({2}, {1, 0}), 2, 0);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(Values(*first), ElementsAre(-1, 5, 5, -1));  // out[j][i] = idx[i] == j
  TFJIT_EXPECT_ERROR(OneHot(I32({2}, {1, 0}), -1, -1), absl::StatusCode::kInvalidArgument,
                     "depth must be non-negative");
  TFJIT_EXPECT_ERROR(OneHot(I32({2}, {1, 0}), 2, 2), absl::StatusCode::kInvalidArgument,
                     "Expected axis to be -1 or between [0, 2)");
}

TEST(GatherKernelsTest, WhereListsTrueCoordinates) {
  auto out = OpRunner("Where")
                 .T(DType::kBool)
                 .Input(Bool({2, 3}, {false, true, false, true, false, true}))
                 .Run0();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ShapeString(), "int64[3,2]");
  EXPECT_THAT(Values(*out), ElementsAre(0, 1, 1, 0, 1, 2));
  auto nums = OpRunner("Where").T(DType::kFloat32).Input(F32({3}, {0, -2, 0})).Run0();
  ASSERT_TRUE(nums.ok()) << nums.status();
  EXPECT_THAT(Values(*nums), ElementsAre(1));
}

}  // namespace
}  // namespace tfjit::runtime
