// Symbolic batch size (compiler/hlo/symbolic.h): a module built at several batch sizes becomes
// one module with symbolic dims; its text round-trips; specialized at any batch size it is the
// module built there; each kind of difference that cannot be symbolic is refused, naming it.
#include "compiler/hlo/symbolic.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"
#include "gtest/gtest.h"

namespace tfjit::hlo {
namespace {

// A module as a builder would make it at batch size b: `text` with {B}, {B-1}, {2B-1}, {4B},
// {BB} (b * b) and {B4} (dim 1 = b) replaced by their values.
std::string At(const std::string& text, int64_t b) {
  return absl::StrReplaceAll(text, {{"{B}", absl::StrCat(b)},
                                    {"{B-1}", absl::StrCat(b - 1)},
                                    {"{2B-1}", absl::StrCat(2 * b - 1)},
                                    {"{4B}", absl::StrCat(4 * b)},
                                    {"{BB}", absl::StrCat(b * b)}});
}

constexpr char kRows[] = R"(
HloModule rows

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(%a, %b)
}

ENTRY %main (x: f32[{B},4], y: f32[4]) -> (f32[{4B}], f32[4], f32[{B-1},2], f32[{B},2]) {
  %x = f32[{B},4] parameter(0)
  %y = f32[4] parameter(1)
  %yb = f32[{B},4] broadcast(%y), dimensions={1}
  %s = f32[{B},4] add(%x, %yb)
  %flat = f32[{4B}] reshape(%s)
  %tail = f32[{B-1},4] slice(%s), slice={[1:{B}:1], [0:4:1]}
  %cat = f32[{2B-1},4] concatenate(%s, %tail), dimensions={0}
  %zero = f32[] constant(0)
  %r = f32[4] reduce(%cat, %zero), dimensions={0}, to_apply=%add
  %i = s32[] constant(1)
  %j = s32[] constant(0)
  %ds = f32[{B-1},2] dynamic-slice(%s, %i, %j), dynamic_slice_sizes={{B-1},2}
  %idx = s32[2] constant({0, 2})
  %g = f32[{B},2] gather(%s, %idx), offset_dims={0}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=1, slice_sizes={{B},1}
  ROOT %t = (f32[{4B}], f32[4], f32[{B-1},2], f32[{B},2]) tuple(%flat, %r, %ds, %g)
}
)";

struct Probes {
  std::vector<std::unique_ptr<Module>> modules;
  std::vector<BatchProbe> probes;
};

// The modules `text_at(b)` for each of `batches`, parsed and verified.
Probes BuildEach(const std::function<std::string(int64_t)>& text_at,
                 const std::vector<int64_t>& batches) {
  Probes out;
  for (int64_t b : batches) {
    absl::StatusOr<std::unique_ptr<Module>> m = ParseAndVerifyModule(text_at(b));
    EXPECT_TRUE(m.ok()) << "batch " << b << ": " << m.status();
    if (!m.ok()) continue;
    out.probes.push_back({b, m->get()});
    out.modules.push_back(std::move(*m));
  }
  return out;
}

Probes Build(const std::string& text, const std::vector<int64_t>& batches) {
  return BuildEach([&](int64_t b) { return At(text, b); }, batches);
}

TEST(SymbolicTest, RowsBecomeOneModuleThatIsEveryBatchSize) {
  Probes p = Build(kRows, {1021, 1022, 2, 3});
  absl::StatusOr<std::unique_ptr<Module>> sym = Symbolize(p.probes);
  ASSERT_TRUE(sym.ok()) << sym.status();
  EXPECT_EQ((*sym)->batch_representative(), 1021);
  ASSERT_TRUE(VerifyModule(**sym).ok()) << VerifyModule(**sym);
  const std::string text = PrintModule(**sym);
  for (const char* want :
       {"%x = f32[?b,4] parameter(0)", "%y = f32[4] parameter(1)", "f32[4*?b] reshape(%s)",
        "f32[?b-1,4] slice(%s), slice={[1:?b:1], [0:4:1]}", "f32[2*?b-1,4] concatenate(%s, %tail)",
        "%r = f32[4] reduce(", "dynamic_slice_sizes={?b-1,2}", "slice_sizes={?b,1}",
        "(f32[4*?b], f32[4], f32[?b-1,2], f32[?b,2]) tuple("}) {
    EXPECT_TRUE(absl::StrContains(text, want)) << want << "\n" << text;
  }
  // The text round-trips.
  absl::StatusOr<std::unique_ptr<Module>> parsed = ParseAndVerifyModule(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(PrintModule(**parsed), text);
  // At every batch size it is the module built there (1 too: its empty arrays stay well formed).
  for (int64_t b : {1, 2, 5, 17, 64, 1021}) {
    SCOPED_TRACE(b);
    absl::StatusOr<std::unique_ptr<Module>> want = ParseAndVerifyModule(At(kRows, b));
    ASSERT_TRUE(want.ok()) << want.status();
    std::unique_ptr<Module> got = Specialize(**sym, b);
    EXPECT_EQ(got->batch_representative(), 0);
    EXPECT_TRUE(VerifyModule(*got).ok()) << VerifyModule(*got);
    EXPECT_EQ(PrintModule(*got), PrintModule(**want));
  }
  // Rebased, it is the same module held elsewhere: the same text, other dims().
  std::unique_ptr<Module> rebased = Rebase(**sym, 4099);
  EXPECT_EQ(rebased->batch_representative(), 4099);
  EXPECT_EQ(PrintModule(*rebased), text);
  EXPECT_EQ(rebased->entry()->parameter(0)->shape().dim(0), 4099);
  EXPECT_EQ((*sym)->entry()->parameter(0)->shape().dim(0), 1021);
}

// Each difference that cannot be a symbolic batch size is refused, and the message names the
// instruction and what differs.
TEST(SymbolicTest, RefusesWhatIsNotAffineInDimZero) {
  struct Case {
    const char* name;
    std::string text;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"dim1", R"(
HloModule m
ENTRY %main (x: f32[4,{B}]) -> f32[4,{B}] {
  ROOT %x = f32[4,{B}] parameter(0)
})",
       "%x: dim 1 is 1021 at batch 1021, 1022 at batch 1022"},
      {"square", R"(
HloModule m
ENTRY %main (x: f32[{B},{B}]) -> f32[{BB}] {
  %x = f32[{B},{B}] parameter(0)
  ROOT %r = f32[{BB}] reshape(%x)
})",
       "dim 1"},
      {"square_dim0", R"(
HloModule m
ENTRY %main (x: f32[{BB}]) -> f32[{BB}] {
  ROOT %x = f32[{BB}] parameter(0)
})",
       "%x: dim 0 is 1042441 at batch 1021, 1044484 at batch 1022"},
      {"constant", R"(
HloModule m
ENTRY %main (x: f32[{B}]) -> s32[] {
  %x = f32[{B}] parameter(0)
  ROOT %n = s32[] constant({B})
})",
       "%n: the constant's value depends on the batch size"},
      {"slice_start", R"(
HloModule m
ENTRY %main (x: f32[{B}]) -> f32[1] {
  %x = f32[{B}] parameter(0)
  ROOT %last = f32[1] slice(%x), slice={[{B-1}:{B}:1]}
})",
       "%last (slice): its attributes depend on the batch size"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Probes p = Build(c.text, {1021, 1022, 2});
    ASSERT_EQ(p.probes.size(), 3u);
    absl::StatusOr<std::unique_ptr<Module>> sym = Symbolize(p.probes);
    ASSERT_FALSE(sym.ok());
    EXPECT_EQ(sym.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(absl::StrContains(sym.status().message(), c.message)) << sym.status();
  }
}

// A dim that is affine at the large probes but not at the small ones (a builder that clamps:
// min(b, 8)) is refused; so are other structures at other sizes.
TEST(SymbolicTest, SmallProbesCatchClampsAndStructure) {
  auto clamp = [](int64_t b) {
    return absl::StrCat("HloModule m\nENTRY %main (x: f32[", b, "]) -> f32[",
                        std::min<int64_t>(b, 8), "] {\n  %x = f32[", b,
                        "] parameter(0)\n  ROOT %s = f32[", std::min<int64_t>(b, 8),
                        "] slice(%x), slice={[0:", std::min<int64_t>(b, 8), ":1]}\n}\n");
  };
  Probes p = BuildEach(clamp, {1021, 1022, 2, 3});
  ASSERT_EQ(p.probes.size(), 4u);
  absl::StatusOr<std::unique_ptr<Module>> sym = Symbolize(p.probes);
  ASSERT_FALSE(sym.ok());
  EXPECT_TRUE(absl::StrContains(sym.status().message(),
                                "%s: dim 0 is 8 at batch 1021, 8 at batch 1022, 2 at batch 2"))
      << sym.status();

  Probes two = Build(R"(
HloModule m
ENTRY %main (x: f32[{B}]) -> f32[{B}] {
  ROOT %x = f32[{B}] parameter(0)
})",
                     {1021, 1022});
  absl::StatusOr<std::unique_ptr<Module>> few = Symbolize(two.probes);
  EXPECT_EQ(few.status().code(), absl::StatusCode::kInvalidArgument) << few.status();
}

// Range(0, batch) folded to a constant is an iota along the symbolic dim 0; any other
// constant whose values depend on the batch size is refused (above).
TEST(SymbolicTest, AFoldedRangeBecomesAnIota) {
  auto text = [](int64_t b) {
    std::vector<std::string> values;
    for (int64_t i = 0; i < b; ++i) values.push_back(absl::StrCat(i));
    return absl::StrCat("HloModule m\nENTRY %main (x: s32[", b, "]) -> s32[", b, "] {\n  %x = s32[",
                        b, "] parameter(0)\n  %r = s32[", b, "] constant({",
                        absl::StrJoin(values, ", "), "})\n  ROOT %s = s32[", b,
                        "] add(%x, %r)\n}\n");
  };
  Probes p = BuildEach(text, {1021, 1022, 2, 3});
  ASSERT_EQ(p.probes.size(), 4u);
  absl::StatusOr<std::unique_ptr<Module>> sym = Symbolize(p.probes);
  ASSERT_TRUE(sym.ok()) << sym.status();
  const std::string printed = PrintModule(**sym);
  EXPECT_TRUE(absl::StrContains(printed, "%r = s32[?b] iota(), iota_dimension=0")) << printed;
  ASSERT_TRUE(VerifyModule(**sym).ok()) << VerifyModule(**sym);
  // Specialized, it is the module built at that size (the iota's values are the constant's).
  std::unique_ptr<Module> at5 = Specialize(**sym, 5);
  EXPECT_TRUE(absl::StrContains(PrintModule(*at5), "%r = s32[5] iota(), iota_dimension=0"));
}

TEST(SymbolicTest, ParserRefusesSymbolicDimsBeyondDimZero) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(
      "HloModule m\nENTRY %main (x: f32[4,?b]) -> f32[4,?b] {\n"
      "  ROOT %x = f32[4,?b] parameter(0)\n}\n");
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(absl::StrContains(m.status().message(), "only dim 0 is symbolic")) << m.status();
  absl::StatusOr<std::unique_ptr<Module>> zero = ParseModule(
      "HloModule m\nENTRY %main (x: f32[0*?b]) -> f32[0*?b] {\n"
      "  ROOT %x = f32[0*?b] parameter(0)\n}\n");
  ASSERT_FALSE(zero.ok());
  EXPECT_TRUE(absl::StrContains(zero.status().message(), "a factor >= 1 of ?b")) << zero.status();
}

// Run-time checks: a number in a check's message that follows the batch size becomes its
// extent ("{2*?b}"), which Specialize and Message(result, batch) give the value of; one that
// is not affine in the batch size is refused.
TEST(SymbolicTest, CheckMessagesAndDimensionSizesFollowTheBatch) {
  const std::string text = R"(
HloModule checks

ENTRY %main (x: f32[{2B},4]) -> (s32[], s64[2]) {
  %x = f32[{2B},4] parameter(0)
  %n = s32[] get-dimension-size(%x), dimensions={0}
  %c = s64[2] constant({-1, 0})
  ROOT %t = (s32[], s64[2]) tuple(%n, %c)
}
)";
  auto with_check = [&](int64_t b, const std::string& limit) {
    std::string t = At(text, b);
    t = absl::StrReplaceAll(t, {{"{2B}", absl::StrCat(2 * b)}});
    absl::StatusOr<std::unique_ptr<Module>> m = ParseAndVerifyModule(t);
    EXPECT_TRUE(m.ok()) << m.status();
    RuntimeCheck check;
    check.tf_node = "g";
    check.tf_op = "GatherV2";
    check.message_template = absl::StrCat("indices{pos} = {value} is not in [0, ", limit, ")");
    check.flat_position = false;
    check.position_dims = {2 * b, 3};
    (*m)->AddRuntimeCheck(check);
    return std::move(*m);
  };
  std::vector<std::unique_ptr<Module>> modules;
  std::vector<BatchProbe> probes;
  for (int64_t b : {1021, 1022, 2, 3}) {
    modules.push_back(with_check(b, absl::StrCat(2 * b)));
    probes.push_back({b, modules.back().get()});
  }
  absl::StatusOr<std::unique_ptr<Module>> sym = Symbolize(probes);
  ASSERT_TRUE(sym.ok()) << sym.status();
  ASSERT_EQ((*sym)->runtime_checks().size(), 1u);
  const RuntimeCheck& check = (*sym)->runtime_checks()[0];
  EXPECT_EQ(check.message_template, "indices{pos} = {value} is not in [0, {2*?b})");
  EXPECT_EQ(check.Message({4, 11}, 5), "indices[1,1] = 11 is not in [0, 10)");
  std::unique_ptr<Module> at7 = Specialize(**sym, 7);
  EXPECT_EQ(at7->runtime_checks()[0].message_template, "indices{pos} = {value} is not in [0, 14)");
  // get-dimension-size reads the symbolic dim (its value there is the evaluator's and the
  // emitters' business: tests/unit/backends).
  EXPECT_TRUE(absl::StrContains(PrintModule(**sym), "f32[2*?b,4] parameter(0)") &&
              absl::StrContains(PrintModule(**sym), "s32[] get-dimension-size(%x), dimensions={0}"))
      << PrintModule(**sym);
  EXPECT_EQ(SubstituteBatch("[0, {?b-1}) and {3*?b+2}, {pos}", 4), "[0, 3) and 14, {pos}");

  // b * b is not affine.
  std::vector<std::unique_ptr<Module>> squares;
  std::vector<BatchProbe> square_probes;
  for (int64_t b : {1021, 1022, 2, 3}) {
    squares.push_back(with_check(b, absl::StrCat(b * b)));
    square_probes.push_back({b, squares.back().get()});
  }
  absl::StatusOr<std::unique_ptr<Module>> refused = Symbolize(square_probes);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "not affine in the batch size"))
      << refused.status();
}

}  // namespace
}  // namespace tfjit::hlo
