// Tests for the elementwise kernels (runtime/kernels/math_cwise_kernels.cc): broadcasting binary
// ops, unary math, comparisons, Select, dtype variants and error paths.
#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/runtime/kernel_test_util.h"

namespace tfjit::runtime {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace ::tfjit::runtime::testing;  // NOLINT: test builders

absl::StatusOr<Tensor> Binary(const std::string& op, const Tensor& a, const Tensor& b,
                              ThreadPool* pool = nullptr) {
  return OpRunner(op).T(a.dtype()).Input(a).Input(b).Pool(pool).Run0();
}
absl::StatusOr<Tensor> Unary(const std::string& op, const Tensor& a) {
  return OpRunner(op).T(a.dtype()).Input(a).Run0();
}

TEST(CwiseKernelsTest, AddBroadcastsRowVector) {
  auto out = Binary("AddV2", F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({3}, {10, 20, 30}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ShapeString(), "float32[2,3]");
  EXPECT_THAT(Values(*out), ElementsAre(11, 22, 33, 14, 25, 36));
}

// TF's answers at the edges (IEEE sqrt): sqrt(inf) = inf, rsqrt(inf) = 0, rsqrt(0) = inf,
// sqrt(-1) = NaN. 20 elements so the vectorised path runs (Eigen's fast vector sqrt gave NaN
// for inf).
TEST(CwiseKernelsTest, SqrtAndRsqrtAreExactAtInfinityAndZero) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x(20, inf);
  x[1] = 0;
  x[2] = 4;
  x[3] = -1;
  auto sqrt = Unary("Sqrt", F32({20}, x));
  auto rsqrt = Unary("Rsqrt", F32({20}, x));
  ASSERT_TRUE(sqrt.ok()) << sqrt.status();
  ASSERT_TRUE(rsqrt.ok()) << rsqrt.status();
  const std::vector<double> s = Values(*sqrt), r = Values(*rsqrt);
  for (int i : {0, 4, 19}) {
    EXPECT_EQ(s[i], inf) << i;
    EXPECT_EQ(r[i], 0.0) << i;
  }
  EXPECT_EQ(s[1], 0.0);
  EXPECT_EQ(r[1], inf);
  EXPECT_EQ(s[2], 2.0);
  EXPECT_EQ(r[2], 0.5);
  EXPECT_TRUE(std::isnan(s[3]));
  EXPECT_TRUE(std::isnan(r[3]));
}

TEST(CwiseKernelsTest, MulBroadcastsColumnAndRow) {
  auto out = Binary("Mul", F32({2, 1}, {2, 3}), F32({1, 3}, {1, 10, 100}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ShapeString(), "float32[2,3]");
  EXPECT_THAT(Values(*out), ElementsAre(2, 20, 200, 3, 30, 300));
}

TEST(CwiseKernelsTest, ScalarOnEitherSide) {
  auto left = Binary("Sub", F32({}, {10}), F32({3}, {1, 2, 3}));
  ASSERT_TRUE(left.ok()) << left.status();
  EXPECT_THAT(Values(*left), ElementsAre(9, 8, 7));
  auto right = Binary("Sub", F32({3}, {1, 2, 3}), F32({}, {10}));
  ASSERT_TRUE(right.ok()) << right.status();
  EXPECT_THAT(Values(*right), ElementsAre(-9, -8, -7));
  auto both = Binary("Add", I32({}, {2}), I32({}, {3}));
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->rank(), 0);
  EXPECT_THAT(Values(*both), ElementsAre(5));
}

TEST(CwiseKernelsTest, EmptyTensorsBroadcast) {
  auto out = Binary("Add", F32({0, 3}, {}), F32({3}, {1, 2, 3}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ShapeString(), "float32[0,3]");
}

TEST(CwiseKernelsTest, LargeBroadcastWithThreadPoolMatchesSerial) {
  ThreadPool pool(2);
  std::vector<float> a(300 * 257), b(257);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 97);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) * 0.5f;
  auto out = Binary("Mul", F32({300, 257}, a), F32({257}, b), &pool);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int64_t i = 0; i < out->num_elements(); i += 1013) {
    EXPECT_EQ(out->data<float>()[i], a[i] * b[i % 257]) << i;
  }
}

TEST(CwiseKernelsTest, IntegerAndHalfVariants) {
  auto i = Binary("Mul", I32({3}, {2, -3, 4}), I32({3}, {5, 6, -7}));
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_THAT(Values(*i), ElementsAre(10, -18, -28));
  auto h = Binary("Add", F16({2}, {1.5f, 2.25f}), F16({}, {0.25f}));
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->dtype(), DType::kFloat16);
  EXPECT_THAT(Values(*h), ElementsAre(1.75, 2.5));
  auto u = Binary("Add", U8({2}, {250, 1}), U8({2}, {10, 1}));
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_THAT(Values(*u), ElementsAre(4, 2));  // uint8 wraps
  auto wrap = Binary("AddV2", I32({1}, {std::numeric_limits<int32_t>::max()}), I32({1}, {1}));
  ASSERT_TRUE(wrap.ok());
  EXPECT_EQ(wrap->data<int32_t>()[0], std::numeric_limits<int32_t>::min());
}

TEST(CwiseKernelsTest, DivTruncatesIntegersAndDividesFloats) {
  auto i = Binary("Div", I32({4}, {7, -7, 7, -7}), I32({4}, {2, 2, -2, -2}));
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_THAT(Values(*i), ElementsAre(3, -3, -3, 3));
  auto f = Binary("Div", F32({2}, {1, -3}), F32({2}, {4, 2}));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_THAT(Values(*f), ElementsAre(0.25, -1.5));
  auto lowest = Binary("Div", I32({1}, {std::numeric_limits<int32_t>::min()}), I32({1}, {-1}));
  ASSERT_TRUE(lowest.ok()) << lowest.status();
  EXPECT_EQ(lowest->data<int32_t>()[0], std::numeric_limits<int32_t>::min());
  auto real = Binary("RealDiv", F64({2}, {1, 1}), F64({2}, {0, -8}));
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_TRUE(std::isinf(real->data<double>()[0]));
  EXPECT_EQ(real->data<double>()[1], -0.125);
}

TEST(CwiseKernelsTest, IntegerDivisionByZeroIsAnError) {
  TFJIT_EXPECT_ERROR(Binary("Div", I32({2}, {1, 2}), I32({2}, {1, 0})),
                     absl::StatusCode::kInvalidArgument, "Integer division by zero");
  // No output elements: nothing is divided, as in TF.
  EXPECT_TRUE(Binary("Div", I32({0}, {}), I32({1}, {0})).ok());
}

TEST(CwiseKernelsTest, RealDivRejectsIntegers) {
  TFJIT_EXPECT_ERROR(Binary("RealDiv", I32({1}, {1}), I32({1}, {1})),
                     absl::StatusCode::kInvalidArgument, "no RealDiv kernel for dtype int32");
}

TEST(CwiseKernelsTest, MaximumMinimumPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto mx = Binary("Maximum", F32({3}, {1, nan, 5}), F32({3}, {2, 0, nan}));
  ASSERT_TRUE(mx.ok()) << mx.status();
  EXPECT_EQ(mx->data<float>()[0], 2);
  EXPECT_TRUE(std::isnan(mx->data<float>()[1]));
  EXPECT_TRUE(std::isnan(mx->data<float>()[2]));
  auto mn = Binary("Minimum", I64({3}, {1, -4, 5}), I64({}, {0}));
  ASSERT_TRUE(mn.ok()) << mn.status();
  EXPECT_THAT(Values(*mn), ElementsAre(0, -4, 0));
}

TEST(CwiseKernelsTest, PowAndSquaredDifference) {
  auto p = Binary("Pow", F32({3}, {2, 9, 4}), F32({3}, {3, 0.5, -1}));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(Values(*p), ElementsAre(8, 3, 0.25));
  auto pi = Binary("Pow", I32({3}, {2, -3, 5}), I32({3}, {10, 3, 0}));
  ASSERT_TRUE(pi.ok()) << pi.status();
  EXPECT_THAT(Values(*pi), ElementsAre(1024, -27, 1));
  TFJIT_EXPECT_ERROR(Binary("Pow", I32({1}, {2}), I32({1}, {-1})),
                     absl::StatusCode::kInvalidArgument, "negative integer powers");
  auto sd = Binary("SquaredDifference", F32({2}, {1, 5}), F32({2}, {4, 5}));
  ASSERT_TRUE(sd.ok()) << sd.status();
  EXPECT_THAT(Values(*sd), ElementsAre(9, 0));
}

TEST(CwiseKernelsTest, ComparisonsReturnBool) {
  auto lt = Binary("Less", F32({3}, {1, 2, 3}), F32({}, {2}));
  ASSERT_TRUE(lt.ok()) << lt.status();
  EXPECT_EQ(lt->ShapeString(), "bool[3]");
  EXPECT_THAT(Values(*lt), ElementsAre(1, 0, 0));
  auto ge = Binary("GreaterEqual", I32({3}, {1, 2, 3}), I32({}, {2}));
  ASSERT_TRUE(ge.ok());
  EXPECT_THAT(Values(*ge), ElementsAre(0, 1, 1));
  auto eq = Binary("Equal", Bool({2}, {true, false}), Bool({2}, {true, true}));
  ASSERT_TRUE(eq.ok()) << eq.status();
  EXPECT_THAT(Values(*eq), ElementsAre(1, 0));
  auto ne = Binary("NotEqual", F16({2}, {1, 2}), F16({2}, {1, 3}));
  ASSERT_TRUE(ne.ok()) << ne.status();
  EXPECT_THAT(Values(*ne), ElementsAre(0, 1));
  auto gt = Binary("Greater", F32({2, 1}, {0, 5}), F32({1, 2}, {1, 4}));
  ASSERT_TRUE(gt.ok());
  EXPECT_THAT(Values(*gt), ElementsAre(0, 0, 1, 1));
  TFJIT_EXPECT_ERROR(Binary("Less", Bool({1}, {true}), Bool({1}, {false})),
                     absl::StatusCode::kInvalidArgument, "no Less kernel for dtype bool");
}

TEST(CwiseKernelsTest, IncompatibleShapesNameNodeAndShapes) {
  TFJIT_EXPECT_ERROR(Binary("Add", F32({2, 3}, {}), F32({4}, {})),
                     absl::StatusCode::kInvalidArgument,
                     "node 'op' (Add): Incompatible shapes: x is float32[2,3], y is float32[4]");
}

TEST(CwiseKernelsTest, UnaryMath) {
  auto neg = Unary("Neg", I32({2}, {3, -4}));
  ASSERT_TRUE(neg.ok()) << neg.status();
  EXPECT_THAT(Values(*neg), ElementsAre(-3, 4));
  auto abs = Unary("Abs", F32({2}, {-1.5, 2}));
  ASSERT_TRUE(abs.ok());
  EXPECT_THAT(Values(*abs), ElementsAre(1.5, 2));
  auto exp = Unary("Exp", F64({2}, {0, 1}));
  ASSERT_TRUE(exp.ok());
  EXPECT_THAT(Values(*exp), ElementsAre(1, DoubleNear(M_E, 1e-12)));
  auto log = Unary("Log", F32({3}, {1, 0, -1}));
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->data<float>()[0], 0);
  EXPECT_TRUE(std::isinf(log->data<float>()[1]) && log->data<float>()[1] < 0);
  EXPECT_TRUE(std::isnan(log->data<float>()[2]));
  auto tanh = Unary("Tanh", F32({3}, {0, 1, -20}));
  ASSERT_TRUE(tanh.ok());
  EXPECT_THAT(Values(*tanh), ElementsAre(0, DoubleNear(std::tanh(1.0), 1e-6), -1));
  auto sig = Unary("Sigmoid", F32({3}, {0, 2, -200}));
  ASSERT_TRUE(sig.ok());
  EXPECT_THAT(Values(*sig), ElementsAre(0.5, DoubleNear(1 / (1 + std::exp(-2.0)), 1e-6), 0));
  auto sqrt = Unary("Sqrt", F32({2}, {4, 2.25}));
  ASSERT_TRUE(sqrt.ok());
  EXPECT_THAT(Values(*sqrt), ElementsAre(2, 1.5));
  auto rsqrt = Unary("Rsqrt", F64({2}, {4, 0.25}));
  ASSERT_TRUE(rsqrt.ok());
  EXPECT_THAT(Values(*rsqrt), ElementsAre(0.5, 2));
  auto sq = Unary("Square", I64({2}, {-3, 5}));
  ASSERT_TRUE(sq.ok());
  EXPECT_THAT(Values(*sq), ElementsAre(9, 25));
  auto floor = Unary("Floor", F32({3}, {1.5, -1.5, 2}));
  ASSERT_TRUE(floor.ok());
  EXPECT_THAT(Values(*floor), ElementsAre(1, -2, 2));
}

TEST(CwiseKernelsTest, UnaryHalfComputesInFloat) {
  auto exp = Unary("Exp", F16({2}, {0, 1}));
  ASSERT_TRUE(exp.ok()) << exp.status();
  EXPECT_EQ(exp->dtype(), DType::kFloat16);
  EXPECT_THAT(Values(*exp), ElementsAre(1, DoubleNear(M_E, 2e-3)));
}

TEST(CwiseKernelsTest, FloatOnlyUnaryRejectsIntegers) {
  TFJIT_EXPECT_ERROR(Unary("Tanh", I32({1}, {1})), absl::StatusCode::kInvalidArgument,
                     "node 'op' (Tanh): no Tanh kernel for dtype int32");
}

TEST(CwiseKernelsTest, SelectVectorConditionPicksRows) {
  auto out = OpRunner("Select")
                 .T(DType::kFloat32)
                 .Input(Bool({2}, {true, false}))
                 .Input(F32({2, 2}, {1, 2, 3, 4}))
                 .Input(F32({2, 2}, {5, 6, 7, 8}))
                 .Run0();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values(*out), ElementsAre(1, 2, 7, 8));
  auto same = OpRunner("Select")
                  .T(DType::kInt32)
                  .Input(Bool({3}, {false, true, false}))
                  .Input(I32({3}, {1, 2, 3}))
                  .Input(I32({3}, {4, 5, 6}))
                  .Run0();
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_THAT(Values(*same), ElementsAre(4, 2, 6));
  TFJIT_EXPECT_ERROR(OpRunner("Select")
                         .T(DType::kFloat32)
                         .Input(Bool({3}, {}))
                         .Input(F32({2, 2}, {}))
                         .Input(F32({2, 2}, {}))
                         .Run0(),
                     absl::StatusCode::kInvalidArgument, "condition is bool[3], t is float32[2,2]");
}

TEST(CwiseKernelsTest, SelectV2Broadcasts) {
  auto out = OpRunner("SelectV2")
                 .T(DType::kFloat32)
                 .Input(Bool({2, 1}, {true, false}))
                 .Input(F32({3}, {1, 2, 3}))
                 .Input(F32({}, {0}))
                 .Run0();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ShapeString(), "float32[2,3]");
  EXPECT_THAT(Values(*out), ElementsAre(1, 2, 3, 0, 0, 0));
  TFJIT_EXPECT_ERROR(OpRunner("SelectV2")
                         .T(DType::kFloat32)
                         .Input(Bool({2}, {}))
                         .Input(F32({3}, {}))
                         .Input(F32({}, {0}))
                         .Run0(),
                     absl::StatusCode::kInvalidArgument, "cannot be broadcast together");
}

}  // namespace
}  // namespace tfjit::runtime
