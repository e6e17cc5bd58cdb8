// ConstantFoldingPass tests: folding chains, what is skipped, and the size limit option.
#include "compiler/passes/constant_folding.h"

#include "compiler/hlo/printer.h"
#include "tests/unit/passes/pass_test_util.h"

namespace tfjit::passes {
namespace {

using hlo::Opcode;

constexpr char kChain[] = R"(HloModule m

ENTRY %main (x: f32[3]) -> f32[3] {
  %x = f32[3] parameter(0)
  %a = f32[3] constant({1, 2, 3})
  %b = f32[3] constant({10, 20, 30})
  %s = f32[3] add(%a, %b)
  %n = f32[3] negate(%s)
  ROOT %r = f32[3] multiply(%x, %n)
}
)";

TEST(ConstantFoldingTest, FoldsChainsWithTheEvaluator) {
  ConstantFoldingPass pass;
  std::unique_ptr<hlo::Module> m = testlib::RunPassChecked(kChain, pass);
  ASSERT_NE(m, nullptr);
  const hlo::Instruction* root = m->entry()->root();
  ASSERT_EQ(root->operand(1)->opcode(), Opcode::kConstant);
  const float* v = root->operand(1)->literal().data<float>();
  EXPECT_EQ(v[0], -11);
  EXPECT_EQ(v[1], -22);
  EXPECT_EQ(v[2], -33);
  EXPECT_EQ(CountOpcode(*m, Opcode::kAdd), 0);
  EXPECT_EQ(CountOpcode(*m, Opcode::kNegate), 0);
}

TEST(ConstantFoldingTest, KeepsBroadcastIotaAndParameterUsers) {
  ConstantFoldingPass pass;
  bool changed = true;
  constexpr char kText[] = R"(HloModule m

ENTRY %main (x: f32[64,64]) -> f32[64,64] {
  %x = f32[64,64] parameter(0)
  %c = f32[] constant(2)
  %b = f32[64,64] broadcast(%c), dimensions={}
  %i = f32[64,64] iota(), iota_dimension=1
  %s = f32[64,64] add(%b, %i)
  ROOT %r = f32[64,64] add(%x, %s)
}
)";
  EXPECT_TRUE(testlib::CheckPassPreservesSemantics(kText, pass, 1, {}, &changed));
  EXPECT_FALSE(changed);
}

TEST(ConstantFoldingTest, MaxElementsOptionBothSettings) {
  ConstantFoldingOptions small;
  small.max_elements = 2;
  ConstantFoldingPass limited(small);
  bool changed = true;
  EXPECT_TRUE(testlib::CheckPassPreservesSemantics(kChain, limited, 1, {}, &changed));
  EXPECT_FALSE(changed);  // f32[3] results exceed 2 elements
  ConstantFoldingPass unlimited;
  EXPECT_TRUE(testlib::CheckPassPreservesSemantics(kChain, unlimited, 1, {}, &changed));
  EXPECT_TRUE(changed);
}

TEST(ConstantFoldingTest, IntegerEdgeCasesFoldLikeTheEvaluator) {
  ConstantFoldingPass pass;
  std::unique_ptr<hlo::Module> m = testlib::RunPassChecked(R"(HloModule m

ENTRY %main () -> s32[2] {
  %a = s32[2] constant({7, -2147483648})
  %b = s32[2] constant({0, -1})
  ROOT %d = s32[2] divide(%a, %b)
}
)",
                                                           pass);
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->entry()->root()->opcode(), Opcode::kConstant);
  const int32_t* v = m->entry()->root()->literal().data<int32_t>();
  EXPECT_EQ(v[0], -1);
  EXPECT_EQ(v[1], -2147483647 - 1);
}

}  // namespace
}  // namespace tfjit::passes
