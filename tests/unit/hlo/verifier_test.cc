// Tests for the verifier: each structural or shape violation is reported as INTERNAL with
// the offending instruction's text.
#include "compiler/hlo/verifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler/hlo/builder.h"
#include "compiler/hlo/parser.h"

namespace tfjit::hlo {
namespace {

using ::testing::HasSubstr;

void ExpectInternal(const Module& m, const std::string& substr) {
  absl::Status st = VerifyModule(m);
  EXPECT_EQ(st.code(), absl::StatusCode::kInternal) << st;
  EXPECT_THAT(st.message(), HasSubstr(substr));
}

std::unique_ptr<Module> Parse(const char* text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

TEST(VerifierTest, AcceptsWellFormedModule) {
  auto m = Parse(
      "HloModule m\nENTRY %e (x: f32[2]) -> f32[2] {\n  %x = f32[2] parameter(0)\n"
      "  ROOT %y = f32[2] negate(%x)\n}\n");
  EXPECT_TRUE(VerifyModule(*m).ok());
}

TEST(VerifierTest, ShapeMismatchPrintsInstruction) {
  auto m = Parse(
      "HloModule m\nENTRY %e (x: f32[2]) -> pred[2] {\n  %x = f32[2] parameter(0)\n"
      "  ROOT %y = pred[2] negate(%x)\n}\n");
  ExpectInternal(*m, "shape should be f32[2]: %y = pred[2] negate(%x)");
}

TEST(VerifierTest, InvalidAttributesAreReported) {
  auto m = Parse(
      "HloModule m\nENTRY %e (x: f32[2,3]) -> f32[3,2] {\n"
      "  %x = f32[2,3] parameter(0)\n"
      "  ROOT %t = f32[3,2] transpose(%x), dimensions={0,0}\n}\n");
  ExpectInternal(*m, "transpose(f32[2,3]): dimensions={0,0} is out of range or repeats");
}

TEST(VerifierTest, WrongCombinerSignature) {
  auto m = Parse(R"(HloModule m
%bad (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e (x: s32[4]) -> s32[] {
  %x = s32[4] parameter(0)
  %z = s32[] constant(0)
  ROOT %r = s32[] reduce(%x, %z), dimensions={0}, to_apply=%bad
})");
  ExpectInternal(*m, "to_apply=%bad must map");
}

TEST(VerifierTest, MissingEntryRootAndParameters) {
  Module no_entry("m");
  no_entry.AddComputation("c");
  ExpectInternal(no_entry, "no ENTRY computation");

  Module no_root("m");
  Computation* c = no_root.AddComputation("c");
  no_root.set_entry(c);
  Builder(c).Parameter(0, Shape(DType::kFloat32, {}));
  ExpectInternal(no_root, "has no ROOT");

  Module gap("m");
  Computation* g = gap.AddComputation("g");
  gap.set_entry(g);
  g->set_root(Builder(g).Parameter(1, Shape(DType::kFloat32, {})));
  ExpectInternal(gap, "has no parameter(0)");
}

TEST(VerifierTest, DuplicateNamesAndForeignOperands) {
  Module m("m");
  Computation* c = m.AddComputation("main");
  m.set_entry(c);
  Builder b(c);
  Instruction* x = b.Parameter(0, Shape(DType::kFloat32, {2}), "x");
  Instruction* y = *b.Unary(Opcode::kNegate, x);
  c->set_root(y);
  y->set_name("x");  // bypasses the module's name registry
  ExpectInternal(m, "not unique in the module");
  y->set_name("y");

  Computation* other = m.AddComputation("other");
  Instruction* foreign = Builder(other).Parameter(0, Shape(DType::kFloat32, {2}));
  other->set_root(foreign);
  c->ReplaceOperand(y, 0, foreign);
  ExpectInternal(m, "operand is not defined in this computation");
}

TEST(VerifierTest, CyclesAreReported) {
  Module m("m");
  Computation* c = m.AddComputation("main");
  m.set_entry(c);
  Builder b(c);
  Instruction* x = b.Parameter(0, Shape(DType::kFloat32, {2}), "x");
  Instruction* n1 = *b.Unary(Opcode::kNegate, x);
  Instruction* n2 = *b.Unary(Opcode::kNegate, n1);
  c->set_root(n2);
  c->ReplaceOperand(n1, 0, n2);
  ExpectInternal(m, "operands form a cycle");
}

TEST(VerifierTest, WhileSignature) {
  auto m = Parse(R"(HloModule m
%cond (s: s32[]) -> s32[] {
  ROOT %s = s32[] parameter(0)
}
ENTRY %e (x: s32[]) -> s32[] {
  %x = s32[] parameter(0)
  ROOT %w = s32[] while(%x), condition=%cond, body=%cond
})");
  ExpectInternal(*m, "condition %cond must return pred[]");
}

}  // namespace
}  // namespace tfjit::hlo
