// Tests for dtype tables: HLO names, TF enum values (types.proto) and sizes.
#include "core/dtype.h"

#include "gtest/gtest.h"

namespace tfjit {
namespace {

TEST(DTypeTest, TfEnumValuesMatchTypesProto) {
  EXPECT_EQ(DTypeFromTfEnum(1), DType::kFloat32);
  EXPECT_EQ(DTypeFromTfEnum(3), DType::kInt32);
  EXPECT_EQ(DTypeFromTfEnum(10), DType::kBool);
  EXPECT_EQ(DTypeFromTfEnum(19), DType::kFloat16);
  EXPECT_EQ(DTypeFromTfEnum(101), DType::kFloat32);  // DT_FLOAT_REF
  EXPECT_EQ(DTypeFromTfEnum(8), DType::kComplex64);
  EXPECT_EQ(DTypeFromTfEnum(18), DType::kComplex128);
  EXPECT_EQ(DTypeFromTfEnum(11), std::nullopt);  // qint8 unsupported
  EXPECT_EQ(DTypeToTfEnum(DType::kComplex128), 18);
  EXPECT_EQ(DTypeToTfEnum(DType::kInt64), 9);
}

TEST(DTypeTest, HloNamesRoundTrip) {
  for (int i = static_cast<int>(DType::kBool); i <= static_cast<int>(DType::kFloat64); ++i) {
    DType d = static_cast<DType>(i);
    EXPECT_EQ(DTypeFromHloName(DTypeHloName(d)), d) << DTypeName(d);
  }
  EXPECT_EQ(DTypeHloName(DType::kBool), "pred");
  EXPECT_EQ(DTypeFromHloName("f17"), std::nullopt);
}

TEST(DTypeTest, Sizes) {
  EXPECT_EQ(DTypeSize(DType::kFloat16), 2u);
  EXPECT_EQ(DTypeSize(DType::kFloat64), 8u);
  EXPECT_EQ(DTypeSize(DType::kBool), 1u);
  EXPECT_EQ(DTypeSize(DType::kString), 0u);
  EXPECT_EQ(DTypeSize(DType::kComplex64), 8u);
  EXPECT_EQ(DTypeSize(DType::kComplex128), 16u);
}

// Complex is kernel-only: not floating, not "numeric" (compilable), no HLO name.
TEST(DTypeTest, ComplexPredicates) {
  for (DType d : {DType::kComplex64, DType::kComplex128}) {
    EXPECT_TRUE(IsComplexDType(d));
    EXPECT_TRUE(IsNumericOrComplexDType(d));
    EXPECT_FALSE(IsFloatingDType(d));
    EXPECT_FALSE(IsNumericDType(d));
    EXPECT_FALSE(IsIntegerDType(d));
    EXPECT_EQ(DTypeHloName(d), "");
  }
  EXPECT_STREQ(DTypeName(DType::kComplex64), "complex64");
  EXPECT_STREQ(DTypeName(DType::kComplex128), "complex128");
  Tensor t(DType::kComplex64, {2});
  t.data<complex64>()[1] = complex64(1.5f, -2.f);
  EXPECT_EQ(ElementAsComplex(t, 1), complex128(1.5, -2.0));
  EXPECT_EQ(ElementAsDouble(t, 1), 1.5);
  EXPECT_EQ(t.DebugString(), "complex64[2] {(0,0), (1.5,-2)}");
}

}  // namespace
}  // namespace tfjit
