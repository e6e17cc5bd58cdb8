// FusionPass tests: the fusion contract (kinds, parameters, roots), what never fuses,
// duplication of cheap producers, the fuse_reductions option and a custom policy.
#include "compiler/passes/fusion.h"

#include "tests/unit/passes/pass_test_util.h"

namespace tfjit::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;

constexpr char kBiasReduce[] = R"(HloModule m

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(%a, %b)
}

ENTRY %main (x: f32[4,8], y: f32[8]) -> f32[4] {
  %x = f32[4,8] parameter(0)
  %y = f32[8] parameter(1)
  %yb = f32[4,8] broadcast(%y), dimensions={1}
  %s = f32[4,8] add(%x, %yb)
  %e = f32[4,8] exp(%s)
  %zero = f32[] constant(0)
  ROOT %r = f32[4] reduce(%e, %zero), dimensions={1}, to_apply=%add
}
)";

std::vector<const Instruction*> Fusions(const hlo::Module& m) {
  std::vector<const Instruction*> out;
  for (const Instruction* inst : m.entry()->instructions()) {
    if (inst->opcode() == Opcode::kFusion) out.push_back(inst);
  }
  return out;
}

// Checks the parameter contract: one parameter per operand, same shapes, in order.
void ExpectParametersMatchOperands(const Instruction& fusion) {
  const hlo::Computation* fused = fusion.to_apply();
  ASSERT_EQ(fused->num_parameters(), fusion.operand_count());
  for (int i = 0; i < fusion.operand_count(); ++i) {
    EXPECT_EQ(fused->parameter(i)->shape(), fusion.operand(i)->shape()) << i;
  }
}

TEST(FusionTest, ElementwiseIntoReductionMakesInputFusion) {
  FusionPass pass;
  std::unique_ptr<hlo::Module> m = testlib::RunPassChecked(kBiasReduce, pass);
  ASSERT_NE(m, nullptr);
  std::vector<const Instruction*> fusions = Fusions(*m);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusions[0]->attrs().fusion_kind, "kInput");
  EXPECT_EQ(fusions[0]->to_apply()->name(), "fused_computation");
  EXPECT_EQ(fusions[0]->to_apply()->root()->opcode(), Opcode::kReduce);
  EXPECT_EQ(m->entry()->root(), fusions[0]);
  ExpectParametersMatchOperands(*fusions[0]);
  EXPECT_EQ(CountOpcode(*fusions[0]->to_apply(), Opcode::kExp), 1);
  EXPECT_EQ(CountOpcode(*fusions[0]->to_apply(), Opcode::kBroadcast), 1);
}

TEST(FusionTest, FuseReductionsOptionBothSettings) {
  FusionOptions options;
  options.fuse_reductions = false;
  FusionPass pass(nullptr, options);
  std::unique_ptr<hlo::Module> m = testlib::RunPassChecked(kBiasReduce, pass);
  ASSERT_NE(m, nullptr);
  std::vector<const Instruction*> fusions = Fusions(*m);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusions[0]->attrs().fusion_kind, "kLoop");
  EXPECT_EQ(fusions[0]->to_apply()->root()->opcode(), Opcode::kExp);
  EXPECT_EQ(m->entry()->root()->opcode(), Opcode::kReduce);
}

TEST(FusionTest, NeverFusesDotAndKeepsSharedProducersOut) {
  FusionPass pass;
  std::unique_ptr<hlo::Module> m = testlib::RunPassChecked(R"(HloModule m

ENTRY %main (a: f32[4,8], b: f32[8,4], c: f32[4,4]) -> (f32[4,4], f32[4,4]) {
  %a = f32[4,8] parameter(0)
  %b = f32[8,4] parameter(1)
  %c = f32[4,4] parameter(2)
  %d = f32[4,4] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %t = f32[4,4] tanh(%c)
  %s = f32[4,4] add(%d, %t)
  %m = f32[4,4] multiply(%s, %s)
  %n = f32[4,4] negate(%s)
  ROOT %r = (f32[4,4], f32[4,4]) tuple(%m, %n)
}
)",
                                                           pass);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountOpcode(*m->entry(), Opcode::kDot), 1);
  // %s has two users in different fusions, so it roots its own fusion (with tanh).
  for (const Instruction* f : Fusions(*m)) {
    ExpectParametersMatchOperands(*f);
    EXPECT_EQ(CountOpcode(*f->to_apply(), Opcode::kDot), 0);
    EXPECT_EQ(f->attrs().fusion_kind, "kLoop");
  }
}

TEST(FusionTest, CheapBroadcastOfConstantIsDuplicated) {
  FusionPass pass;
  std::unique_ptr<hlo::Module> m = testlib::RunPassChecked(R"(HloModule m

ENTRY %main (x: f32[4], y: f32[4,4], w: f32[4,4]) -> (f32[4], f32[4,4]) {
  %x = f32[4] parameter(0)
  %y = f32[4,4] parameter(1)
  %w = f32[4,4] parameter(2)
  %two = f32[] constant(2)
  %b = f32[4,4] broadcast(%two), dimensions={}
  %p = f32[4,4] multiply(%y, %b)
  %d = f32[4,4] dot(%p, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %q = f32[4,4] add(%d, %b)
  %z = f32[] constant(0)
  %bz = f32[4] broadcast(%z), dimensions={}
  %mx = f32[4] maximum(%x, %bz)
  ROOT %r = (f32[4], f32[4,4]) tuple(%mx, %q)
}
)",
                                                           pass);
  ASSERT_NE(m, nullptr);
  std::vector<const Instruction*> fusions = Fusions(*m);
  EXPECT_EQ(fusions.size(), 3u);
  for (const Instruction* f : fusions) {
    ExpectParametersMatchOperands(*f);
    // The broadcast constant lives inside each fusion, not as a fusion operand.
    for (const Instruction* operand : f->operands()) {
      EXPECT_NE(operand->opcode(), Opcode::kBroadcast);
    }
  }
  EXPECT_EQ(CountOpcode(*m->entry(), Opcode::kBroadcast), 0);
}

TEST(FusionTest, LoneOpsStayUnfused) {
  FusionPass pass;
  bool changed = true;
  EXPECT_TRUE(testlib::CheckPassPreservesSemantics(R"(HloModule m

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[4,8]) -> f32[4] {
  %x = f32[4,8] parameter(0)
  %zero = f32[] constant(0)
  ROOT %r = f32[4] reduce(%x, %zero), dimensions={1}, to_apply=%add
}
)",
                                                   pass, 1, {}, &changed));
  EXPECT_FALSE(changed);
}

// A policy that refuses everything: the pass must not fuse anything.
class NoFusionPolicy : public FusionPolicy {
 public:
  bool ShouldFuse(const hlo::Instruction&, const hlo::Instruction&) const override { return false; }
};

TEST(FusionTest, AsksThePolicy) {
  NoFusionPolicy policy;
  FusionPass pass(&policy);
  bool changed = true;
  EXPECT_TRUE(testlib::CheckPassPreservesSemantics(kBiasReduce, pass, 1, {}, &changed));
  EXPECT_FALSE(changed);
}

// A policy naming every dot an output-fusion hero (what a backend with a GEMM library call
// that runs epilogues says).
class DotHeroPolicy : public FusionPolicy {
 public:
  bool IsOutputFusionHero(const hlo::Instruction& inst) const override {
    return inst.opcode() == Opcode::kDot;
  }
};

// dot -> + bias -> relu: one kOutput fusion whose hero reads parameters.
constexpr char kDotBiasRelu[] = R"(HloModule m

ENTRY %main (a: f32[4,8], b: f32[8,6], bias: f32[6]) -> f32[4,6] {
  %a = f32[4,8] parameter(0)
  %b = f32[8,6] parameter(1)
  %bias = f32[6] parameter(2)
  %d = f32[4,6] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bb = f32[4,6] broadcast(%bias), dimensions={1}
  %s = f32[4,6] add(%d, %bb)
  %zero = f32[] constant(0)
  %zb = f32[4,6] broadcast(%zero), dimensions={}
  ROOT %r = f32[4,6] maximum(%s, %zb)
}
)";

TEST(FusionTest, OutputFusionTakesTheHeroThePolicyNames) {
  DotHeroPolicy policy;
  FusionPass pass(&policy);
  std::unique_ptr<hlo::Module> m = testlib::RunPassChecked(kDotBiasRelu, pass);
  ASSERT_NE(m, nullptr);
  std::vector<const Instruction*> fusions = Fusions(*m);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusions[0]->attrs().fusion_kind, "kOutput");
  EXPECT_EQ(m->entry()->root(), fusions[0]);
  ExpectParametersMatchOperands(*fusions[0]);
  EXPECT_EQ(CountOpcode(*m->entry(), Opcode::kDot), 0);
  ASSERT_EQ(CountOpcode(*fusions[0]->to_apply(), Opcode::kDot), 1);
  for (const Instruction* inst : fusions[0]->to_apply()->instructions()) {
    if (inst->opcode() != Opcode::kDot) continue;
    for (const Instruction* op : inst->operands()) EXPECT_EQ(op->opcode(), Opcode::kParameter);
  }
  // The default policy names no hero: the dot stays outside, the epilogue is a loop fusion.
  FusionPass plain;
  m = testlib::RunPassChecked(kDotBiasRelu, plain);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountOpcode(*m->entry(), Opcode::kDot), 1);
  for (const Instruction* f : Fusions(*m)) EXPECT_EQ(f->attrs().fusion_kind, "kLoop");
}

// Where the hero may not join: its operand also feeds the epilogue (it joins, the operand
// stays out), its value reaches the root through a transpose, or it has another user.
TEST(FusionTest, OutputFusionKeepsHeroOperandsOutAndNeedsAnElementwisePath) {
  DotHeroPolicy policy;
  FusionPass pass(&policy);
  std::unique_ptr<hlo::Module> m = testlib::RunPassChecked(R"(HloModule m

ENTRY %main (a: f32[6,6], b: f32[6,6]) -> f32[6,6] {
  %a = f32[6,6] parameter(0)
  %b = f32[6,6] parameter(1)
  %p = f32[6,6] exp(%a)
  %d = f32[6,6] dot(%p, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %s = f32[6,6] add(%d, %p)
}
)",
                                                           pass);
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(CountOpcode(*m->entry(), Opcode::kDot), 0);
  int output_fusions = 0;
  for (const Instruction* f : Fusions(*m)) {
    ExpectParametersMatchOperands(*f);
    if (f->attrs().fusion_kind != "kOutput") continue;
    ++output_fusions;
    EXPECT_EQ(CountOpcode(*f->to_apply(), Opcode::kExp), 0);  // the hero's operand: outside
  }
  EXPECT_EQ(output_fusions, 1);
  EXPECT_EQ(CountOpcode(*m->entry(), Opcode::kExp), 1);

  m = testlib::RunPassChecked(R"(HloModule m

ENTRY %main (a: f32[6,6], b: f32[6,6]) -> (f32[6,6], f32[6,6]) {
  %a = f32[6,6] parameter(0)
  %b = f32[6,6] parameter(1)
  %d = f32[6,6] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %t = f32[6,6] transpose(%d), dimensions={1,0}
  %u = f32[6,6] tanh(%t)
  %e = f32[6,6] dot(%b, %a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %n = f32[6,6] negate(%e)
  ROOT %r = (f32[6,6], f32[6,6]) tuple(%u, %e)
}
)",
                              pass);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountOpcode(*m->entry(), Opcode::kDot), 2);
  for (const Instruction* f : Fusions(*m)) EXPECT_NE(f->attrs().fusion_kind, "kOutput");
}

// exp feeding a broadcast that repeats each element 64 times stays out of the broadcast's
// fusion (computed once); a negate in the same place is cheap and joins.
TEST(FusionTest, ExpensiveProducerReadRepeatedlyStaysABuffer) {
  FusionPass pass;
  std::unique_ptr<hlo::Module> m = testlib::RunPassChecked(R"(HloModule m

ENTRY %main (x: f32[4], y: f32[64,4]) -> (f32[64,4], f32[64,4]) {
  %x = f32[4] parameter(0)
  %y = f32[64,4] parameter(1)
  %e = f32[4] exp(%x)
  %n = f32[4] negate(%x)
  %eb = f32[64,4] broadcast(%e), dimensions={1}
  %nb = f32[64,4] broadcast(%n), dimensions={1}
  %a = f32[64,4] add(%y, %eb)
  %b = f32[64,4] multiply(%y, %nb)
  ROOT %r = (f32[64,4], f32[64,4]) tuple(%a, %b)
}
)",
                                                           pass);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountOpcode(*m->entry(), Opcode::kExp), 1);     // its own buffer
  EXPECT_EQ(CountOpcode(*m->entry(), Opcode::kNegate), 0);  // fused into b's loop
  for (const Instruction* f : Fusions(*m)) ExpectParametersMatchOperands(*f);
}

// Sibling fusion: the sum and the sum of squares of one operand over the same dims become one
// multi-output fusion (root tuple of both reduces); a reduce over other dims, and one that
// depends on another, stay apart.
constexpr char kSiblings[] = R"(HloModule m

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[6,40]) -> (f32[6], f32[6], f32[40], f32[6]) {
  %x = f32[6,40] parameter(0)
  %zero = f32[] constant(0)
  %sum = f32[6] reduce(%x, %zero), dimensions={1}, to_apply=%add
  %sq = f32[6,40] multiply(%x, %x)
  %sumsq = f32[6] reduce(%sq, %zero), dimensions={1}, to_apply=%add
  %cols = f32[40] reduce(%sq, %zero), dimensions={0}, to_apply=%add
  %sb = f32[6,40] broadcast(%sum), dimensions={0}
  %centred = f32[6,40] subtract(%x, %sb)
  %dev = f32[6] reduce(%centred, %zero), dimensions={1}, to_apply=%add
  ROOT %r = (f32[6], f32[6], f32[40], f32[6]) tuple(%sum, %sumsq, %cols, %dev)
}
)";

TEST(FusionTest, SiblingReductionsMergeIntoOneMultiOutputFusion) {
  FusionOptions options;
  options.sibling_fusion = true;
  FusionPass pass(nullptr, options);
  std::unique_ptr<hlo::Module> m = testlib::RunPassChecked(kSiblings, pass);
  ASSERT_NE(m, nullptr);
  int multi = 0, single = 0;
  for (const Instruction* f : Fusions(*m)) {
    ExpectParametersMatchOperands(*f);
    if (f->shape().IsArray()) {
      ++single;
      continue;
    }
    ++multi;
    EXPECT_EQ(f->attrs().fusion_kind, "kInput");
    const Instruction* root = f->to_apply()->root();
    ASSERT_EQ(root->opcode(), Opcode::kTuple);
    EXPECT_EQ(root->operand_count(), 2);
    for (const Instruction* r : root->operands()) {
      EXPECT_EQ(r->opcode(), Opcode::kReduce);
      EXPECT_EQ(r->dimensions(), std::vector<int64_t>{1});
    }
  }
  EXPECT_EQ(multi, 1);                                      // sum + sumsq
  EXPECT_EQ(single, 1);                                     // dev (depends on sum)
  EXPECT_EQ(CountOpcode(*m->entry(), Opcode::kReduce), 1);  // cols: other reduced dims
  // Without the option nothing merges.
  FusionPass plain;
  m = testlib::RunPassChecked(kSiblings, plain);
  ASSERT_NE(m, nullptr);
  for (const Instruction* f : Fusions(*m)) EXPECT_TRUE(f->shape().IsArray());
}

TEST(FusionTest, FusesInsideWhileBodiesAndPreservesResults) {
  FusionPass pass;
  std::unique_ptr<hlo::Module> m = testlib::RunPassChecked(R"(HloModule m

%cond (s: (s32[], f32[4])) -> pred[] {
  %s = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (t: (s32[], f32[4])) -> (s32[], f32[4]) {
  %t = (s32[], f32[4]) parameter(0)
  %i2 = s32[] get-tuple-element(%t), index=0
  %acc = f32[4] get-tuple-element(%t), index=1
  %one = s32[] constant(1)
  %next = s32[] add(%i2, %one)
  %h = f32[] constant(0.5)
  %hb = f32[4] broadcast(%h), dimensions={}
  %m = f32[4] multiply(%acc, %hb)
  %e = f32[4] tanh(%m)
  ROOT %r = (s32[], f32[4]) tuple(%next, %e)
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %z = s32[] constant(0)
  %init = (s32[], f32[4]) tuple(%z, %x)
  %w = (s32[], f32[4]) while(%init), condition=%cond, body=%body
  ROOT %res = f32[4] get-tuple-element(%w), index=1
}
)",
                                                           pass);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountOpcode(*m->FindComputation("body"), Opcode::kFusion), 1);
  EXPECT_EQ(CountOpcode(*m->FindComputation("cond"), Opcode::kFusion), 0);
}

}  // namespace
}  // namespace tfjit::passes
