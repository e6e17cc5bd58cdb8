// Tests for runtime/kernels/math_cwise_more_kernels.cc: rounding, predicates, floor/truncating
// division and modulus signs, integer division by zero, *NoNan ops, bitwise ops and shifts, AddN
// and ClipByValue; and the activations (nn_kernels.cc) that file once held. Hand-computed values.
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

absl::StatusOr<Tensor> Unary(const std::string& op, const Tensor& a) {
  return OpRunner(op).T(a.dtype()).Input(a).Run0();
}
absl::StatusOr<Tensor> Binary(const std::string& op, const Tensor& a, const Tensor& b) {
  return OpRunner(op).T(a.dtype()).Input(a).Input(b).Run0();
}
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(CwiseExtraKernelsTest, RoundAndRintAreHalfToEven) {
  for (const char* op : {"Round", "Rint"}) {
    auto out = Unary(op, F32({6}, {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f}));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values(*out), ElementsAre(-2, -2, -0.0, 0, 2, 2)) << op;
  }
  auto ints = Unary("Round", I32({3}, {-3, 0, 7}));
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_THAT(Values(*ints), ElementsAre(-3, 0, 7));
  TFJIT_EXPECT_ERROR(Unary("Rint", I32({1}, {1})), absl::StatusCode::kInvalidArgument,
                     "no Rint kernel for dtype int32");
}

TEST(CwiseExtraKernelsTest, SignKeepsNaNAndZero) {
  auto out = Unary(
      "Sign", F32({5}, {-3.5f, 0.0f, 2.0f, static_cast<float>(kNaN), static_cast<float>(-kInf)}));
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<double> v = Values(*out);
  EXPECT_EQ(v[0], -1);
  EXPECT_EQ(v[1], 0);
  EXPECT_EQ(v[2], 1);
  EXPECT_TRUE(std::isnan(v[3]));
  EXPECT_EQ(v[4], -1);
  auto ints = Unary("Sign", I64({3}, {-9, 0, 4}));
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_THAT(Values(*ints), ElementsAre(-1, 0, 1));
}

TEST(CwiseExtraKernelsTest, TrigAndSpecialFunctions) {
  auto sin = Unary("Sin", F64({2}, {0, M_PI / 2}));
  ASSERT_TRUE(sin.ok());
  EXPECT_THAT(Values(*sin), ElementsAre(DoubleNear(0, 1e-15), DoubleNear(1, 1e-15)));
  auto acos = Unary("Acos", F64({2}, {1, 2}));
  ASSERT_TRUE(acos.ok());
  EXPECT_EQ(Values(*acos)[0], 0);
  EXPECT_TRUE(std::isnan(Values(*acos)[1]));  // outside [-1, 1]
  auto erf = Unary("Erf", F64({1}, {1}));
  ASSERT_TRUE(erf.ok());
  EXPECT_THAT(Values(*erf), ElementsAre(DoubleNear(0.8427007929497149, 1e-15)));
  // digamma(1) = -gamma (Euler–Mascheroni), digamma(0.5) = -gamma - 2 ln 2, pole at 0.
  auto dg = Unary("Digamma", F64({4}, {1, 0.5, 0, -0.5}));
  ASSERT_TRUE(dg.ok());
  std::vector<double> d = Values(*dg);
  EXPECT_NEAR(d[0], -0.5772156649015329, 1e-12);
  EXPECT_NEAR(d[1], -1.9635100260214235, 1e-12);
  EXPECT_TRUE(std::isnan(d[2]));
  EXPECT_NEAR(d[3], 0.03648997397857652, 1e-12);  // psi(-0.5)
  auto lg = Unary("Lgamma", F64({1}, {5}));
  ASSERT_TRUE(lg.ok());
  EXPECT_NEAR(Values(*lg)[0], std::log(24.0), 1e-12);
}

TEST(CwiseExtraKernelsTest, Predicates) {
  const Tensor x = F32(
      {4}, {1.0f, static_cast<float>(kNaN), static_cast<float>(kInf), static_cast<float>(-kInf)});
  auto nan = Unary("IsNan", x);
  auto inf = Unary("IsInf", x);
  auto fin = Unary("IsFinite", x);
  ASSERT_TRUE(nan.ok() && inf.ok() && fin.ok());
  EXPECT_EQ(nan->dtype(), DType::kBool);
  EXPECT_THAT(Values(*nan), ElementsAre(0, 1, 0, 0));
  EXPECT_THAT(Values(*inf), ElementsAre(0, 0, 1, 1));
  EXPECT_THAT(Values(*fin), ElementsAre(1, 0, 0, 0));
  TFJIT_EXPECT_ERROR(Unary("IsNan", I32({1}, {1})), absl::StatusCode::kInvalidArgument,
                     "no IsNan kernel for dtype int32");
}

TEST(CwiseExtraKernelsTest, FloorDivAndFloorModFollowTheDivisorSign) {
  const Tensor x = I32({6}, {7, -7, 7, -7, 0, std::numeric_limits<int32_t>::min()});
  const Tensor y = I32({6}, {2, 2, -2, -2, 3, -1});
  auto div = Binary("FloorDiv", x, y);
  auto mod = Binary("FloorMod", x, y);
  ASSERT_TRUE(div.ok() && mod.ok());
  EXPECT_THAT(Values(*div), ElementsAre(3, -4, -4, 3, 0, std::numeric_limits<int32_t>::min()));
  EXPECT_THAT(Values(*mod), ElementsAre(1, 1, -1, -1, 0, 0));
  auto fmod = Binary("FloorMod", F32({4}, {7.5f, -7.5f, 7.5f, -7.5f}), F32({4}, {2, 2, -2, -2}));
  ASSERT_TRUE(fmod.ok());
  EXPECT_THAT(Values(*fmod), ElementsAre(1.5, 0.5, -0.5, -1.5));
  auto fdiv = Binary("FloorDiv", F32({2}, {7, -7}), F32({2}, {2, 2}));
  ASSERT_TRUE(fdiv.ok());
  EXPECT_THAT(Values(*fdiv), ElementsAre(3, -4));
}

TEST(CwiseExtraKernelsTest, TruncatingOpsFollowTheDividendSign) {
  const Tensor x = I64({4}, {7, -7, 7, -7});
  const Tensor y = I64({4}, {2, 2, -2, -2});
  auto div = Binary("TruncateDiv", x, y);
  auto mod = Binary("TruncateMod", x, y);
  auto mod2 = Binary("Mod", x, y);
  ASSERT_TRUE(div.ok() && mod.ok() && mod2.ok());
  EXPECT_THAT(Values(*div), ElementsAre(3, -3, -3, 3));
  EXPECT_THAT(Values(*mod), ElementsAre(1, -1, 1, -1));
  EXPECT_THAT(Values(*mod2), ElementsAre(1, -1, 1, -1));
  auto fmod = Binary("Mod", F64({2}, {-7.5, 7.5}), F64({2}, {2, -2}));
  ASSERT_TRUE(fmod.ok());
  EXPECT_THAT(Values(*fmod), ElementsAre(-1.5, 1.5));
  // Floats (TF registers them from 2.16 on): the quotient rounded toward zero.
  auto fdiv = Binary("TruncateDiv", F32({3}, {7, -7, 1}), F32({3}, {2, 2, 0}));
  ASSERT_TRUE(fdiv.ok());
  EXPECT_THAT(Values(*fdiv), ElementsAre(3, -3, std::numeric_limits<double>::infinity()));
  TFJIT_EXPECT_ERROR(Binary("TruncateDiv", Tensor(DType::kBool, {1}), Tensor(DType::kBool, {1})),
                     absl::StatusCode::kInvalidArgument, "no TruncateDiv kernel for dtype bool");
}

TEST(CwiseExtraKernelsTest, IntegerDivisionByZeroFails) {
  for (const char* op : {"FloorDiv", "FloorMod", "Mod", "TruncateMod", "TruncateDiv"}) {
    TFJIT_EXPECT_ERROR(Binary(op, I32({2}, {1, 2}), I32({2}, {1, 0})),
                       absl::StatusCode::kInvalidArgument, "Integer division by zero");
  }
  // Floats divide by zero into inf/NaN without an error.
  auto f = Binary("FloorDiv", F32({2}, {1, 0}), F32({2}, {0, 0}));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(Values(*f)[0], kInf);
  EXPECT_TRUE(std::isnan(Values(*f)[1]));
  // An empty result checks nothing (TF only validates when there is work).
  EXPECT_TRUE(Binary("FloorMod", I32({0}, {}), I32({1}, {0})).ok());
}

TEST(CwiseExtraKernelsTest, NoNanAndXOps) {
  auto div = Binary("DivNoNan", F32({3}, {1, 0, 6}), F32({3}, {0, 0, 3}));
  auto mul = Binary("MulNoNan", F32({2}, {static_cast<float>(kInf), 2}), F32({2}, {0, 3}));
  auto xdivy = Binary("Xdivy", F32({2}, {0, 6}), F32({2}, {0, 3}));
  auto xlogy = Binary("Xlogy", F32({2}, {0, 2}), F32({2}, {0, 1}));
  ASSERT_TRUE(div.ok() && mul.ok() && xdivy.ok() && xlogy.ok());
  EXPECT_THAT(Values(*div), ElementsAre(0, 0, 2));
  EXPECT_THAT(Values(*mul), ElementsAre(0, 6));
  EXPECT_THAT(Values(*xdivy), ElementsAre(0, 2));
  EXPECT_THAT(Values(*xlogy), ElementsAre(0, 0));
  auto atan2 = Binary("Atan2", F64({2}, {1, 0}), F64({2}, {0, -1}));
  ASSERT_TRUE(atan2.ok());
  EXPECT_THAT(Values(*atan2), ElementsAre(DoubleNear(M_PI / 2, 1e-15), DoubleNear(M_PI, 1e-15)));
}

TEST(CwiseExtraKernelsTest, BitwiseAndShifts) {
  auto band = Binary("BitwiseAnd", I32({2}, {12, -1}), I32({2}, {10, 5}));
  auto bor = Binary("BitwiseOr", I32({2}, {12, 0}), I32({2}, {10, 5}));
  auto bxor = Binary("BitwiseXor", I32({2}, {12, -1}), I32({2}, {10, 0}));
  auto inv = Unary("Invert", U8({2}, {0, 0x0f}));
  ASSERT_TRUE(band.ok() && bor.ok() && bxor.ok() && inv.ok());
  EXPECT_THAT(Values(*band), ElementsAre(8, 5));
  EXPECT_THAT(Values(*bor), ElementsAre(14, 5));
  EXPECT_THAT(Values(*bxor), ElementsAre(6, -1));
  EXPECT_THAT(Values(*inv), ElementsAre(255, 240));
  // Shift amounts clamp to [0, 31]; right shifts of negatives are arithmetic.
  auto left = Binary("LeftShift", I32({3}, {1, 1, 3}), I32({3}, {4, 40, -2}));
  auto right = Binary("RightShift", I32({3}, {-16, 16, -1}), I32({3}, {2, 99, 5}));
  ASSERT_TRUE(left.ok() && right.ok());
  EXPECT_THAT(Values(*left), ElementsAre(16, std::numeric_limits<int32_t>::min(), 3));
  EXPECT_THAT(Values(*right), ElementsAre(-4, 0, -1));
  TFJIT_EXPECT_ERROR(Binary("BitwiseAnd", F32({1}, {1}), F32({1}, {1})),
                     absl::StatusCode::kInvalidArgument, "integer types");
}

TEST(CwiseExtraKernelsTest, Activations) {
  auto elu = Unary("Elu", F64({2}, {-1, 2}));
  auto selu = Unary("Selu", F64({2}, {-1, 2}));
  auto softsign = Unary("Softsign", F64({2}, {-3, 1}));
  ASSERT_TRUE(elu.ok() && selu.ok() && softsign.ok());
  EXPECT_THAT(Values(*elu), ElementsAre(DoubleNear(std::exp(-1.0) - 1, 1e-15), 2));
  EXPECT_THAT(
      Values(*selu),
      ElementsAre(DoubleNear(1.0507009873554805 * 1.6732632423543772 * (std::exp(-1.0) - 1), 1e-12),
                  DoubleNear(2 * 1.0507009873554805, 1e-12)));
  EXPECT_THAT(Values(*softsign), ElementsAre(-0.75, 0.5));
  // Softplus thresholds for float32: log(2^-23) + 2 = -13.94; above 13.94 it is x exactly,
  // below -13.94 exp(x).
  auto sp = Unary("Softplus", F32({3}, {20, 0, -20}));
  ASSERT_TRUE(sp.ok());
  std::vector<double> v = Values(*sp);
  EXPECT_EQ(v[0], 20);
  EXPECT_NEAR(v[1], std::log(2.0), 1e-7);
  EXPECT_EQ(v[2], static_cast<double>(std::exp(-20.0f)));
  auto leaky = OpRunner("LeakyRelu")
                   .T(DType::kFloat32)
                   .Input(F32({3}, {-2, 0, 3}))
                   .RawAttr("alpha", "f: 0.5")
                   .Run0();
  ASSERT_TRUE(leaky.ok()) << leaky.status();
  EXPECT_THAT(Values(*leaky), ElementsAre(-1, 0, 3));
  auto leaky_default = Unary("LeakyRelu", F32({1}, {-10}));
  ASSERT_TRUE(leaky_default.ok());
  EXPECT_THAT(Values(*leaky_default), ElementsAre(DoubleNear(-2, 1e-6)));
}

TEST(CwiseExtraKernelsTest, NarrowUnsignedProductsWrap) {
  // 65535 * 65535 = 2^32 - 2^17 + 1 wraps to 1 in uint16 (no signed-int overflow on the way).
  Tensor x(DType::kUInt16, {1});
  x.data<uint16_t>()[0] = 65535;
  auto out = Binary("Mul", x, x);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values(*out), ElementsAre(1));
}

TEST(CwiseExtraKernelsTest, AddNSumsSameShapedInputs) {
  auto out = OpRunner("AddN")
                 .T(DType::kInt32)
                 .Int("N", 3)
                 .Input(I32({2}, {1, 2}))
                 .Input(I32({2}, {10, 20}))
                 .Input(I32({2}, {100, 200}))
                 .Run0();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values(*out), ElementsAre(111, 222));
  auto bad = OpRunner("AddN")
                 .T(DType::kInt32)
                 .Int("N", 2)
                 .Input(I32({2}, {1, 2}))
                 .Input(I32({1}, {1}))
                 .Run0();
  TFJIT_EXPECT_ERROR(bad, absl::StatusCode::kInvalidArgument, "same dtype and shape");
}

TEST(CwiseExtraKernelsTest, ClipByValueScalarAndTensorBounds) {
  auto out = OpRunner("ClipByValue")
                 .T(DType::kFloat32)
                 .Input(F32({4}, {-5, 0, 2, 9}))
                 .Input(F32({}, {-1}))
                 .Input(F32({}, {3}))
                 .Run0();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values(*out), ElementsAre(-1, 0, 2, 3));
  auto per = OpRunner("ClipByValue")
                 .T(DType::kInt32)
                 .Input(I32({3}, {5, 5, 5}))
                 .Input(I32({3}, {6, 0, 0}))
                 .Input(I32({3}, {9, 9, 4}))
                 .Run0();
  ASSERT_TRUE(per.ok()) << per.status();
  EXPECT_THAT(Values(*per), ElementsAre(6, 5, 4));
  auto bad = OpRunner("ClipByValue")
                 .T(DType::kInt32)
                 .Input(I32({3}, {5, 5, 5}))
                 .Input(I32({2}, {6, 0}))
                 .Input(I32({}, {9}))
                 .Run0();
  TFJIT_EXPECT_ERROR(bad, absl::StatusCode::kInvalidArgument, "must be either scalars");
}

}  // namespace
}  // namespace tfjit::runtime
