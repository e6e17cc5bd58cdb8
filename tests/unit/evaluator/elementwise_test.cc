// Evaluator tests: elementwise math, compare, select, clamp, convert and their edge cases.
#include <cmath>
#include <cstdint>
#include <limits>

#include "tests/unit/evaluator/eval_test_util.h"

namespace tfjit::hlo {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Evaluates `ROOT %r = <result> <op>(%a, %b)` on a and b of shape `ty`.
template <typename T>
std::vector<T> Binary2(const std::string& op, const std::string& ty, const std::string& result,
                       const std::vector<T>& a, const std::vector<T>& b) {
  const int64_t n = static_cast<int64_t>(a.size());
  const std::string text =
      Entry("(a: " + ty + ", b: " + ty + ") -> " + result,
            "  %a = " + ty + " parameter(0)\n  %b = " + ty +
                " parameter(1)\n  ROOT %r = " + result + " " + op + "(%a, %b)");
  absl::StatusOr<Literal> r = ParseAndRun(text, {Lit<T>({n}, a), Lit<T>({n}, b)});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? Values<T>(*r) : std::vector<T>{};
}

template <typename T>
std::vector<T> Unary(const std::string& op, const std::string& ty, const std::vector<T>& a) {
  const int64_t n = static_cast<int64_t>(a.size());
  const std::string text =
      Entry("(a: " + ty + ") -> " + ty,
            "  %a = " + ty + " parameter(0)\n  ROOT %r = " + ty + " " + op + "(%a)");
  absl::StatusOr<Literal> r = ParseAndRun(text, {Lit<T>({n}, a)});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? Values<T>(*r) : std::vector<T>{};
}

TEST(ElementwiseTest, IntegerArithmeticWraps) {
  const int32_t kMax = std::numeric_limits<int32_t>::max();
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(Binary2<int32_t>("add", "s32[2]", "s32[2]", {kMax, 1}, {1, 2}),
            (std::vector<int32_t>{kMin, 3}));
  EXPECT_EQ(Binary2<int32_t>("multiply", "s32[1]", "s32[1]", {65536}, {65536}),
            (std::vector<int32_t>{0}));
  EXPECT_EQ(Binary2<uint8_t>("subtract", "u8[1]", "u8[1]", {1}, {2}), (std::vector<uint8_t>{255}));
}

TEST(ElementwiseTest, IntegerDivisionEdgeCases) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(Binary2<int32_t>("divide", "s32[4]", "s32[4]", {7, -7, 5, kMin}, {2, 2, 0, -1}),
            (std::vector<int32_t>{3, -3, -1, kMin}));
  EXPECT_EQ(Binary2<uint32_t>("divide", "u32[2]", "u32[2]", {7, 9}, {0, 2}),
            (std::vector<uint32_t>{0xFFFFFFFFu, 4}));
  EXPECT_EQ(Binary2<int32_t>("remainder", "s32[4]", "s32[4]", {-7, 7, 5, kMin}, {2, -2, 0, -1}),
            (std::vector<int32_t>{-1, 1, 5, 0}));
}

TEST(ElementwiseTest, MaxMinPropagateNaN) {
  std::vector<float> mx = Binary2<float>("maximum", "f32[3]", "f32[3]", {1, kNaN, 3}, {2, 0, kNaN});
  EXPECT_EQ(mx[0], 2);
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_TRUE(std::isnan(mx[2]));
  std::vector<float> mn = Binary2<float>("minimum", "f32[2]", "f32[2]", {1, kNaN}, {2, 0});
  EXPECT_EQ(mn[0], 1);
  EXPECT_TRUE(std::isnan(mn[1]));
}

TEST(ElementwiseTest, ShiftsAtOrBeyondWidth) {
  EXPECT_EQ(Binary2<int32_t>("shift-left", "s32[3]", "s32[3]", {1, 1, 1}, {3, 32, -1}),
            (std::vector<int32_t>{8, 0, 0}));
  EXPECT_EQ(
      Binary2<int32_t>("shift-right-arithmetic", "s32[3]", "s32[3]", {-8, -8, 8}, {1, 40, 40}),
      (std::vector<int32_t>{-4, -1, 0}));
  EXPECT_EQ(Binary2<int32_t>("shift-right-logical", "s32[2]", "s32[2]", {-8, -8}, {28, 32}),
            (std::vector<int32_t>{15, 0}));
}

TEST(ElementwiseTest, IntegerPower) {
  EXPECT_EQ(Binary2<int32_t>("power", "s32[5]", "s32[5]", {2, 3, 2, 1, -1}, {10, 0, -1, -5, -3}),
            (std::vector<int32_t>{1024, 1, 0, 1, -1}));
}

TEST(ElementwiseTest, FloatRemainderAndPower) {
  EXPECT_EQ(Binary2<float>("remainder", "f32[2]", "f32[2]", {-7.5f, 7.5f}, {2, 2}),
            (std::vector<float>{-1.5f, 1.5f}));
  EXPECT_EQ(Binary2<float>("power", "f32[1]", "f32[1]", {2}, {0.5f})[0], std::pow(2.f, 0.5f));
}

TEST(ElementwiseTest, UnaryIntegerEdgeCases) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(Unary<int32_t>("abs", "s32[3]", {-3, 4, kMin}), (std::vector<int32_t>{3, 4, kMin}));
  EXPECT_EQ(Unary<int32_t>("negate", "s32[2]", {5, kMin}), (std::vector<int32_t>{-5, kMin}));
  EXPECT_EQ(Unary<int32_t>("sign", "s32[3]", {-9, 0, 7}), (std::vector<int32_t>{-1, 0, 1}));
  EXPECT_EQ(Unary<int32_t>("not", "s32[1]", {0}), (std::vector<int32_t>{-1}));
}

TEST(ElementwiseTest, Rounding) {
  EXPECT_EQ(Unary<float>("round-nearest-afz", "f32[4]", {0.5f, 1.5f, 2.5f, -2.5f}),
            (std::vector<float>{1, 2, 3, -3}));
  EXPECT_EQ(Unary<float>("round-nearest-even", "f32[4]", {0.5f, 1.5f, 2.5f, -2.5f}),
            (std::vector<float>{0, 2, 2, -2}));
  EXPECT_EQ(Unary<float>("floor", "f32[2]", {-1.5f, 1.5f}), (std::vector<float>{-2, 1}));
  EXPECT_EQ(Unary<float>("ceil", "f32[2]", {-1.5f, 1.5f}), (std::vector<float>{-1, 2}));
}

TEST(ElementwiseTest, FloatUnaryMath) {
  std::vector<float> s = Unary<float>("sign", "f32[3]", {-2, 0, kNaN});
  EXPECT_EQ(s[0], -1);
  EXPECT_EQ(s[1], 0);
  EXPECT_TRUE(std::isnan(s[2]));
  EXPECT_EQ(Unary<float>("exp", "f32[1]", {1})[0], std::exp(1.f));
  EXPECT_EQ(Unary<float>("rsqrt", "f32[1]", {4})[0], 0.5f);
  EXPECT_EQ(Unary<float>("logistic", "f32[2]", {0, -200}), (std::vector<float>{0.5f, 0}));
  EXPECT_EQ(Unary<double>("tanh", "f64[1]", {0.5})[0], std::tanh(0.5));
}

TEST(ElementwiseTest, HalfComputedInF32AndRounded) {
  std::vector<half> r = Binary2<half>("add", "f16[1]", "f16[1]", {half(1.0f)}, {half(0.0004f)});
  // 1 + 0.0004 is below half an ulp of f16 at 1 (0.000488), so it rounds back to 1.
  EXPECT_EQ(static_cast<float>(r[0]), 1.0f);
  std::vector<bfloat16> b = Unary<bfloat16>("sqrt", "bf16[1]", {bfloat16(4.0f)});
  EXPECT_EQ(static_cast<float>(b[0]), 2.0f);
}

TEST(ElementwiseTest, CompareWithNaN) {
  const std::string text = Entry("(a: f32[2], b: f32[2]) -> (pred[2], pred[2], pred[2])",
                                 "  %a = f32[2] parameter(0)\n  %b = f32[2] parameter(1)\n"
                                 "  %eq = pred[2] compare(%a, %b), direction=EQ\n"
                                 "  %ne = pred[2] compare(%a, %b), direction=NE\n"
                                 "  %lt = pred[2] compare(%a, %b), direction=LT\n"
                                 "  ROOT %t = (pred[2], pred[2], pred[2]) tuple(%eq, %ne, %lt)");
  absl::StatusOr<Literal> r =
      ParseAndRun(text, {Lit<float>({2}, {kNaN, 1}), Lit<float>({2}, {kNaN, 2})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<bool>(r->elements()[0]), (std::vector<bool>{false, false}));
  EXPECT_EQ(Values<bool>(r->elements()[1]), (std::vector<bool>{true, true}));
  EXPECT_EQ(Values<bool>(r->elements()[2]), (std::vector<bool>{false, true}));
}

TEST(ElementwiseTest, SelectWithScalarPredAndClampWithScalarBounds) {
  const std::string text =
      Entry("(p: pred[], a: f32[3], b: f32[3]) -> (f32[3], f32[3])",
            "  %p = pred[] parameter(0)\n  %a = f32[3] parameter(1)\n  %b = f32[3] parameter(2)\n"
            "  %s = f32[3] select(%p, %a, %b)\n"
            "  %lo = f32[] constant(0)\n  %hi = f32[] constant(1)\n"
            "  %c = f32[3] clamp(%lo, %b, %hi)\n"
            "  ROOT %t = (f32[3], f32[3]) tuple(%s, %c)");
  absl::StatusOr<Literal> r = ParseAndRun(
      text, {Lit<bool>({}, {false}), Lit<float>({3}, {1, 2, 3}), Lit<float>({3}, {-1, 0.5f, 7})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<float>(r->elements()[0]), (std::vector<float>{-1, 0.5f, 7}));
  EXPECT_EQ(Values<float>(r->elements()[1]), (std::vector<float>{0, 0.5f, 1}));
}

TEST(ElementwiseTest, ConvertSaturatesAndMapsNaNToZero) {
  const std::string text =
      Entry("(a: f32[5]) -> s32[5]", "  %a = f32[5] parameter(0)\n  ROOT %c = s32[5] convert(%a)");
  absl::StatusOr<Literal> r =
      ParseAndRun(text, {Lit<float>({5}, {kNaN, 1e20f, -1e20f, -2.7f, kInf})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int32_t>(*r), (std::vector<int32_t>{0, std::numeric_limits<int32_t>::max(),
                                                       std::numeric_limits<int32_t>::min(), -2,
                                                       std::numeric_limits<int32_t>::max()}));
  const std::string to_u8 =
      Entry("(a: f32[3]) -> u8[3]", "  %a = f32[3] parameter(0)\n  ROOT %c = u8[3] convert(%a)");
  r = ParseAndRun(to_u8, {Lit<float>({3}, {-5, 300, 7.9f})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<uint8_t>(*r), (std::vector<uint8_t>{0, 255, 7}));
}

TEST(ElementwiseTest, ConvertToPredAndBetweenInts) {
  const std::string text = Entry("(a: f32[3], b: s32[2]) -> (pred[3], s8[2])",
                                 "  %a = f32[3] parameter(0)\n  %b = s32[2] parameter(1)\n"
                                 "  %p = pred[3] convert(%a)\n  %n = s8[2] convert(%b)\n"
                                 "  ROOT %t = (pred[3], s8[2]) tuple(%p, %n)");
  absl::StatusOr<Literal> r =
      ParseAndRun(text, {Lit<float>({3}, {0, -0.5f, kNaN}), Lit<int32_t>({2}, {300, -129})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<bool>(r->elements()[0]), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(Values<int8_t>(r->elements()[1]), (std::vector<int8_t>{44, 127}));
}

TEST(ElementwiseTest, BitcastConvertAndIsFinite) {
  const std::string text =
      Entry("(a: f32[3]) -> (u32[3], pred[3])",
            "  %a = f32[3] parameter(0)\n  %b = u32[3] bitcast-convert(%a)\n"
            "  %f = pred[3] is-finite(%a)\n  ROOT %t = (u32[3], pred[3]) tuple(%b, %f)");
  absl::StatusOr<Literal> r = ParseAndRun(text, {Lit<float>({3}, {1.0f, kInf, kNaN})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<uint32_t>(r->elements()[0])[0], 0x3F800000u);
  EXPECT_EQ(Values<bool>(r->elements()[1]), (std::vector<bool>{true, false, false}));
}

}  // namespace
}  // namespace tfjit::hlo
