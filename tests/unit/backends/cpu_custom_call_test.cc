// The CPU backend's custom-calls: the Philox fills (core/random_fill.h) and tfjit.top_k
// (core/top_k.h), bit-identical with the evaluator for every distribution / element type, with
// and without a pool, as a module output, inside a while body, and next to fused code.
#include <cmath>
#include <limits>
#include <random>
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
  return hlo::Literal::FromTensor(Tensor::FromVector<uint64_t>(DType::kUInt64, {3}, {key, lo, hi}));
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
        const std::string text =
            absl::StrCat("HloModule fill\n\nENTRY %main (s: u64[3]) -> ", shape, " {\n",
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

// f32 rows drawn from a few values (many ties) with NaN and infinities.
hlo::Literal TiedRows(const std::vector<int64_t>& dims, uint32_t seed) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> pick(0, 11);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) {
    const int p = pick(gen);
    x = p == 0   ? std::numeric_limits<float>::quiet_NaN()
        : p == 1 ? -std::numeric_limits<float>::infinity()
        : p == 2 ? std::numeric_limits<float>::infinity()
                 : static_cast<float>(p % 5) - 2.0f;
  }
  return hlo::Literal::FromTensor(Tensor::FromVector<float>(DType::kFloat32, dims, v));
}

// top-k of the f32 input converted to `type` (integers see NaN as 0 and infinities clamped by
// convert, which only adds ties), both outputs as the module result.
std::string TopKModule(const std::string& type, const std::vector<int64_t>& dims, int64_t k) {
  std::vector<int64_t> out_dims = dims;
  out_dims.back() = k;
  const std::string in = testing_util::ShapeStr("f32", dims);
  const std::string typed = testing_util::ShapeStr(type, dims);
  const std::string values = testing_util::ShapeStr(type, out_dims);
  const std::string indices = testing_util::ShapeStr("s32", out_dims);
  const std::string tuple = absl::StrCat("(", values, ", ", indices, ")");
  return absl::StrCat("HloModule topk\n\nENTRY %main (x: ", in, ") -> ", tuple, " {\n",
                      "  %x = ", in, " parameter(0)\n  %c = ", typed, " convert(%x)\n",
                      "  %t = ", tuple, " custom-call(%c), custom_call_target=\"tfjit.top_k\"\n",
                      "  %v = ", values, " get-tuple-element(%t), index=0\n", "  %i = ", indices,
                      " get-tuple-element(%t), index=1\n", "  ROOT %r = ", tuple,
                      " tuple(%v, %i)\n}\n");
}

TEST(CpuCustomCallTest, TopKMatchesEvaluator) {
  struct Case {
    std::vector<int64_t> dims;
    int64_t k;
  };
  // k = 1 scan, heap (4k <= n), nth_element, k = n, k = 0, rows of one, 300 rows on the pool.
  const std::vector<Case> cases = {{{7}, 1},        {{40}, 5},      {{3, 9}, 6},
                                   {{2, 4}, 4},     {{5, 6}, 0},    {{4, 1}, 1},
                                   {{2, 3, 10}, 3}, {{300, 64}, 8}, {{300, 64}, 64}};
  uint32_t seed = 1;
  for (const char* type : {"f32", "f64", "f16", "bf16", "s32", "s64", "u8", "s8"}) {
    for (const Case& c : cases) {
      ExpectCpuEqualsEvaluator(TopKModule(type, c.dims, c.k), {TiedRows(c.dims, ++seed)});
    }
  }
}

// An independent check of the shared routine through compiled code: TF's documented answer.
TEST(CpuCustomCallTest, TopKTiesKeepLowerIndexFirst) {
  auto exe = CompileCpu(TopKModule("f32", {14}, 3));
  ASSERT_TRUE(exe.ok()) << exe.status();
  const std::vector<float> in = {1, 1, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0};
  auto out = RunOnLiterals(
      **exe, {hlo::Literal::FromTensor(Tensor::FromVector<float>(DType::kFloat32, {14}, in))},
      nullptr, /*tuple_root=*/true);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->elements().size(), 2u);
  const int32_t* idx = out->elements()[1].data<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(idx, idx + 3), (std::vector<int32_t>{0, 1, 3}));
}

// top-k in a loop body whose outputs feed fused arithmetic and the loop state.
TEST(CpuCustomCallTest, TopKInsideWhileFeedsFusion) {
  const std::string text = R"(HloModule loop

%cond (ct: (s32[], f32[4,16], s32[4,3])) -> pred[] {
  %ct = (s32[], f32[4,16], s32[4,3]) parameter(0)
  %ci = s32[] get-tuple-element(%ct), index=0
  %cn = s32[] constant(3)
  ROOT %clt = pred[] compare(%ci, %cn), direction=LT
}

%body (bt: (s32[], f32[4,16], s32[4,3])) -> (s32[], f32[4,16], s32[4,3]) {
  %bt = (s32[], f32[4,16], s32[4,3]) parameter(0)
  %bi = s32[] get-tuple-element(%bt), index=0
  %bx = f32[4,16] get-tuple-element(%bt), index=1
  %bacc = s32[4,3] get-tuple-element(%bt), index=2
  %bone = s32[] constant(1)
  %bi1 = s32[] add(%bi, %bone)
  %btk = (f32[4,3], s32[4,3]) custom-call(%bx), custom_call_target="tfjit.top_k"
  %bidx = s32[4,3] get-tuple-element(%btk), index=1
  %bacc1 = s32[4,3] add(%bacc, %bidx)
  %bhalf = f32[] constant(0.5)
  %bh = f32[4,16] broadcast(%bhalf), dimensions={}
  %bx1 = f32[4,16] multiply(%bx, %bh)
  %bneg = f32[4,16] negate(%bx1)
  ROOT %br = (s32[], f32[4,16], s32[4,3]) tuple(%bi1, %bneg, %bacc1)
}

ENTRY %main (x: f32[4,16]) -> s32[4,3] {
  %x = f32[4,16] parameter(0)
  %z = s32[] constant(0)
  %za = s32[] constant(0)
  %acc = s32[4,3] broadcast(%za), dimensions={}
  %init = (s32[], f32[4,16], s32[4,3]) tuple(%z, %x, %acc)
  %w = (s32[], f32[4,16], s32[4,3]) while(%init), condition=%cond, body=%body
  ROOT %out = s32[4,3] get-tuple-element(%w), index=2
}
)";
  ExpectCpuEqualsEvaluator(text, {TiedRows({4, 16}, 77)});
}

TEST(CpuCustomCallTest, UnknownTargetOrShapeIsUnimplemented) {
  auto exe = CompileCpu(R"(HloModule bad

ENTRY %main (s: u64[3]) -> s32[4] {
  %s = u64[3] parameter(0)
  ROOT %r = s32[4] custom-call(%s), custom_call_target="tfjit.philox_random_normal"
}
)");
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kUnimplemented) << exe.status();
  // top-k with k > n, or indices that are not s32.
  for (const char* result : {"(f32[5], s32[5])", "(f32[2], s64[2])"}) {
    auto bad =
        CompileCpu(absl::StrCat("HloModule bad\n\nENTRY %main (x: f32[4]) -> ", result,
                                " {\n  %x = f32[4] parameter(0)\n  ROOT %r = ", result,
                                " custom-call(%x), custom_call_target=\"tfjit.top_k\"\n}\n"));
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kUnimplemented) << bad.status();
  }
}

}  // namespace
}  // namespace tfjit
