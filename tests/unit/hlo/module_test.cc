// Tests for Module: unique names, computation bookkeeping and deep clones.
#include "compiler/hlo/module.h"

#include <gtest/gtest.h>

#include "compiler/hlo/builder.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"

namespace tfjit::hlo {
namespace {

const char* kLoop = R"(HloModule loop

%cond (s: (s32[], f32[2])) -> pred[] {
  %s = (s32[], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (s.1: (s32[], f32[2])) -> (s32[], f32[2]) {
  ROOT %s.1 = (s32[], f32[2]) parameter(0)
}

%unused (u: f32[]) -> f32[] {
  ROOT %u = f32[] parameter(0)
}

ENTRY %main (x: f32[2]) -> (s32[], f32[2]) {
  %z = s32[] constant(0)
  %x = f32[2] parameter(0), meta={tf_node="x" tf_op="Placeholder"}
  %init = (s32[], f32[2]) tuple(%z, %x)
  ROOT %w = (s32[], f32[2]) while(%init), condition=%cond, body=%body
}
)";

TEST(ModuleTest, UniqueNames) {
  Module m("m");
  EXPECT_EQ(m.UniqueName("add"), "add");
  EXPECT_EQ(m.UniqueName("add"), "add.1");
  EXPECT_TRUE(m.ReserveName("add.2"));
  EXPECT_FALSE(m.ReserveName("add.2"));
  EXPECT_EQ(m.UniqueName("add"), "add.3");
  Computation* a = m.AddComputation("f");
  Computation* b = m.AddComputation("f");
  EXPECT_EQ(a->name(), "f");
  EXPECT_EQ(b->name(), "f.1");
  EXPECT_EQ(m.FindComputation("f.1"), b);
  EXPECT_EQ(m.FindComputation("g"), nullptr);
}

TEST(ModuleTest, CloneIsDeepAndPrintsEqual) {
  auto parsed = ParseAndVerifyModule(kLoop);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const Module& m = **parsed;
  std::unique_ptr<Module> clone = m.Clone();
  EXPECT_EQ(PrintModule(*clone), PrintModule(m));
  EXPECT_TRUE(VerifyModule(*clone).ok());
  EXPECT_NE(clone->entry(), m.entry());
  EXPECT_EQ(clone->entry()->name(), "main");
  const Instruction* w = clone->entry()->root();
  EXPECT_EQ(w->called_computations()[0], clone->FindComputation("cond"));
  // Constants do not share buffers with the original.
  const Instruction* n = clone->FindComputation("cond")->root()->operand(1);
  const Instruction* n0 = m.FindComputation("cond")->root()->operand(1);
  EXPECT_FALSE(n->literal().tensor().SharesBufferWith(n0->literal().tensor()));
  EXPECT_TRUE(n->literal().BitwiseEquals(n0->literal()));
  // Editing the clone leaves the original untouched.
  clone->entry()->root()->set_name("renamed");
  EXPECT_EQ(m.entry()->root()->name(), "w");
}

TEST(ModuleTest, RemoveUnusedComputationsKeepsReachableOnes) {
  auto parsed = ParseAndVerifyModule(kLoop);
  ASSERT_TRUE(parsed.ok());
  Module& m = **parsed;
  EXPECT_EQ(m.RemoveUnusedComputations(), 1);
  EXPECT_EQ(m.FindComputation("unused"), nullptr);
  EXPECT_NE(m.FindComputation("body"), nullptr);
  EXPECT_EQ(m.computations().size(), 3u);
  EXPECT_TRUE(VerifyModule(m).ok());
}

TEST(ModuleTest, AddedInstructionsAvoidParsedNames) {
  auto parsed = ParseAndVerifyModule(kLoop);
  ASSERT_TRUE(parsed.ok());
  Module& m = **parsed;
  Builder b(m.entry());
  Instruction* x = m.entry()->parameter(0);
  auto neg = b.Unary(Opcode::kNegate, x);
  ASSERT_TRUE(neg.ok());
  EXPECT_EQ((*neg)->name(), "negate");
  auto named = std::make_unique<Instruction>(Opcode::kNegate, x->shape());
  named->set_name("x");  // taken by the parameter: gets a suffix
  EXPECT_EQ(m.entry()->AddInstruction(std::move(named), {x})->name(), "x.1");
}

}  // namespace
}  // namespace tfjit::hlo
