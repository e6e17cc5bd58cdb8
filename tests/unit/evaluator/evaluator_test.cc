// Evaluator tests: the driver (argument checks, coverage table) and structural/control-flow
// opcodes (tuple, get-tuple-element, call, fusion, while, conditional).
#include "tests/unit/evaluator/eval_test_util.h"

namespace tfjit::hlo {
namespace {

constexpr char kNeg[] =
    "HloModule test\n\nENTRY %main (x: f32[2]) -> f32[2] {\n"
    "  %x = f32[2] parameter(0)\n  ROOT %n = f32[2] negate(%x)\n}\n";

TEST(EvaluatorTest, ArgumentMismatchIsInvalidArgument) {
  std::unique_ptr<Module> m = testlib::ParseVerified(kNeg);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> wrong_shape = Evaluate(*m, {Lit<float>({3}, {1, 2, 3})});
  EXPECT_EQ(wrong_shape.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_shape.status().message().find("f32[3]"), std::string::npos);
  absl::StatusOr<Literal> wrong_type = Evaluate(*m, {Lit<int32_t>({2}, {1, 2})});
  EXPECT_EQ(wrong_type.status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<Literal> wrong_count = Evaluate(*m, {});
  EXPECT_EQ(wrong_count.status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<Literal> ok = Evaluate(*m, {Lit<float>({2}, {1, -2})});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(Values<float>(*ok), (std::vector<float>{-1, 2}));
}

TEST(EvaluatorTest, CoverageTableAndUnimplementedNamesOpcode) {
  EXPECT_TRUE(EvaluatorSupports(Opcode::kAdd));
  EXPECT_TRUE(EvaluatorSupports(Opcode::kConvolution));
  EXPECT_TRUE(EvaluatorSupports(Opcode::kCustomCall));  // its targets: HLO.md
  const std::string text =
      Entry("(x: f32[2]) -> f32[2]",
            "  %x = f32[2] parameter(0)\n"
            "  ROOT %c = f32[2] custom-call(%x), custom_call_target=\"mystery\"");
  std::unique_ptr<Module> m = testlib::ParseVerified(text);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> r = Evaluate(*m, {Lit<float>({2}, {1, 2})});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("custom-call"), std::string::npos);
}

TEST(EvaluatorTest, CallAndFusionEvaluateTheirComputations) {
  const std::string text =
      "HloModule test\n\n"
      "%sq (a: f32[2]) -> f32[2] {\n  %a = f32[2] parameter(0)\n"
      "  ROOT %m = f32[2] multiply(%a, %a)\n}\n\n"
      "%fused_computation (p: f32[2], q: f32[2]) -> f32[2] {\n  %p = f32[2] parameter(0)\n"
      "  %q = f32[2] parameter(1)\n  ROOT %s = f32[2] subtract(%p, %q)\n}\n\n"
      "ENTRY %main (x: f32[2]) -> f32[2] {\n  %x = f32[2] parameter(0)\n"
      "  %c = f32[2] call(%x), to_apply=%sq\n"
      "  ROOT %f = f32[2] fusion(%c, %x), kind=kLoop, calls=%fused_computation\n}\n";
  absl::StatusOr<Literal> r = ParseAndRun(text, {Lit<float>({2}, {3, -2})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<float>(*r), (std::vector<float>{6, 6}));
}

TEST(EvaluatorTest, WhileLoopCounts) {
  const std::string text =
      "HloModule test\n\n"
      "%cond (s: (s32[], f32[2])) -> pred[] {\n  %s = (s32[], f32[2]) parameter(0)\n"
      "  %i = s32[] get-tuple-element(%s), index=0\n  %n = s32[] constant(5)\n"
      "  ROOT %lt = pred[] compare(%i, %n), direction=LT\n}\n\n"
      "%body (t: (s32[], f32[2])) -> (s32[], f32[2]) {\n  %t = (s32[], f32[2]) parameter(0)\n"
      "  %i2 = s32[] get-tuple-element(%t), index=0\n"
      "  %acc = f32[2] get-tuple-element(%t), index=1\n  %one = s32[] constant(1)\n"
      "  %next = s32[] add(%i2, %one)\n  %dbl = f32[2] add(%acc, %acc)\n"
      "  ROOT %r = (s32[], f32[2]) tuple(%next, %dbl)\n}\n\n"
      "ENTRY %main (x: f32[2]) -> (s32[], f32[2]) {\n  %x = f32[2] parameter(0)\n"
      "  %z = s32[] constant(0)\n  %init = (s32[], f32[2]) tuple(%z, %x)\n"
      "  ROOT %w = (s32[], f32[2]) while(%init), condition=%cond, body=%body\n}\n";
  absl::StatusOr<Literal> r = ParseAndRun(text, {Lit<float>({2}, {1, -0.5f})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int32_t>(r->elements()[0])[0], 5);
  EXPECT_EQ(Values<float>(r->elements()[1]), (std::vector<float>{32, -16}));
}

std::string Conditional(const std::string& selector_type) {
  return "HloModule test\n\n"
         "%b0 (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
         "  ROOT %n = f32[] negate(%a)\n}\n\n"
         "%b1 (b: f32[]) -> f32[] {\n  %b = f32[] parameter(0)\n"
         "  ROOT %m = f32[] add(%b, %b)\n}\n\n"
         "ENTRY %main (p: " +
         selector_type +
         ", x: f32[], y: f32[]) -> f32[] {\n"
         "  %p = " +
         selector_type +
         " parameter(0)\n  %x = f32[] parameter(1)\n"
         "  %y = f32[] parameter(2)\n"
         "  ROOT %c = f32[] conditional(%p, %x, %y), branch_computations={%b0, %b1}\n}\n";
}

TEST(EvaluatorTest, ConditionalPredAndIndex) {
  const Literal x = Lit<float>({}, {3}), y = Lit<float>({}, {5});
  absl::StatusOr<Literal> r = ParseAndRun(Conditional("pred[]"), {Lit<bool>({}, {true}), x, y});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<float>(*r)[0], -3);
  r = ParseAndRun(Conditional("pred[]"), {Lit<bool>({}, {false}), x, y});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Values<float>(*r)[0], 10);
  // Out-of-range indices (either side) select the last branch.
  for (int32_t index : {1, 7, -1}) {
    r = ParseAndRun(Conditional("s32[]"), {Lit<int32_t>({}, {index}), x, y});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(Values<float>(*r)[0], 10) << index;
  }
  r = ParseAndRun(Conditional("s32[]"), {Lit<int32_t>({}, {0}), x, y});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Values<float>(*r)[0], -3);
}

TEST(EvaluatorTest, EvaluateInstructionFoldsOneOp) {
  std::unique_ptr<Module> m = testlib::ParseVerified(kNeg);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> r = EvaluateInstruction(*m->entry()->root(), {Lit<float>({2}, {4, -1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<float>(*r), (std::vector<float>{-4, 1}));
  EXPECT_EQ(EvaluateInstruction(*m->entry()->root(), {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tfjit::hlo
