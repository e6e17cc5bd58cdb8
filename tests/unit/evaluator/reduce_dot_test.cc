// Evaluator tests: reduce (plain and variadic combiners), reduce-window and dot.
#include "tests/unit/evaluator/eval_test_util.h"

namespace tfjit::hlo {
namespace {

constexpr char kAdd[] =
    "%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
    "  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n\n";
constexpr char kMax[] =
    "%max (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
    "  %b = f32[] parameter(1)\n  ROOT %m = f32[] maximum(%a, %b)\n}\n\n";

std::string WithComps(const std::string& comps, const std::string& sig, const std::string& body) {
  return "HloModule test\n\n" + comps + "ENTRY %main " + sig + " {\n" + body + "\n}\n";
}

TEST(ReduceTest, SumOverEachDimension) {
  const std::string text =
      WithComps(kAdd, "(x: f32[2,3]) -> (f32[2], f32[3], f32[])",
                "  %x = f32[2,3] parameter(0)\n  %z = f32[] constant(0)\n"
                "  %r1 = f32[2] reduce(%x, %z), dimensions={1}, to_apply=%add\n"
                "  %r0 = f32[3] reduce(%x, %z), dimensions={0}, to_apply=%add\n"
                "  %ra = f32[] reduce(%x, %z), dimensions={0,1}, to_apply=%add\n"
                "  ROOT %t = (f32[2], f32[3], f32[]) tuple(%r1, %r0, %ra)");
  absl::StatusOr<Literal> r = ParseAndRun(text, {Lit<float>({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<float>(r->elements()[0]), (std::vector<float>{6, 15}));
  EXPECT_EQ(Values<float>(r->elements()[1]), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(Values<float>(r->elements()[2]), (std::vector<float>{21}));
}

// A combiner that is not a plain binary op goes through the slow path: sum of squares
// of the new element (acc + x*x).
TEST(ReduceTest, GeneralCombinerComputation) {
  const std::string comb =
      "%sumsq (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
      "  %b = f32[] parameter(1)\n  %bb = f32[] multiply(%b, %b)\n"
      "  ROOT %s = f32[] add(%a, %bb)\n}\n\n";
  const std::string text = WithComps(comb, "(x: f32[3]) -> f32[]",
                                     "  %x = f32[3] parameter(0)\n  %z = f32[] constant(0)\n"
                                     "  ROOT %r = f32[] reduce(%x, %z), dimensions={0}, "
                                     "to_apply=%sumsq");
  absl::StatusOr<Literal> r = ParseAndRun(text, {Lit<float>({3}, {1, 2, 3})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<float>(*r)[0], 14);
}

TEST(ReduceTest, VariadicArgMax) {
  const std::string comb =
      "%argmax (av: f32[], ai: s32[], bv: f32[], bi: s32[]) -> (f32[], s32[]) {\n"
      "  %av = f32[] parameter(0)\n  %ai = s32[] parameter(1)\n"
      "  %bv = f32[] parameter(2)\n  %bi = s32[] parameter(3)\n"
      "  %gt = pred[] compare(%bv, %av), direction=GT\n"
      "  %v = f32[] select(%gt, %bv, %av)\n  %i = s32[] select(%gt, %bi, %ai)\n"
      "  ROOT %t = (f32[], s32[]) tuple(%v, %i)\n}\n\n";
  const std::string text =
      WithComps(comb, "(x: f32[4]) -> (f32[], s32[])",
                "  %x = f32[4] parameter(0)\n  %io = s32[4] iota(), iota_dimension=0\n"
                "  %ninf = f32[] constant(-inf)\n  %zero = s32[] constant(0)\n"
                "  ROOT %r = (f32[], s32[]) reduce(%x, %io, %ninf, %zero), dimensions={0}, "
                "to_apply=%argmax");
  absl::StatusOr<Literal> r = ParseAndRun(text, {Lit<float>({4}, {3, 9, -1, 4})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<float>(r->elements()[0])[0], 9);
  EXPECT_EQ(Values<int32_t>(r->elements()[1])[0], 1);
}

TEST(ReduceWindowTest, MaxPoolWithPadding) {
  const std::string text =
      WithComps(kMax, "(x: f32[4]) -> f32[3]",
                "  %x = f32[4] parameter(0)\n  %ninf = f32[] constant(-inf)\n"
                "  ROOT %r = f32[3] reduce-window(%x, %ninf), window={size=2 stride=2 pad=1_1}, "
                "to_apply=%max");
  absl::StatusOr<Literal> r = ParseAndRun(text, {Lit<float>({4}, {1, 5, 2, 3})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<float>(*r), (std::vector<float>{1, 5, 3}));
}

TEST(ReduceWindowTest, SumWindowStride1) {
  const std::string text =
      WithComps(kAdd, "(x: f32[2,3]) -> f32[1,2]",
                "  %x = f32[2,3] parameter(0)\n  %z = f32[] constant(0)\n"
                "  ROOT %r = f32[1,2] reduce-window(%x, %z), window={size=2x2}, to_apply=%add");
  absl::StatusOr<Literal> r = ParseAndRun(text, {Lit<float>({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<float>(*r), (std::vector<float>{12, 16}));
}

TEST(DotTest, MatMul) {
  const std::string text =
      Entry("(a: f32[2,3], b: f32[3,2]) -> f32[2,2]",
            "  %a = f32[2,3] parameter(0)\n  %b = f32[3,2] parameter(1)\n"
            "  ROOT %d = f32[2,2] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  absl::StatusOr<Literal> r = ParseAndRun(
      text, {Lit<float>({2, 3}, {1, 2, 3, 4, 5, 6}), Lit<float>({3, 2}, {1, 0, 0, 1, 1, 1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<float>(*r), (std::vector<float>{4, 5, 10, 11}));
}

TEST(DotTest, BatchedWithTransposedRhs) {
  // [b=2, m=1, k=2] x [b=2, n=2, k=2] contracting k, batch b -> [2,1,2]
  const std::string text =
      Entry("(a: s32[2,1,2], b: s32[2,2,2]) -> s32[2,1,2]",
            "  %a = s32[2,1,2] parameter(0)\n  %b = s32[2,2,2] parameter(1)\n"
            "  ROOT %d = s32[2,1,2] dot(%a, %b), lhs_batch_dims={0}, rhs_batch_dims={0}, "
            "lhs_contracting_dims={2}, rhs_contracting_dims={2}");
  absl::StatusOr<Literal> r = ParseAndRun(
      text,
      {Lit<int32_t>({2, 1, 2}, {1, 2, 3, 4}), Lit<int32_t>({2, 2, 2}, {1, 1, 2, 0, 1, 0, 0, 1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int32_t>(*r), (std::vector<int32_t>{3, 2, 3, 4}));
}

TEST(DotTest, HalfAccumulatesInF32) {
  // 2048 + 1 + 1 in f16 step by step would stay 2048 (ulp 2); in f32 it is 2050.
  const std::string text =
      Entry("(a: f16[3], b: f16[3]) -> f16[]",
            "  %a = f16[3] parameter(0)\n  %b = f16[3] parameter(1)\n"
            "  ROOT %d = f16[] dot(%a, %b), lhs_contracting_dims={0}, rhs_contracting_dims={0}");
  absl::StatusOr<Literal> r =
      ParseAndRun(text, {Lit<half>({3}, {half(2048.f), half(1.f), half(1.f)}),
                         Lit<half>({3}, {half(1.f), half(1.f), half(1.f)})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(static_cast<float>(Values<half>(*r)[0]), 2050.f);
}

}  // namespace
}  // namespace tfjit::hlo
