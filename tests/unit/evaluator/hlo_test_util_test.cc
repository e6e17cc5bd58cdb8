// Tests of the testlib helpers the evaluator and pass tests rely on: literal comparison,
// seeded random inputs and the semantic-preservation check (which must catch bad passes).
#include "tests/testlib/hlo_test_util.h"

#include <cmath>
#include <limits>

#include "gtest/gtest-spi.h"
#include "tests/unit/evaluator/eval_test_util.h"

namespace tfjit::testlib {
namespace {

using hlo::Lit;
using hlo::Literal;

TEST(LiteralsNearTest, FloatsWithinToleranceNaNMatchesNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(LiteralsNear(Lit<float>({3}, {1, nan, 100}),
                           Lit<float>({3}, {1.000001f, nan, 100.0005f}), {1e-5, 1e-5}));
  ::testing::AssertionResult r =
      LiteralsNear(Lit<float>({2, 2}, {1, 2, 3, 4}), Lit<float>({2, 2}, {1, 2, 3.1f, 4}));
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("{1,0}"), std::string::npos) << r.message();
  EXPECT_FALSE(LiteralsNear(Lit<float>({1}, {nan}), Lit<float>({1}, {0})));
}

TEST(LiteralsNearTest, IntegersExactShapesAndTuples) {
  EXPECT_FALSE(LiteralsNear(Lit<int32_t>({2}, {1, 2}), Lit<int32_t>({2}, {1, 3}), {10, 10}));
  EXPECT_FALSE(LiteralsNear(Lit<int32_t>({2}, {1, 2}), Lit<int32_t>({1, 2}, {1, 2})));
  std::vector<Literal> a, b;
  a.push_back(Lit<bool>({1}, {true}));
  b.push_back(Lit<bool>({1}, {false}));
  ::testing::AssertionResult r =
      LiteralsNear(Literal::MakeTuple(std::move(a)), Literal::MakeTuple(std::move(b)));
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("tuple element 0"), std::string::npos);
}

TEST(RandomLiteralTest, DeterministicAndInRange) {
  const hlo::Shape f(DType::kFloat32, {64});
  const hlo::Shape s(DType::kInt32, {64});
  EXPECT_TRUE(RandomLiteral(f, 3).BitwiseEquals(RandomLiteral(f, 3)));
  EXPECT_FALSE(RandomLiteral(f, 3).BitwiseEquals(RandomLiteral(f, 4)));
  const Literal fl = RandomLiteral(f, 9), sl = RandomLiteral(s, 9);
  for (int i = 0; i < 64; ++i) {
    EXPECT_LE(std::fabs(fl.data<float>()[i]), 2.0f);
    EXPECT_LE(std::abs(sl.data<int32_t>()[i]), 10);
  }
  const Literal edges = RandomLiteral(hlo::Shape(DType::kFloat32, {512}), 1, /*edge_values=*/true);
  int non_finite = 0;
  for (int i = 0; i < 512; ++i) non_finite += !std::isfinite(edges.data<float>()[i]);
  EXPECT_GT(non_finite, 0);
}

// Negates the root's first operand: a pass that changes results.
class WrongPass : public passes::Pass {
 public:
  explicit WrongPass(bool report_changed) : report_changed_(report_changed) {}
  absl::string_view name() const override { return "wrong"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override {
    hlo::Instruction* root = module.entry()->root();
    auto neg = std::make_unique<hlo::Instruction>(hlo::Opcode::kNegate, root->shape());
    hlo::Instruction* n = module.entry()->AddInstruction(std::move(neg), {root->operand(0)});
    module.entry()->ReplaceOperand(root, 0, n);
    return report_changed_;
  }

 private:
  bool report_changed_;
};

constexpr char kAdd[] =
    "HloModule m\n\nENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {\n"
    "  %x = f32[4] parameter(0)\n  %y = f32[4] parameter(1)\n"
    "  ROOT %a = f32[4] add(%x, %y)\n}\n";

TEST(CheckPassPreservesSemanticsTest, CatchesWrongResultsAndLyingChangedFlag) {
  WrongPass honest(/*report_changed=*/true);
  EXPECT_NONFATAL_FAILURE(EXPECT_FALSE(CheckPassPreservesSemantics(kAdd, honest)),
                          "changed results");
  WrongPass liar(/*report_changed=*/false);
  EXPECT_NONFATAL_FAILURE(EXPECT_FALSE(CheckPassPreservesSemantics(kAdd, liar)),
                          "returned changed=false");
}

}  // namespace
}  // namespace tfjit::testlib
