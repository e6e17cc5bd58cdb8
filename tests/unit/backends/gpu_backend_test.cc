// The GPU backend (backends/gpu/gpu_backend.h). Without a GPU (CI): the CUDA driver's absence
// and the toolkit's stub library are clean FAILED_PRECONDITIONs, programs are built (dots as
// cuBLAS GEMMs, kernels, buffers shared by liveness) and their PTX passes ptxas, and running
// one fails FAILED_PRECONDITION. With a GPU (scripts/gpu_check.sh): the differential suite runs
// on GPU:0 against the evaluator: random modules, GEMM shapes and the HLO corpus.
//
// TFJIT_GPU_SEEDS=N (default 200) chooses how many random modules run on a GPU.
#include "backends/gpu/gpu_backend.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "backends/gpu/cuda_driver.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/symbolic.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "tests/testlib/random_hlo.h"
#include "tests/testlib/random_literal.h"
#include "tests/testlib/temp_file.h"
#include "tests/unit/backends/backend_test_util.h"
#include "tests/unit/backends/gpu_program_emulator.h"

namespace tfjit::gpu {
namespace {

constexpr char kPtxas[] = "/usr/local/cuda/bin/ptxas";
constexpr char kStub[] = "/usr/local/cuda/lib64/stubs/libcuda.so";

bool HaveGpu(std::string* why) { return VisibleGpuCount(why) > 0; }

std::unique_ptr<backends::Backend> DeviceBackend() {
  auto backend = CreateGpuBackend();
  EXPECT_TRUE(backend.ok()) << backend.status();
  return backend.ok() ? std::move(*backend) : nullptr;
}

// GPU:0's backend when `gpu`, else one that builds programs for sm_90 without a device.
std::unique_ptr<backends::Backend> DeviceOrSm90(bool gpu) {
  if (gpu) return DeviceBackend();
  GpuBackendOptions options;
  options.sm = "sm_90";
  auto backend = CreateGpuBackend(options);
  return backend.ok() ? std::move(*backend) : nullptr;
}

// `program` run by the host emulator (gpu_program_emulator.h) on RandomArgs(seed) against
// the evaluator on `reference`, output i within specs[i] (the last spec for further outputs).
// `specialized`: a symbolic program's module at the instance's batch size
// (EmulateGpuProgram).
::testing::AssertionResult Emulated(const GpuProgram& program, const hlo::Module& reference,
                                    uint64_t seed, const std::vector<testlib::ErrorSpec>& specs,
                                    bool edge_values = false,
                                    const hlo::Module* specialized = nullptr) {
  std::vector<hlo::Literal> args = testlib::RandomArgs(reference, seed, edge_values);
  auto expected = hlo::Evaluate(reference, args);
  if (!expected.ok()) return ::testing::AssertionFailure() << "evaluator: " << expected.status();
  std::vector<Tensor> tensors;
  for (const hlo::Literal& a : args) tensors.push_back(a.tensor());
  auto actual = EmulateGpuProgram(program, tensors, specialized);
  if (!actual.ok()) return ::testing::AssertionFailure() << "emulator: " << actual.status();
  const bool tuple = expected->shape().IsTuple();
  for (size_t i = 0; i < actual->size(); ++i) {
    const hlo::Literal e = tuple ? expected->elements()[i] : *expected;
    const testlib::ErrorSpec spec = specs[std::min(i, specs.size() - 1)];
    ::testing::AssertionResult near =
        testlib::LiteralsNear(e, hlo::Literal::FromTensor((*actual)[i]), spec);
    if (!near) return near << " (output " << i << ", seed " << seed << ")";
  }
  return ::testing::AssertionSuccess();
}

// The differential check of one module: run on GPU:0 and compared with the evaluator where
// a GPU exists; elsewhere compiled into a program for sm_90 (so every module of the suite is
// checked to build here too, its program emulated on the host against the evaluator and its
// PTX passed through ptxas).
class GpuOrCompile {
 public:
  GpuOrCompile() : gpu_(HaveGpu(&why_)) {
    if (gpu_) {
      backend_ = DeviceBackend();
    } else {
      GpuBackendOptions options;
      options.sm = "sm_90";
      backend_ = std::move(*CreateGpuBackend(options));
    }
  }
  ::testing::AssertionResult Check(const std::string& hlo, testlib::ErrorSpec spec) {
    if (backend_ == nullptr) return ::testing::AssertionFailure() << "no backend";
    if (gpu_) return testing_util::RunAndCompareOn(*backend_, hlo, {1, 2}, spec);
    auto module = hlo::ParseAndVerifyModule(hlo);
    if (!module.ok()) return ::testing::AssertionFailure() << module.status() << "\n" << hlo;
    std::unique_ptr<hlo::Module> reference = (*module)->Clone();
    auto exe = backend_->Compile(std::move(*module));
    if (!exe.ok()) return ::testing::AssertionFailure() << exe.status() << "\n" << hlo;
    ++compiled_;
    // The program, run by the host emulator, gives the evaluator's results.
    const GpuProgram* program = ProgramOf(**exe);
    for (uint64_t seed : {1, 2}) {
      ::testing::AssertionResult same = Emulated(*program, *reference, seed, {spec});
      if (!same) return same << "\n" << hlo;
    }
    // Its PTX must pass ptxas.
    if (program->ptx.kernels.empty() || !std::filesystem::exists(kPtxas)) {
      return ::testing::AssertionSuccess();
    }
    const std::string path = testing::WriteTempFile("suite.ptx", program->ptx.ptx);
    const std::string cmd = absl::StrCat(kPtxas, " -arch=sm_90 ", path, " -o /dev/null");
    if (std::system(cmd.c_str()) != 0) {
      return ::testing::AssertionFailure() << "ptxas rejects the PTX of\n" << hlo;
    }
    return ::testing::AssertionSuccess();
  }
  // Call last: skips, saying why, when nothing ran.
  void SkipUnlessRun() {
    if (!gpu_) GTEST_SKIP() << compiled_ << " modules built into GPU programs; not run: " << why_;
  }

 private:
  std::string why_;
  bool gpu_;
  std::unique_ptr<backends::Backend> backend_;
  int compiled_ = 0;
};

TEST(CudaDriverTest, MissingDriverIsFailedPrecondition) {
  auto d = CudaDriver::Load("no_such_dir/libcuda.so.1");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(d.status().message(),
                                "no CUDA driver: cannot load "
                                "'no_such_dir/libcuda.so.1'"))
      << d.status();
  EXPECT_TRUE(absl::StrContains(d.status().message(), "TFJIT_LIBCUDA")) << d.status();
}

TEST(CudaDriverTest, TheToolkitsStubIsNotADriver) {
  if (!std::filesystem::exists(kStub)) GTEST_SKIP() << kStub << " is not installed";
  auto d = CudaDriver::Load(kStub);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition);
  // cuInit returns CUDA_ERROR_STUB_LIBRARY (34) from the stub.
  EXPECT_TRUE(absl::StrContains(d.status().message(), "(34) in cuInit")) << d.status();
  EXPECT_TRUE(absl::StrContains(d.status().message(), "stub library, not a driver")) << d.status();
}

TEST(CudaDriverTest, PtxTargets) {
  EXPECT_EQ(*PtxTargetFor(9, 0), "sm_90");
  EXPECT_EQ(*PtxTargetFor(10, 0), "sm_90");
  EXPECT_EQ(*PtxTargetFor(8, 6), "sm_80");
  EXPECT_EQ(PtxTargetFor(7, 5).status().code(), absl::StatusCode::kUnimplemented);
}

TEST(GpuBackendTest, TheDevicesTargetNeedsADevice) {
  std::string why;
  auto backend = CreateGpuBackend();
  if (HaveGpu(&why)) {
    EXPECT_TRUE(backend.ok()) << backend.status();
    return;
  }
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(backend.status().message(), why);
  GpuBackendOptions absent;
  absent.device_ordinal = 0;
  EXPECT_FALSE(CreateGpuBackend(absent).ok());
}

constexpr char kMlp[] = R"(HloModule mlp

ENTRY %main (x: f32[64,256], w1: f32[256,512], b1: f32[512], w2: f32[512,128]) -> f32[64,128] {
  %x = f32[64,256] parameter(0)
  %w1 = f32[256,512] parameter(1)
  %b1 = f32[512] parameter(2)
  %w2 = f32[512,128] parameter(3)
  %h = f32[64,512] dot(%x, %w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bb = f32[64,512] broadcast(%b1), dimensions={1}
  %hb = f32[64,512] add(%h, %bb)
  %r = f32[64,512] tanh(%hb)
  %o = f32[64,128] dot(%r, %w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %s = f32[64,128] multiply(%o, %o)
  ROOT %t = f32[64,128] exp(%s)
}
)";

// Without a device: the program of a two-layer MLP, its PTX through ptxas, and Run refused.
TEST(GpuProgramTest, DotsAreGemmsKernelsPassPtxasAndBuffersShare) {
  for (const char* sm : {"sm_80", "sm_90"}) {
    SCOPED_TRACE(sm);
    GpuBackendOptions options;
    options.sm = sm;
    auto backend = CreateGpuBackend(options);
    ASSERT_TRUE(backend.ok()) << backend.status();
    auto module = hlo::ParseAndVerifyModule(kMlp);
    ASSERT_TRUE(module.ok()) << module.status();
    auto exe = (*backend)->Compile(std::move(*module));
    ASSERT_TRUE(exe.ok()) << exe.status();
    const GpuProgram* program = ProgramOf(**exe);
    ASSERT_NE(program, nullptr);
    const std::string steps = program->Describe();
    // dot, fused bias+tanh, dot, fused square+exp.
    ASSERT_EQ(program->steps.size(), 4u) << steps;
    EXPECT_EQ(program->steps[0].kind, GpuStep::Kind::kGemm) << steps;
    EXPECT_EQ(program->steps[1].kind, GpuStep::Kind::kKernel) << steps;
    EXPECT_EQ(program->steps[2].kind, GpuStep::Kind::kGemm) << steps;
    EXPECT_EQ(program->steps[3].kind, GpuStep::Kind::kKernel) << steps;
    EXPECT_EQ(program->ptx.kernels.size(), 2u);
    EXPECT_EQ(program->steps[0].gemm.m, 64);
    EXPECT_EQ(program->steps[0].gemm.n, 512);
    EXPECT_EQ(program->steps[0].gemm.k, 256);
    // The first dot's result is dead once the bias kernel read it: the second dot's output
    // (or the last kernel's) reuses its bytes, so the arena is smaller than all buffers.
    EXPECT_LT(program->arena_bytes, program->arena_bytes_unshared) << steps;
    // No buffer a step reads overlaps the one it writes.
    for (const GpuStep& s : program->steps) {
      const GpuSlot& out = program->slots[static_cast<size_t>(s.output)];
      for (int o : s.operands) {
        const GpuSlot& in = program->slots[static_cast<size_t>(o)];
        if (in.kind != GpuSlot::Kind::kArena) continue;
        EXPECT_TRUE(in.offset + in.bytes <= out.offset || out.offset + out.bytes <= in.offset)
            << s.inst->name() << "\n"
            << steps;
      }
    }
    std::string why;
    if (!HaveGpu(&why)) {
      auto run =
          (*exe)->Run({Tensor(DType::kFloat32, {64, 256}), Tensor(DType::kFloat32, {256, 512}),
                       Tensor(DType::kFloat32, {512}), Tensor(DType::kFloat32, {512, 128})},
                      nullptr);
      ASSERT_FALSE(run.ok());
      EXPECT_EQ(run.status().code(), absl::StatusCode::kFailedPrecondition) << run.status();
    }
    if (!std::filesystem::exists(kPtxas)) continue;
    const std::string path =
        testing::WriteTempFile(absl::StrCat("mlp_", sm, ".ptx"), program->ptx.ptx);
    const std::string cmd = absl::StrCat(kPtxas, " -arch=", sm, " ", path, " -o /dev/null");
    EXPECT_EQ(std::system(cmd.c_str()), 0) << program->ptx.ptx;
  }
}

// Convolutions as cuBLAS computes them: 3x3 = the patches kernel then the GEMM (the patch
// matrix's buffer dies after it), 1x1 = the GEMM on the input, depthwise = one kernel.
TEST(GpuProgramTest, ConvolutionsArePatchesTimesFilter) {
  using testing_util::Conv2DModule;
  using testing_util::W;
  GpuBackendOptions options;
  options.sm = "sm_90";
  auto backend = CreateGpuBackend(options);
  ASSERT_TRUE(backend.ok());
  auto program_of = [&](const std::string& hlo) -> std::string {
    auto module = hlo::ParseAndVerifyModule(hlo);
    EXPECT_TRUE(module.ok()) << module.status();
    if (!module.ok()) return "";
    auto exe = (*backend)->Compile(std::move(*module));
    EXPECT_TRUE(exe.ok()) << exe.status();
    if (!exe.ok()) return "";
    const GpuProgram* p = ProgramOf(**exe);
    std::string kinds;
    for (const GpuStep& s : p->steps) {
      kinds += s.kind == GpuStep::Kind::kGemm
                   ? absl::StrCat("gemm(", s.gemm.m, "x", s.gemm.k, "x", s.gemm.n, ") ")
                   : absl::StrCat("kernel(", s.elements, ") ");
    }
    return kinds;
  };
  // 2 x 6 x 5 output pixels, 3 * 3 * 17 taps, 9 features.
  EXPECT_EQ(program_of(Conv2DModule("f32", 2, 6, 5, 17, W(3, 1, 1, 1), W(3, 1, 1, 1), 9)),
            "kernel(9180) gemm(60x153x9) ");
  EXPECT_EQ(program_of(Conv2DModule("f32", 2, 5, 6, 37, W(1), W(1), 11)), "gemm(60x37x11) ");
  EXPECT_EQ(program_of(Conv2DModule("f32", 1, 7, 8, 6, W(3, 1, 1, 1), W(3, 1, 1, 1), 6, 6)),
            "kernel(336) ");
}

// A while loop runs on the host: its condition's steps, the predicate read back, its body's
// steps and the copies of the new state; what the loop reads stays live across it.
TEST(GpuProgramTest, WhileLoopsRunTheirBodiesOnTheHost) {
  GpuBackendOptions options;
  options.sm = "sm_90";
  auto backend = CreateGpuBackend(options);
  ASSERT_TRUE(backend.ok());
  const std::filesystem::path path =
      std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "hlo" / "corpus" / "while_loop.hlo";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto module = hlo::ParseAndVerifyModule(text.str());
  ASSERT_TRUE(module.ok()) << module.status();
  auto exe = (*backend)->Compile(std::move(*module));
  ASSERT_TRUE(exe.ok()) << exe.status();
  const GpuProgram* program = ProgramOf(**exe);
  const std::string steps = program->Describe();
  int loops = 0;
  for (const GpuStep& s : program->steps) loops += s.kind == GpuStep::Kind::kWhile;
  EXPECT_EQ(loops, 1) << steps;
  EXPECT_TRUE(absl::StrContains(steps, "} while s")) << steps;
  EXPECT_TRUE(absl::StrContains(steps, "copy ")) << steps;
}

// Dynamic-update-slices write in place when nothing else reads their operand: a loop filling
// one row of its state per iteration updates the loop's buffer directly (no copy of the
// state), a chain of updates shares one buffer; an operand read elsewhere too (%e, read by
// tanh; %filled, an output) is copied.
constexpr char kRowsLoop[] = R"(HloModule rows

%cond (s: (s32[], f32[8,16], f32[16])) -> pred[] {
  %s = (s32[], f32[8,16], f32[16]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(8)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (t: (s32[], f32[8,16], f32[16])) -> (s32[], f32[8,16], f32[16]) {
  %t = (s32[], f32[8,16], f32[16]) parameter(0)
  %j = s32[] get-tuple-element(%t), index=0
  %m = f32[8,16] get-tuple-element(%t), index=1
  %v = f32[16] get-tuple-element(%t), index=2
  %one = s32[] constant(1)
  %j2 = s32[] add(%j, %one)
  %v2 = f32[16] multiply(%v, %v)
  %row = f32[1,16] reshape(%v2)
  %col0 = s32[] constant(0)
  %m2 = f32[8,16] dynamic-update-slice(%m, %row, %j, %col0)
  ROOT %r = (s32[], f32[8,16], f32[16]) tuple(%j2, %m2, %v2)
}

ENTRY %main (x: f32[16], z: f32[8,16], u: f32[2,4], k: s32[]) -> (f32[8,16], f32[8,16]) {
  %x = f32[16] parameter(0)
  %z = f32[8,16] parameter(1)
  %u = f32[2,4] parameter(2)
  %k = s32[] parameter(3)
  %zero = s32[] constant(0)
  %init = (s32[], f32[8,16], f32[16]) tuple(%zero, %z, %x)
  %w = (s32[], f32[8,16], f32[16]) while(%init), condition=%cond, body=%body
  %filled = f32[8,16] get-tuple-element(%w), index=1
  %e = f32[8,16] exp(%filled)
  %d1 = f32[8,16] dynamic-update-slice(%e, %u, %k, %k)
  %th = f32[8,16] tanh(%e)
  %d2 = f32[8,16] dynamic-update-slice(%th, %u, %zero, %k)
  %d3 = f32[8,16] dynamic-update-slice(%d2, %u, %k, %zero)
  %d5 = f32[8,16] dynamic-update-slice(%filled, %u, %k, %zero)
  %sum = f32[8,16] add(%d1, %d3)
  %sum2 = f32[8,16] add(%sum, %d5)
  ROOT %o = (f32[8,16], f32[8,16]) tuple(%sum2, %filled)
}
)";

TEST(GpuProgramTest, DynamicUpdateSlicesInPlace) {
  GpuBackendOptions options;
  options.sm = "sm_90";
  auto backend = CreateGpuBackend(options);
  ASSERT_TRUE(backend.ok());
  auto module = hlo::ParseAndVerifyModule(kRowsLoop);
  ASSERT_TRUE(module.ok()) << module.status();
  auto exe = (*backend)->Compile(std::move(*module));
  ASSERT_TRUE(exe.ok()) << exe.status();
  const std::string steps = ProgramOf(**exe)->Describe();
  // The loop's row update, d2 and d3.
  int in_place = 0;
  for (size_t at = steps.find("update "); at != std::string::npos;
       at = steps.find("update ", at + 1)) {
    ++in_place;
  }
  EXPECT_EQ(in_place, 3) << steps;
  // The loop body copies only the two small state elements, never the 8x16 buffer.
  EXPECT_EQ(steps.find("copy m2"), std::string::npos) << steps;
}

// A bias added along the last dim of a float32 GEMM's (or one-group convolution's) result,
// with nothing after it, joins the GEMM as cuBLASLt's bias epilogue: one step instead of a GEMM
// and a kernel. With an activation after the bias, the GEMM stays plain and one fused kernel
// applies both (cuBLASLt's ReLU and GELU do not promise HLO's NaN propagation and formula).
std::string DenseModule(const std::string& activation) {
  return absl::StrCat(
      R"(HloModule dense

ENTRY %main (x: f32[32,64], w: f32[64,48], b: f32[48]) -> f32[32,48] {
  %x = f32[32,64] parameter(0)
  %w = f32[64,48] parameter(1)
  %b = f32[48] parameter(2)
  %d = f32[32,48] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bb = f32[32,48] broadcast(%b), dimensions={1}
)",
      activation.empty() ? "  ROOT %y = f32[32,48] add(%d, %bb)\n"
                         : absl::StrCat("  %y = f32[32,48] add(%bb, %d)\n  %z = f32[] constant(0)\n"
                                        "  %zz = f32[32,48] broadcast(%z), dimensions={}\n"
                                        "  ROOT %a = f32[32,48] ",
                                        activation, "(%y, %zz)\n"),
      "}\n");
}

std::string ConvBiasModule() {
  return R"(HloModule convbias

ENTRY %main (x: f32[1,9,9,3], k: f32[3,3,3,8], b: f32[8]) -> f32[1,9,9,8] {
  %x = f32[1,9,9,3] parameter(0)
  %k = f32[3,3,3,8] parameter(1)
  %b = f32[8] parameter(2)
  %c = f32[1,9,9,8] convolution(%x, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  %bb = f32[1,9,9,8] broadcast(%b), dimensions={3}
  ROOT %y = f32[1,9,9,8] add(%c, %bb)
}
)";
}

TEST(GpuProgramTest, BiasJoinsTheGemmAsCublasLtEpilogue) {
  GpuBackendOptions options;
  options.sm = "sm_90";
  auto backend = CreateGpuBackend(options);
  ASSERT_TRUE(backend.ok());
  auto describe = [&](const std::string& hlo) -> std::string {
    auto module = hlo::ParseAndVerifyModule(hlo);
    EXPECT_TRUE(module.ok()) << module.status();
    if (!module.ok()) return "";
    auto exe = (*backend)->Compile(std::move(*module));
    EXPECT_TRUE(exe.ok()) << exe.status();
    return exe.ok() ? ProgramOf(**exe)->Describe() : "";
  };
  const std::string bias = describe(DenseModule(""));
  EXPECT_TRUE(absl::StartsWith(bias, "gemm ")) << bias;
  EXPECT_TRUE(absl::StrContains(bias, "+ bias s")) << bias;
  EXPECT_EQ(std::count(bias.begin(), bias.end(), '\n'), 1) << bias;
  const std::string relu = describe(DenseModule("maximum"));
  EXPECT_FALSE(absl::StrContains(relu, "+ bias")) << relu;
  EXPECT_EQ(std::count(relu.begin(), relu.end(), '\n'), 2) << relu;
  const std::string conv = describe(ConvBiasModule());
  EXPECT_TRUE(absl::StrContains(conv, "patches ")) << conv;
  EXPECT_TRUE(absl::StrContains(conv, "+ bias s")) << conv;
  EXPECT_EQ(std::count(conv.begin(), conv.end(), '\n'), 2) << conv;
}

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : fallback;
}

// Random modules: built into programs everywhere (PTX emitted for
// sm_90); run on GPU:0 and compared with the evaluator where a GPU exists.
TEST(GpuDifferentialTest, RandomModulesMatchTheEvaluator) {
  std::string why;
  const bool gpu = HaveGpu(&why);
  std::unique_ptr<backends::Backend> backend = DeviceOrSm90(gpu);
  ASSERT_NE(backend, nullptr);
  testlib::RandomHloOptions options;  // with while loops and conditionals
  const int seeds = gpu ? EnvInt("TFJIT_GPU_SEEDS", 200) : 60;
  int compiled = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    auto m = testlib::GenerateRandomHlo(static_cast<uint64_t>(seed), options);
    ASSERT_TRUE(m.ok()) << m.status();
    const std::string text = hlo::PrintModule(*m->module);
    if (!gpu) {
      auto parsed = hlo::ParseAndVerifyModule(text);
      ASSERT_TRUE(parsed.ok());
      auto exe = backend->Compile(std::move(*parsed));
      // What the GPU does not compile yet is UNIMPLEMENTED; nothing else may fail.
      if (!exe.ok()) {
        std::cerr << "seed " << seed << " not compiled: " << exe.status().message() << "\n";
        EXPECT_EQ(exe.status().code(), absl::StatusCode::kUnimplemented)
            << "seed " << seed << ": " << exe.status() << "\n"
            << text;
        continue;
      }
      ++compiled;
      std::vector<testlib::ErrorSpec> specs;
      for (const testlib::ValueBound& b : m->output_bounds) {
        specs.push_back(testing_util::SpecOf(b));
      }
      std::unique_ptr<hlo::Module> reference = *hlo::ParseAndVerifyModule(text);
      EXPECT_TRUE(Emulated(*ProgramOf(**exe), *reference, m->args_seed, specs, m->edge_values))
          << "seed " << seed << "\n"
          << text;
      continue;
    }
    std::vector<testlib::ErrorSpec> specs;
    for (const testlib::ValueBound& b : m->output_bounds) specs.push_back(testing_util::SpecOf(b));
    EXPECT_TRUE(testing_util::CompareOutputs(*backend, text, m->args_seed, m->edge_values, specs))
        << "seed " << seed << "\n"
        << text;
  }
  if (!gpu) {
    EXPECT_GT(compiled, seeds / 2);
    GTEST_SKIP() << compiled << " of " << seeds << " random modules compiled to GPU programs; "
                 << "not run: " << why;
  }
}

// Dots as cuBLAS computes them: transposes, batches, f64, and a dot cuBLAS does not take
// (integer) as a kernel.
TEST(GpuDifferentialTest, GemmShapes) {
  GpuOrCompile check;
  struct Dot {
    const char* type;
    std::vector<int64_t> lhs, rhs, out;
    const char* dims;
  };
  const Dot dots[] = {
      {"f32", {33, 70}, {70, 45}, {33, 45}, "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      {"f32", {70, 33}, {70, 45}, {33, 45}, "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
      {"f32", {33, 70}, {45, 70}, {33, 45}, "lhs_contracting_dims={1}, rhs_contracting_dims={1}"},
      {"f32", {70, 33}, {45, 70}, {33, 45}, "lhs_contracting_dims={0}, rhs_contracting_dims={1}"},
      {"f32",
       {3, 17, 20},
       {3, 20, 9},
       {3, 17, 9},
       "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
       "rhs_contracting_dims={1}"},
      {"f64", {16, 30}, {30, 8}, {16, 8}, "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      {"f32", {70}, {70, 45}, {45}, "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
      {"s32", {5, 7}, {7, 3}, {5, 3}, "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
  };
  EXPECT_TRUE(check.Check(DenseModule(""), {1e-4, 1e-4}));
  EXPECT_TRUE(check.Check(DenseModule("maximum"), {1e-4, 1e-4}));
  EXPECT_TRUE(check.Check(ConvBiasModule(), {1e-4, 1e-4}));
  for (const Dot& d : dots) {
    const std::string hlo = absl::StrCat(
        "HloModule dot\n\nENTRY %main (a: ", testing_util::ShapeStr(d.type, d.lhs),
        ", b: ", testing_util::ShapeStr(d.type, d.rhs), ") -> ",
        testing_util::ShapeStr(d.type, d.out), " {\n  %a = ", testing_util::ShapeStr(d.type, d.lhs),
        " parameter(0)\n  %b = ", testing_util::ShapeStr(d.type, d.rhs),
        " parameter(1)\n  ROOT %d = ", testing_util::ShapeStr(d.type, d.out), " dot(%a, %b), ",
        d.dims, "\n}\n");
    EXPECT_TRUE(check.Check(hlo, {1e-4, 1e-4}));
  }
  check.SkipUnlessRun();
}

// Reductions: rows of at least 32 elements take a warp each (shuffle trees), shorter rows
// and column reductions one thread per output; sums, maxima, f64, s32, empty rows.
TEST(GpuDifferentialTest, Reductions) {
  GpuOrCompile check;
  struct Reduce {
    const char* type;
    std::vector<int64_t> in;
    const char* dims;
    std::vector<int64_t> out;
    const char* op;   // add or maximum
    const char* pre;  // the elementwise op of x fused before the reduce
  };
  const Reduce cases[] = {
      {"f32", {64, 1000}, "1", {64}, "add", "exp(%x)"},
      {"f32", {3, 5, 40}, "1,2", {3}, "maximum", "negate(%x)"},
      {"f32", {300, 33}, "1", {300}, "add", "negate(%x)"},
      {"f64", {7, 4097}, "1", {7}, "add", "negate(%x)"},
      {"s32", {10, 100}, "1", {10}, "add", "negate(%x)"},
      {"f32", {10, 31}, "1", {10}, "add", "negate(%x)"},
      {"f32", {1000, 64}, "0", {64}, "add", "negate(%x)"},
      {"f32", {4, 0}, "1", {4}, "add", "negate(%x)"},
      {"f32", {1, 1048576}, "1", {1}, "maximum", "exp(%x)"},
  };
  for (const Reduce& c : cases) {
    const std::string in = testing_util::ShapeStr(c.type, c.in);
    const std::string out = testing_util::ShapeStr(c.type, c.out);
    const std::string scalar = absl::StrCat(c.type, "[]");
    const std::string hlo = absl::StrCat(
        "HloModule reduce\n\n%f (a: ", scalar, ", b: ", scalar, ") -> ", scalar,
        " {\n  %a = ", scalar, " parameter(0)\n  %b = ", scalar,
        " parameter(1)\n  ROOT %c = ", scalar, " ", c.op, "(%a, %b)\n}\n\nENTRY %main (x: ", in,
        ") -> ", out, " {\n  %x = ", in, " parameter(0)\n  %y = ", in, " ", c.pre,
        "\n  %z = ", scalar, " constant(0)\n  ROOT %r = ", out, " reduce(%y, %z), dimensions={",
        c.dims, "}, to_apply=%f\n}\n");
    EXPECT_TRUE(check.Check(hlo, {1e-3, 1e-4}));
  }
  check.SkipUnlessRun();
}

// Convolutions: one-group ones are a patches kernel plus a cuBLAS GEMM (pointwise ones the
// GEMM alone), grouped and depthwise ones elemental kernels; padding, strides, rhs and lhs
// dilation (transposed convolutions), batches, f64.
TEST(GpuDifferentialTest, Convolutions) {
  using testing_util::Conv2DModule;
  using testing_util::W;
  GpuOrCompile check;
  const std::string cases[] = {
      Conv2DModule("f32", 1, 7, 9, 3, W(3), W(3), 5),
      Conv2DModule("f32", 1, 8, 10, 4, W(3, 2, 0, 1), W(3, 2, 0, 1), 6),
      Conv2DModule("f32", 1, 13, 12, 2, W(5, 3, 2, 2), W(5, 3, 1, 2), 3),
      Conv2DModule("f32", 1, 9, 9, 3, W(3, 1, 2, 2, 1, 2), W(3, 1, 2, 2, 1, 2), 4),
      Conv2DModule("f32", 2, 5, 6, 37, W(1), W(1), 11),
      Conv2DModule("f32", 2, 6, 5, 17, W(3, 1, 1, 1), W(3, 1, 1, 1), 9),
      Conv2DModule("f32", 1, 7, 8, 6, W(3, 1, 1, 1), W(3, 1, 1, 1), 6, 6),
      Conv2DModule("f32", 1, 6, 6, 8, W(3, 1, 1, 1), W(3, 1, 1, 1), 6, 2),
      Conv2DModule("f32", 1, 4, 5, 3, W(3, 1, 1, 2, 2), W(3, 1, 1, 2, 2), 2),
      Conv2DModule("f64", 1, 7, 7, 3, W(3, 1, 1, 1), W(3, 1, 1, 1), 4),
      Conv2DModule("f32", 1, 56, 56, 32, W(3, 1, 1, 1), W(3, 1, 1, 1), 64),
  };
  for (const std::string& hlo : cases) EXPECT_TRUE(check.Check(hlo, {1e-4, 1e-4}));
  check.SkipUnlessRun();
}

// Control flow on the host: a loop whose body swaps two state elements (the new state reads
// the old), a loop inside a loop's body, and conditionals on a pred and on an s32 index
// (out of range: the last branch).
TEST(GpuDifferentialTest, ControlFlow) {
  GpuOrCompile check;
  const std::string swap = R"(HloModule swap

%cond (s: (s32[], f32[3], f32[3])) -> pred[] {
  %s_cond = (s32[], f32[3], f32[3]) parameter(0)
  %i_cond = s32[] get-tuple-element(%s_cond), index=0
  %n_cond = s32[] constant(5)
  ROOT %lt_cond = pred[] compare(%i_cond, %n_cond), direction=LT
}

%body (t: (s32[], f32[3], f32[3])) -> (s32[], f32[3], f32[3]) {
  %t_body = (s32[], f32[3], f32[3]) parameter(0)
  %i_body = s32[] get-tuple-element(%t_body), index=0
  %a_body = f32[3] get-tuple-element(%t_body), index=1
  %b_body = f32[3] get-tuple-element(%t_body), index=2
  %one_body = s32[] constant(1)
  %next_body = s32[] add(%i_body, %one_body)
  ROOT %r_body = (s32[], f32[3], f32[3]) tuple(%next_body, %b_body, %a_body)
}

ENTRY %main (x: f32[3], y: f32[3]) -> (f32[3], f32[3]) {
  %x_main = f32[3] parameter(0)
  %y_main = f32[3] parameter(1)
  %zero_main = s32[] constant(0)
  %init_main = (s32[], f32[3], f32[3]) tuple(%zero_main, %x_main, %y_main)
  %w_main = (s32[], f32[3], f32[3]) while(%init_main), condition=%cond, body=%body
  %a_main = f32[3] get-tuple-element(%w_main), index=1
  %b_main = f32[3] get-tuple-element(%w_main), index=2
  ROOT %o_main = (f32[3], f32[3]) tuple(%a_main, %b_main)
}
)";
  EXPECT_TRUE(check.Check(swap, {1e-6, 1e-6}));
  const std::string nested = R"(HloModule nested

%icond (s: (s32[], f32[2])) -> pred[] {
  %s_icond = (s32[], f32[2]) parameter(0)
  %j_icond = s32[] get-tuple-element(%s_icond), index=0
  %n_icond = s32[] constant(3)
  ROOT %lt_icond = pred[] compare(%j_icond, %n_icond), direction=LT
}

%ibody (t: (s32[], f32[2])) -> (s32[], f32[2]) {
  %t_ibody = (s32[], f32[2]) parameter(0)
  %j_ibody = s32[] get-tuple-element(%t_ibody), index=0
  %v_ibody = f32[2] get-tuple-element(%t_ibody), index=1
  %one_ibody = s32[] constant(1)
  %j2_ibody = s32[] add(%j_ibody, %one_ibody)
  %v2_ibody = f32[2] multiply(%v_ibody, %v_ibody)
  ROOT %r_ibody = (s32[], f32[2]) tuple(%j2_ibody, %v2_ibody)
}

%ocond (s: (s32[], f32[2])) -> pred[] {
  %s_ocond = (s32[], f32[2]) parameter(0)
  %i_ocond = s32[] get-tuple-element(%s_ocond), index=0
  %n_ocond = s32[] constant(2)
  ROOT %lt_ocond = pred[] compare(%i_ocond, %n_ocond), direction=LT
}

%obody (t: (s32[], f32[2])) -> (s32[], f32[2]) {
  %t_obody = (s32[], f32[2]) parameter(0)
  %i_obody = s32[] get-tuple-element(%t_obody), index=0
  %v_obody = f32[2] get-tuple-element(%t_obody), index=1
  %zero_obody = s32[] constant(0)
  %init_obody = (s32[], f32[2]) tuple(%zero_obody, %v_obody)
  %inner_obody = (s32[], f32[2]) while(%init_obody), condition=%icond, body=%ibody
  %w_obody = f32[2] get-tuple-element(%inner_obody), index=1
  %one_obody = s32[] constant(1)
  %i2_obody = s32[] add(%i_obody, %one_obody)
  %half_obody = f32[2] constant({0.5, 0.25})
  %w2_obody = f32[2] multiply(%w_obody, %half_obody)
  ROOT %r_obody = (s32[], f32[2]) tuple(%i2_obody, %w2_obody)
}

ENTRY %main (x: f32[2]) -> f32[2] {
  %x_main = f32[2] parameter(0)
  %zero_main = s32[] constant(0)
  %init_main = (s32[], f32[2]) tuple(%zero_main, %x_main)
  %w_main = (s32[], f32[2]) while(%init_main), condition=%ocond, body=%obody
  ROOT %v_main = f32[2] get-tuple-element(%w_main), index=1
}
)";
  EXPECT_TRUE(check.Check(nested, {1e-5, 1e-5}));
  EXPECT_TRUE(check.Check(kRowsLoop, {1e-5, 1e-5}));
  for (const char* index : {"pred[] parameter(1)", "s32[] parameter(1)"}) {
    const bool pred = absl::StartsWith(index, "pred");
    const std::string cond = absl::StrCat(
        R"(HloModule cond

%neg (a: f32[4]) -> f32[4] {
  %a = f32[4] parameter(0)
  ROOT %n = f32[4] negate(%a)
}

%exp (b: f32[4]) -> f32[4] {
  %b = f32[4] parameter(0)
  ROOT %e = f32[4] exp(%b)
}

%sq (c: f32[4]) -> f32[4] {
  %c = f32[4] parameter(0)
  ROOT %m = f32[4] multiply(%c, %c)
}

ENTRY %main (x: f32[4], k: )",
        pred ? "pred[]" : "s32[]", R"() -> f32[4] {
  %x = f32[4] parameter(0)
  %k = )",
        index, R"(
  ROOT %r = f32[4] conditional(%k, %x, %x)",
        pred ? "" : ", %x", R"(), branch_computations={%neg, %exp)", pred ? "" : ", %sq", R"(}
}
)");
    EXPECT_TRUE(check.Check(cond, {1e-5, 1e-5}));
  }
  check.SkipUnlessRun();
}

// Instructions that run on the host between device steps (their results must equal the CPU's
// bit for bit): top-k, the Philox normal fill, rng-bit-generator. The device steps around them
// are exact (a square, a negation): an exp there differs from the evaluator's by an ulp on a
// GPU (HLO.md's bound), which the first run on an H200 showed.
TEST(GpuDifferentialTest, HostSteps) {
  GpuOrCompile check;
  EXPECT_TRUE(check.Check(R"(HloModule topk

ENTRY %main (x: f32[4,50]) -> (f32[4,5], s32[4,5]) {
  %x = f32[4,50] parameter(0)
  %e = f32[4,50] multiply(%x, %x)
  %t = (f32[4,5], s32[4,5]) custom-call(%e), custom_call_target="tfjit.top_k"
  %v = f32[4,5] get-tuple-element(%t), index=0
  %i = s32[4,5] get-tuple-element(%t), index=1
  %n = f32[4,5] negate(%v)
  ROOT %r = (f32[4,5], s32[4,5]) tuple(%n, %i)
}
)",
                          {0, 0}));
  EXPECT_TRUE(check.Check(R"(HloModule fill

ENTRY %main (s: u64[3]) -> f32[33,31] {
  %s = u64[3] parameter(0)
  %f = f32[33,31] custom-call(%s), custom_call_target="tfjit.philox_random_normal"
  ROOT %a = f32[33,31] add(%f, %f)
}
)",
                          {0, 0}));
  EXPECT_TRUE(check.Check(R"(HloModule rng

ENTRY %main (s: u64[3]) -> (u64[3], u32[6]) {
  %s = u64[3] parameter(0)
  ROOT %r = (u64[3], u32[6]) rng-bit-generator(%s), algorithm=rng_philox
}
)",
                          {0, 0}));
  check.SkipUnlessRun();
}

// Scatter (TF's TensorScatterAdd / TensorScatterUpdate forms): rows picked by an index vector,
// windows outside the operand skipped, repeated indices combined in update order.
TEST(GpuDifferentialTest, Scatter) {
  GpuOrCompile check;
  // Add, and assignment (the combiner returns the update).
  for (const char* combiner : {"  ROOT %c = f32[] add(%a, %b)\n",
                               "  %z = f32[] constant(0)\n  ROOT %c = f32[] add(%b, %z)\n"}) {
    for (bool computed : {false, true}) {
      const std::string hlo = testing_util::ScatterModule(combiner, computed);
      EXPECT_TRUE(check.Check(hlo, {1e-5, 1e-5}));
    }
  }
  check.SkipUnlessRun();
}

// The HLO corpus modules (loops and conditionals run on the host), on GPU:0.
TEST(GpuDifferentialTest, Corpus) {
  GpuOrCompile check;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "hlo" / "corpus")) {
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_TRUE(check.Check(text.str(), {1e-4, 1e-4})) << entry.path();
  }
  check.SkipUnlessRun();
}

// `exe` run (on the device) against the evaluator on `reference`, on RandomArgs(seed).
::testing::AssertionResult RunMatches(const backends::Executable& exe, const hlo::Module& reference,
                                      uint64_t seed, testlib::ErrorSpec spec) {
  std::vector<hlo::Literal> args = testlib::RandomArgs(reference, seed, false);
  auto expected = hlo::Evaluate(reference, args);
  if (!expected.ok()) return ::testing::AssertionFailure() << "evaluator: " << expected.status();
  std::vector<Tensor> tensors;
  for (const hlo::Literal& a : args) tensors.push_back(a.tensor());
  auto actual = exe.Run(tensors, nullptr);
  if (!actual.ok()) return ::testing::AssertionFailure() << "run: " << actual.status();
  const bool tuple = expected->shape().IsTuple();
  for (size_t i = 0; i < actual->size(); ++i) {
    const hlo::Literal e = tuple ? expected->elements()[i] : *expected;
    ::testing::AssertionResult near =
        testlib::LiteralsNear(e, hlo::Literal::FromTensor((*actual)[i]), spec);
    if (!near) return near << " (output " << i << ")";
  }
  return ::testing::AssertionSuccess();
}

// A module as tf2hlo would build it at batch size b: `text` with {B}, {B-1} and {2B-1}
// replaced by their values.
std::string AtBatch(const std::string& text, int64_t b) {
  return absl::StrReplaceAll(text, {{"{B}", absl::StrCat(b)},
                                    {"{B-1}", absl::StrCat(b - 1)},
                                    {"{2B-1}", absl::StrCat(2 * b - 1)}});
}

// `text` compiled once for every batch size: built at the runtime's probe sizes
// (runtime/shape_policy.h) and given to CompileSymbolic.
absl::StatusOr<std::unique_ptr<backends::Executable>> CompileForEveryBatch(
    const backends::Backend& backend, const std::string& text) {
  std::vector<backends::BatchProbeModule> probes;
  for (int64_t b : {1021, 1022, 2, 3}) {
    TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> m,
                           hlo::ParseAndVerifyModule(AtBatch(text, b)));
    probes.push_back({b, std::move(m)});
  }
  return backend.CompileSymbolic(std::move(probes));
}

// A dense layer with its bias (cuBLASLt's epilogue) and ReLU, a reduction along each row (a
// warp per row), one across the batch, a slice and concatenation along it, and the batch size
// read with get-dimension-size.
constexpr char kSymbolicDense[] = R"(
HloModule symbolic_dense

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(%a, %b)
}

ENTRY %main (x: f32[{B},64], w: f32[64,48], bias: f32[48]) -> (f32[{B},48], f32[{B}], f32[48], f32[{2B-1},48], s32[]) {
  %x = f32[{B},64] parameter(0)
  %w = f32[64,48] parameter(1)
  %bias = f32[48] parameter(2)
  %d = f32[{B},48] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bb = f32[{B},48] broadcast(%bias), dimensions={1}
  %y = f32[{B},48] add(%d, %bb)
  %z = f32[] constant(0)
  %zz = f32[{B},48] broadcast(%z), dimensions={}
  %r = f32[{B},48] maximum(%y, %zz)
  %rows = f32[{B}] reduce(%r, %z), dimensions={1}, to_apply=%add
  %cols = f32[48] reduce(%r, %z), dimensions={0}, to_apply=%add
  %tail = f32[{B-1},48] slice(%r), slice={[1:{B}:1], [0:48:1]}
  %cat = f32[{2B-1},48] concatenate(%r, %tail), dimensions={0}
  %n = s32[] get-dimension-size(%x), dimensions={0}
  ROOT %t = (f32[{B},48], f32[{B}], f32[48], f32[{2B-1},48], s32[]) tuple(%r, %rows, %cols, %cat, %n)
}
)";

// A convolution (patches times filter), a GEMM batched along the batch, and a softmax.
constexpr char kSymbolicConv[] = R"(
HloModule symbolic_conv

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(%a, %b)
}

%max (c: f32[], d: f32[]) -> f32[] {
  %c = f32[] parameter(0)
  %d = f32[] parameter(1)
  ROOT %m = f32[] maximum(%c, %d)
}

ENTRY %main (x: f32[{B},9,9,3], k: f32[3,3,3,8], p: f32[{B},4,9], q: f32[{B},9,5]) -> (f32[{B},9,9,8], f32[{B},4,5]) {
  %x = f32[{B},9,9,3] parameter(0)
  %k = f32[3,3,3,8] parameter(1)
  %p = f32[{B},4,9] parameter(2)
  %q = f32[{B},9,5] parameter(3)
  %conv = f32[{B},9,9,8] convolution(%x, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  %pq = f32[{B},4,5] dot(%p, %q), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  %lo = f32[] constant(-inf)
  %mx = f32[{B},4] reduce(%pq, %lo), dimensions={2}, to_apply=%max
  %mb = f32[{B},4,5] broadcast(%mx), dimensions={0,1}
  %shifted = f32[{B},4,5] subtract(%pq, %mb)
  %e = f32[{B},4,5] exp(%shifted)
  %zero = f32[] constant(0)
  %s = f32[{B},4] reduce(%e, %zero), dimensions={2}, to_apply=%add
  %sb = f32[{B},4,5] broadcast(%s), dimensions={0,1}
  %sm = f32[{B},4,5] divide(%e, %sb)
  ROOT %t = (f32[{B},9,9,8], f32[{B},4,5]) tuple(%conv, %sm)
}
)";

// One GPU program for every batch size: built from the probes, its instance at each batch
// size is emulated (sizes, offsets and GEMM arguments checked against the module built at
// that size) and equals the evaluator's; its PTX passes ptxas; on a GPU it runs there.
TEST(GpuSymbolicTest, OneProgramServesEveryBatchSize) {
  std::string why;
  const bool gpu = HaveGpu(&why);
  std::unique_ptr<backends::Backend> backend = DeviceOrSm90(gpu);
  ASSERT_NE(backend, nullptr);
  ASSERT_TRUE(backend->compiles_symbolic());
  for (const char* text : {kSymbolicDense, kSymbolicConv}) {
    auto exe = CompileForEveryBatch(*backend, text);
    ASSERT_TRUE(exe.ok()) << exe.status() << "\n" << text;
    const GpuProgram* program = ProgramOf(**exe);
    ASSERT_NE(program, nullptr);
    EXPECT_EQ(program->batch_representative, 1021);
    EXPECT_GT(program->arena_bytes_per_row, 0);
    bool gemm = false;
    for (const GpuStep& step : program->steps) {
      gemm = gemm || step.kind == GpuStep::Kind::kGemm;
      if (step.kind == GpuStep::Kind::kGemm) {
        EXPECT_GT(step.gemm_per_row.m + step.gemm_per_row.batch, 0) << step.inst->name();
      }
    }
    EXPECT_TRUE(gemm) << program->Describe();
    if (std::filesystem::exists(kPtxas)) {
      const std::string path = testing::WriteTempFile("symbolic.ptx", program->ptx.ptx);
      const std::string cmd = absl::StrCat(kPtxas, " -arch=sm_90 ", path, " -o /dev/null");
      EXPECT_EQ(std::system(cmd.c_str()), 0) << "ptxas rejects the PTX of\n" << text;
    }
    // Below and above the representative batch size (1021).
    for (int64_t b : {2, 3, 5, 17, 64, 1100}) {
      auto reference = hlo::ParseAndVerifyModule(AtBatch(text, b));
      ASSERT_TRUE(reference.ok()) << reference.status();
      if (gpu) {
        EXPECT_TRUE(RunMatches(**exe, **reference, static_cast<uint64_t>(b), {1e-4, 1e-4}))
            << "batch " << b << "\n"
            << text;
        continue;
      }
      auto at = program->AtBatch(b);
      ASSERT_TRUE(at.ok()) << at.status();
      std::unique_ptr<hlo::Module> specialized = hlo::Specialize((*exe)->module(), b);
      EXPECT_TRUE(Emulated(*at, **reference, /*seed=*/static_cast<uint64_t>(b), {{1e-4, 1e-4}},
                           false, specialized.get()))
          << "batch " << b << "\n"
          << program->Describe();
    }
  }
  if (!gpu) GTEST_SKIP() << "symbolic programs built and emulated; not run: " << why;
}

// Code that depends on the batch size is refused, naming the instruction, so the runtime
// compiles that cluster per shape: a scatter's kernel loops over its updates' count, and a
// host step (the evaluator) works at its instruction's own shapes.
TEST(GpuSymbolicTest, BatchDependentCodeIsRefused) {
  GpuBackendOptions options;
  options.sm = "sm_90";
  auto backend = CreateGpuBackend(options);
  ASSERT_TRUE(backend.ok());
  const std::string scatter = R"(
HloModule symbolic_scatter

%combine (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = f32[] add(%a, %b)
}

ENTRY %main (x: f32[6,3], i: s32[{B}], u: f32[{B},3]) -> f32[6,3] {
  %x = f32[6,3] parameter(0)
  %i = s32[{B}] parameter(1)
  %u = f32[{B},3] parameter(2)
  ROOT %s = f32[6,3] scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%combine
}
)";
  auto exe = CompileForEveryBatch(**backend, scatter);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kFailedPrecondition) << exe.status();
  EXPECT_TRUE(absl::StrContains(exe.status().message(), "%s (kernel_0")) << exe.status().message();
  EXPECT_TRUE(absl::StrContains(exe.status().message(), "depends on the batch size"))
      << exe.status().message();
}

}  // namespace
}  // namespace tfjit::gpu
