// Tests for runtime/io/npy: byte-exact NumPy headers, round trips and every error path.
#include "runtime/io/npy.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testlib/faulty_file_system.h"

namespace tfjit::runtime {
namespace {

using ::testing::HasSubstr;

// The header NumPy 1.x/2.x writes with np.save, built by hand from the NPY spec: magic,
// version 1.0, little-endian u16 header length, dict, spaces, '\n'; 64-byte aligned.
std::string NumpyHeaderV1(const std::string& dict) {
  const size_t hlen = dict.size() + 1;
  const size_t pad = 64 - (10 + hlen) % 64;
  const size_t total = hlen + pad;
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(total & 0xff));
  out.push_back(static_cast<char>(total >> 8));
  return out + dict + std::string(pad, ' ') + "\n";
}

std::string Bytes(const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); }

TEST(NpyTest, SerializeMatchesNumpyBytesForFloat32Matrix) {
  Tensor t = Tensor::FromVector<float>(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const std::string bytes = SerializeNpy(t);
  // np.save writes header length 118 (0x76) for this array: 128 bytes before the data.
  ASSERT_EQ(bytes.size(), 128u + 24u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[8]), 0x76);
  EXPECT_EQ(bytes[9], 0);
  EXPECT_EQ(bytes.substr(0, 128),
            NumpyHeaderV1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
  const float expected[] = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(bytes.substr(128), Bytes(expected, sizeof(expected)));
}

TEST(NpyTest, SerializeShapesAndOneByteDescrs) {
  Tensor vec = Tensor::FromVector<int64_t>(DType::kInt64, {3}, {1, 2, 3});
  EXPECT_THAT(SerializeNpy(vec), HasSubstr("{'descr': '<i8', 'fortran_order': False, "
                                           "'shape': (3,), }"));
  Tensor scalar = Tensor::FromVector<bool>(DType::kBool, {}, {true});
  const std::string s = SerializeNpy(scalar);
  EXPECT_EQ(s.substr(0, 128),
            NumpyHeaderV1("{'descr': '|b1', 'fortran_order': False, 'shape': (), }"));
  EXPECT_EQ(s.size(), 129u);
  EXPECT_EQ(s[128], 1);
  EXPECT_THAT(SerializeNpy(Tensor(DType::kUInt8, {0, 2})), HasSubstr("'|u1'"));
  EXPECT_THAT(SerializeNpy(Tensor(DType::kUInt8, {0, 2})), HasSubstr("(0, 2)"));
  EXPECT_EQ(SerializeNpy(Tensor(DType::kBFloat16, {2})), "");
}

TEST(NpyTest, HeaderIsPaddedToMultipleOf64ForEveryLength) {
  // Grow the dict one character at a time through the shape and check alignment.
  for (int64_t d = 1; d < 100000; d = d * 10 + 7) {
    const std::string bytes = SerializeNpy(Tensor(DType::kFloat64, {d, 1, 2}));
    const size_t header_len =
        static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    EXPECT_EQ((10 + header_len) % 64, 0u) << d;
    EXPECT_EQ(bytes[10 + header_len - 1], '\n');
  }
}

TEST(NpyTest, ParsesHandWrittenNumpyBytes) {
  const int32_t values[] = {-1, 2, 300, 4};
  std::string file = NumpyHeaderV1("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }") +
                     Bytes(values, sizeof(values));
  absl::StatusOr<Tensor> t = ParseNpy(file, "a.npy");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ShapeString(), "int32[2,2]");
  EXPECT_EQ(t->data<int32_t>()[0], -1);
  EXPECT_EQ(t->data<int32_t>()[2], 300);
}

// numpy's complex64 / complex128: interleaved (re, im) little-endian floats / doubles.
TEST(NpyTest, ComplexRoundTrips) {
  const float values[] = {1.5f, -2.f, 0.f, 4.f};
  std::string file = NumpyHeaderV1("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }") +
                     Bytes(values, sizeof(values));
  absl::StatusOr<Tensor> t = ParseNpy(file, "c.npy");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ShapeString(), "complex64[2]");
  EXPECT_EQ(t->data<complex64>()[1], complex64(0.f, 4.f));
  EXPECT_EQ(SerializeNpy(*t), file);
  Tensor d(DType::kComplex128, {1});
  d.data<complex128>()[0] = complex128(3.0, -1.0);
  EXPECT_THAT(SerializeNpy(d), HasSubstr("'descr': '<c16'"));
  absl::StatusOr<Tensor> back = ParseNpy(SerializeNpy(d), "d.npy");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->data<complex128>()[0], complex128(3.0, -1.0));
}

TEST(NpyTest, ParsesVersion2And3Headers) {
  const double values[] = {1.5, -2.5};
  const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\n";
  for (char major : {2, 3}) {
    std::string file("\x93NUMPY", 6);
    file.push_back(major);
    file.push_back(0);
    const uint32_t len = static_cast<uint32_t>(dict.size());
    file.append(Bytes(&len, 4));  // little-endian host
    file += dict + Bytes(values, sizeof(values));
    absl::StatusOr<Tensor> t = ParseNpy(file, "v.npy");
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->ShapeString(), "float64[2]");
    EXPECT_EQ(t->data<double>()[1], -2.5);
  }
}

TEST(NpyTest, AcceptsDoubleQuotesAndOtherKeyOrder) {
  const uint16_t values[] = {0x3c00};  // 1.0 in float16
  std::string file =
      NumpyHeaderV1("{\"shape\": (1,), \"fortran_order\": False, \"descr\": \"<f2\"}") +
      Bytes(values, sizeof(values));
  absl::StatusOr<Tensor> t = ParseNpy(file, "h.npy");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DType::kFloat16);
  EXPECT_EQ(ElementAsDouble(*t, 0), 1.0);
}

TEST(NpyTest, RoundTripsEveryDtype) {
  for (DType dtype : {DType::kFloat16, DType::kFloat32, DType::kFloat64, DType::kInt8,
                      DType::kInt16, DType::kInt32, DType::kInt64, DType::kUInt8, DType::kUInt16,
                      DType::kUInt32, DType::kUInt64, DType::kBool}) {
    Tensor t(dtype, {2, 3});
    uint8_t* p = static_cast<uint8_t*>(t.raw_data());
    for (size_t i = 0; i < t.byte_size(); ++i) p[i] = dtype == DType::kBool ? i % 2 : i * 7 + 1;
    absl::StatusOr<Tensor> back = ParseNpy(SerializeNpy(t), "rt.npy");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->ShapeString(), t.ShapeString());
    EXPECT_EQ(std::memcmp(back->raw_data(), t.raw_data(), t.byte_size()), 0) << DTypeName(dtype);
  }
}

TEST(NpyTest, WriteAndReadFile) {
  const std::string path = ::testing::TempDir() + "/npy_test_roundtrip.npy";
  Tensor t = Tensor::FromVector<float>(DType::kFloat32, {3}, {0.5f, -1.f, 8.f});
  ASSERT_TRUE(WriteNpy(path, t).ok());
  absl::StatusOr<Tensor> back = ReadNpy(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->data<float>()[2], 8.f);
  std::remove(path.c_str());
}

TEST(NpyTest, ReadMissingFileIsNotFound) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "tfjit_no_such_dir" / "x.npy").string();
  absl::StatusOr<Tensor> t = ReadNpy(path);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(t.status().message(), HasSubstr(path));
}

TEST(NpyTest, WriteUnsupportedDtypeIsUnimplemented) {
  absl::Status s = WriteNpy(::testing::TempDir() + "/bf.npy", Tensor(DType::kBFloat16, {2}));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("bfloat16"));
}

// Parses `file` and expects `code` with `substr` in the message.
void ExpectError(const std::string& file, absl::StatusCode code, const std::string& substr) {
  absl::StatusOr<Tensor> t = ParseNpy(file, "x.npy");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), code) << t.status();
  EXPECT_THAT(t.status().message(), HasSubstr(substr));
  EXPECT_THAT(t.status().message(), HasSubstr("x.npy"));
}

TEST(NpyTest, DataSizeMismatchNamesFileAndShape) {
  const float values[] = {1, 2, 3};
  ExpectError(NumpyHeaderV1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }") +
                  Bytes(values, sizeof(values)),
              absl::StatusCode::kInvalidArgument,
              "file 'x.npy': data has 12 bytes, header says float32[2,2] (16 bytes)");
  const float five[] = {1, 2, 3, 4, 5};
  ExpectError(NumpyHeaderV1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }") +
                  Bytes(five, sizeof(five)),
              absl::StatusCode::kInvalidArgument, "data has 20 bytes");
}

// Loader limit (issue 5): a header claiming 4 TB is checked against the data actually in the
// file before the tensor is allocated, so a 4-byte body costs nothing.
TEST(NpyTest, HugeHeaderShapeWithShortDataIsRefusedBeforeAllocating) {
  const float one = 1;
  ExpectError(NumpyHeaderV1("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, "
                            "1000000), }") +
                  Bytes(&one, sizeof(one)),
              absl::StatusCode::kInvalidArgument,
              "data has 4 bytes, header says float32[1000000,1000000] (4000000000000 bytes)");
}

TEST(NpyTest, FortranOrderIsUnimplementedWithHint) {
  ExpectError(NumpyHeaderV1("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }") +
                  std::string(16, '\0'),
              absl::StatusCode::kUnimplemented, "np.ascontiguousarray");
}

TEST(NpyTest, BigEndianIsUnimplemented) {
  ExpectError(NumpyHeaderV1("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }") +
                  std::string(4, '\0'),
              absl::StatusCode::kUnimplemented, "big-endian");
  // One-byte types have no byte order: '>u1' is fine.
  absl::StatusOr<Tensor> t = ParseNpy(
      NumpyHeaderV1("{'descr': '>u1', 'fortran_order': False, 'shape': (1,), }") + "\x05", "u");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->data<uint8_t>()[0], 5);
}

TEST(NpyTest, UnsupportedDtypeIsUnimplemented) {
  ExpectError(NumpyHeaderV1("{'descr': '<c32', 'fortran_order': False, 'shape': (1,), }") +
                  std::string(32, '\0'),
              absl::StatusCode::kUnimplemented, "'<c32' is not supported");
  ExpectError(NumpyHeaderV1("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"),
              absl::StatusCode::kUnimplemented, "'|O'");
}

TEST(NpyTest, MalformedFilesAreInvalidArgument) {
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  ExpectError("", kInvalid, "not a .npy file");
  ExpectError("PK\x03\x04 zip file", kInvalid, "not a .npy file");
  ExpectError(std::string("\x93NUMPY\x01\x00", 8), kInvalid, "truncated .npy header");
  std::string full = NumpyHeaderV1("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }");
  ExpectError(full.substr(0, 40), kInvalid, "truncated .npy header");
  ExpectError(NumpyHeaderV1("{'descr': '<f4', 'shape': (1,), }"), kInvalid, "no 'fortran_order'");
  ExpectError(NumpyHeaderV1("{'descr': '<f4', 'fortran_order': False}"), kInvalid, "no 'shape'");
  ExpectError(NumpyHeaderV1("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"), kInvalid,
              "non-negative integers");
  ExpectError(NumpyHeaderV1("{'descr': '<f4', 'fortran_order': maybe, 'shape': (1,), }"), kInvalid,
              "not True or False");
  ExpectError(NumpyHeaderV1("['descr', '<f4']"), kInvalid, "does not start with '{'");
  ExpectError(NumpyHeaderV1("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}"),
              kInvalid, "unexpected header key 'x'");
  ExpectError(NumpyHeaderV1("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, "
                            "99999999999, 99999999999), }"),
              kInvalid, "too large");
}

TEST(NpyTest, UnknownVersionIsUnimplemented) {
  std::string file = NumpyHeaderV1("{'descr': '<f4', 'fortran_order': False, 'shape': (), }");
  file[6] = 4;
  ExpectError(file + std::string(4, '\0'), absl::StatusCode::kUnimplemented, "version 4.0");
}

// Writing an output on a failing disk (injected: a write cut short, a full disk, a failed
// rename, a read-only folder) is FAILED_PRECONDITION naming the file and why, and leaves the
// file that was there untouched and no half-written one.
TEST(NpyTest, AFailedWriteLeavesTheOldFile) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "tfjit_npy_faults";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "out.npy").string();
  const Tensor old_value = Tensor::FromVector<float>(DType::kFloat32, {2}, {1, 2});
  ASSERT_TRUE(WriteNpy(path, old_value).ok());
  for (const std::string& fault : tfjit::testing::WriteFaults()) {
    SCOPED_TRACE(fault);
    {
      tfjit::testing::ScopedFaultyFileSystem faulty;
      faulty->Inject(fault, 10, dir.string());
      const absl::Status s =
          WriteNpy(path, Tensor::FromVector<float>(DType::kFloat32, {3}, {7, 8, 9}));
      EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
      EXPECT_NE(s.message().find("cannot write '" + path + "'"), std::string::npos) << s;
    }
    absl::StatusOr<Tensor> back = ReadNpy(path);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->ShapeString(), old_value.ShapeString());
    EXPECT_EQ(back->data<float>()[1], 2.0f);
    int files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
    EXPECT_EQ(files, 1) << "a temporary is left";
  }
}

}  // namespace
}  // namespace tfjit::runtime
