// The CPU backend's Philox-fill custom-calls (core/random_fill.h): bit-identical with the
// evaluator for every distribution and float type, with and without a pool, as a module
// output, inside a while body, and next to fused elementwise code.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "core/dtype.h"
#include "core/thread_pool.h"
#include "gtest/gtest.h"
#include "tests/unit/backends/backend_test_util.h"

namespace tfjit {
namespace {

using testing_util::CompileCpu;
using testing_util::RunOnLiterals;

hlo::Literal State(uint64_t key, uint64_t lo, uint64_t hi) {
  return hlo::Literal::FromTensor(
      Tensor::FromVector<uint64_t>(DType::kUInt64, {3}, {key, lo, hi}));
}

// Compiles `text`, runs it on `args` with and without a pool; both must equal the evaluator
// bit for bit.
void ExpectCpuEqualsEvaluator(const std::string& text, const std::vector<hlo::Literal>& args) {
  auto module = hlo::ParseAndVerifyModule(text);
  ASSERT_TRUE(module.ok()) << module.status() << "\n" << text;
  auto expected = hlo::Evaluate(**module, args);
  ASSERT_TRUE(expected.ok()) << expected.status();
  auto exe = CompileCpu(text);
  ASSERT_TRUE(exe.ok()) << exe.status() << "\n" << text;
  ThreadPool pool(4);
  auto with_pool = RunOnLiterals(**exe, args, &pool);
  auto inline_run = RunOnLiterals(**exe, args, nullptr);
  ASSERT_TRUE(with_pool.ok() && inline_run.ok());
  EXPECT_TRUE(expected->BitwiseEquals(*with_pool)) << text;
  EXPECT_TRUE(expected->BitwiseEquals(*inline_run)) << text;
}

TEST(CpuCustomCallTest, PhiloxFillsMatchEvaluator) {
  for (const char* target : {"tfjit.philox_random_uniform", "tfjit.philox_random_normal",
                             "tfjit.philox_truncated_normal"}) {
    for (const char* type : {"f16", "bf16", "f32", "f64"}) {
      for (const char* dims : {"3", "33,31", "70000"}) {  // 70000: sharded across the pool
        const std::string shape = absl::StrCat(type, "[", dims, "]");
        const std::string text = absl::StrCat(
            "HloModule fill\n\nENTRY %main (s: u64[3]) -> ", shape, " {\n",
            "  %s = u64[3] parameter(0)\n  ROOT %r = ", shape, " custom-call(%s), ",
            "custom_call_target=\"", target, "\"\n}\n");
        ExpectCpuEqualsEvaluator(text, {State(0x123456789ull, 0xfffffffffffffff0ull, 9)});
      }
    }
  }
}

// The state comes from fused scalar code, the fill feeds a fusion, and a loop draws from an
// advancing counter: the custom-call is a kernel of its own everywhere.
TEST(CpuCustomCallTest, FillInsideWhileAndBetweenFusions) {
  const std::string text = R"(HloModule loop

%cond (ct: (s32[], u64[3], f32[8])) -> pred[] {
  %ct = (s32[], u64[3], f32[8]) parameter(0)
  %ci = s32[] get-tuple-element(%ct), index=0
  %cn = s32[] constant(3)
  ROOT %clt = pred[] compare(%ci, %cn), direction=LT
}

%body (bt: (s32[], u64[3], f32[8])) -> (s32[], u64[3], f32[8]) {
  %bt = (s32[], u64[3], f32[8]) parameter(0)
  %bi = s32[] get-tuple-element(%bt), index=0
  %bs = u64[3] get-tuple-element(%bt), index=1
  %bacc = f32[8] get-tuple-element(%bt), index=2
  %bone = s32[] constant(1)
  %bi1 = s32[] add(%bi, %bone)
  %bstep = u64[3] constant({0, 512, 0})
  %bs1 = u64[3] add(%bs, %bstep)
  %bx = f32[8] custom-call(%bs), custom_call_target="tfjit.philox_random_normal"
  %btwo = f32[] constant(2)
  %bb2 = f32[8] broadcast(%btwo), dimensions={}
  %by = f32[8] multiply(%bx, %bb2)
  %bacc1 = f32[8] add(%bacc, %by)
  ROOT %br = (s32[], u64[3], f32[8]) tuple(%bi1, %bs1, %bacc1)
}

ENTRY %main (k: u64[]) -> f32[8] {
  %k = u64[] parameter(0)
  %kk = u64[1] reshape(%k)
  %c = u64[2] constant({7, 0})
  %s = u64[3] concatenate(%kk, %c), dimensions={0}
  %z = s32[] constant(0)
  %zf = f32[] constant(0)
  %acc = f32[8] broadcast(%zf), dimensions={}
  %init = (s32[], u64[3], f32[8]) tuple(%z, %s, %acc)
  %w = (s32[], u64[3], f32[8]) while(%init), condition=%cond, body=%body
  ROOT %out = f32[8] get-tuple-element(%w), index=2
}
)";
  ExpectCpuEqualsEvaluator(
      text, {hlo::Literal::FromTensor(Tensor::FromVector<uint64_t>(DType::kUInt64, {}, {99}))});
}

TEST(CpuCustomCallTest, UnknownTargetOrShapeIsUnimplemented) {
  auto exe = CompileCpu(R"(HloModule bad

ENTRY %main (s: u64[3]) -> s32[4] {
  %s = u64[3] parameter(0)
  ROOT %r = s32[4] custom-call(%s), custom_call_target="tfjit.philox_random_normal"
}
)");
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kUnimplemented) << exe.status();
}

}  // namespace
}  // namespace tfjit
