// CPU executable behaviour: argument validation, unsupported opcodes, fusion and stats,
// concurrent Run, parallel vs inline execution giving identical bits, and profiled runs.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/cpu/cpu_backend.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "core/thread_pool.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testlib/random_literal.h"
#include "tests/unit/backends/backend_test_util.h"

namespace tfjit {
namespace {

using ::testing::HasSubstr;
using testing_util::CompileCpu;
using testing_util::RunAndCompare;
using testing_util::RunOnLiterals;

const char kChain[] = R"(HloModule chain

ENTRY %main (x: f32[300,1000], y: f32[300,1000]) -> f32[300,1000] {
  %x = f32[300,1000] parameter(0)
  %y = f32[300,1000] parameter(1)
  %m = f32[300,1000] multiply(%x, %y)
  %a = f32[300,1000] add(%m, %x)
  %t = f32[300,1000] tanh(%a)
  ROOT %r = f32[300,1000] maximum(%t, %y)
}
)";

const char kRowSum[] = R"(HloModule rowsum

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[512,300]) -> f32[512] {
  %x = f32[512,300] parameter(0)
  %e = f32[512,300] exp(%x)
  %z = f32[] constant(0)
  ROOT %r = f32[512] reduce(%e, %z), dimensions={1}, to_apply=%add
}
)";

// The f32 add and max combiners of the reduction tests below.
constexpr char kAddMax[] = R"(
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%max (c: f32[], d: f32[]) -> f32[] {
  %c = f32[] parameter(0)
  %d = f32[] parameter(1)
  ROOT %m = f32[] maximum(%c, %d)
}
)";

// Reductions that keep the innermost dim (a global average pool over NHWC, column sums) walk
// the operand in memory order (ir_emitter.cc, EmitColumnReductionBody): sum and max, plain
// and fused with their producers, with and without a pool.
TEST(CpuExecutableTest, ColumnReductionsMatchEvaluator) {
  const std::string kColumns = std::string("HloModule columns\n") + kAddMax + R"(

ENTRY %main (x: f32[2,33,17,40], y: f32[300,24]) -> (f32[2,40], f32[2,40], f32[24], f32[2,17,40]) {
  %x = f32[2,33,17,40] parameter(0)
  %y = f32[300,24] parameter(1)
  %zero = f32[] constant(0)
  %ninf = f32[] constant(-inf)
  %pool = f32[2,40] reduce(%x, %zero), dimensions={1,2}, to_apply=%add
  %e = f32[2,33,17,40] exp(%x)
  %emax = f32[2,40] reduce(%e, %ninf), dimensions={1,2}, to_apply=%max
  %t = f32[300,24] tanh(%y)
  %cols = f32[24] reduce(%t, %zero), dimensions={0}, to_apply=%add
  %mid = f32[2,17,40] reduce(%x, %ninf), dimensions={1}, to_apply=%max
  ROOT %r = (f32[2,40], f32[2,40], f32[24], f32[2,17,40]) tuple(%pool, %emax, %cols, %mid)
}
)";
  EXPECT_TRUE(RunAndCompare(kColumns, {1, 2}, testlib::ErrorSpec{1e-4, 1e-4}));
  ThreadPool pool(3);
  EXPECT_TRUE(RunAndCompare(kColumns, {3}, testlib::ErrorSpec{1e-4, 1e-4}, false, {}, &pool));
}

// Sibling reduce fusions compile to one multi-output kernel that matches the evaluator:
// row reductions (mean and mean of squares of a row) and column reductions (a pool's sum and
// max), on a pool and inline.
TEST(CpuExecutableTest, MultiOutputReductionsMatchEvaluator) {
  const std::string kSiblings = std::string("HloModule siblings\n") + kAddMax + R"(

ENTRY %main (x: f32[300,70], y: f32[1,24,20,48]) -> (f32[300], f32[300], f32[1,48], f32[1,48]) {
  %x = f32[300,70] parameter(0)
  %y = f32[1,24,20,48] parameter(1)
  %zero = f32[] constant(0)
  %ninf = f32[] constant(-inf)
  %sum = f32[300] reduce(%x, %zero), dimensions={1}, to_apply=%add
  %sq = f32[300,70] multiply(%x, %x)
  %sumsq = f32[300] reduce(%sq, %zero), dimensions={1}, to_apply=%add
  %e = f32[1,24,20,48] exp(%y)
  %pool = f32[1,48] reduce(%e, %zero), dimensions={1,2}, to_apply=%add
  %peak = f32[1,48] reduce(%y, %ninf), dimensions={1,2}, to_apply=%max
  ROOT %r = (f32[300], f32[300], f32[1,48], f32[1,48]) tuple(%sum, %sumsq, %pool, %peak)
}
)";
  auto exe = CompileCpu(kSiblings);
  ASSERT_TRUE(exe.ok()) << exe.status();
  int multi = 0;
  for (const hlo::Instruction* inst : (*exe)->module().entry()->instructions()) {
    multi += inst->opcode() == hlo::Opcode::kFusion && !inst->shape().IsArray();
  }
  EXPECT_EQ(multi, 2);
  EXPECT_EQ((*exe)->stats().num_kernels, 2);
  EXPECT_TRUE(RunAndCompare(kSiblings, {1, 2}, testlib::ErrorSpec{1e-4, 1e-4}));
  ThreadPool pool(3);
  EXPECT_TRUE(RunAndCompare(kSiblings, {3}, testlib::ErrorSpec{1e-4, 1e-4}, false, {}, &pool));
}

TEST(CpuExecutableTest, WrongArgumentShapeIsInvalidArgument) {
  auto exe = CompileCpu(kChain);
  ASSERT_TRUE(exe.ok()) << exe.status();
  Tensor good(DType::kFloat32, {300, 1000});
  auto r1 = (*exe)->Run({good, Tensor(DType::kFloat32, {300, 999})}, nullptr);
  EXPECT_EQ(r1.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r1.status().message()), HasSubstr("argument 1"));
  auto r2 = (*exe)->Run({good, Tensor(DType::kInt32, {300, 1000})}, nullptr);
  EXPECT_EQ(r2.status().code(), absl::StatusCode::kInvalidArgument);
  auto r3 = (*exe)->Run({good}, nullptr);
  EXPECT_EQ(r3.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r3.status().message()), HasSubstr("takes 2 arguments"));
}

TEST(CpuExecutableTest, UnsupportedOpcodeIsUnimplemented) {
  auto exe = CompileCpu(R"(HloModule cc

ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8] parameter(0)
  ROOT %c = f32[8] custom-call(%x), custom_call_target="no_such_target"
}
)");
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(exe.status().message()),
              HasSubstr("cpu backend: opcode 'custom-call' is not supported (instruction 'c')"));
}

TEST(CpuExecutableTest, ElementwiseChainFusesIntoOneKernel) {
  auto exe = CompileCpu(kChain);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().num_kernels, 1);
  EXPECT_GT((*exe)->stats().codegen_ms, 0.0);
  int fusions = 0;
  for (const hlo::Instruction* inst : (*exe)->module().entry()->instructions()) {
    fusions += inst->opcode() == hlo::Opcode::kFusion;
  }
  EXPECT_EQ(fusions, 1);
}

// Three conv + bias + tanh kernels alike but for their weights and biases (constants past the
// size the code generator inlines, so they are read through the buffer table), and one with
// another activation.
std::string AlikeKernelsModule() {
  std::string body, shapes, roots;
  for (int i = 0; i < 4; ++i) {
    // w[0][0][r][k] and b[k], different for every i.
    std::vector<std::string> rows, b;
    for (int r = 0; r < 16; ++r) {
      std::vector<std::string> row;
      for (int k = 0; k < 16; ++k) {
        row.push_back(absl::StrCat(0.01 * (((r * 16 + k) * 7 + i * 3) % 23) - 0.1));
      }
      rows.push_back("{" + absl::StrJoin(row, ", ") + "}");
    }
    for (int k = 0; k < 16; ++k) b.push_back(absl::StrCat(0.1 * ((k + i) % 5)));
    absl::StrAppend(&body, "  %w", i, " = f32[1,1,16,16] constant({{{", absl::StrJoin(rows, ", "));
    absl::StrAppend(&body, "}}})\n", "  %b", i, " = f32[16] constant({", absl::StrJoin(b, ", "),
                    "})\n", "  %c", i, " = f32[1,8,8,16] convolution(%x, %w", i,
                    "), window={size=1x1}, dim_labels=b01f_01io->b01f\n", "  %bb", i,
                    " = f32[1,8,8,16] broadcast(%b", i, "), dimensions={3}\n", "  %a", i,
                    " = f32[1,8,8,16] add(%c", i, ", %bb", i, ")\n", "  %y", i, " = f32[1,8,8,16] ",
                    i == 3 ? "exp" : "tanh", "(%a", i, ")\n");
    absl::StrAppend(&shapes, i > 0 ? ", " : "", "f32[1,8,8,16]");
    absl::StrAppend(&roots, i > 0 ? ", " : "", "%y", i);
  }
  return absl::StrCat("HloModule alike\n\nENTRY %main (x: f32[1,8,8,16]) -> (", shapes, ") {\n",
                      "  %x = f32[1,8,8,16] parameter(0)\n", body, "  ROOT %r = (", shapes,
                      ") tuple(", roots, ")\n}\n");
}

// The unoptimised LLVM IR (`.unoptimized.ll`) `hlo` compiles to with `options` (dumps on); a
// failure (and "") when it does not compile or writes no such file.
// With num_kernels >= 0, the compiled module must have that many kernels.
std::string UnoptimizedIr(const std::string& hlo, cpu::CpuBackendOptions options,
                          const std::string& name, int num_kernels = -1) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  options.dump_dir = dir;
  options.dump_pass_regex = "^$";
  auto exe = CompileCpu(hlo, options);
  if (!exe.ok()) {
    ADD_FAILURE() << exe.status();
    return "";
  }
  if (num_kernels >= 0) {
    EXPECT_EQ((*exe)->stats().num_kernels, num_kernels);
  }
  std::string ir;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (absl::EndsWith(entry.path().string(), ".unoptimized.ll")) {
      std::ifstream in(entry.path());
      ir.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  }
  if (ir.empty()) ADD_FAILURE() << "no unoptimized.ll in " << dir;
  return ir;
}

// Kernels whose bodies are the same but for the buffers they read are optimised and compiled
// once (llvm_ir::MergeIdenticalFunctions): what LLVM is given (the unoptimised IR dump) holds
// one body for the three alike kernels, and the results still match the evaluator.
TEST(CpuExecutableTest, AlikeKernelsShareOneBody) {
  const std::string hlo = AlikeKernelsModule();
  const std::string ir = UnoptimizedIr(hlo, {}, "alike_kernels", /*num_kernels=*/4);
  ASSERT_FALSE(ir.empty()) << "no unoptimized.ll";
  int bodies = 0;
  for (size_t at = ir.find("define "); at != std::string::npos; at = ir.find("define ", at + 1)) {
    const size_t line_end = ir.find('\n', at);
    if (ir.substr(at, line_end - at).find(".body(") != std::string::npos) ++bodies;
  }
  EXPECT_EQ(bodies, 2) << "the three tanh kernels share a body, the exp one has its own";
  EXPECT_TRUE(RunAndCompare(hlo, {1, 2}, {1e-5, 1e-5}));
}

// How many kernel bodies of `ir` carry LLVM's minsize attribute (through their attribute
// group, `define ... @kernel.N.body(...) #G {` and `attributes #G = { ... minsize ... }`).
int MinSizeBodies(const std::string& ir) {
  int count = 0;
  for (size_t at = ir.find("define "); at != std::string::npos; at = ir.find("define ", at + 1)) {
    const std::string line = ir.substr(at, ir.find('\n', at) - at);
    const size_t group = line.rfind(" #");
    if (line.find(".body(") == std::string::npos || group == std::string::npos) continue;
    const std::string id = line.substr(group + 1, line.find(' ', group + 1) - group - 1);
    const size_t attrs = ir.find("attributes " + id + " = {");
    if (attrs == std::string::npos) continue;
    if (ir.substr(attrs, ir.find('\n', attrs) - attrs).find("minsize") != std::string::npos) {
      ++count;
    }
  }
  return count;
}

// A small kernel run once (8 floats), a large one (1024), and a small one in a loop.
const char kSmallKernels[] = R"(HloModule small_kernels

%cond (s: (s32[], f32[8])) -> pred[] {
  %s = (s32[], f32[8]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (p: (s32[], f32[8])) -> (s32[], f32[8]) {
  %p = (s32[], f32[8]) parameter(0)
  %bi = s32[] get-tuple-element(%p), index=0
  %bx = f32[8] get-tuple-element(%p), index=1
  %one = s32[] constant(1)
  %next = s32[] add(%bi, %one)
  %t = f32[8] tanh(%bx)
  ROOT %r = (s32[], f32[8]) tuple(%next, %t)
}

ENTRY %main (x: f32[8], y: f32[1024]) -> (f32[8], f32[1024], f32[8]) {
  %x = f32[8] parameter(0)
  %y = f32[1024] parameter(1)
  %small = f32[8] exp(%x)
  %large = f32[1024] tanh(%y)
  %zero = s32[] constant(0)
  %init = (s32[], f32[8]) tuple(%zero, %x)
  %loop = (s32[], f32[8]) while(%init), condition=%cond, body=%body
  %looped = f32[8] get-tuple-element(%loop), index=1
  ROOT %out = (f32[8], f32[1024], f32[8]) tuple(%small, %large, %looped)
}
)";

// Kernels of at most small_kernel_elements elements outside loops are compiled for size
// (minsize: scalar code, a fraction of the LLVM time); the large kernel and the kernels of
// the loop are not. Results match the evaluator either way.
TEST(CpuExecutableTest, SmallKernelsOutsideLoopsCompileForSize) {
  cpu::CpuBackendOptions options;
  EXPECT_EQ(MinSizeBodies(UnoptimizedIr(kSmallKernels, options, "small_kernels")), 1)
      << "only the 8-element exponential outside the loop";
  options.small_kernel_elements = 0;
  EXPECT_EQ(MinSizeBodies(UnoptimizedIr(kSmallKernels, options, "small_kernels_off")), 0);
  options.small_kernel_elements = 4096;
  EXPECT_EQ(MinSizeBodies(UnoptimizedIr(kSmallKernels, options, "small_kernels_4096")), 2)
      << "the exponential and the 1024-element tanh";
  EXPECT_TRUE(RunAndCompare(kSmallKernels, {1, 2}, {1e-5, 1e-5}));
}

// A loop fusion whose 4096 elements are scaled by scalars computed from its operands: a
// hash of a u32 scalar (as a run-time RNG seed's key schedule) and the sum of a vector.
const char kHoistedScalars[] = R"(HloModule hoisted_scalars

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum_ab = f32[] add(%a, %b)
}

%fused (fx: f32[4096], fs: u32[], fv: f32[64]) -> f32[4096] {
  %fx = f32[4096] parameter(0)
  %fs = u32[] parameter(1)
  %fv = f32[64] parameter(2)
  %m = u32[] constant(2654435769)
  %k0 = u32[] multiply(%fs, %m)
  %sh = u32[] constant(13)
  %k1 = u32[] shift-right-logical(%k0, %sh)
  %k2 = u32[] xor(%k0, %k1)
  %kf = f32[] convert(%k2)
  %scale = f32[] constant(2.3283064e-10)
  %ks = f32[] multiply(%kf, %scale)
  %zero = f32[] constant(0)
  %sum = f32[] reduce(%fv, %zero), dimensions={0}, to_apply=%add
  %t = f32[] add(%ks, %sum)
  %tb = f32[4096] broadcast(%t), dimensions={}
  ROOT %y = f32[4096] multiply(%fx, %tb)
}

ENTRY %main (x: f32[4096], s: u32[], v: f32[64]) -> f32[4096] {
  %x = f32[4096] parameter(0)
  %s = u32[] parameter(1)
  %v = f32[64] parameter(2)
  ROOT %f = f32[4096] fusion(%x, %s, %v), kind=kLoop, calls=%fused
}
)";

// The kernel's rank-0 values are emitted once, in the body's entry block ahead of the output
// loop (ElementalEmitter::OpenHoistRegion), not per element: the hash's one xor sits in the
// entry block, and the 64-element reduce's loop runs before the kernel's. Results match the
// evaluator.
TEST(CpuExecutableTest, RankZeroValuesAreHoistedOutOfTheLoop) {
  const std::string ir = UnoptimizedIr(kHoistedScalars, {}, "hoisted_scalars", 1);
  ASSERT_FALSE(ir.empty());
  size_t body = std::string::npos;
  for (size_t at = ir.find("define "); at != std::string::npos; at = ir.find("define ", at + 1)) {
    if (ir.substr(at, ir.find('\n', at) - at).find(".body(") != std::string::npos) {
      body = at;
      break;
    }
  }
  ASSERT_NE(body, std::string::npos) << ir;
  const size_t entry = ir.find("\nentry:", body);
  ASSERT_NE(entry, std::string::npos);
  const std::string entry_block = ir.substr(entry, ir.find("\n\n", entry) - entry);
  const std::string function = ir.substr(body, ir.find("\n}\n", body) - body);
  EXPECT_NE(entry_block.find(" xor i32 "), std::string::npos) << entry_block;
  int xors = 0;
  for (size_t at = function.find(" xor i32 "); at != std::string::npos;
       at = function.find(" xor i32 ", at + 1)) {
    ++xors;
  }
  EXPECT_EQ(xors, 1) << function;
  EXPECT_TRUE(RunAndCompare(kHoistedScalars, {1, 2, 3}, {1e-5, 1e-5}));
  cpu::CpuBackendOptions serial;
  serial.parallel = false;
  EXPECT_TRUE(RunAndCompare(kHoistedScalars, {4}, {1e-5, 1e-5}, false, serial));
}

// A dot with a fused epilogue, then a loop whose body runs an elementwise kernel 5 times.
const char kProfiled[] = R"(HloModule profiled

%cond (s: (s32[], f32[64,32])) -> pred[] {
  %s = (s32[], f32[64,32]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(5)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (p: (s32[], f32[64,32])) -> (s32[], f32[64,32]) {
  %p = (s32[], f32[64,32]) parameter(0)
  %bi = s32[] get-tuple-element(%p), index=0
  %bx = f32[64,32] get-tuple-element(%p), index=1
  %one = s32[] constant(1)
  %next = s32[] add(%bi, %one)
  %t = f32[64,32] tanh(%bx)
  %half = f32[] constant(0.5)
  %hb = f32[64,32] broadcast(%half), dimensions={}
  %y = f32[64,32] multiply(%t, %hb)
  ROOT %r = (s32[], f32[64,32]) tuple(%next, %y)
}

ENTRY %main (x: f32[64,128], w: f32[128,32], b: f32[32]) -> f32[64,32] {
  %x = f32[64,128] parameter(0)
  %w = f32[128,32] parameter(1)
  %b = f32[32] parameter(2)
  %d = f32[64,32] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bb = f32[64,32] broadcast(%b), dimensions={1}
  %a = f32[64,32] add(%d, %bb)
  %zero = s32[] constant(0)
  %init = (s32[], f32[64,32]) tuple(%zero, %a)
  %loop = (s32[], f32[64,32]) while(%init), condition=%cond, body=%body
  ROOT %out = f32[64,32] get-tuple-element(%loop), index=1
}
)";

// RunProfiled: the same bits as Run, and one timing per kernel that ran, named by an
// instruction of the compiled module, with its ops, flops and call count.
TEST(CpuExecutableTest, ProfiledRunTimesEachKernel) {
  auto module = hlo::ParseAndVerifyModule(kProfiled);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Tensor> args;
  for (const hlo::Literal& l : testlib::RandomArgs(**module, 5)) args.push_back(l.tensor());
  auto exe = CompileCpu(kProfiled);
  ASSERT_TRUE(exe.ok()) << exe.status();
  auto plain = (*exe)->Run(args, nullptr);
  ASSERT_TRUE(plain.ok()) << plain.status();
  std::vector<backends::KernelTiming> kernels;
  auto profiled = (*exe)->RunProfiled(args, nullptr, &kernels);
  ASSERT_TRUE(profiled.ok()) << profiled.status();
  ASSERT_EQ(profiled->size(), 1u);
  EXPECT_EQ(std::memcmp((*profiled)[0].raw_data(), (*plain)[0].raw_data(), (*plain)[0].byte_size()),
            0);

  std::set<std::string> names;
  for (const hlo::Computation* c : (*exe)->module().computations()) {
    for (const hlo::Instruction* inst : c->instructions()) names.insert(inst->name());
  }
  const backends::KernelTiming* dot = nullptr;
  const backends::KernelTiming* tanh = nullptr;
  double total_ms = 0;
  for (const backends::KernelTiming& k : kernels) {
    EXPECT_TRUE(names.count(k.name)) << k.name << " is not an instruction of the module";
    EXPECT_GE(k.ms, 0.0) << k.name;
    EXPECT_GT(k.bytes, 0) << k.name;
    total_ms += k.ms;
    if (k.ops.find("dot") != std::string::npos) dot = &k;
    if (k.ops.find("tanh") != std::string::npos) tanh = &k;
  }
  EXPECT_GT(total_ms, 0.0);
  ASSERT_NE(dot, nullptr) << "no kernel computes the dot";
  EXPECT_EQ(dot->calls, 1);
  EXPECT_EQ(dot->flops, 2 * 64 * 32 * 128);
  EXPECT_NE(dot->ops.find("add"), std::string::npos) << dot->ops << ": the epilogue is fused";
  EXPECT_GE(dot->bytes, (64 * 128 + 128 * 32 + 32 + 64 * 32) * 4);
  ASSERT_NE(tanh, nullptr) << "no kernel computes the loop body's tanh";
  EXPECT_EQ(tanh->calls, 5);
  EXPECT_EQ(tanh->flops, 0);

  // Profiling again adds nothing to the first profile: counters are per run.
  std::vector<backends::KernelTiming> again;
  ASSERT_TRUE((*exe)->RunProfiled(args, nullptr, &again).ok());
  ASSERT_EQ(again.size(), kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) EXPECT_EQ(again[i].calls, kernels[i].calls);
}

// Runs `text` with and without a pool, in parallel and inline builds: all bits identical and
// equal to the evaluator within `spec`.
void CheckParallelMatchesInline(const char* text, testlib::ErrorSpec spec) {
  auto module = hlo::ParseAndVerifyModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<hlo::Literal> args = testlib::RandomArgs(**module, 7);
  auto expected = hlo::Evaluate(**module, args);
  ASSERT_TRUE(expected.ok()) << expected.status();
  cpu::CpuBackendOptions inline_options;
  inline_options.parallel = false;
  auto parallel_exe = CompileCpu(text);
  auto inline_exe = CompileCpu(text, inline_options);
  ASSERT_TRUE(parallel_exe.ok() && inline_exe.ok());
  ThreadPool pool(4);
  auto p = RunOnLiterals(**parallel_exe, args, &pool);
  auto q = RunOnLiterals(**inline_exe, args, &pool);
  auto r = RunOnLiterals(**parallel_exe, args, nullptr);
  ASSERT_TRUE(p.ok() && q.ok() && r.ok());
  EXPECT_TRUE(p->BitwiseEquals(*q));
  EXPECT_TRUE(p->BitwiseEquals(*r));
  EXPECT_TRUE(testlib::LiteralsNear(*expected, *p, spec)) << "seed=7\n" << text;
}

TEST(CpuExecutableTest, ParallelElementwiseMatchesInline) {
  CheckParallelMatchesInline(kChain, {1e-6, 1e-5});
}

TEST(CpuExecutableTest, ParallelReductionMatchesInline) {
  CheckParallelMatchesInline(kRowSum, {1e-3, 1e-5});
}

TEST(CpuExecutableTest, ConcurrentRunsGiveIdenticalResults) {
  auto module = hlo::ParseAndVerifyModule(kRowSum);
  ASSERT_TRUE(module.ok());
  std::vector<hlo::Literal> args = testlib::RandomArgs(**module, 3);
  auto exe = CompileCpu(kRowSum);
  ASSERT_TRUE(exe.ok()) << exe.status();
  auto reference = RunOnLiterals(**exe, args);
  ASSERT_TRUE(reference.ok());
  ThreadPool pool(2);
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        auto r = RunOnLiterals(**exe, args, t % 2 == 0 ? &pool : nullptr);
        if (!r.ok() || !r->BitwiseEquals(*reference)) ++mismatches[static_cast<size_t>(t)];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_THAT(mismatches, ::testing::Each(0));
}

TEST(CpuExecutableTest, OutputsDoNotAliasArguments) {
  auto exe = CompileCpu(
      "HloModule p\n\nENTRY %main (x: f32[3]) -> f32[3] {\n"
      "  ROOT %x = f32[3] parameter(0)\n}\n");
  ASSERT_TRUE(exe.ok()) << exe.status();
  Tensor x = Tensor::FromVector<float>(DType::kFloat32, {3}, {1, 2, 3});
  auto out = (*exe)->Run({x}, nullptr);
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE((*out)[0].SharesBufferWith(x));
  EXPECT_EQ((*out)[0].data<float>()[2], 3.0f);
}

TEST(CpuExecutableTest, IntegerDivisionEdgeCases) {
  auto exe = CompileCpu(
      "HloModule d\n\nENTRY %main (a: s32[4], b: s32[4]) -> s32[4] {\n"
      "  %a = s32[4] parameter(0)\n  %b = s32[4] parameter(1)\n"
      "  ROOT %r = s32[4] divide(%a, %b)\n}\n");
  ASSERT_TRUE(exe.ok()) << exe.status();
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  Tensor a = Tensor::FromVector<int32_t>(DType::kInt32, {4}, {7, kMin, -7, 5});
  Tensor b = Tensor::FromVector<int32_t>(DType::kInt32, {4}, {0, -1, 2, -1});
  auto out = (*exe)->Run({a, b}, nullptr);
  ASSERT_TRUE(out.ok());
  const int32_t* r = (*out)[0].data<int32_t>();
  EXPECT_EQ(r[0], -1);
  EXPECT_EQ(r[1], kMin);
  EXPECT_EQ(r[2], -3);
  EXPECT_EQ(r[3], -5);
}

TEST(CpuExecutableTest, MaximumPropagatesNan) {
  auto exe = CompileCpu(
      "HloModule m\n\nENTRY %main (a: f32[3], b: f32[3]) -> f32[3] {\n"
      "  %a = f32[3] parameter(0)\n  %b = f32[3] parameter(1)\n"
      "  ROOT %r = f32[3] maximum(%a, %b)\n}\n");
  ASSERT_TRUE(exe.ok()) << exe.status();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = Tensor::FromVector<float>(DType::kFloat32, {3}, {nan, 1, 2});
  Tensor b = Tensor::FromVector<float>(DType::kFloat32, {3}, {1, nan, 3});
  auto out = (*exe)->Run({a, b}, nullptr);
  ASSERT_TRUE(out.ok());
  const float* r = (*out)[0].data<float>();
  EXPECT_TRUE(std::isnan(r[0]));
  EXPECT_TRUE(std::isnan(r[1]));
  EXPECT_EQ(r[2], 3.0f);
}

}  // namespace
}  // namespace tfjit
