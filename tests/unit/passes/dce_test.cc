// DcePass tests: dead instructions and unused computations go, parameters and the root stay.
#include "compiler/passes/dce.h"

#include "tests/unit/passes/pass_test_util.h"

namespace tfjit::passes {
namespace {

constexpr char kDead[] = R"(HloModule m

%unused (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%called_by_dead (c: f32[], d: f32[]) -> f32[] {
  %c = f32[] parameter(0)
  %d = f32[] parameter(1)
  ROOT %m = f32[] maximum(%c, %d)
}

ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %y = f32[4] parameter(1)
  %n = f32[4] negate(%x)
  %e = f32[4] exp(%n)
  %z = f32[] constant(0)
  %r = f32[] reduce(%x, %z), dimensions={0}, to_apply=%called_by_dead
  ROOT %out = f32[4] add(%x, %x)
}
)";

TEST(DceTest, RemovesDeadInstructionsAndComputations) {
  DcePass pass;
  bool changed = false;
  const std::string text = kDead;
  std::unique_ptr<hlo::Module> m = testlib::RunPassChecked(text, pass);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->instruction_count(), 3);  // x, y (parameters stay) and the root
  EXPECT_EQ(m->computations().size(), 1u);
  EXPECT_TRUE(testlib::CheckPassPreservesSemantics(text, pass, 7, {}, &changed));
  EXPECT_TRUE(changed);
}

TEST(DceTest, NothingDeadMeansUnchanged) {
  DcePass pass;
  bool changed = true;
  EXPECT_TRUE(testlib::CheckPassPreservesSemantics(R"(HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  ROOT %n = f32[4] negate(%x)
}
)",
                                                   pass, 1, {}, &changed));
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace tfjit::passes
