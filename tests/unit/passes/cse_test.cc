// CsePass tests: identical instructions merge, different attributes or operands do not.
#include "compiler/passes/cse.h"

#include "tests/unit/passes/pass_test_util.h"

namespace tfjit::passes {
namespace {

using hlo::Opcode;

TEST(CseTest, MergesIdenticalInstructionsAndConstantsByValue) {
  CsePass pass;
  std::unique_ptr<hlo::Module> m = testlib::RunPassChecked(R"(HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %c1 = f32[] constant(2)
  %c2 = f32[] constant(2)
  %b1 = f32[4] broadcast(%c1), dimensions={}
  %b2 = f32[4] broadcast(%c2), dimensions={}
  %m1 = f32[4] multiply(%x, %b1)
  %m2 = f32[4] multiply(%x, %b2)
  ROOT %s = f32[4] add(%m1, %m2)
}
)",
                                                           pass);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountOpcode(*m, Opcode::kConstant), 1);
  EXPECT_EQ(CountOpcode(*m, Opcode::kBroadcast), 1);
  EXPECT_EQ(CountOpcode(*m, Opcode::kMultiply), 1);
  EXPECT_EQ(m->entry()->root()->operand(0), m->entry()->root()->operand(1));
}

TEST(CseTest, KeepsDifferentAttributesOperandsAndParameters) {
  CsePass pass;
  bool changed = true;
  EXPECT_TRUE(testlib::CheckPassPreservesSemantics(R"(HloModule m

ENTRY %main (x: f32[2,2], y: f32[2,2]) -> (f32[2,2], f32[2,2], f32[2,2], f32[2,2], pred[2,2], pred[2,2]) {
  %x = f32[2,2] parameter(0)
  %y = f32[2,2] parameter(1)
  %a = f32[2,2] subtract(%x, %y)
  %b = f32[2,2] subtract(%y, %x)
  %t = f32[2,2] transpose(%x), dimensions={1,0}
  %u = f32[2,2] transpose(%x), dimensions={0,1}
  %lt = pred[2,2] compare(%x, %y), direction=LT
  %gt = pred[2,2] compare(%x, %y), direction=GT
  ROOT %r = (f32[2,2], f32[2,2], f32[2,2], f32[2,2], pred[2,2], pred[2,2]) tuple(%a, %b, %t, %u, %lt, %gt)
}
)",
                                                   pass, 1, {}, &changed));
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace tfjit::passes
