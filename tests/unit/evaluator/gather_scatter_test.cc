// Evaluator tests: gather (clamped starts), scatter (skipped out-of-bounds windows), rng,
// and the custom-calls (Philox fills, top-k).
#include <cmath>

#include "tests/unit/evaluator/eval_test_util.h"

namespace tfjit::hlo {
namespace {

TEST(GatherTest, RowsLikeTfGatherWithClamping) {
  const std::string text =
      Entry("(x: f32[3,2], i: s32[3]) -> f32[3,2]",
            "  %x = f32[3,2] parameter(0)\n  %i = s32[3] parameter(1)\n"
            "  ROOT %g = f32[3,2] gather(%x, %i), offset_dims={1}, collapsed_slice_dims={0}, "
            "start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}");
  absl::StatusOr<Literal> r =
      ParseAndRun(text, {Lit<float>({3, 2}, {1, 2, 3, 4, 5, 6}), Lit<int32_t>({3}, {2, 0, 9})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<float>(*r), (std::vector<float>{5, 6, 1, 2, 5, 6}));
}

TEST(ScatterTest, AddsRowsAndSkipsOutOfBounds) {
  const std::string text =
      "HloModule test\n\n%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
      "  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n\n" +
      std::string(
          "ENTRY %main (x: f32[3,2], i: s32[3], u: f32[3,2]) -> f32[3,2] {\n"
          "  %x = f32[3,2] parameter(0)\n  %i = s32[3] parameter(1)\n"
          "  %u = f32[3,2] parameter(2)\n"
          "  ROOT %sc = f32[3,2] scatter(%x, %i, %u), update_window_dims={1}, "
          "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
          "index_vector_dim=1, to_apply=%add\n}\n");
  absl::StatusOr<Literal> r =
      ParseAndRun(text, {Lit<float>({3, 2}, {0, 0, 0, 0, 0, 0}), Lit<int32_t>({3}, {1, 1, 5}),
                         Lit<float>({3, 2}, {1, 2, 10, 20, 100, 200})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<float>(*r), (std::vector<float>{0, 0, 11, 22, 0, 0}));
}

TEST(RngBitGeneratorTest, PhiloxAdvancesCounterAndIsDeterministic) {
  const std::string text =
      Entry("(s: u64[3]) -> (u64[3], u32[6])",
            "  %s = u64[3] parameter(0)\n"
            "  ROOT %r = (u64[3], u32[6]) rng-bit-generator(%s), algorithm=rng_philox");
  const Literal state = Lit<uint64_t>({3}, {42, 0, 0});
  absl::StatusOr<Literal> a = ParseAndRun(text, {state});
  absl::StatusOr<Literal> b = ParseAndRun(text, {state});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok());
  // 6 words = 2 Philox blocks: the counter advances by 2, the key stays.
  EXPECT_EQ(Values<uint64_t>(a->elements()[0]), (std::vector<uint64_t>{42, 2, 0}));
  EXPECT_EQ(Values<uint32_t>(a->elements()[1]), Values<uint32_t>(b->elements()[1]));
  // Starting at counter 1 reproduces the second block of the first run.
  absl::StatusOr<Literal> c = ParseAndRun(text, {Lit<uint64_t>({3}, {42, 1, 0})});
  ASSERT_TRUE(c.ok());
  const std::vector<uint32_t> first = Values<uint32_t>(a->elements()[1]);
  const std::vector<uint32_t> shifted = Values<uint32_t>(c->elements()[1]);
  EXPECT_EQ(shifted[0], first[4]);
  EXPECT_EQ(shifted[1], first[5]);
}

// Known-answer vector of Philox-4x32-10 (Salmon et al., Random123 kat_vectors): key and
// counter all zeros.
TEST(RngBitGeneratorTest, PhiloxKnownAnswerZeroKeyZeroCounter) {
  const std::string text =
      Entry("(s: u64[3]) -> (u64[3], u32[4])",
            "  %s = u64[3] parameter(0)\n"
            "  ROOT %r = (u64[3], u32[4]) rng-bit-generator(%s), algorithm=rng_philox");
  absl::StatusOr<Literal> r = ParseAndRun(text, {Lit<uint64_t>({3}, {0, 0, 0})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<uint32_t>(r->elements()[1]),
            (std::vector<uint32_t>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
}

// The Philox-fill custom-calls give core's FillRandom values: TF's known answer for
// Generator.from_seed(1234).normal([2, 3]) (key 0, counter [1234, 0]).
TEST(CustomCallTest, PhiloxNormalIsTfKnownAnswer) {
  const std::string text = Entry(
      "(s: u64[3]) -> f32[2,3]",
      "  %s = u64[3] parameter(0)\n"
      "  ROOT %r = f32[2,3] custom-call(%s), custom_call_target=\"tfjit.philox_random_normal\"");
  absl::StatusOr<Literal> r = ParseAndRun(text, {Lit<uint64_t>({3}, {0, 1234, 0})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<float>(*r), (std::vector<float>{0.9356609f, 1.0854305f, -0.93788373f,
                                                   -0.50615472f, 1.31697023f, 0.71375787f}));
}

TEST(CustomCallTest, TruncatedNormalStaysInsideTwoAndBadShapesFail) {
  const std::string text = Entry(
      "(s: u64[3]) -> f64[50]",
      "  %s = u64[3] parameter(0)\n"
      "  ROOT %r = f64[50] custom-call(%s), custom_call_target=\"tfjit.philox_truncated_normal\"");
  absl::StatusOr<Literal> r = ParseAndRun(text, {Lit<uint64_t>({3}, {5, 6, 7})});
  ASSERT_TRUE(r.ok()) << r.status();
  for (double v : Values<double>(*r)) EXPECT_LT(std::fabs(v), 2.0);
  const std::string bad = Entry(
      "(s: u64[3]) -> s32[4]",
      "  %s = u64[3] parameter(0)\n"
      "  ROOT %r = s32[4] custom-call(%s), custom_call_target=\"tfjit.philox_random_normal\"");
  absl::StatusOr<Literal> b = ParseAndRun(bad, {Lit<uint64_t>({3}, {5, 6, 7})});
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument) << b.status();
}

// tfjit.top_k: hand-computed rows with ties (lower column first), NaN (ranked first) and -0/+0.
TEST(CustomCallTest, TopKRowsByHand) {
  const std::string text =
      Entry("(x: f32[2,5]) -> (f32[2,3], s32[2,3])",
            "  %x = f32[2,5] parameter(0)\n"
            "  ROOT %r = (f32[2,3], s32[2,3]) custom-call(%x), custom_call_target=\"tfjit.top_k\"");
  const float nan = std::nanf("");
  absl::StatusOr<Literal> r =
      ParseAndRun(text, {Lit<float>({2, 5}, {2, 5, 2, 5, 1, 0, -0.0f, nan, -1, 0})});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->elements().size(), 2u);
  const std::vector<float> v = Values<float>(r->elements()[0]);
  EXPECT_EQ(Values<int32_t>(r->elements()[1]), (std::vector<int32_t>{1, 3, 0, 2, 0, 1}));
  EXPECT_EQ(std::vector<float>(v.begin(), v.begin() + 3), (std::vector<float>{5, 5, 2}));
  EXPECT_TRUE(std::isnan(v[3]));
  EXPECT_EQ(v[4], 0.0f);
  EXPECT_FALSE(std::signbit(v[4]));  // +0 at column 0 before -0 at column 1
  EXPECT_TRUE(std::signbit(v[5]));
  // k > n is not a top-k result.
  const std::string bad =
      Entry("(x: f32[2]) -> (f32[3], s32[3])",
            "  %x = f32[2] parameter(0)\n"
            "  ROOT %r = (f32[3], s32[3]) custom-call(%x), custom_call_target=\"tfjit.top_k\"");
  EXPECT_EQ(ParseAndRun(bad, {Lit<float>({2}, {1, 2})}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tfjit::hlo
