// PTX emission (backends/gpu/ptx_emitter.h), checked without a GPU: the elemental kernels of
// fused modules compile to PTX for sm_80 and sm_90 that CUDA's ptxas accepts (skipped, with
// the reason, where ptxas is not installed), with one .entry per kernel; what is not compiled
// yet is UNIMPLEMENTED naming the instruction.
#include "backends/gpu/ptx_emitter.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/hlo/parser.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/standard_pipeline.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"

namespace tfjit::gpu {
namespace {

constexpr char kPtxas[] = "/usr/local/cuda/bin/ptxas";

// Parses `text` and runs the standard passes (fusion included).
std::unique_ptr<hlo::Module> Optimized(const std::string& text) {
  auto module = hlo::ParseAndVerifyModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return nullptr;
  passes::PassPipeline pipeline("test");
  passes::AddStandardPasses(pipeline, nullptr);
  absl::Status s = pipeline.Run(**module).status();
  EXPECT_TRUE(s.ok()) << s;
  return std::move(*module);
}

// ptxas -arch=`sm` on `ptx`: "" when it accepts it, else its output.
std::string RunPtxas(const std::string& ptx, const std::string& sm, const std::string& name) {
  const std::string path = testing::WriteTempFile(name + ".ptx", ptx);
  const std::string log = path + ".log";
  const std::string cmd =
      absl::StrCat(kPtxas, " -arch=", sm, " ", path, " -o /dev/null > ", log, " 2>&1");
  if (std::system(cmd.c_str()) == 0) return "";
  std::ifstream in(log);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct Case {
  const char* name;
  const char* hlo;
  int kernels;
};

const Case kCases[] = {
    {"f32_chain", R"(HloModule chain

ENTRY %main (x: f32[300,70], y: f32[300,70], b: f32[70]) -> f32[300,70] {
  %x = f32[300,70] parameter(0)
  %y = f32[300,70] parameter(1)
  %b = f32[70] parameter(2)
  %bb = f32[300,70] broadcast(%b), dimensions={1}
  %m = f32[300,70] multiply(%x, %y)
  %a = f32[300,70] add(%m, %bb)
  %c = pred[300,70] compare(%a, %y), direction=GT
  %s = f32[300,70] select(%c, %a, %y)
  %e = f32[300,70] exp(%s)
  ROOT %t = f32[300,70] tanh(%e)
}
)",
     1},
    {"s32_bits_and_convert", R"(HloModule ints

ENTRY %main (i: s32[1000], j: s32[1000]) -> (f32[1000], s32[37,27]) {
  %i = s32[1000] parameter(0)
  %j = s32[1000] parameter(1)
  %x = s32[1000] xor(%i, %j)
  %one = s32[] constant(3)
  %ob = s32[1000] broadcast(%one), dimensions={}
  %sh = s32[1000] shift-left(%x, %ob)
  %f = f32[1000] convert(%sh)
  %io = s32[37,27] iota(), iota_dimension=1
  %t = s32[27,37] transpose(%io), dimensions={1,0}
  %tt = s32[37,27] transpose(%t), dimensions={1,0}
  %m = s32[37,27] multiply(%io, %tt)
  ROOT %r = (f32[1000], s32[37,27]) tuple(%f, %m)
}
)",
     2},
    {"reductions_windows_gathers", R"(HloModule more

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[64,48], i: s32[5], k: f32[3,3,4,8], im: f32[1,12,12,4], st: s32[]) -> (f32[64], f32[48], f32[5,48], f32[64,64], f32[1,12,12,8], f32[1,6,6,4], f32[8,48], f32[66,50]) {
  %x = f32[64,48] parameter(0)
  %i = s32[5] parameter(1)
  %k = f32[3,3,4,8] parameter(2)
  %im = f32[1,12,12,4] parameter(3)
  %st = s32[] parameter(4)
  %zero = f32[] constant(0)
  %e = f32[64,48] exp(%x)
  %rows = f32[64] reduce(%e, %zero), dimensions={1}, to_apply=%add
  %cols = f32[48] reduce(%x, %zero), dimensions={0}, to_apply=%add
  %g = f32[5,48] gather(%x, %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,48}
  %d = f32[64,64] dot(%x, %x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %c = f32[1,12,12,8] convolution(%im, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  %w = f32[1,6,6,4] reduce-window(%im, %zero), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=%add
  %ds = f32[8,48] dynamic-slice(%x, %st, %st), dynamic_slice_sizes={8,48}
  %p = f32[66,50] pad(%x, %zero), padding=1_1x1_1
  ROOT %r = (f32[64], f32[48], f32[5,48], f32[64,64], f32[1,12,12,8], f32[1,6,6,4], f32[8,48], f32[66,50]) tuple(%rows, %cols, %g, %d, %c, %w, %ds, %p)
}
)",
     8},
};

class PtxTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PtxTest, ElementalKernelsPassPtxas) {
  const std::string sm = GetParam();
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<hlo::Module> module = Optimized(c.hlo);
    ASSERT_NE(module, nullptr);
    auto ptx = EmitPtx(*module, sm);
    ASSERT_TRUE(ptx.ok()) << ptx.status();
    EXPECT_EQ(static_cast<int>(ptx->kernels.size()), c.kernels);
    EXPECT_TRUE(absl::StrContains(ptx->ptx, absl::StrCat(".target ", sm))) << ptx->ptx;
    for (const PtxKernel& k : ptx->kernels) {
      EXPECT_TRUE(absl::StrContains(ptx->ptx, absl::StrCat(".entry ", k.name))) << k.name;
    }
    if (std::filesystem::exists(kPtxas)) {
      EXPECT_EQ(RunPtxas(ptx->ptx, sm, absl::StrCat(c.name, "_", sm)), "");
    }
  }
  if (!std::filesystem::exists(kPtxas)) {
    GTEST_SKIP() << kPtxas << " is not installed (the CUDA toolkit): the PTX was emitted and "
                 << "checked for its .entry and .target lines, not assembled";
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, PtxTest, ::testing::Values("sm_80", "sm_90"));

TEST(PtxErrorsTest, UnsupportedTargetsAndOpcodesAreNamed) {
  std::unique_ptr<hlo::Module> module = Optimized(kCases[0].hlo);
  ASSERT_NE(module, nullptr);
  auto bad_sm = EmitPtx(*module, "sm_35");
  EXPECT_EQ(bad_sm.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad_sm.status().message(), "sm_35"));
  // Control flow is not compiled to PTX yet.
  std::unique_ptr<hlo::Module> loop = Optimized(R"(HloModule w

%cond (cs: s32[]) -> pred[] {
  %cs = s32[] parameter(0)
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%cs, %n), direction=LT
}

%body (bs: s32[]) -> s32[] {
  %bs = s32[] parameter(0)
  %one = s32[] constant(1)
  ROOT %next = s32[] add(%bs, %one)
}

ENTRY %main (a: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  ROOT %w = s32[] while(%a), condition=%cond, body=%body
}
)");
  ASSERT_NE(loop, nullptr);
  auto r = EmitPtx(*loop, "sm_90");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "'while'")) << r.status();
}

// Math without an inline form (sine, power in f32 and f64) comes from CUDA's libdevice,
// linked in; without the file it is UNIMPLEMENTED saying so.
TEST(PtxLibdeviceTest, LibmMathLinksLibdevice) {
  std::unique_ptr<hlo::Module> module = Optimized(R"(HloModule s

ENTRY %main (a: f32[800], b: f64[800]) -> (f32[800], f64[800]) {
  %a = f32[800] parameter(0)
  %b = f64[800] parameter(1)
  %s = f32[800] sine(%a)
  %p = f32[800] power(%s, %a)
  %c = f64[800] cosine(%b)
  ROOT %r = (f32[800], f64[800]) tuple(%p, %c)
}
)");
  ASSERT_NE(module, nullptr);
  const char* env = std::getenv("TFJIT_LIBDEVICE");
  const std::string libdevice =
      env != nullptr ? env : "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
  auto ptx = EmitPtx(*module, "sm_90");
  if (!std::filesystem::exists(libdevice)) {
    EXPECT_EQ(ptx.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_TRUE(absl::StrContains(ptx.status().message(), "libdevice")) << ptx.status();
    GTEST_SKIP() << libdevice << " is not installed (the CUDA toolkit): the error was checked";
  }
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_FALSE(absl::StrContains(ptx->ptx, "__nv_sinf")) << "libdevice calls must be inlined";
  if (!std::filesystem::exists(kPtxas)) GTEST_SKIP() << kPtxas << " is not installed";
  EXPECT_EQ(RunPtxas(ptx->ptx, "sm_90", "libdevice_sm_90"), "");
}

}  // namespace
}  // namespace tfjit::gpu
