// Tests for runtime/kernels/math_kernels.cc: Cast (truncation, bool, float16, out-of-range
// values), and MatMul (transposes, dtypes, pool, errors; linalg_matmul_kernels.cc since).
#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/runtime/kernel_test_util.h"

namespace tfjit::runtime {
namespace {

using ::testing::ElementsAre;
using namespace ::tfjit::runtime::testing;  // NOLINT: test builders

absl::StatusOr<Tensor> MatMul(const Tensor& a, const Tensor& b, bool ta = false, bool tb = false,
                              ThreadPool* pool = nullptr) {
  return OpRunner("MatMul")
      .T(a.dtype())
      .Bool("transpose_a", ta)
      .Bool("transpose_b", tb)
      .Input(a)
      .Input(b)
      .Pool(pool)
      .Run0();
}

absl::StatusOr<Tensor> Cast(const Tensor& x, DType to) {
  return OpRunner("Cast").Type("SrcT", x.dtype()).Type("DstT", to).Input(x).Run0();
}

// a = [[1,2,3],[4,5,6]], b = [[7,8],[9,10],[11,12]]: a*b = [[58,64],[139,154]].
TEST(MathKernelsTest, MatMulBasic) {
  auto out = MatMul(F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({3, 2}, {7, 8, 9, 10, 11, 12}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ShapeString(), "float32[2,2]");
  EXPECT_THAT(Values(*out), ElementsAre(58, 64, 139, 154));
}

TEST(MathKernelsTest, MatMulTransposes) {
  // a^T stored as [3,2], b^T stored as [2,3]: same product.
  const Tensor at = F64({3, 2}, {1, 4, 2, 5, 3, 6});
  const Tensor bt = F64({2, 3}, {7, 9, 11, 8, 10, 12});
  const Tensor a = F64({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = F64({3, 2}, {7, 8, 9, 10, 11, 12});
  for (auto [x, y, ta, tb] : {std::tuple{at, b, true, false}, std::tuple{a, bt, false, true},
                              std::tuple{at, bt, true, true}}) {
    auto out = MatMul(x, y, ta, tb);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values(*out), ElementsAre(58, 64, 139, 154)) << ta << tb;
  }
}

TEST(MathKernelsTest, MatMulIntAndHalf) {
  auto i = MatMul(I32({1, 2}, {3, -1}), I32({2, 2}, {1, 2, 3, 4}));
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_THAT(Values(*i), ElementsAre(0, 2));
  auto h = MatMul(F16({1, 2}, {0.5, 1.5}), F16({2, 1}, {2, 4}));
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->dtype(), DType::kFloat16);
  EXPECT_THAT(Values(*h), ElementsAre(7));
}

TEST(MathKernelsTest, MatMulEmptyInnerDimGivesZeros) {
  auto out = MatMul(F32({2, 0}, {}), F32({0, 3}, {}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ShapeString(), "float32[2,3]");
  EXPECT_THAT(Values(*out), ElementsAre(0, 0, 0, 0, 0, 0));
}

TEST(MathKernelsTest, MatMulWithPoolMatchesNaiveLoop) {
  ThreadPool pool(2);
  const int m = 67, k = 33, n = 45;
  std::vector<float> a(m * k), b(k * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) - 2;
  auto out = MatMul(F32({m, k}, a), F32({k, n}, b), false, false, &pool);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int r = 0; r < m; r += 5) {
    for (int c = 0; c < n; c += 3) {
      float ref = 0;
      for (int j = 0; j < k; ++j) ref += a[r * k + j] * b[j * n + c];
      EXPECT_EQ(out->data<float>()[r * n + c], ref) << r << "," << c;
    }
  }
}

TEST(MathKernelsTest, MatMulInnerMismatchHintsTransposeB) {
  TFJIT_EXPECT_ERROR(MatMul(F32({8, 64}, {}), F32({10, 64}, {})),
                     absl::StatusCode::kInvalidArgument,
                     "node 'op' (MatMul): inner dimensions differ: a is float32[8,64], b is "
                     "float32[10,64]; set transpose_b");
  TFJIT_EXPECT_ERROR(MatMul(F32({8, 64}, {}), F32({32, 10}, {})),
                     absl::StatusCode::kInvalidArgument,
                     "a is float32[8,64], b is float32[32,10]; feed b with shape [64,N]");
}

TEST(MathKernelsTest, MatMulRankAndDtypeErrors) {
  TFJIT_EXPECT_ERROR(MatMul(F32({3}, {}), F32({3, 1}, {})), absl::StatusCode::kInvalidArgument,
                     "operands must be matrices (rank 2): a is float32[3]");
  TFJIT_EXPECT_ERROR(MatMul(U8({1, 1}, {1}), U8({1, 1}, {1})), absl::StatusCode::kInvalidArgument,
                     "no MatMul kernel for dtype uint8");
}

TEST(MathKernelsTest, CastFloatToIntTruncates) {
  auto out = Cast(F32({4}, {1.9f, -1.9f, 0.5f, -0.5f}), DType::kInt32);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values(*out), ElementsAre(1, -1, 0, 0));
}

TEST(MathKernelsTest, CastOutOfRangeAndNaNGiveIntegerIndefinite) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = Cast(F32({3}, {nan, 3e9f, -3e9f}), DType::kInt32);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(out->data<int32_t>()[i], std::numeric_limits<int32_t>::min());
  }
  auto u8 = Cast(F32({2}, {300, -1}), DType::kUInt8);
  ASSERT_TRUE(u8.ok());
  EXPECT_THAT(Values(*u8), ElementsAre(44, 255));  // wraps through int32
}

TEST(MathKernelsTest, CastBoolAndHalf) {
  auto to_bool = Cast(F32({3}, {0, -2, 0.1f}), DType::kBool);
  ASSERT_TRUE(to_bool.ok()) << to_bool.status();
  EXPECT_THAT(Values(*to_bool), ElementsAre(0, 1, 1));
  auto from_bool = Cast(Bool({2}, {true, false}), DType::kFloat32);
  ASSERT_TRUE(from_bool.ok());
  EXPECT_THAT(Values(*from_bool), ElementsAre(1, 0));
  auto to_half = Cast(F64({2}, {0.1, 65504}), DType::kFloat16);
  ASSERT_TRUE(to_half.ok());
  EXPECT_EQ(to_half->dtype(), DType::kFloat16);
  EXPECT_NEAR(Values(*to_half)[0], 0.1, 1e-4);
  EXPECT_EQ(Values(*to_half)[1], 65504);
  auto from_half = Cast(F16({1}, {-2.5f}), DType::kInt64);
  ASSERT_TRUE(from_half.ok());
  EXPECT_THAT(Values(*from_half), ElementsAre(-2));
  auto narrow = Cast(I64({2}, {258, -1}), DType::kUInt8);
  ASSERT_TRUE(narrow.ok());
  EXPECT_THAT(Values(*narrow), ElementsAre(2, 255));
}

}  // namespace
}  // namespace tfjit::runtime
