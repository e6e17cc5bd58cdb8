// Tests for runtime/kernels/reduction_scan_kernels.cc: ArgMax/ArgMin ties and NaN, Cumsum/Cumprod
// exclusive/reverse, TopKV2 stability and errors, EuclideanNorm; L2Loss (nn_kernels.cc).
#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/runtime/kernel_test_util.h"

namespace tfjit::runtime {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using namespace ::tfjit::runtime::testing;  // NOLINT: test builders

absl::StatusOr<Tensor> Arg(const std::string& op, const Tensor& in, int32_t axis,
                           DType out = DType::kInt64) {
  return OpRunner(op)
      .T(in.dtype())
      .Type("Tidx", DType::kInt32)
      .Type("output_type", out)
      .Input(in)
      .Input(I32({}, {axis}))
      .Run0();
}

TEST(ScanKernelsTest, ArgMaxTiesPickTheFirstIndex) {
  auto max = Arg("ArgMax", I32({2, 3}, {1, 3, 3, 2, 2, 0}), 1);
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ(max->ShapeString(), "int64[2]");
  EXPECT_THAT(Values(*max), ElementsAre(1, 0));
  auto min = Arg("ArgMin", I32({2, 3}, {1, 3, 1, 2, 2, 0}), -2, DType::kInt32);
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(min->ShapeString(), "int32[3]");
  EXPECT_THAT(Values(*min), ElementsAre(0, 1, 1));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto with_nan = Arg("ArgMax", F32({4}, {1, nan, 7, nan}), 0);
  ASSERT_TRUE(with_nan.ok());
  EXPECT_THAT(Values(*with_nan), ElementsAre(1));
  TFJIT_EXPECT_ERROR(Arg("ArgMax", F32({0, 2}, {}), 0), absl::StatusCode::kInvalidArgument,
                     "Reduction axis 0 is empty");
  TFJIT_EXPECT_ERROR(Arg("ArgMax", F32({2}, {1, 2}), 1), absl::StatusCode::kInvalidArgument,
                     "out of range");
}

absl::StatusOr<Tensor> Cum(const std::string& op, const Tensor& in, int32_t axis, bool exclusive,
                           bool reverse) {
  return OpRunner(op)
      .T(in.dtype())
      .Type("Tidx", DType::kInt32)
      .Bool("exclusive", exclusive)
      .Bool("reverse", reverse)
      .Input(in)
      .Input(I32({}, {axis}))
      .Run0();
}

TEST(ScanKernelsTest, CumsumAndCumprodModes) {
  const Tensor x = I32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto plain = Cum("Cumsum", x, 1, false, false);
  auto excl = Cum("Cumsum", x, 1, true, false);
  auto rev = Cum("Cumsum", x, -1, false, true);
  auto both = Cum("Cumprod", x, 1, true, true);
  auto rows = Cum("Cumprod", x, 0, false, false);
  ASSERT_TRUE(plain.ok() && excl.ok() && rev.ok() && both.ok() && rows.ok());
  EXPECT_THAT(Values(*plain), ElementsAre(1, 3, 6, 4, 9, 15));
  EXPECT_THAT(Values(*excl), ElementsAre(0, 1, 3, 0, 4, 9));
  EXPECT_THAT(Values(*rev), ElementsAre(6, 5, 3, 15, 11, 6));
  EXPECT_THAT(Values(*both), ElementsAre(6, 3, 1, 30, 6, 1));
  EXPECT_THAT(Values(*rows), ElementsAre(1, 2, 3, 4, 10, 18));
  auto empty = Cum("Cumsum", F32({0, 3}, {}), 0, false, false);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->ShapeString(), "float32[0,3]");
}

TEST(ScanKernelsTest, TopKIsStableAndChecksK) {
  auto out = OpRunner("TopKV2")
                 .T(DType::kInt32)
                 .Input(I32({2, 4}, {1, 3, 3, 2, 0, 0, 9, 0}))
                 .Input(I32({}, {3}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values((*out)[0]), ElementsAre(3, 3, 2, 9, 0, 0));
  EXPECT_THAT(Values((*out)[1]), ElementsAre(1, 2, 3, 2, 0, 1));
  EXPECT_EQ((*out)[1].dtype(), DType::kInt32);
  auto big = OpRunner("TopKV2").T(DType::kInt32).Input(I32({2}, {1, 2})).Input(I32({}, {3})).Run();
  TFJIT_EXPECT_ERROR(big, absl::StatusCode::kInvalidArgument,
                     "input must have at least k columns. Had 2, needed 3");
  auto neg = OpRunner("TopKV2").T(DType::kInt32).Input(I32({2}, {1, 2})).Input(I32({}, {-1})).Run();
  TFJIT_EXPECT_ERROR(neg, absl::StatusCode::kInvalidArgument, "Need k >= 0, got -1");
}

TEST(ScanKernelsTest, L2LossAndEuclideanNorm) {
  auto l2 = OpRunner("L2Loss").T(DType::kFloat32).Input(F32({3}, {1, 2, 3})).Run0();
  ASSERT_TRUE(l2.ok()) << l2.status();
  EXPECT_EQ(l2->ShapeString(), "float32[]");
  EXPECT_THAT(Values(*l2), ElementsAre(7));
  auto empty = OpRunner("L2Loss").T(DType::kFloat32).Input(F32({0}, {})).Run0();
  ASSERT_TRUE(empty.ok());
  EXPECT_THAT(Values(*empty), ElementsAre(0));
  auto norm = OpRunner("EuclideanNorm")
                  .T(DType::kFloat32)
                  .Type("Tidx", DType::kInt32)
                  .Bool("keep_dims", true)
                  .Input(F32({2, 2}, {3, 4, 6, 8}))
                  .Input(I32({1}, {1}))
                  .Run0();
  ASSERT_TRUE(norm.ok()) << norm.status();
  EXPECT_EQ(norm->ShapeString(), "float32[2,1]");
  EXPECT_THAT(Values(*norm), ElementsAre(5, 10));
}

}  // namespace
}  // namespace tfjit::runtime
