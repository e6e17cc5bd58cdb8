// Differential tests of the CPU backend's control flow and data-dependent indexing: while
// loops (counted, zero-trip, state swaps, in-place loop accumulators), pred and index
// conditionals, nesting both ways, dynamic-slice / dynamic-update-slice with clamped starts,
// gather, and every module of tests/hlo/corpus. Each runs on the JIT and the evaluator.
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "core/thread_pool.h"
#include "gtest/gtest.h"
#include "tests/unit/backends/backend_test_util.h"

namespace tfjit {
namespace {

using testing_util::CompileCpu;
using testing_util::RunAndCompare;
using testing_util::RunOnLiterals;
using testlib::ErrorSpec;

constexpr ErrorSpec kExact{0, 0};
constexpr ErrorSpec kFloat{1e-5, 1e-5};
const std::vector<uint64_t> kSeeds = {1, 2, 3, 4, 5, 6, 7, 8};

// Instruction names are unique per module: suffixes each computation's instruction names with
// the computation's position, so the modules below can reuse short names like %i and %n.
std::string Uniquify(const std::string& text) {
  std::stringstream in(text);
  std::string line, out, block;
  std::vector<std::string> names;
  int computation = 0;
  const std::regex def(R"(^\s*(?:ROOT )?%([\w.\-]+) = )");
  auto flush = [&]() {
    for (const std::string& name : names) {
      const std::string escaped = std::regex_replace(name, std::regex(R"([.\-])"), R"(\$&)");
      const std::regex use(absl::StrCat("%", escaped, R"((?![\w.\-]))"));
      block = std::regex_replace(block, use, absl::StrCat("%", name, "_c", computation));
    }
    out += block;
    block.clear();
    names.clear();
    ++computation;
  };
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, def)) names.push_back(m[1]);
    block += line + "\n";
    if (line == "}") flush();
  }
  out += block;
  return out;
}

::testing::AssertionResult RunAndCompareU(const std::string& hlo, ErrorSpec spec,
                                          bool edge_values = false,
                                          const cpu::CpuBackendOptions& options = {},
                                          ThreadPool* pool = nullptr) {
  return RunAndCompare(Uniquify(hlo), kSeeds, spec, edge_values, options, pool);
}

// Compiles once and compares JIT and evaluator on explicit arguments.
::testing::AssertionResult CompareOn(const std::string& text, const std::vector<hlo::Literal>& args,
                                     ErrorSpec spec = kExact) {
  const std::string hlo = Uniquify(text);
  auto module = hlo::ParseAndVerifyModule(hlo);
  if (!module.ok()) return ::testing::AssertionFailure() << module.status();
  auto expected = hlo::Evaluate(**module, args);
  if (!expected.ok()) return ::testing::AssertionFailure() << expected.status();
  auto exe = CompileCpu(hlo);
  if (!exe.ok()) return ::testing::AssertionFailure() << exe.status();
  auto actual = RunOnLiterals(**exe, args, nullptr, expected->shape().IsTuple());
  if (!actual.ok()) return ::testing::AssertionFailure() << actual.status();
  return testlib::LiteralsNear(*expected, *actual, spec);
}

hlo::Literal S32(int32_t v) {
  return hlo::Literal::FromTensor(Tensor::FromVector<int32_t>(DType::kInt32, {}, {v}));
}

hlo::Literal F32(std::vector<int64_t> dims, float start) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return hlo::Literal::FromTensor(Tensor::FromVector<float>(DType::kFloat32, dims, v));
}

// i < n on a state (s32[] i, s32[] n, ...): `rest` lists the other state shapes.
std::string CountedCondition(const std::string& name, const std::string& state) {
  return absl::StrCat("%", name, " (s: ", state, ") -> pred[] {\n  %s = ", state,
                      " parameter(0)\n  %i = s32[] get-tuple-element(%s), index=0\n"
                      "  %n = s32[] get-tuple-element(%s), index=1\n"
                      "  ROOT %lt = pred[] compare(%i, %n), direction=LT\n}\n\n");
}

// A TensorList-style loop: row i of an f32[8,4] buffer gets x * i + buf[i-1] (dynamic-slice
// read of the previous row, dynamic-update-slice write at the counter), for n steps.
const char kAccumulateRows[] = R"(HloModule accumulate

%cond (s: (s32[], s32[], f32[8,4], f32[4])) -> pred[] {
  %s = (s32[], s32[], f32[8,4], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] get-tuple-element(%s), index=1
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (p: (s32[], s32[], f32[8,4], f32[4])) -> (s32[], s32[], f32[8,4], f32[4]) {
  %p = (s32[], s32[], f32[8,4], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] get-tuple-element(%p), index=1
  %buf = f32[8,4] get-tuple-element(%p), index=2
  %x = f32[4] get-tuple-element(%p), index=3
  %one = s32[] constant(1)
  %zero = s32[] constant(0)
  %prev_i = s32[] subtract(%i, %one)
  %prev = f32[1,4] dynamic-slice(%buf, %prev_i, %zero), dynamic_slice_sizes={1,4}
  %fi = f32[] convert(%i)
  %fib = f32[4] broadcast(%fi), dimensions={}
  %scaled = f32[4] multiply(%x, %fib)
  %row = f32[1,4] reshape(%scaled)
  %sum = f32[1,4] add(%row, %prev)
  %buf2 = f32[8,4] dynamic-update-slice(%buf, %sum, %i, %zero)
  %next = s32[] add(%i, %one)
  ROOT %t = (s32[], s32[], f32[8,4], f32[4]) tuple(%next, %n, %buf2, %x)
}

ENTRY %main (x: f32[4], n: s32[]) -> (f32[8,4], s32[]) {
  %x = f32[4] parameter(0)
  %n = s32[] parameter(1)
  %zero = s32[] constant(0)
  %z = f32[] constant(0)
  %buf = f32[8,4] broadcast(%z), dimensions={}
  %init = (s32[], s32[], f32[8,4], f32[4]) tuple(%zero, %n, %buf, %x)
  %w = (s32[], s32[], f32[8,4], f32[4]) while(%init), condition=%cond, body=%body
  %out = f32[8,4] get-tuple-element(%w), index=2
  %count = s32[] get-tuple-element(%w), index=0
  ROOT %r = (f32[8,4], s32[]) tuple(%out, %count)
}
)";

TEST(CpuControlFlowTest, CountedLoopAccumulatesRowsWithDynamicUpdateSlice) {
  // Random n in [-10, 10]: zero-trip loops, partial fills and (clamped) writes past row 7.
  EXPECT_TRUE(RunAndCompareU(kAccumulateRows, kFloat));
  for (int32_t n : {0, 1, 8, 12}) {
    EXPECT_TRUE(CompareOn(kAccumulateRows, {F32({4}, 1.5f), S32(n)}, kFloat)) << "n=" << n;
  }
}

TEST(CpuControlFlowTest, CountedLoopRunsOnThreadPool) {
  ThreadPool pool(3);
  cpu::CpuBackendOptions options;
  options.parallel_min_elements = 1;  // split even these small kernels across the pool
  EXPECT_TRUE(RunAndCompareU(kAccumulateRows, kFloat, false, options, &pool));
}

// The body swaps two buffers and updates one of them in place, then hands it to the other
// tuple position: the state update must not clobber a source before it is copied.
const char kSwapLoop[] = R"(HloModule swap

%cond (s: (s32[], s32[], f32[6], f32[6])) -> pred[] {
  %s = (s32[], s32[], f32[6], f32[6]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] get-tuple-element(%s), index=1
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (p: (s32[], s32[], f32[6], f32[6])) -> (s32[], s32[], f32[6], f32[6]) {
  %p = (s32[], s32[], f32[6], f32[6]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] get-tuple-element(%p), index=1
  %a = f32[6] get-tuple-element(%p), index=2
  %b = f32[6] get-tuple-element(%p), index=3
  %one = s32[] constant(1)
  %fi = f32[] convert(%i)
  %u = f32[1] reshape(%fi)
  %a2 = f32[6] dynamic-update-slice(%a, %u, %i)
  %next = s32[] add(%i, %one)
  ROOT %t = (s32[], s32[], f32[6], f32[6]) tuple(%next, %n, %b, %a2)
}

ENTRY %main (a: f32[6], b: f32[6], n: s32[]) -> (f32[6], f32[6]) {
  %a = f32[6] parameter(0)
  %b = f32[6] parameter(1)
  %n = s32[] parameter(2)
  %zero = s32[] constant(0)
  %init = (s32[], s32[], f32[6], f32[6]) tuple(%zero, %n, %a, %b)
  %w = (s32[], s32[], f32[6], f32[6]) while(%init), condition=%cond, body=%body
  %ra = f32[6] get-tuple-element(%w), index=2
  %rb = f32[6] get-tuple-element(%w), index=3
  ROOT %r = (f32[6], f32[6]) tuple(%ra, %rb)
}
)";

TEST(CpuControlFlowTest, LoopBodySwappingTupleElements) {
  EXPECT_TRUE(RunAndCompareU(kSwapLoop, kExact));
  for (int32_t n : {0, 1, 2, 3, 7}) {
    EXPECT_TRUE(CompareOn(kSwapLoop, {F32({6}, 0), F32({6}, 100), S32(n)})) << "n=" << n;
  }
}

// Fibonacci-style state rotation with both elements recomputed and passed through.
TEST(CpuControlFlowTest, LoopRotatingStateThroughArithmetic) {
  const std::string state = "(s32[], s32[], f32[5], f32[5])";
  const std::string hlo = absl::StrCat(
      "HloModule fib\n\n", CountedCondition("cond", state), "%body (p: ", state, ") -> ", state,
      " {\n  %p = ", state,
      " parameter(0)\n"
      "  %i = s32[] get-tuple-element(%p), index=0\n"
      "  %n = s32[] get-tuple-element(%p), index=1\n"
      "  %a = f32[5] get-tuple-element(%p), index=2\n"
      "  %b = f32[5] get-tuple-element(%p), index=3\n"
      "  %c = f32[5] add(%a, %b)\n  %half = f32[] constant(0.5)\n"
      "  %hb = f32[5] broadcast(%half), dimensions={}\n  %d = f32[5] multiply(%c, %hb)\n"
      "  %one = s32[] constant(1)\n  %next = s32[] add(%i, %one)\n"
      "  ROOT %t = ",
      state,
      " tuple(%next, %n, %b, %d)\n}\n\n"
      "ENTRY %main (a: f32[5], b: f32[5], n: s32[]) -> ",
      state,
      " {\n"
      "  %a = f32[5] parameter(0)\n  %b = f32[5] parameter(1)\n  %n = s32[] parameter(2)\n"
      "  %zero = s32[] constant(0)\n  %init = ",
      state,
      " tuple(%zero, %n, %a, %b)\n"
      "  ROOT %w = ",
      state, " while(%init), condition=%cond, body=%body\n}\n");
  EXPECT_TRUE(RunAndCompareU(hlo, kFloat));
  EXPECT_TRUE(CompareOn(hlo, {F32({5}, 1), F32({5}, 2), S32(6)}, kFloat));
}

TEST(CpuControlFlowTest, ZeroTripLoopReturnsItsInit) {
  const char* hlo = R"(HloModule zero

%never (s: (f32[3], s32[])) -> pred[] {
  %s = (f32[3], s32[]) parameter(0)
  ROOT %f = pred[] constant(false)
}

%body (p: (f32[3], s32[])) -> (f32[3], s32[]) {
  %p = (f32[3], s32[]) parameter(0)
  %x = f32[3] get-tuple-element(%p), index=0
  %i = s32[] get-tuple-element(%p), index=1
  %y = f32[3] negate(%x)
  ROOT %t = (f32[3], s32[]) tuple(%y, %i)
}

ENTRY %main (x: f32[3], i: s32[]) -> (f32[3], s32[]) {
  %x = f32[3] parameter(0)
  %i = s32[] parameter(1)
  %init = (f32[3], s32[]) tuple(%x, %i)
  ROOT %w = (f32[3], s32[]) while(%init), condition=%never, body=%body
}
)";
  EXPECT_TRUE(RunAndCompareU(hlo, kExact));
}

// The old value of the buffer is still needed after the update (it is part of the result), so
// the update must not happen in place.
TEST(CpuControlFlowTest, UpdateWhoseOldValueIsAlsoReturned) {
  const std::string state = "(s32[], s32[], f32[4], f32[4])";
  const std::string hlo = absl::StrCat("HloModule keep_old\n\n", CountedCondition("cond", state),
                                       "%body (p: ", state, ") -> ", state, " {\n  %p = ", state,
                                       " parameter(0)\n"
                                       "  %i = s32[] get-tuple-element(%p), index=0\n"
                                       "  %n = s32[] get-tuple-element(%p), index=1\n"
                                       "  %a = f32[4] get-tuple-element(%p), index=2\n"
                                       "  %v = f32[1] constant({7})\n"
                                       "  %a2 = f32[4] dynamic-update-slice(%a, %v, %i)\n"
                                       "  %one = s32[] constant(1)\n  %next = s32[] add(%i, %one)\n"
                                       "  ROOT %t = ",
                                       state,
                                       " tuple(%next, %n, %a2, %a)\n}\n\n"
                                       "ENTRY %main (a: f32[4], n: s32[]) -> ",
                                       state,
                                       " {\n"
                                       "  %a = f32[4] parameter(0)\n  %n = s32[] parameter(1)\n"
                                       "  %zero = s32[] constant(0)\n  %init = ",
                                       state,
                                       " tuple(%zero, %n, %a, %a)\n"
                                       "  ROOT %w = ",
                                       state, " while(%init), condition=%cond, body=%body\n}\n");
  EXPECT_TRUE(RunAndCompareU(hlo, kExact));
  EXPECT_TRUE(CompareOn(hlo, {F32({4}, 1), S32(3)}));
}

const char kPredConditional[] = R"(HloModule pred_cond

%on_true (t: (f32[4], f32[4])) -> (f32[4], f32[4]) {
  %t = (f32[4], f32[4]) parameter(0)
  %a = f32[4] get-tuple-element(%t), index=0
  %b = f32[4] get-tuple-element(%t), index=1
  %s = f32[4] add(%a, %b)
  ROOT %r = (f32[4], f32[4]) tuple(%s, %a)
}

%on_false (f: (f32[4], f32[4])) -> (f32[4], f32[4]) {
  %f = (f32[4], f32[4]) parameter(0)
  %a = f32[4] get-tuple-element(%f), index=0
  %b = f32[4] get-tuple-element(%f), index=1
  %m = f32[4] multiply(%a, %b)
  ROOT %r = (f32[4], f32[4]) tuple(%b, %m)
}

ENTRY %main (p: pred[], a: f32[4], b: f32[4]) -> (f32[4], f32[4]) {
  %p = pred[] parameter(0)
  %a = f32[4] parameter(1)
  %b = f32[4] parameter(2)
  %ab = (f32[4], f32[4]) tuple(%a, %b)
  %ba = (f32[4], f32[4]) tuple(%b, %a)
  ROOT %c = (f32[4], f32[4]) conditional(%p, %ab, %ba), branch_computations={%on_true, %on_false}
}
)";

TEST(CpuControlFlowTest, PredConditionalWithTupleOperandsAndResult) {
  EXPECT_TRUE(RunAndCompareU(kPredConditional, kExact));
}

const char kIndexConditional[] = R"(HloModule index_cond

%b0 (x: f32[3]) -> f32[3] {
  %x = f32[3] parameter(0)
  ROOT %n = f32[3] negate(%x)
}

%b1 (x: f32[3]) -> f32[3] {
  %x = f32[3] parameter(0)
  ROOT %d = f32[3] add(%x, %x)
}

%b2 (x: f32[3]) -> f32[3] {
  ROOT %x = f32[3] parameter(0)
}

ENTRY %main (i: s32[], x: f32[3], y: f32[3]) -> f32[3] {
  %i = s32[] parameter(0)
  %x = f32[3] parameter(1)
  %y = f32[3] parameter(2)
  ROOT %c = f32[3] conditional(%i, %x, %y, %x), branch_computations={%b0, %b1, %b2}
}
)";

TEST(CpuControlFlowTest, IndexConditionalOutOfRangeRunsLastBranch) {
  EXPECT_TRUE(RunAndCompareU(kIndexConditional, kExact));
  for (int32_t i : {0, 1, 2, 3, 100, -1, std::numeric_limits<int32_t>::min()}) {
    EXPECT_TRUE(CompareOn(kIndexConditional, {S32(i), F32({3}, 1), F32({3}, 10)})) << "i=" << i;
  }
}

// Branch 0 runs a loop (sum of x, k times); branch 1 a plain op.
const char kWhileInConditional[] = R"(HloModule while_in_cond

%cond (s: (s32[], s32[], f32[4], f32[4])) -> pred[] {
  %s = (s32[], s32[], f32[4], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] get-tuple-element(%s), index=1
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (p: (s32[], s32[], f32[4], f32[4])) -> (s32[], s32[], f32[4], f32[4]) {
  %p = (s32[], s32[], f32[4], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] get-tuple-element(%p), index=1
  %acc = f32[4] get-tuple-element(%p), index=2
  %x = f32[4] get-tuple-element(%p), index=3
  %acc2 = f32[4] add(%acc, %x)
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  ROOT %t = (s32[], s32[], f32[4], f32[4]) tuple(%next, %n, %acc2, %x)
}

%looping (a: (s32[], f32[4])) -> f32[4] {
  %a = (s32[], f32[4]) parameter(0)
  %k = s32[] get-tuple-element(%a), index=0
  %x = f32[4] get-tuple-element(%a), index=1
  %zero = s32[] constant(0)
  %z = f32[] constant(0)
  %acc = f32[4] broadcast(%z), dimensions={}
  %init = (s32[], s32[], f32[4], f32[4]) tuple(%zero, %k, %acc, %x)
  %w = (s32[], s32[], f32[4], f32[4]) while(%init), condition=%cond, body=%body
  ROOT %r = f32[4] get-tuple-element(%w), index=2
}

%plain (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  ROOT %e = f32[4] negate(%x)
}

ENTRY %main (p: pred[], k: s32[], x: f32[4]) -> f32[4] {
  %p = pred[] parameter(0)
  %k = s32[] parameter(1)
  %x = f32[4] parameter(2)
  %arg = (s32[], f32[4]) tuple(%k, %x)
  ROOT %c = f32[4] conditional(%p, %arg, %x), branch_computations={%looping, %plain}
}
)";

TEST(CpuControlFlowTest, WhileInsideConditionalBranch) {
  EXPECT_TRUE(RunAndCompareU(kWhileInConditional, kFloat));
}

// Each iteration picks, by the counter's parity, one of two conditional branches that update
// a row of the state buffer.
const char kConditionalInWhile[] = R"(HloModule cond_in_while

%cond (s: (s32[], s32[], f32[6,2])) -> pred[] {
  %s = (s32[], s32[], f32[6,2]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] get-tuple-element(%s), index=1
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%even (e: (s32[], f32[6,2])) -> f32[6,2] {
  %e = (s32[], f32[6,2]) parameter(0)
  %i = s32[] get-tuple-element(%e), index=0
  %buf = f32[6,2] get-tuple-element(%e), index=1
  %zero = s32[] constant(0)
  %row = f32[1,2] dynamic-slice(%buf, %i, %zero), dynamic_slice_sizes={1,2}
  %neg = f32[1,2] negate(%row)
  ROOT %u = f32[6,2] dynamic-update-slice(%buf, %neg, %i, %zero)
}

%odd (o: (s32[], f32[6,2])) -> f32[6,2] {
  %o = (s32[], f32[6,2]) parameter(0)
  %buf = f32[6,2] get-tuple-element(%o), index=1
  ROOT %d = f32[6,2] add(%buf, %buf)
}

%body (p: (s32[], s32[], f32[6,2])) -> (s32[], s32[], f32[6,2]) {
  %p = (s32[], s32[], f32[6,2]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] get-tuple-element(%p), index=1
  %buf = f32[6,2] get-tuple-element(%p), index=2
  %two = s32[] constant(2)
  %parity = s32[] remainder(%i, %two)
  %arg = (s32[], f32[6,2]) tuple(%i, %buf)
  %new = f32[6,2] conditional(%parity, %arg, %arg), branch_computations={%even, %odd}
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  ROOT %t = (s32[], s32[], f32[6,2]) tuple(%next, %n, %new)
}

ENTRY %main (x: f32[6,2], n: s32[]) -> f32[6,2] {
  %x = f32[6,2] parameter(0)
  %n = s32[] parameter(1)
  %zero = s32[] constant(0)
  %init = (s32[], s32[], f32[6,2]) tuple(%zero, %n, %x)
  %w = (s32[], s32[], f32[6,2]) while(%init), condition=%cond, body=%body
  ROOT %r = f32[6,2] get-tuple-element(%w), index=2
}
)";

TEST(CpuControlFlowTest, ConditionalInsideWhileBody) {
  EXPECT_TRUE(RunAndCompareU(kConditionalInWhile, kExact));
  for (int32_t n : {0, 1, 5, 9}) {
    EXPECT_TRUE(CompareOn(kConditionalInWhile, {F32({6, 2}, 1), S32(n)})) << "n=" << n;
  }
  // The branch's update of its (read-only) parameter must not leak into the caller's buffer.
  EXPECT_TRUE(RunAndCompareU(kConditionalInWhile, kExact, /*edge_values=*/true));
}

std::string DynamicSliceModule(const std::string& index_type) {
  return absl::StrCat(
      "HloModule ds\n\nENTRY %main (x: f32[10,6], i: ", index_type, ", j: ", index_type,
      ") -> f32[3,4] {\n  %x = f32[10,6] parameter(0)\n  %i = ", index_type,
      " parameter(1)\n  %j = ", index_type,
      " parameter(2)\n"
      "  ROOT %d = f32[3,4] dynamic-slice(%x, %i, %j), dynamic_slice_sizes={3,4}\n}\n");
}

TEST(CpuControlFlowTest, DynamicSliceClampsStarts) {
  for (const char* t : {"s32[]", "s64[]", "u32[]", "u8[]"}) {
    EXPECT_TRUE(RunAndCompareU(DynamicSliceModule(t), kExact, /*edge_values=*/true)) << t;
  }
  const std::string hlo = DynamicSliceModule("s32[]");
  for (auto [i, j] : std::vector<std::pair<int32_t, int32_t>>{{0, 0}, {7, 2}, {8, 3}, {-1, 9}}) {
    EXPECT_TRUE(CompareOn(hlo, {F32({10, 6}, 0), S32(i), S32(j)})) << i << "," << j;
  }
}

std::string DynamicUpdateSliceModule(bool operand_is_computed) {
  return absl::StrCat(
      "HloModule dus\n\nENTRY %main (x: f32[10,6], u: f32[3,4], i: s32[], j: s32[]) -> "
      "f32[10,6] {\n  %x = f32[10,6] parameter(0)\n  %u = f32[3,4] parameter(1)\n"
      "  %i = s32[] parameter(2)\n  %j = s32[] parameter(3)\n",
      operand_is_computed ? "  %base = f32[10,6] exp(%x)\n" : "",
      "  ROOT %d = f32[10,6] dynamic-update-slice(", operand_is_computed ? "%base" : "%x",
      ", %u, %i, %j)\n}\n");
}

TEST(CpuControlFlowTest, DynamicUpdateSliceAtTheEdges) {
  // Parameter operand: copy then update. Computed operand: updated in place.
  for (bool computed : {false, true}) {
    const std::string hlo = DynamicUpdateSliceModule(computed);
    EXPECT_TRUE(RunAndCompareU(hlo, {1e-6, 1e-5}, /*edge_values=*/true)) << computed;
    for (auto [i, j] : std::vector<std::pair<int32_t, int32_t>>{{0, 0}, {7, 2}, {9, 5}, {-3, 4}}) {
      EXPECT_TRUE(CompareOn(hlo, {F32({10, 6}, 0), F32({3, 4}, 100), S32(i), S32(j)}, {1e-6, 1e-5}))
          << computed << ": " << i << "," << j;
    }
  }
}

TEST(CpuControlFlowTest, DynamicUpdateSliceOfScalarAndEmptyUpdate) {
  EXPECT_TRUE(RunAndCompare(R"(HloModule dus0

ENTRY %main (x: f32[], u: f32[], e: f32[5], v: f32[0], i: s32[]) -> (f32[], f32[5]) {
  %x = f32[] parameter(0)
  %u = f32[] parameter(1)
  %e = f32[5] parameter(2)
  %v = f32[0] parameter(3)
  %i = s32[] parameter(4)
  %s = f32[] dynamic-update-slice(%x, %u)
  %n = f32[5] negate(%e)
  %t = f32[5] dynamic-update-slice(%n, %v, %i)
  ROOT %r = (f32[], f32[5]) tuple(%s, %t)
}
)",
                            kSeeds, kExact));
}

TEST(CpuControlFlowTest, GatherRowsLikeGatherV2) {
  // axis 0 of a matrix by a vector of indices; then axis 1 by a matrix of indices.
  EXPECT_TRUE(RunAndCompare(R"(HloModule gather_rows

ENTRY %main (x: f32[10,4], i: s32[5]) -> f32[5,4] {
  %x = f32[10,4] parameter(0)
  %i = s32[5] parameter(1)
  ROOT %g = f32[5,4] gather(%x, %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
}
)",
                            kSeeds, kExact, /*edge_values=*/true));
  EXPECT_TRUE(RunAndCompare(R"(HloModule gather_cols

ENTRY %main (x: f32[3,7], i: s64[2,2]) -> f32[3,2,2] {
  %x = f32[3,7] parameter(0)
  %i = s64[2,2] parameter(1)
  ROOT %g = f32[3,2,2] gather(%x, %i), offset_dims={0}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=2, slice_sizes={3,1}
}
)",
                            kSeeds, kExact, /*edge_values=*/true));
}

using testing_util::ScatterModule;

TEST(CpuControlFlowTest, ScatterAddMaxAndAssignRows) {
  const std::vector<std::string> combiners = {
      "  ROOT %r = f32[] add(%a, %b)\n", "  ROOT %r = f32[] maximum(%a, %b)\n",
      // Assignment: the combiner returns the update.
      "  %z = f32[] constant(0)\n  ROOT %r = f32[] add(%b, %z)\n"};
  const hlo::Literal rows =
      hlo::Literal::FromTensor(Tensor::FromVector<int32_t>(DType::kInt32, {5}, {1, 1, 5, 6, -1}));
  for (const std::string& combiner : combiners) {
    for (bool computed : {false, true}) {
      const std::string hlo = ScatterModule(combiner, computed);
      EXPECT_TRUE(RunAndCompareU(hlo, kExact)) << hlo;
      EXPECT_TRUE(CompareOn(hlo, {F32({6, 3}, 0), rows, F32({5, 3}, 100)})) << hlo;
    }
  }
}

// Every module of the .hlo seed corpus runs on the JIT like on the evaluator (modules with
// opcodes the CPU backend does not emit yet are skipped by name).
TEST(CpuControlFlowTest, CorpusModulesMatchEvaluator) {
  const std::filesystem::path dir =
      std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "hlo" / "corpus";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".hlo") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    auto exe = CompileCpu(text.str());
    if (!exe.ok() && exe.status().code() == absl::StatusCode::kUnimplemented) continue;
    EXPECT_TRUE(RunAndCompare(text.str(), {1, 2}, {1e-4, 1e-4})) << entry.path();
    ++checked;
  }
  EXPECT_GE(checked, 6);
}

}  // namespace
}  // namespace tfjit
