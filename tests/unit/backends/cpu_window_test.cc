// Differential tests of reduce-window on the CPU backend (elemental_window.cc) against the
// evaluator: pooling windows (SAME/VALID, strides 1 and 2, 3x3 and global 128x128), dilations,
// padding cells that contribute a non-identity init, empty inputs and several dtypes; and the
// prefix scans the backend computes by the runtime library's in-order scan (MatchScan).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/cpu/kernel_match.h"
#include "compiler/hlo/parser.h"
#include "gtest/gtest.h"
#include "tests/unit/backends/backend_test_util.h"

namespace tfjit {
namespace {

using testing_util::RunAndCompare;
using testing_util::ShapeStr;
using testlib::ErrorSpec;

constexpr ErrorSpec kExact{0, 0};
constexpr ErrorSpec kSum{1e-4, 1e-5};

struct Win {
  int64_t size = 1, stride = 1, lo = 0, hi = 0, lhs_dilate = 1, rhs_dilate = 1;
};

std::string Combiner(const std::string& name, const std::string& op, const std::string& t) {
  return absl::StrCat("%", name, " (a: ", t, "[], b: ", t, "[]) -> ", t, "[] {\n  %a = ", t,
                      "[] parameter(0)\n  %b = ", t, "[] parameter(1)\n  ROOT %c = ", t, "[] ", op,
                      "(%a, %b)\n}\n\n");
}

// The reduce-window output size (HLO.md; shape inference's rule).
int64_t OutSize(int64_t in, const Win& w) {
  const int64_t dilated = in == 0 ? 0 : (in - 1) * w.lhs_dilate + 1;
  const int64_t padded = dilated + w.lo + w.hi;
  const int64_t window = (w.size - 1) * w.rhs_dilate + 1;
  return padded < window ? 0 : (padded - window) / w.stride + 1;
}

// reduce-window of parameter 0 with `op` as combiner; init is a constant, or parameter 1
// when `init` is empty (so padding cells contribute a random, non-identity value).
std::string WindowModule(const std::string& t, const std::vector<int64_t>& in,
                         const std::vector<Win>& window, const std::string& op,
                         const std::string& init) {
  std::vector<int64_t> out;
  std::vector<std::string> size, stride, pad, lhs, rhs;
  for (size_t d = 0; d < in.size(); ++d) {
    const Win& w = window[d];
    out.push_back(OutSize(in[d], w));
    size.push_back(absl::StrCat(w.size));
    stride.push_back(absl::StrCat(w.stride));
    pad.push_back(absl::StrCat(w.lo, "_", w.hi));
    lhs.push_back(absl::StrCat(w.lhs_dilate));
    rhs.push_back(absl::StrCat(w.rhs_dilate));
  }
  const std::string s_in = ShapeStr(t, in), s_out = ShapeStr(t, out);
  const std::string sig =
      init.empty() ? absl::StrCat("x: ", s_in, ", i: ", t, "[]") : absl::StrCat("x: ", s_in);
  const std::string init_line = init.empty()
                                    ? absl::StrCat("  %i = ", t, "[] parameter(1)\n")
                                    : absl::StrCat("  %i = ", t, "[] constant(", init, ")\n");
  return absl::StrCat("HloModule m\n\n", Combiner("comb", op, t), "ENTRY %main (", sig, ") -> ",
                      s_out, " {\n", "  %x = ", s_in, " parameter(0)\n", init_line,
                      "  ROOT %r = ", s_out,
                      " reduce-window(%x, %i), window={size=", absl::StrJoin(size, "x"),
                      " stride=", absl::StrJoin(stride, "x"), " pad=", absl::StrJoin(pad, "x"),
                      " lhs_dilate=", absl::StrJoin(lhs, "x"),
                      " rhs_dilate=", absl::StrJoin(rhs, "x"), "}, to_apply=%comb\n}\n");
}

// NHWC pooling window: k x k, stride s, SAME (TF's low/high split) or VALID padding.
std::vector<Win> Pool(const std::vector<int64_t>& in, int64_t k, int64_t s, bool same) {
  std::vector<Win> w(4);
  for (int d = 1; d <= 2; ++d) {
    Win& x = w[static_cast<size_t>(d)];
    x.size = k;
    x.stride = s;
    if (same) {
      const int64_t out = (in[static_cast<size_t>(d)] + s - 1) / s;
      const int64_t need = std::max<int64_t>(0, (out - 1) * s + k - in[static_cast<size_t>(d)]);
      x.lo = need / 2;
      x.hi = need - need / 2;
    }
  }
  return w;
}

struct Case {
  std::string name;
  std::string hlo;
  ErrorSpec spec;
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  const std::vector<int64_t> nhwc = {2, 9, 10, 3};
  for (bool same : {true, false}) {
    for (int64_t s : {1, 2}) {
      const std::string tag = absl::StrCat(same ? "same" : "valid", "_s", s);
      cases.push_back({"max_3x3_" + tag,
                       WindowModule("f32", nhwc, Pool(nhwc, 3, s, same), "maximum", "-inf"),
                       kExact});
      cases.push_back(
          {"sum_3x3_" + tag, WindowModule("f32", nhwc, Pool(nhwc, 3, s, same), "add", "0"), kSum});
      cases.push_back({"max_s32_3x3_" + tag,
                       WindowModule("s32", nhwc, Pool(nhwc, 3, s, same), "maximum", "-2147483648"),
                       kExact});
    }
  }
  const std::vector<int64_t> big = {1, 128, 128, 2};
  cases.push_back({"max_global_128",
                   WindowModule("f32", big, Pool(big, 128, 1, false), "maximum", "-inf"), kExact});
  cases.push_back(
      {"sum_global_128_f64", WindowModule("f64", big, Pool(big, 128, 1, false), "add", "0"), kSum});
  cases.push_back({"sum_f16_2x2_s2",
                   WindowModule("f16", {1, 6, 7, 2}, Pool({1, 6, 7, 2}, 2, 2, true), "add", "0"),
                   ErrorSpec{1e-2, 1e-2}});
  // Padding cells take init: a random init parameter makes them count in a sum.
  cases.push_back(
      {"sum_padding_takes_init_1d", WindowModule("f32", {11}, {Win{4, 3, 2, 3}}, "add", ""), kSum});
  cases.push_back({"max_padding_takes_init_2d",
                   WindowModule("f32", {5, 4}, {Win{3, 1, 2, 2}, Win{2, 2, 1, 0}}, "maximum", ""),
                   kExact});
  // Dilations (generic reduce-window; pooling does not use them).
  cases.push_back(
      {"sum_lhs_dilate",
       WindowModule("f32", {6, 5}, {Win{3, 2, 1, 1, 2, 1}, Win{2, 1, 0, 0, 3, 1}}, "add", ""),
       kSum});
  cases.push_back({"max_rhs_dilate",
                   WindowModule("f32", {9, 8}, {Win{3, 1, 0, 0, 1, 2}, Win{2, 2, 1, 1, 1, 3}},
                                "maximum", "-inf"),
                   kExact});
  cases.push_back({"min_s64_rank3",
                   WindowModule("s64", {4, 5, 6}, {Win{2, 1}, Win{3, 2, 1, 1}, Win{1, 1}},
                                "minimum", "9223372036854775807"),
                   kExact});
  cases.push_back({"sum_empty_input",
                   WindowModule("f32", {0, 3}, {Win{1}, Win{2, 1, 1, 0}}, "add", ""), kExact});
  cases.push_back({"sum_all_padding_input_empty",
                   WindowModule("f32", {0}, {Win{2, 1, 2, 1}}, "add", ""), kSum});
  // Inclusive prefix scans (Cumsum, Cumprod): the runtime library's in-order scan (MatchScan).
  cases.push_back({"scan_sum_f32_last_axis",
                   WindowModule("f32", {5, 700}, {Win{1}, Win{700, 1, 699, 0}}, "add", "0"), kSum});
  cases.push_back(
      {"scan_prod_f64_outer_axis",
       WindowModule("f64", {40, 3, 4}, {Win{40, 1, 39, 0}, Win{1}, Win{1}}, "multiply", "1"),
       kSum});
  cases.push_back(
      {"scan_sum_s32_middle_axis",
       WindowModule("s32", {3, 500, 2}, {Win{1}, Win{500, 1, 499, 0}, Win{1}}, "add", "0"),
       kExact});
  cases.push_back({"scan_prod_s64_wraps",
                   WindowModule("s64", {2, 90}, {Win{1}, Win{90, 1, 89, 0}}, "multiply", "1"),
                   kExact});
  return cases;
}

class CpuWindowTest : public ::testing::TestWithParam<Case> {};

TEST_P(CpuWindowTest, MatchesEvaluator) {
  const Case& c = GetParam();
  EXPECT_TRUE(RunAndCompare(c.hlo, {1, 2, 3}, c.spec)) << c.hlo;
}

// Which reduce-windows the CPU backend computes as an in-order scan: the Cumsum/Cumprod form
// only (a window of the whole dim padded size - 1 low, init the combiner's identity).
TEST(CpuWindowScanTest, MatchScanTakesOnlyThePrefixScanForm) {
  auto scan = [](const std::string& hlo) -> std::optional<cpu::ScanShape> {
    auto m = hlo::ParseModule(hlo);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? cpu::MatchScan(*(*m)->entry()->root()) : std::nullopt;
  };
  const std::optional<cpu::ScanShape> s =
      scan(WindowModule("f32", {3, 500, 2}, {Win{1}, Win{500, 1, 499, 0}, Win{1}}, "add", "0"));
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->multiply);
  EXPECT_EQ(s->type, DType::kFloat32);
  EXPECT_EQ(s->outer, 3);
  EXPECT_EQ(s->n, 500);
  EXPECT_EQ(s->inner, 2);
  EXPECT_TRUE(scan(WindowModule("s64", {9}, {Win{9, 1, 8, 0}}, "multiply", "1")).has_value());
  // Not a prefix scan: a shorter window, a non-identity init, another combiner, a 16-bit type.
  EXPECT_FALSE(scan(WindowModule("f32", {9}, {Win{8, 1, 7, 0}}, "add", "0")).has_value());
  EXPECT_FALSE(scan(WindowModule("f32", {9}, {Win{9, 1, 8, 0}}, "add", "1")).has_value());
  EXPECT_FALSE(scan(WindowModule("f32", {9}, {Win{9, 1, 8, 0}}, "maximum", "0")).has_value());
  EXPECT_FALSE(scan(WindowModule("f16", {9}, {Win{9, 1, 8, 0}}, "add", "0")).has_value());
}

INSTANTIATE_TEST_SUITE_P(ReduceWindow, CpuWindowTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tfjit
