// CallInlinerPass: calls in the entry (nested ones too, a tuple-valued one, one returning its
// parameter) are replaced by the callee's instructions; the evaluator gives the same results
// before and after (RunPassChecked).
#include "compiler/passes/call_inliner.h"

#include "compiler/hlo/parser.h"
#include "tests/unit/passes/pass_test_util.h"

namespace tfjit::passes {
namespace {

constexpr char kCalls[] = R"(HloModule m

%inner (a: f32[4]) -> f32[4] {
  %a = f32[4] parameter(0)
  ROOT %e = f32[4] exp(%a)
}

%outer (p: f32[4], q: f32[4]) -> (f32[4], f32[4]) {
  %p = f32[4] parameter(0)
  %q = f32[4] parameter(1)
  %c = f32[4] call(%p), to_apply=%inner
  %s = f32[4] add(%c, %q)
  ROOT %t = (f32[4], f32[4]) tuple(%s, %c)
}

%pass (u: f32[4]) -> f32[4] {
  ROOT %u = f32[4] parameter(0)
}

ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %y = f32[4] parameter(1)
  %o = (f32[4], f32[4]) call(%x, %y), to_apply=%outer
  %g0 = f32[4] get-tuple-element(%o), index=0
  %g1 = f32[4] get-tuple-element(%o), index=1
  %i = f32[4] call(%g1), to_apply=%pass
  ROOT %r = f32[4] multiply(%g0, %i)
}
)";

TEST(CallInlinerTest, InlinesNestedTupleAndIdentityCalls) {
  CallInlinerPass pass;
  std::unique_ptr<hlo::Module> m = testlib::RunPassChecked(kCalls, pass);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountOpcode(*m->entry(), hlo::Opcode::kCall), 0);
  EXPECT_EQ(CountOpcode(*m->entry(), hlo::Opcode::kExp), 1);
  EXPECT_EQ(CountOpcode(*m->entry(), hlo::Opcode::kMultiply), 1);
}

TEST(CallInlinerTest, NoCallsNoChange) {
  CallInlinerPass pass;
  auto m = hlo::ParseAndVerifyModule(R"(HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  ROOT %n = f32[4] negate(%x)
}
)");
  ASSERT_TRUE(m.ok());
  auto changed = pass.Run(**m);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace tfjit::passes
