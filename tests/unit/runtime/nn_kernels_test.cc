// Tests for runtime/kernels/nn_kernels.cc: Relu, Relu6, BiasAdd (NHWC/NCHW), Softmax and
// LogSoftmax, with their error paths.
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

const auto kInvalid = absl::StatusCode::kInvalidArgument;

TEST(NnKernelsTest, ReluAndRelu6) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto relu = OpRunner("Relu").T(DType::kFloat32).Input(F32({4}, {-1, 0.5, 7, nan})).Run0();
  ASSERT_TRUE(relu.ok()) << relu.status();
  EXPECT_EQ(relu->data<float>()[0], 0);
  EXPECT_EQ(relu->data<float>()[1], 0.5);
  EXPECT_EQ(relu->data<float>()[2], 7);
  EXPECT_TRUE(std::isnan(relu->data<float>()[3]));
  auto relu6 = OpRunner("Relu6").T(DType::kFloat32).Input(F32({3}, {-1, 3, 7})).Run0();
  ASSERT_TRUE(relu6.ok()) << relu6.status();
  EXPECT_THAT(Values(*relu6), ElementsAre(0, 3, 6));
  auto ints = OpRunner("Relu").T(DType::kInt32).Input(I32({2}, {-5, 5})).Run0();
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_THAT(Values(*ints), ElementsAre(0, 5));
  auto h = OpRunner("Relu6").T(DType::kFloat16).Input(F16({2}, {-5, 6.5})).Run0();
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_THAT(Values(*h), ElementsAre(0, 6));
}

TEST(NnKernelsTest, BiasAddNhwcAndNchw) {
  const Tensor x = F32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto nhwc = OpRunner("BiasAdd").T(DType::kFloat32).Input(x).Input(F32({2}, {10, 20})).Run0();
  ASSERT_TRUE(nhwc.ok()) << nhwc.status();
  EXPECT_THAT(Values(*nhwc), ElementsAre(10, 21, 12, 23, 14, 25, 16, 27));
  auto nchw = OpRunner("BiasAdd")
                  .T(DType::kFloat32)
                  .Str("data_format", "NCHW")
                  .Input(x)
                  .Input(F32({2}, {10, 20}))
                  .Run0();
  ASSERT_TRUE(nchw.ok()) << nchw.status();
  EXPECT_THAT(Values(*nchw), ElementsAre(10, 11, 22, 23, 14, 15, 26, 27));
  auto ints = OpRunner("BiasAdd")
                  .T(DType::kInt32)
                  .Input(I32({1, 2}, {1, 2}))
                  .Input(I32({2}, {-1, 1}))
                  .Run0();
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_THAT(Values(*ints), ElementsAre(0, 3));
}

TEST(NnKernelsTest, BiasAddErrors) {
  TFJIT_EXPECT_ERROR(
      OpRunner("BiasAdd").T(DType::kFloat32).Input(F32({2, 3}, {})).Input(F32({4}, {})).Run0(),
      kInvalid, "bias is float32[4], value is float32[2,3]");
  TFJIT_EXPECT_ERROR(
      OpRunner("BiasAdd").T(DType::kFloat32).Input(F32({3}, {})).Input(F32({3}, {})).Run0(),
      kInvalid, "Input tensor must be at least 2D: value is float32[3]");
  TFJIT_EXPECT_ERROR(
      OpRunner("BiasAdd").T(DType::kFloat32).Input(F32({2, 3}, {})).Input(F32({1, 3}, {})).Run0(),
      kInvalid, "Biases must be 1D");
}

TEST(NnKernelsTest, SoftmaxIsStableAndNormalised) {
  // Large logits would overflow exp() without the max shift.
  auto out = OpRunner("Softmax")
                 .T(DType::kFloat32)
                 .Input(F32({2, 2}, {1000, 1000, 0, std::log(3.0f)}))
                 .Run0();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values(*out), ElementsAre(0.5, 0.5, DoubleNear(0.25, 1e-6), DoubleNear(0.75, 1e-6)));
  auto log = OpRunner("LogSoftmax").T(DType::kFloat64).Input(F64({2}, {0, 0})).Run0();
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_THAT(Values(*log),
              ElementsAre(DoubleNear(-std::log(2.0), 1e-12), DoubleNear(-std::log(2.0), 1e-12)));
  auto h = OpRunner("Softmax").T(DType::kFloat16).Input(F16({2}, {0, 0})).Run0();
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_THAT(Values(*h), ElementsAre(0.5, 0.5));
  auto empty = OpRunner("Softmax").T(DType::kFloat32).Input(F32({2, 0}, {})).Run0();
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->ShapeString(), "float32[2,0]");
}

TEST(NnKernelsTest, SoftmaxErrors) {
  TFJIT_EXPECT_ERROR(OpRunner("Softmax").T(DType::kFloat32).Input(F32({}, {1})).Run0(), kInvalid,
                     "logits must have >= 1 dimension, got float32[]");
  TFJIT_EXPECT_ERROR(OpRunner("Softmax").T(DType::kInt32).Input(I32({1}, {1})).Run0(), kInvalid,
                     "no Softmax kernel for dtype int32");
}

}  // namespace
}  // namespace tfjit::runtime
