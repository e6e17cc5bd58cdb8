// AnalyzeRows (compiler/hlo/row_analysis.h): which symbolic modules keep batch rows apart, so
// that a bucket's padding rows cannot change the real ones. Each module is written by hand in
// the symbolic text form; the expectations follow from what each instruction does to rows.
#include "compiler/hlo/row_analysis.h"

#include <string>

#include "absl/strings/match.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "gtest/gtest.h"

namespace tfjit::hlo {
namespace {

RowAnalysis Analyze(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseAndVerifyModule(text);
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << text;
  if (!m.ok()) return {};
  return AnalyzeRows(**m);
}

constexpr char kReducers[] = R"(
%add (add.a: f32[], add.b: f32[]) -> f32[] {
  %add.a = f32[] parameter(0)
  %add.b = f32[] parameter(1)
  ROOT %add.r = f32[] add(%add.a, %add.b)
}

%addi (addi.a: s32[], addi.b: s32[]) -> s32[] {
  %addi.a = s32[] parameter(0)
  %addi.b = s32[] parameter(1)
  ROOT %addi.r = s32[] add(%addi.a, %addi.b)
}

%max (max.a: f32[], max.b: f32[]) -> f32[] {
  %max.a = f32[] parameter(0)
  %max.b = f32[] parameter(1)
  ROOT %max.r = f32[] maximum(%max.a, %max.b)
}
)";

std::string Module(const std::string& entry) {
  return std::string("HloModule rows\n") + kReducers + "\n" + entry;
}

// Inference layers keep rows apart: a dense layer with its bias, a softmax along each row,
// a convolution and pooling, a flattening reshape, an embedding lookup, a row-wise top-k is
// not here (custom calls are covered by the runtime tests). A weight returned as it is and a
// constant shaped like the batch are results too.
TEST(RowAnalysisTest, InferenceLayersKeepRowsApart) {
  const RowAnalysis dense = Analyze(Module(R"(
ENTRY %main (x: f32[?b,8], w: f32[8,4], bias: f32[4]) -> (f32[?b,4], f32[8,4], f32[?b,4]) {
  %x = f32[?b,8] parameter(0)
  %w = f32[8,4] parameter(1)
  %bias = f32[4] parameter(2)
  %d = f32[?b,4] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bb = f32[?b,4] broadcast(%bias), dimensions={1}
  %y = f32[?b,4] add(%d, %bb)
  %lo = f32[] constant(-inf)
  %mx = f32[?b] reduce(%y, %lo), dimensions={1}, to_apply=%max
  %mb = f32[?b,4] broadcast(%mx), dimensions={0}
  %shifted = f32[?b,4] subtract(%y, %mb)
  %e = f32[?b,4] exp(%shifted)
  %zero = f32[] constant(0)
  %s = f32[?b] reduce(%e, %zero), dimensions={1}, to_apply=%add
  %sb = f32[?b,4] broadcast(%s), dimensions={0}
  %p = f32[?b,4] divide(%e, %sb)
  %one = f32[] constant(1)
  %ones = f32[?b,4] broadcast(%one), dimensions={}
  ROOT %t = (f32[?b,4], f32[8,4], f32[?b,4]) tuple(%p, %w, %ones)
}
)"));
  EXPECT_TRUE(dense.independent) << dense.reason;
  EXPECT_EQ(dense.batch_results, (std::vector<bool>{true, false, true}));

  const RowAnalysis conv = Analyze(Module(R"(
ENTRY %main (x: f32[?b,6,6,3], k: f32[3,3,3,4], table: f32[10,5], ids: s32[?b,2]) -> (f32[?b,36], f32[?b,2,5]) {
  %x = f32[?b,6,6,3] parameter(0)
  %k = f32[3,3,3,4] parameter(1)
  %table = f32[10,5] parameter(2)
  %ids = s32[?b,2] parameter(3)
  %c = f32[?b,6,6,4] convolution(%x, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  %lo = f32[] constant(-inf)
  %pool = f32[?b,3,3,4] reduce-window(%c, %lo), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=%max
  %flat = f32[?b,36] reshape(%pool)
  %emb = f32[?b,2,5] gather(%table, %ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,5}
  ROOT %t = (f32[?b,36], f32[?b,2,5]) tuple(%flat, %emb)
}
)"));
  EXPECT_TRUE(conv.independent) << conv.reason;
  EXPECT_EQ(conv.batch_results, (std::vector<bool>{true, true}));
}

// What mixes rows is refused, naming the instruction: training-mode batch norm (a mean over the
// batch), a flattening of the batch into one dim, a slice or concatenation along it, a GEMM
// contracting over it, a gather that picks rows, a result that is one value for the batch.
TEST(RowAnalysisTest, MixingRowsIsRefusedNamingTheInstruction) {
  struct Case {
    const char* entry;
    const char* reason;
  };
  const Case cases[] = {
      {R"(
ENTRY %main (x: f32[?b,4]) -> f32[?b,4] {
  %x = f32[?b,4] parameter(0)
  %zero = f32[] constant(0)
  %sum = f32[4] reduce(%x, %zero), dimensions={0}, to_apply=%add
  %mean = f32[?b,4] broadcast(%sum), dimensions={1}
  ROOT %centered = f32[?b,4] subtract(%x, %mean)
}
)",
       "%sum reduces over the batch"},
      {R"(
ENTRY %main (x: f32[?b,4]) -> f32[4*?b] {
  %x = f32[?b,4] parameter(0)
  ROOT %flat = f32[4*?b] reshape(%x)
}
)",
       "%flat gives f32[4*?b]"},
      {R"(
ENTRY %main (x: f32[?b,4]) -> f32[?b-1,4] {
  %x = f32[?b,4] parameter(0)
  ROOT %tail = f32[?b-1,4] slice(%x), slice={[1:?b:1], [0:4:1]}
}
)",
       "%tail slices along the batch"},
      {R"(
ENTRY %main (x: f32[?b,4], y: f32[?b,4]) -> f32[2*?b,4] {
  %x = f32[?b,4] parameter(0)
  %y = f32[?b,4] parameter(1)
  ROOT %cat = f32[2*?b,4] concatenate(%x, %y), dimensions={0}
}
)",
       "%cat concatenates along the batch"},
      {R"(
ENTRY %main (x: f32[?b,4]) -> f32[4,4] {
  %x = f32[?b,4] parameter(0)
  ROOT %gram = f32[4,4] dot(%x, %x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
)",
       "%gram contracts over the batch"},
      {R"(
ENTRY %main (x: f32[?b,4], i: s32[2]) -> f32[2,4] {
  %x = f32[?b,4] parameter(0)
  %i = s32[2] parameter(1)
  ROOT %rows = f32[2,4] gather(%x, %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
}
)",
       "%rows gathers across the batch"},
      {R"(
ENTRY %main (x: f32[?b,4], w: f32[4,4]) -> (f32[?b,4], f32[]) {
  %x = f32[?b,4] parameter(0)
  %w = f32[4,4] parameter(1)
  %d = f32[?b,4] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %zero = f32[] constant(0)
  %loss = f32[] reduce(%d, %zero), dimensions={0,1}, to_apply=%add
  ROOT %t = (f32[?b,4], f32[]) tuple(%d, %loss)
}
)",
       "%loss reduces over the batch"},
      // A value shaped by the batch but computed from no input still sums to a multiple of it.
      {R"(
ENTRY %main (x: f32[?b,4]) -> f32[?b,4] {
  %x = f32[?b,4] parameter(0)
  %one = f32[] constant(1)
  %ones = f32[?b,4] broadcast(%one), dimensions={}
  %zero = f32[] constant(0)
  %count = f32[4] reduce(%ones, %zero), dimensions={0}, to_apply=%add
  %cb = f32[?b,4] broadcast(%count), dimensions={1}
  ROOT %scaled = f32[?b,4] divide(%x, %cb)
}
)",
       "%count reduces over the batch"},
      {R"(
ENTRY %main (x: s32[?b]) -> s32[?b] {
  %x = s32[?b] parameter(0)
  %rows = s32[?b] iota(), iota_dimension=0
  %zero = s32[] constant(0)
  %total = s32[] reduce(%rows, %zero), dimensions={0}, to_apply=%addi
  %tb = s32[?b] broadcast(%total), dimensions={}
  ROOT %shifted = s32[?b] add(%x, %tb)
}
)",
       "%total reduces over the batch"},
  };
  for (const Case& c : cases) {
    const RowAnalysis r = Analyze(Module(c.entry));
    EXPECT_FALSE(r.independent) << c.entry;
    EXPECT_TRUE(absl::StrContains(r.reason, c.reason)) << r.reason << "\n" << c.entry;
    EXPECT_TRUE(r.batch_results.empty());
  }
}

// A static module has no batch: not independent, and says so.
TEST(RowAnalysisTest, StaticModulesHaveNoBatch) {
  const RowAnalysis r = Analyze(Module(R"(
ENTRY %main (x: f32[3,4]) -> f32[3,4] {
  %x = f32[3,4] parameter(0)
  ROOT %n = f32[3,4] negate(%x)
}
)"));
  EXPECT_FALSE(r.independent);
  EXPECT_TRUE(absl::StrContains(r.reason, "no batch")) << r.reason;
}

}  // namespace
}  // namespace tfjit::hlo
