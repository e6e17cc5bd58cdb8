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
  EXPECT_EQ(DTypeFromTfEnum(8), std::nullopt);       // complex64 unsupported
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
}

}  // namespace
}  // namespace tfjit
