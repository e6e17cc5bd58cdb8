// Tests TensorProto decoding rules (content vs typed fields, repeat-last, half, bool, sizes).
#include "frontend/tensor_proto.h"

#include <cstring>

#include "core/dtype.h"
#include "core/string_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace tfjit::tf {
namespace {

using ::testing::HasSubstr;
using testing::ParseTextProto;

Tensor Decode(const std::string& text) {
  absl::StatusOr<Tensor> t = TensorFromProto(ParseTextProto<tensorflow::TensorProto>(text));
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

absl::Status DecodeError(const std::string& text) {
  return TensorFromProto(ParseTextProto<tensorflow::TensorProto>(text)).status();
}

TEST(TensorFromProtoTest, TensorContentIsLittleEndianRowMajor) {
  // 1.0, 2.0, 3.0, 4.0 as little-endian float32 (formats.md section 4).
  Tensor t = Decode(R"pb(dtype: DT_FLOAT
      tensor_shape { dim { size: 2 } dim { size: 2 } }
      tensor_content: "\000\000\200?\000\000\000@\000\000@@\000\000\200@")pb");
  ASSERT_EQ(t.dtype(), DType::kFloat32);
  EXPECT_EQ(t.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t.data<float>()[0], 1.0f);
  EXPECT_EQ(t.data<float>()[1], 2.0f);
  EXPECT_EQ(t.data<float>()[3], 4.0f);
}

// scomplex_val / dcomplex_val hold (re, im) pairs; missing pairs repeat the last one.
TEST(TensorFromProtoTest, ComplexValPairs) {
  Tensor t = Decode(R"pb(dtype: DT_COMPLEX64 tensor_shape { dim { size: 3 } }
      scomplex_val: 1 scomplex_val: 2 scomplex_val: -3 scomplex_val: 0.5)pb");
  ASSERT_EQ(t.dtype(), DType::kComplex64);
  EXPECT_EQ(t.data<complex64>()[0], complex64(1, 2));
  EXPECT_EQ(t.data<complex64>()[1], complex64(-3, 0.5f));
  EXPECT_EQ(t.data<complex64>()[2], complex64(-3, 0.5f));
  Tensor d = Decode(R"pb(dtype: DT_COMPLEX128 tensor_shape { dim { size: 1 } }
      dcomplex_val: 0.25 dcomplex_val: -8)pb");
  ASSERT_EQ(d.dtype(), DType::kComplex128);
  EXPECT_EQ(d.data<complex128>()[0], complex128(0.25, -8));
  // tensor_content: 8 bytes per complex64 (float re, float im).
  Tensor c = Decode(R"pb(dtype: DT_COMPLEX64 tensor_shape { dim { size: 1 } }
      tensor_content: "\000\000\200?\000\000\000@")pb");
  EXPECT_EQ(c.data<complex64>()[0], complex64(1, 2));
}

TEST(TensorFromProtoTest, FewerTypedValuesRepeatTheLast) {
  Tensor t =
      Decode(R"pb(dtype: DT_INT32 tensor_shape { dim { size: 5 } } int_val: 7 int_val: 9)pb");
  ASSERT_EQ(t.num_elements(), 5);
  const int32_t* d = t.data<int32_t>();
  EXPECT_EQ(d[0], 7);
  EXPECT_EQ(d[1], 9);
  EXPECT_EQ(d[2], 9);
  EXPECT_EQ(d[4], 9);
}

TEST(TensorFromProtoTest, SingleFloatFillsAllElements) {
  Tensor t = Decode(R"pb(dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } }
                         float_val: 0.5)pb");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t.data<float>()[i], 0.5f) << i;
}

TEST(TensorFromProtoTest, EmptyTypedFieldMeansZeros) {
  Tensor t = Decode(R"pb(dtype: DT_DOUBLE tensor_shape { dim { size: 3 } })pb");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(t.data<double>()[i], 0.0) << i;
}

TEST(TensorFromProtoTest, ScalarShapeHasOneElement) {
  Tensor t = Decode(R"pb(dtype: DT_INT64 int64_val: -3)pb");
  EXPECT_EQ(t.rank(), 0);
  ASSERT_EQ(t.num_elements(), 1);
  EXPECT_EQ(t.data<int64_t>()[0], -3);
}

TEST(TensorFromProtoTest, HalfValHoldsBitPatterns) {
  // 0x3C00 = 1.0 and 0xC000 = -2.0 in IEEE half; 0x3F80 = 1.0 in bfloat16.
  Tensor h = Decode(R"pb(dtype: DT_HALF tensor_shape { dim { size: 3 } }
                         half_val: 15360 half_val: 49152)pb");
  EXPECT_EQ(ElementAsDouble(h, 0), 1.0);
  EXPECT_EQ(ElementAsDouble(h, 1), -2.0);
  EXPECT_EQ(ElementAsDouble(h, 2), -2.0);  // repeat-last
  Tensor b = Decode(R"pb(dtype: DT_BFLOAT16 tensor_shape { dim { size: 1 } } half_val: 16256)pb");
  EXPECT_EQ(ElementAsDouble(b, 0), 1.0);
}

TEST(TensorFromProtoTest, BoolValAndContent) {
  Tensor t = Decode(R"pb(dtype: DT_BOOL tensor_shape { dim { size: 3 } }
                         bool_val: false bool_val: true)pb");
  EXPECT_FALSE(t.data<bool>()[0]);
  EXPECT_TRUE(t.data<bool>()[1]);
  EXPECT_TRUE(t.data<bool>()[2]);
  // A non-zero content byte is true and is stored as 1.
  Tensor c = Decode(R"pb(dtype: DT_BOOL tensor_shape { dim { size: 2 } }
                         tensor_content: "\000\007")pb");
  uint8_t bytes[2];
  std::memcpy(bytes, c.raw_data(), 2);
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[1], 1);
}

TEST(TensorFromProtoTest, SmallIntegerTypesUseIntVal) {
  Tensor i8 =
      Decode(R"pb(dtype: DT_INT8 tensor_shape { dim { size: 2 } } int_val: -5 int_val: 6)pb");
  EXPECT_EQ(i8.data<int8_t>()[0], -5);
  EXPECT_EQ(i8.data<int8_t>()[1], 6);
  Tensor u16 = Decode(R"pb(dtype: DT_UINT16 tensor_shape { dim { size: 1 } } int_val: 65535)pb");
  EXPECT_EQ(u16.data<uint16_t>()[0], 65535);
  Tensor u8 = Decode(R"pb(dtype: DT_UINT8 int_val: 200)pb");
  EXPECT_EQ(u8.data<uint8_t>()[0], 200);
  Tensor u64 = Decode(R"pb(dtype: DT_UINT64 uint64_val: 18446744073709551615)pb");
  EXPECT_EQ(u64.data<uint64_t>()[0], UINT64_MAX);
}

TEST(TensorFromProtoTest, MoreValuesThanElementsAreTruncatedLikeTf) {
  Tensor t =
      Decode(R"pb(dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 1 int_val: 2)pb");
  ASSERT_EQ(t.num_elements(), 1);
  EXPECT_EQ(t.data<int32_t>()[0], 1);
}

TEST(TensorFromProtoTest, ZeroElementTensor) {
  Tensor t = Decode(R"pb(dtype: DT_FLOAT tensor_shape { dim { size: 0 } dim { size: 3 } })pb");
  EXPECT_EQ(t.num_elements(), 0);
  EXPECT_EQ(t.dims(), (std::vector<int64_t>{0, 3}));
}

TEST(TensorFromProtoTest, WrongContentSizeNamesBytesAndShape) {
  absl::Status s = DecodeError(R"pb(dtype: DT_FLOAT
      tensor_shape { dim { size: 2 } dim { size: 2 } }
      tensor_content: "\000\000\200?\000\000\000@\000\000@@")pb");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("tensor_content has 12 bytes, expected 16 for float32[2,2]"));
}

TEST(TensorFromProtoTest, UnknownDimsAndBadDimsAreRejected) {
  absl::Status s = DecodeError(R"pb(dtype: DT_FLOAT tensor_shape { dim { size: -1 } })pb");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("[?]"));
  s = DecodeError(R"pb(dtype: DT_FLOAT tensor_shape { dim { size: -7 } })pb");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("size -7"));
  s = DecodeError(R"pb(dtype: DT_FLOAT tensor_shape { unknown_rank: true })pb");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  s = DecodeError(R"pb(dtype: DT_FLOAT tensor_shape { dim { size: 1000000 } dim { size: 1000000 }
                       dim { size: 1000000 } })pb");
  // 10^18 elements: counted fine, far over the loader limits (loader_limits_test.cc).
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("has 1000000000000000000 elements"));
}

TEST(TensorFromProtoTest, UnsupportedDtypes) {
  absl::Status s = DecodeError(R"pb(dtype: DT_QINT8 int_val: 1)pb");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("qint8"));
  s = DecodeError(R"pb(float_val: 1)pb");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("DT_INVALID"));
}

// String constants (Assert's messages, a Saver's names): one string_val per element, the last
// repeated when fewer are given; bytes kept as they are.
TEST(TensorFromProtoTest, StringConstants) {
  Tensor scalar = Decode(R"pb(dtype: DT_STRING string_val: "x must be positive")pb");
  ASSERT_NE(StringValues(scalar), nullptr);
  EXPECT_EQ(scalar.ShapeString(), "string[]");
  EXPECT_EQ((*StringValues(scalar))[0], "x must be positive");
  Tensor filled = Decode(R"pb(dtype: DT_STRING tensor_shape { dim { size: 3 } }
                              string_val: "a" string_val: "b\000c")pb");
  ASSERT_NE(StringValues(filled), nullptr);
  EXPECT_EQ(*StringValues(filled),
            (std::vector<std::string>{"a", std::string("b\0c", 3), std::string("b\0c", 3)}));
  Tensor empty = Decode(R"pb(dtype: DT_STRING tensor_shape { dim { size: 0 } })pb");
  EXPECT_EQ(StringValues(empty)->size(), 0u);
  absl::Status s = DecodeError(R"pb(dtype: DT_STRING tensor_shape { dim { size: 2 } })pb");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("no string_val"));
  s = DecodeError(R"pb(dtype: DT_STRING tensor_shape { dim { size: 1 } } string_val: "a"
                       string_val: "b")pb");
  EXPECT_THAT(s.message(), HasSubstr("2 string_val entries"));
  // And back: string_val, one per element.
  tensorflow::TensorProto proto = TensorToProto(filled);
  ASSERT_EQ(proto.string_val_size(), 3);
  EXPECT_EQ(proto.string_val(2), std::string("b\0c", 3));
}

TEST(TensorToProtoTest, RoundTripsThroughTensorContent) {
  Tensor t = Tensor::FromVector<int16_t>(DType::kInt16, {3}, {-1, 2, 300});
  tensorflow::TensorProto proto = TensorToProto(t);
  EXPECT_EQ(proto.dtype(), tensorflow::DT_INT16);
  EXPECT_EQ(proto.tensor_content().size(), 6u);
  absl::StatusOr<Tensor> back = TensorFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->dims(), t.dims());
  EXPECT_EQ(back->data<int16_t>()[2], 300);
  EXPECT_EQ(back->data<int16_t>()[0], -1);
}

TEST(ShapeFromProtoTest, UnknownDimsAndRank) {
  auto shape = ParseTextProto<tensorflow::TensorShapeProto>("dim { size: -1 } dim { size: 2 }");
  absl::StatusOr<std::vector<int64_t>> dims = ShapeFromProto(shape);
  ASSERT_TRUE(dims.ok());
  EXPECT_EQ(*dims, (std::vector<int64_t>{-1, 2}));

  auto unknown = ParseTextProto<tensorflow::TensorShapeProto>("unknown_rank: true");
  bool unknown_rank = false;
  dims = ShapeFromProto(unknown, &unknown_rank);
  ASSERT_TRUE(dims.ok());
  EXPECT_TRUE(unknown_rank);
  EXPECT_TRUE(dims->empty());
  EXPECT_EQ(ShapeFromProto(unknown).status().code(), absl::StatusCode::kInvalidArgument);

  absl::StatusOr<PartialShape> partial = PartialShapeFromProto(shape);
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->ToString(), "[?,2]");
  EXPECT_FALSE(partial->IsFullyDefined());
  EXPECT_EQ(PartialShapeFromProto(tensorflow::TensorShapeProto())->ToString(), "[]");
}

}  // namespace
}  // namespace tfjit::tf
