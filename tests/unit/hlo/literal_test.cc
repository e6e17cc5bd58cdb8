// Tests for Literal: zero fill, tuples, bitwise equality and the text form of values.
#include "compiler/hlo/literal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/dtype.h"

namespace tfjit::hlo {
namespace {

TEST(LiteralTest, ZeroFilledArrayAndTuple) {
  Literal a(Shape(DType::kFloat32, {2, 3}));
  EXPECT_EQ(a.shape().ToString(), "f32[2,3]");
  for (int i = 0; i < 6; ++i) EXPECT_EQ(a.data<float>()[i], 0.0f);
  Literal t(Shape::Tuple({Shape(DType::kInt32, {2}), Shape::Scalar(DType::kBool)}));
  ASSERT_EQ(t.elements().size(), 2u);
  EXPECT_EQ(t.ValueToString(), "({0, 0}, false)");
}

TEST(LiteralTest, ScalarsPrintShortestRoundTrip) {
  EXPECT_EQ(Literal::Scalar<float>(DType::kFloat32, 1.5f).ValueToString(), "1.5");
  EXPECT_EQ(Literal::Scalar<float>(DType::kFloat32, 0.1f).ValueToString(), "0.1");
  EXPECT_EQ(Literal::Scalar<double>(DType::kFloat64, 0.1).ValueToString(), "0.1");
  EXPECT_EQ(Literal::Scalar<float>(DType::kFloat32, -0.0f).ValueToString(), "-0");
  EXPECT_EQ(Literal::Scalar<float>(DType::kFloat32, 1e20f).ValueToString(), "1e+20");
  EXPECT_EQ(Literal::Scalar<float>(DType::kFloat32, std::numeric_limits<float>::quiet_NaN())
                .ValueToString(),
            "nan");
  EXPECT_EQ(Literal::Scalar<float>(DType::kFloat32, -INFINITY).ValueToString(), "-inf");
  EXPECT_EQ(Literal::Scalar<double>(DType::kFloat64, INFINITY).ValueToString(), "inf");
  EXPECT_EQ(Literal::Scalar<bool>(DType::kBool, true).ValueToString(), "true");
  EXPECT_EQ(Literal::Scalar<int8_t>(DType::kInt8, -128).ValueToString(), "-128");
  EXPECT_EQ(Literal::Scalar<uint64_t>(DType::kUInt64, ~0ull).ValueToString(),
            "18446744073709551615");
}

TEST(LiteralTest, HalfTypesPrintTheirFloatValue) {
  // 0.1 rounds to 0.0999755859375 in f16; its shortest float form is printed.
  EXPECT_EQ(Literal::Scalar<half>(DType::kFloat16, half(0.1f)).ValueToString(), "0.099975586");
  EXPECT_EQ(Literal::Scalar<bfloat16>(DType::kBFloat16, bfloat16(3.0f)).ValueToString(), "3");
}

TEST(LiteralTest, NestedArrays) {
  Literal l = Literal::FromTensor(Tensor::FromVector<int32_t>(DType::kInt32, {2, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(l.ValueToString(), "{{1, 2}, {3, 4}}");
  Literal v = Literal::FromTensor(Tensor::FromVector<float>(DType::kFloat32, {3}, {1, 2.5, -3}));
  EXPECT_EQ(v.ValueToString(), "{1, 2.5, -3}");
  EXPECT_EQ(Literal(Shape(DType::kFloat32, {0})).ValueToString(), "{}");
  EXPECT_EQ(Literal(Shape(DType::kFloat32, {2, 0})).ValueToString(), "{{}, {}}");
}

TEST(LiteralTest, FromTensorSharesBuffer) {
  Tensor t(DType::kFloat32, {4});
  Literal l = Literal::FromTensor(t);
  EXPECT_TRUE(l.tensor().SharesBufferWith(t));
  EXPECT_EQ(l.shape(), Shape(DType::kFloat32, {4}));
}

TEST(LiteralTest, BitwiseEquals) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Literal a = Literal::Scalar<float>(DType::kFloat32, nan);
  Literal b = Literal::Scalar<float>(DType::kFloat32, nan);
  EXPECT_TRUE(a.BitwiseEquals(b));  // equal NaN bits compare equal
  EXPECT_FALSE(Literal::Scalar<float>(DType::kFloat32, 0.0f)
                   .BitwiseEquals(Literal::Scalar<float>(DType::kFloat32, -0.0f)));
  EXPECT_FALSE(Literal::Scalar<int32_t>(DType::kInt32, 1)
                   .BitwiseEquals(Literal::Scalar<uint32_t>(DType::kUInt32, 1)));
  Literal t1 = Literal::MakeTuple({a, Literal::Scalar<int32_t>(DType::kInt32, 7)});
  Literal t2 = Literal::MakeTuple({b, Literal::Scalar<int32_t>(DType::kInt32, 7)});
  Literal t3 = Literal::MakeTuple({b, Literal::Scalar<int32_t>(DType::kInt32, 8)});
  EXPECT_TRUE(t1.BitwiseEquals(t2));
  EXPECT_FALSE(t1.BitwiseEquals(t3));
  EXPECT_EQ(t1.shape().ToString(), "(f32[], s32[])");
}

}  // namespace
}  // namespace tfjit::hlo
