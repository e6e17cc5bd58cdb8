// FramePlan: tuple plumbing shares buffers, dynamic-update-slice goes in place exactly when
// the old value is dead and the buffer may be written.
#include "backends/cpu/frame_plan.h"

#include "compiler/hlo/parser.h"
#include "gtest/gtest.h"

namespace tfjit::cpu {
namespace {

const hlo::Instruction* Find(const hlo::Computation& c, const std::string& name) {
  for (const hlo::Instruction* inst : c.instructions()) {
    if (inst->name() == name) return inst;
  }
  return nullptr;
}

// A while-body-like computation: state (s32[], f32[8], f32[8]).
constexpr char kBody[] = R"(HloModule m

ENTRY %body (p: (s32[], f32[8], f32[8])) -> (s32[], f32[8], f32[8]) {
  %p = (s32[], f32[8], f32[8]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %a = f32[8] get-tuple-element(%p), index=1
  %b = f32[8] get-tuple-element(%p), index=2
  %i.f = f32[] convert(%i)
  %u = f32[1] reshape(%i.f)
  %a2 = f32[8] dynamic-update-slice(%a, %u, %i)
  ROOT %t = (s32[], f32[8], f32[8]) tuple(%i, %a2, %ROOT_B)
}
)";

struct Planned {
  std::unique_ptr<hlo::Module> module;
  BufferPlan buffers;
  FramePlan frame;
};

// Plans the entry computation of `text` as a frame whose parameter leaves are buffers 0, 1, 2.
Planned Plan(const std::string& text, bool writable) {
  auto module = hlo::ParseAndVerifyModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  Planned p{std::move(*module), BufferPlan(0, {}), FramePlan()};
  for (int i = 0; i < 3; ++i) p.buffers.AddBuffer(32);
  Leaves state = {ValueLocation{0, nullptr}, ValueLocation{1, nullptr}, ValueLocation{2, nullptr}};
  auto frame = PlanFrame(*p.module->entry(), {state}, writable, p.buffers);
  EXPECT_TRUE(frame.ok()) << frame.status();
  p.frame = std::move(*frame);
  return p;
}

// The body returning `last` as its third element.
std::string Body(const std::string& last) {
  std::string s = kBody;
  s.replace(s.find("%ROOT_B"), 7, last);
  return s;
}

TEST(FramePlanTest, TuplePlumbingSharesParameterBuffers) {
  Planned p = Plan(Body("%b"), /*writable=*/true);
  const hlo::Computation& c = *p.module->entry();
  EXPECT_EQ(p.frame.leaves(Find(c, "a")), (Leaves{ValueLocation{1, nullptr}}));
  EXPECT_EQ(p.frame.leaves(Find(c, "b")), (Leaves{ValueLocation{2, nullptr}}));
  EXPECT_FALSE(p.frame.owns(ValueLocation{1, nullptr}));
  // reshape aliases its operand's buffer.
  EXPECT_EQ(p.frame.leaves(Find(c, "u")), p.frame.leaves(Find(c, "i.f")));
  EXPECT_TRUE(p.frame.owns(p.frame.leaves(Find(c, "i.f"))[0]));
}

TEST(FramePlanTest, LoopAccumulatorUpdatesInPlace) {
  Planned p = Plan(Body("%b"), /*writable=*/true);
  const hlo::Instruction* dus = Find(*p.module->entry(), "a2");
  EXPECT_TRUE(p.frame.in_place(dus));
  EXPECT_EQ(p.frame.leaves(dus), (Leaves{ValueLocation{1, nullptr}}));
  EXPECT_EQ(p.frame.root()[1], (ValueLocation{1, nullptr}));
}

TEST(FramePlanTest, ReadOnlyParametersAreNeverUpdatedInPlace) {
  Planned p = Plan(Body("%b"), /*writable=*/false);
  const hlo::Instruction* dus = Find(*p.module->entry(), "a2");
  EXPECT_FALSE(p.frame.in_place(dus));
  EXPECT_TRUE(p.frame.owns(p.frame.leaves(dus)[0]));
}

TEST(FramePlanTest, OldValueInTheResultPreventsInPlace) {
  Planned p = Plan(Body("%a"), /*writable=*/true);
  EXPECT_FALSE(p.frame.in_place(Find(*p.module->entry(), "a2")));
}

TEST(FramePlanTest, LaterReaderOfOldValuePreventsInPlace) {
  const std::string text = R"(HloModule m

ENTRY %body (p: (s32[], f32[8], f32[8])) -> (s32[], f32[8], f32[8]) {
  %p = (s32[], f32[8], f32[8]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %a = f32[8] get-tuple-element(%p), index=1
  %c = f32[1] constant({5})
  %a2 = f32[8] dynamic-update-slice(%a, %c, %i)
  %late = f32[8] negate(%a)
  %sum = f32[8] add(%a2, %late)
  ROOT %t = (s32[], f32[8], f32[8]) tuple(%i, %sum, %a2)
}
)";
  Planned p = Plan(text, /*writable=*/true);
  const hlo::Computation& c = *p.module->entry();
  // Post order visits %a2 before %late (operand order of %sum), so %late reads after it.
  EXPECT_FALSE(p.frame.in_place(Find(c, "a2")));
}

TEST(FramePlanTest, LeafShapesFlattenDepthFirst) {
  const hlo::Shape f = hlo::Shape(DType::kFloat32, {2});
  const hlo::Shape s = hlo::Shape::Scalar(DType::kInt32);
  const hlo::Shape nested = hlo::Shape::Tuple({s, hlo::Shape::Tuple({f, s}), f});
  EXPECT_EQ(LeafShapes(nested), (std::vector<hlo::Shape>{s, f, s, f}));
  EXPECT_EQ(LeafShapes(f), (std::vector<hlo::Shape>{f}));
}

}  // namespace
}  // namespace tfjit::cpu
