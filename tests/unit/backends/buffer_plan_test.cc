// BufferPlan: arena buffers share memory exactly when their live ranges are disjoint (loops
// keep what they use live for every iteration), and compiled modules that share buffers still
// give the evaluator's answers.
#include "backends/cpu/buffer_plan.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/backends/backend_test_util.h"

namespace tfjit::cpu {
namespace {

using testing_util::CompileCpu;
using testing_util::RunAndCompare;

// [offset, offset + bytes) of two slots overlap.
bool Overlap(const BufferPlan& plan, int a, int64_t a_bytes, int b, int64_t b_bytes) {
  const int64_t a0 = plan.arena_offset(a), b0 = plan.arena_offset(b);
  return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

TEST(BufferPlanTest, DisjointLiveRangesShareOverlappingDoNot) {
  BufferPlan plan(1, {});
  const int a = plan.AddBuffer(1000), b = plan.AddBuffer(1000), c = plan.AddBuffer(1000);
  plan.NextStep();
  plan.Touch(0);  // a parameter: not planned, ignored
  plan.Touch(a);  // a = f(p)
  plan.NextStep();
  plan.Touch(a);  // b = g(a)
  plan.Touch(b);
  plan.NextStep();
  plan.Touch(b);  // c = h(b): a is dead, c may take its memory
  plan.Touch(c);
  plan.Finalize();
  EXPECT_FALSE(Overlap(plan, a, 1000, b, 1000));
  EXPECT_FALSE(Overlap(plan, b, 1000, c, 1000));
  EXPECT_EQ(plan.arena_offset(a), plan.arena_offset(c));
  EXPECT_EQ(plan.arena_bytes(), 2 * 1024);  // 64-byte aligned sizes
  EXPECT_EQ(plan.unshared_bytes(), 3 * 1024);
}

TEST(BufferPlanTest, ALoopKeepsWhatItUsesLiveForEveryIteration) {
  BufferPlan plan(0, {});
  const int before = plan.AddBuffer(256), in_loop1 = plan.AddBuffer(256);
  const int in_loop2 = plan.AddBuffer(256), after = plan.AddBuffer(256);
  plan.NextStep();
  plan.Touch(before);  // written before the loop, read in it
  plan.BeginLoop();
  plan.NextStep();
  plan.Touch(in_loop1);  // written early in the body
  plan.NextStep();
  plan.Touch(before);
  plan.Touch(in_loop1);  // read: its last use, but the next iteration writes it again
  plan.NextStep();
  plan.Touch(in_loop2);  // would share with in_loop1 in straight-line code
  plan.EndLoop();
  plan.NextStep();
  plan.Touch(after);  // after the loop: everything of the loop is dead
  plan.Finalize();
  EXPECT_FALSE(Overlap(plan, in_loop1, 256, in_loop2, 256));
  EXPECT_FALSE(Overlap(plan, before, 256, in_loop2, 256));
  EXPECT_FALSE(Overlap(plan, before, 256, in_loop1, 256));
  EXPECT_EQ(plan.arena_bytes(), 3 * 256);
}

TEST(BufferPlanTest, UntouchedBuffersAndBuffersCopiedToOutputsStayLive) {
  BufferPlan plan(0, {hlo::Shape(DType::kFloat32, {16})});
  const int untouched = plan.AddBuffer(64), copied = plan.AddBuffer(64);
  const int late = plan.AddBuffer(64);
  plan.mutable_outputs()[0].copy_from = ValueLocation{copied, nullptr};
  plan.NextStep();
  plan.Touch(copied);
  plan.NextStep();
  plan.Touch(late);  // after `copied`'s last use, but Run reads `copied` after the code
  plan.Finalize();
  EXPECT_EQ(plan.arena_bytes(), 3 * 64);
  EXPECT_FALSE(Overlap(plan, copied, 64, late, 64));
  EXPECT_FALSE(Overlap(plan, untouched, 64, late, 64));
}

// Chains of 4-6 dots amplify rounding: the GEMM's float sums in its block order against the
// evaluator's (0.2% apart at worst in the ASan build, whose GEMM takes another path).
// A clobbered buffer would be off by far more.
constexpr testlib::ErrorSpec kChainSpec{1e-2, 1e-2};

// A chain of dots (each its own kernel, so each value its own buffer): the temporaries take
// two buffers' memory instead of five, and the answers are the evaluator's.
constexpr char kDotChain[] = R"(HloModule dots

ENTRY %main (x: f32[64,64], w: f32[64,64]) -> f32[64,64] {
  %x = f32[64,64] parameter(0)
  %w = f32[64,64] parameter(1)
  %d1 = f32[64,64] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %d2 = f32[64,64] dot(%d1, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %d3 = f32[64,64] dot(%d2, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %d4 = f32[64,64] dot(%d3, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %d5 = f32[64,64] dot(%d4, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %d6 = f32[64,64] dot(%d5, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

TEST(BufferPlanTest, CompiledChainSharesTemporariesAndMatchesEvaluator) {
  auto exe = CompileCpu(kDotChain);
  ASSERT_TRUE(exe.ok()) << exe.status();
  const int64_t buffer = 64 * 64 * 4;
  EXPECT_EQ((*exe)->stats().temp_bytes_unshared, 5 * buffer);
  EXPECT_EQ((*exe)->stats().temp_bytes, 2 * buffer);
  EXPECT_TRUE(RunAndCompare(kDotChain, {1, 2}, kChainSpec));
}

// Dots inside a while body (some with fused epilogues), a value computed before the loop and
// read after it, and a value after the loop that may take the body's memory: shared buffers
// must clobber neither that value nor the body's values between iterations.
constexpr char kLoopChain[] = R"(HloModule loop

%cond (cs: (s32[], f32[32,32], f32[32,32])) -> pred[] {
  %cs = (s32[], f32[32,32], f32[32,32]) parameter(0)
  %ci = s32[] get-tuple-element(%cs), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%ci, %n), direction=LT
}

%body (s: (s32[], f32[32,32], f32[32,32])) -> (s32[], f32[32,32], f32[32,32]) {
  %s = (s32[], f32[32,32], f32[32,32]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %a = f32[32,32] get-tuple-element(%s), index=1
  %bw = f32[32,32] get-tuple-element(%s), index=2
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  %d1 = f32[32,32] dot(%a, %bw), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %d2 = f32[32,32] dot(%d1, %bw), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %t = f32[32,32] tanh(%d2)
  %d3 = f32[32,32] dot(%t, %bw), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %sum = f32[32,32] add(%d3, %d1)
  ROOT %br = (s32[], f32[32,32], f32[32,32]) tuple(%i1, %sum, %bw)
}

ENTRY %main (x: f32[32,32], w: f32[32,32]) -> (f32[32,32], f32[32,32]) {
  %x = f32[32,32] parameter(0)
  %w = f32[32,32] parameter(1)
  %pre = f32[32,32] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %zero = s32[] constant(0)
  %init = (s32[], f32[32,32], f32[32,32]) tuple(%zero, %x, %w)
  %loop = (s32[], f32[32,32], f32[32,32]) while(%init), condition=%cond, body=%body
  %out = f32[32,32] get-tuple-element(%loop), index=1
  %post = f32[32,32] dot(%out, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %post2 = f32[32,32] dot(%post, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %both = f32[32,32] add(%post2, %pre)
  ROOT %r = (f32[32,32], f32[32,32]) tuple(%both, %pre)
}
)";

TEST(BufferPlanTest, CompiledLoopWithSharedBuffersMatchesEvaluator) {
  auto exe = CompileCpu(kLoopChain);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_LT((*exe)->stats().temp_bytes, (*exe)->stats().temp_bytes_unshared);
  EXPECT_TRUE(RunAndCompare(kLoopChain, {1, 2, 3}, kChainSpec));
}

}  // namespace
}  // namespace tfjit::cpu
