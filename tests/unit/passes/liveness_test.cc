// ModuleLiveness (compiler/passes/liveness.h): which values may share storage. Two values
// that own storage interfere when both are live at one step; plumbing extends what it reads.
#include "compiler/passes/liveness.h"

#include "gtest/gtest.h"
#include "tests/testlib/hlo_test_util.h"

namespace tfjit::passes {
namespace {

constexpr char kModule[] = R"(
HloModule m

ENTRY %main (x: f32[4]) -> (f32[4], f32[4]) {
  %x = f32[4] parameter(0)
  %a = f32[4] negate(%x)
  %b = f32[4] exp(%a)
  %c = f32[4] negate(%b)
  %d = f32[4] add(%c, %x)
  ROOT %t = (f32[4], f32[4]) tuple(%d, %a)
}
)";

const hlo::Instruction* Find(const hlo::Computation& c, const std::string& name) {
  for (const hlo::Instruction* i : c.instructions()) {
    if (i->name() == name) return i;
  }
  return nullptr;
}

TEST(LivenessTest, ValuesInterfereOnlyWhileBothLive) {
  std::unique_ptr<hlo::Module> m = testlib::ParseVerified(kModule);
  ASSERT_NE(m, nullptr);
  ModuleLiveness liveness(*m);
  ASSERT_EQ(liveness.computations().size(), 1u);
  const ComputationLiveness& l = liveness.computations()[0];
  const hlo::Computation& c = l.computation();
  ASSERT_EQ(l.num_steps(), 6);
  // %a is read by the root tuple, so it lives to the end and meets every later value.
  EXPECT_EQ(l.range(Find(c, "a")).last, 6);
  EXPECT_TRUE(l.Interfere(Find(c, "a"), Find(c, "c")));
  // %b dies at %c, %d is born after: they may share storage; %b and %c may not.
  EXPECT_FALSE(l.Interfere(Find(c, "b"), Find(c, "d")));
  EXPECT_TRUE(l.Interfere(Find(c, "b"), Find(c, "c")));
  // The parameter exists before the first step and lives until %d reads it.
  EXPECT_EQ(l.range(Find(c, "x")).def, -1);
  EXPECT_EQ(l.range(Find(c, "x")).last, l.range(Find(c, "d")).def);
}

}  // namespace
}  // namespace tfjit::passes
