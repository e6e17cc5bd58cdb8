// Differential tests of the CPU backend's convolution: f32/f64 NHWC convolutions run as calls
// into the runtime library (tfjit_cpu_conv2d_*, core/conv2d.h), other types and dim_labels
// through backends/llvm/elemental_conv.cc. HLO convolutions over padding, strides, rhs
// dilation (atrous), lhs dilation (transposed), feature groups (depthwise), batch 2, odd sizes
// and other dim_labels, compiled by the JIT and compared with the evaluator on seeded random
// inputs, also on a thread pool; bias, activation and residual epilogues fused into the
// convolution and dot calls (output fusions); constant weights packed once at compile time;
// plus one worked example with hand-computed values.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/hlo/module.h"
#include "core/thread_pool.h"
#include "gtest/gtest.h"
#include "tests/unit/backends/backend_test_util.h"

namespace tfjit {
namespace {

using testing_util::CompileCpu;
using testing_util::RunAndCompare;
using testing_util::RunOnLiterals;
using testing_util::ShapeStr;
using testlib::ErrorSpec;

constexpr ErrorSpec kConvSpec{1e-4, 1e-4};

using testing_util::Conv2DModule;
using testing_util::W;

struct Case {
  std::string name;
  std::string hlo;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> Cases() {
  std::vector<Case> cases;
  // VALID and SAME (pad 1_1) 3x3, odd sizes.
  cases.push_back({"valid_3x3", Conv2DModule("f32", 1, 7, 9, 3, W(3), W(3), 5)});
  cases.push_back({"same_3x3", Conv2DModule("f32", 1, 7, 9, 3, W(3, 1, 1, 1), W(3, 1, 1, 1), 5)});
  // Stride 2 with TF SAME's asymmetric padding (0 before, 1 after for even sizes).
  cases.push_back(
      {"stride2_same", Conv2DModule("f32", 1, 8, 10, 4, W(3, 2, 0, 1), W(3, 2, 0, 1), 6)});
  cases.push_back({"stride2_valid_odd", Conv2DModule("f32", 1, 9, 11, 3, W(3, 2), W(3, 2), 4)});
  cases.push_back(
      {"stride3_kernel5", Conv2DModule("f32", 1, 13, 12, 2, W(5, 3, 2, 2), W(5, 3, 1, 2), 3)});
  // Atrous (rhs dilation 2) with padding.
  cases.push_back(
      {"dilation2", Conv2DModule("f32", 1, 9, 9, 3, W(3, 1, 2, 2, 1, 2), W(3, 1, 2, 2, 1, 2), 4)});
  // Batch 2, 1x1 pointwise, many features (inner loop longer than a vector).
  cases.push_back({"batch2_pointwise", Conv2DModule("f32", 2, 5, 6, 37, W(1), W(1), 11)});
  cases.push_back(
      {"batch2_same", Conv2DModule("f32", 2, 6, 5, 17, W(3, 1, 1, 1), W(3, 1, 1, 1), 9)});
  // Depthwise: groups = channels, multiplier 1 and 2; and a grouped convolution.
  cases.push_back(
      {"depthwise_m1", Conv2DModule("f32", 1, 7, 8, 6, W(3, 1, 1, 1), W(3, 1, 1, 1), 6, 6)});
  cases.push_back({"depthwise_m2_stride2",
                   Conv2DModule("f32", 2, 9, 7, 5, W(3, 2, 1, 1), W(3, 2, 1, 1), 10, 5)});
  cases.push_back({"grouped", Conv2DModule("f32", 1, 6, 6, 8, W(3, 1, 1, 1), W(3, 1, 1, 1), 6, 2)});
  // Transposed convolutions: lhs dilation 2 with the padding a stride-2 SAME / VALID
  // Conv2DBackpropInput produces, and lhs + rhs dilation together.
  cases.push_back({"transposed_same_s2",
                   Conv2DModule("f32", 1, 4, 5, 3, W(3, 1, 1, 2, 2), W(3, 1, 1, 2, 2), 2)});
  cases.push_back({"transposed_valid_s2",
                   Conv2DModule("f32", 2, 3, 3, 4, W(3, 1, 2, 2, 2), W(3, 1, 2, 2, 2), 3)});
  cases.push_back({"transposed_dilated",
                   Conv2DModule("f32", 1, 4, 4, 2, W(2, 1, 1, 1, 3, 2), W(3, 2, 0, 3, 2, 1), 3)});
  // Negative padding crops the input.
  cases.push_back(
      {"negative_pad", Conv2DModule("f32", 1, 8, 8, 2, W(3, 1, -1, -2), W(2, 1, -2, 0), 3)});
  // Depthwise with rhs dilation, and a transposed depthwise (lhs dilation 2) with mult 2.
  cases.push_back({"depthwise_dilated", Conv2DModule("f32", 1, 9, 8, 4, W(3, 1, 2, 2, 1, 2),
                                                     W(3, 1, 2, 2, 1, 2), 4, 4)});
  cases.push_back({"depthwise_transposed_m2",
                   Conv2DModule("f32", 2, 4, 5, 3, W(3, 1, 1, 2, 2), W(3, 1, 1, 2, 2), 6, 3)});
  // Transposed stride 2 with a 4x4 kernel and many features; f64 depthwise.
  cases.push_back(
      {"transposed_s2_k4", Conv2DModule("f32", 1, 5, 4, 9, W(4, 1, 2, 2, 2), W(4, 1, 2, 2, 2), 7)});
  cases.push_back(
      {"f64_depthwise_m2", Conv2DModule("f64", 1, 6, 6, 3, W(3, 2, 1, 1), W(3, 2, 1, 1), 6, 3)});
  // Pointwise (the direct GEMM without gathering) and a pointwise with stride 2 (gathered).
  cases.push_back({"pointwise", Conv2DModule("f32", 1, 7, 5, 13, W(1), W(1), 6)});
  cases.push_back({"pointwise_stride2", Conv2DModule("f32", 1, 7, 5, 13, W(1, 2), W(1, 2), 6)});
  // Empty output (window larger than the input) and zero features.
  cases.push_back({"empty_output", Conv2DModule("f32", 1, 2, 2, 3, W(3), W(3), 4)});
  // Other element types: f64 exactly, f16 accumulating in f32, s32 wrapping.
  cases.push_back({"f64_same", Conv2DModule("f64", 1, 5, 6, 3, W(3, 1, 1, 1), W(3, 2, 1, 1), 4)});
  cases.push_back({"f16_valid", Conv2DModule("f16", 1, 5, 5, 3, W(2), W(2), 2)});
  cases.push_back({"s32_same", Conv2DModule("s32", 1, 5, 5, 3, W(3, 1, 1, 1), W(3, 1, 1, 1), 2)});
  // A 1-D convolution with other dim_labels: f0b input, o0i kernel, 0bf output.
  cases.push_back({"labels_1d",
                   "HloModule conv\n\nENTRY %main (x: f32[5,9,2], k: f32[3,3,5]) -> "
                   "f32[8,2,3] {\n  %x = f32[5,9,2] parameter(0)\n  %k = f32[3,3,5] "
                   "parameter(1)\n  ROOT %c = f32[8,2,3] convolution(%x, %k), "
                   "window={size=3 pad=0_1}, dim_labels=f0b_o0i->0bf\n}\n"});
  return cases;
}

class CpuConvTest : public ::testing::TestWithParam<Case> {};

TEST_P(CpuConvTest, MatchesEvaluator) {
  EXPECT_TRUE(RunAndCompare(GetParam().hlo, {1, 2}, kConvSpec)) << GetParam().hlo;
}

INSTANTIATE_TEST_SUITE_P(Conv, CpuConvTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// Large enough to be split across threads (batch 4 partitions); same result as inline.
TEST(CpuConvParallelTest, ThreadedKernelMatchesEvaluator) {
  ThreadPool pool(4);
  cpu::CpuBackendOptions options;
  options.parallel_min_elements = 1024;
  EXPECT_TRUE(RunAndCompare(Conv2DModule("f32", 4, 16, 16, 8, W(3, 1, 1, 1), W(3, 1, 1, 1), 8), {7},
                            kConvSpec, false, options, &pool));
}

// Large enough that the runtime's convolution splits into several chunks (patch GEMM) or
// image rows (depthwise) on the pool; every kind compared with the evaluator.
TEST(CpuConvParallelTest, LibraryCallsOnPoolMatchEvaluator) {
  ThreadPool pool(4);
  const std::vector<std::string> modules = {
      Conv2DModule("f32", 1, 40, 40, 16, W(3, 1, 1, 1), W(3, 1, 1, 1), 24),
      Conv2DModule("f32", 1, 33, 35, 16, W(3, 2, 0, 1), W(3, 2, 0, 1), 8),
      Conv2DModule("f32", 1, 48, 48, 40, W(1), W(1), 16),
      Conv2DModule("f32", 2, 31, 29, 24, W(3, 1, 1, 1), W(3, 1, 1, 1), 24, 24),
      Conv2DModule("f32", 1, 20, 20, 32, W(3, 1, 1, 2, 2), W(3, 1, 1, 2, 2), 16),
      Conv2DModule("f64", 1, 30, 30, 8, W(3, 1, 1, 1), W(3, 1, 1, 1), 12, 4),
  };
  for (const std::string& hlo : modules) {
    EXPECT_TRUE(RunAndCompare(hlo, {3}, kConvSpec, false, {}, &pool)) << hlo;
  }
}

// ---- Output fusions: bias, activation and residual epilogues run by the library call. ----

// `conv` (a Conv2DModule or a dot module whose root is `%c`) with an epilogue over `%c`:
// bias b[out_c] added along the last dim, then the activation `act`:
//   relu, relu6, swish (c * logistic(c), the hero's value read twice), residual (+ %x, the
//   hero's own input, then relu; out shape = x shape).
std::string WithEpilogue(std::string hlo, const std::string& type, int64_t out_c, int64_t rank,
                         const std::string& act) {
  const size_t root = hlo.find("  ROOT %c = ");
  const size_t shape_begin = root + 12;
  const std::string ys = hlo.substr(shape_begin, hlo.find(' ', shape_begin) - shape_begin);
  hlo.replace(root, 12, "  %c = ");
  const std::string bs = ShapeStr(type, {out_c});
  hlo.replace(hlo.find(") -> "), 5, absl::StrCat(", b: ", bs, ") -> "));
  const size_t body = hlo.find("{\n") + 2;
  hlo.insert(body, absl::StrCat("  %b = ", bs, " parameter(2)\n"));
  auto line = [&](const std::string& name, const std::string& op) {
    return absl::StrCat("  ", name, " = ", ys, " ", op, "\n");
  };
  std::string e = line("%bb", absl::StrCat("broadcast(%b), dimensions={", rank - 1, "}"));
  e += line("%a", "add(%c, %bb)");
  e += absl::StrCat("  %zero = ", type, "[] constant(0)\n  %six = ", type, "[] constant(6)\n");
  e += line("%zb", "broadcast(%zero), dimensions={}");
  e += line("%sb", "broadcast(%six), dimensions={}");
  if (act == "relu") {
    e += line("ROOT %r", "maximum(%a, %zb)");
  } else if (act == "relu6") {
    e += line("%m", "maximum(%a, %zb)") + line("ROOT %r", "minimum(%m, %sb)");
  } else if (act == "swish") {
    e += line("%s", "logistic(%a)") + line("ROOT %r", "multiply(%a, %s)");
  } else {  // residual
    e += line("%res", "add(%a, %x)") + line("ROOT %r", "maximum(%res, %zb)");
  }
  hlo.insert(hlo.rfind("}"), e);
  return hlo;
}

std::string DotModule(const std::string& type, const std::vector<int64_t>& lhs,
                      const std::vector<int64_t>& rhs, const std::vector<int64_t>& out,
                      const std::string& dims) {
  const std::string ls = ShapeStr(type, lhs), rs = ShapeStr(type, rhs), ys = ShapeStr(type, out);
  return absl::StrCat("HloModule dot\n\nENTRY %main (x: ", ls, ", k: ", rs, ") -> ", ys,
                      " {\n  %x = ", ls, " parameter(0)\n  %k = ", rs, " parameter(1)\n",
                      "  ROOT %c = ", ys, " dot(%x, %k), ", dims, "\n}\n");
}

std::vector<Case> EpilogueCases() {
  const std::string mm = "lhs_contracting_dims={1}, rhs_contracting_dims={0}";
  const std::string bmm =
      "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}";
  return {
      {"conv3x3_bias_relu",
       WithEpilogue(Conv2DModule("f32", 1, 9, 9, 8, W(3, 1, 1, 1), W(3, 1, 1, 1), 16), "f32", 16, 4,
                    "relu")},
      {"conv3x3_many_chunks",
       WithEpilogue(Conv2DModule("f32", 1, 40, 40, 32, W(3, 1, 1, 1), W(3, 1, 1, 1), 48), "f32", 48,
                    4, "relu6")},
      {"depthwise_stride2_swish",
       WithEpilogue(Conv2DModule("f32", 1, 13, 13, 32, W(3, 2, 1, 1), W(3, 2, 1, 1), 32, 32), "f32",
                    32, 4, "swish")},
      {"depthwise_multiplier2_relu",
       WithEpilogue(Conv2DModule("f32", 2, 7, 7, 8, W(3, 1, 1, 1), W(3, 1, 1, 1), 16, 8), "f32", 16,
                    4, "relu")},
      {"pointwise_column_split_relu6",
       WithEpilogue(Conv2DModule("f32", 1, 4, 4, 64, W(1), W(1), 256), "f32", 256, 4, "relu6")},
      {"grouped_relu",
       WithEpilogue(Conv2DModule("f32", 1, 10, 10, 8, W(3, 1, 1, 1), W(3, 1, 1, 1), 12, 2), "f32",
                    12, 4, "relu")},
      {"pointwise_residual",
       WithEpilogue(Conv2DModule("f32", 1, 7, 7, 16, W(1), W(1), 16), "f32", 16, 4, "residual")},
      {"conv_f64_swish",
       WithEpilogue(Conv2DModule("f64", 2, 6, 6, 4, W(3, 1, 1, 1), W(3, 1, 1, 1), 6), "f64", 6, 4,
                    "swish")},
      {"dot_bias_relu6",
       WithEpilogue(DotModule("f32", {200, 64}, {64, 96}, {200, 96}, mm), "f32", 96, 2, "relu6")},
      {"batched_dot_swish",
       WithEpilogue(DotModule("f32", {3, 70, 40}, {3, 40, 50}, {3, 70, 50}, bmm), "f32", 50, 3,
                    "swish")},
      {"dot_transposed_rhs_relu",
       WithEpilogue(DotModule("f32", {50, 40}, {30, 40}, {50, 30},
                              "lhs_contracting_dims={1}, rhs_contracting_dims={1}"),
                    "f32", 30, 2, "relu")},
      {"batched_vector_dot_relu",
       WithEpilogue(DotModule("f64", {3, 40}, {3, 40, 50}, {3, 50},
                              "lhs_batch_dims={0}, rhs_batch_dims={0}, "
                              "lhs_contracting_dims={1}, rhs_contracting_dims={1}"),
                    "f64", 50, 2, "relu")},
  };
}

class CpuEpilogueTest : public ::testing::TestWithParam<Case> {};

// The dot or convolution and its epilogue compile to one output fusion (one kernel: the
// epilogue, run by the library call), and match the evaluator with and without a pool.
TEST_P(CpuEpilogueTest, OneOutputFusionMatchesEvaluator) {
  const std::string& hlo = GetParam().hlo;
  auto exe = CompileCpu(hlo);
  ASSERT_TRUE(exe.ok()) << exe.status();
  int heroes_outside = 0, output_fusions = 0;
  for (const hlo::Instruction* inst : (*exe)->module().entry()->instructions()) {
    const hlo::Opcode op = inst->opcode();
    heroes_outside += op == hlo::Opcode::kConvolution || op == hlo::Opcode::kDot;
    output_fusions += op == hlo::Opcode::kFusion && inst->attrs().fusion_kind == "kOutput";
  }
  EXPECT_EQ(heroes_outside, 0) << hlo;
  EXPECT_EQ(output_fusions, 1) << hlo;
  EXPECT_EQ((*exe)->stats().num_kernels, 1);
  const ErrorSpec spec{2e-4, 2e-4};
  EXPECT_TRUE(RunAndCompare(hlo, {5, 6}, spec)) << hlo;
  ThreadPool pool(4);
  EXPECT_TRUE(RunAndCompare(hlo, {7}, spec, false, {}, &pool)) << hlo;
}

INSTANTIATE_TEST_SUITE_P(Epilogues, CpuEpilogueTest, ::testing::ValuesIn(EpilogueCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// A convolution whose value is also used elsewhere keeps its own call; results unchanged.
// Float convolutions with one group run as row GEMMs reading the input in place
// (core/conv2d.h Conv2DRowGemm): its edge cases, on a pool and inline.
TEST(CpuConvRowGemmTest, EdgesPaddingAndStridesMatchEvaluator) {
  ThreadPool pool(3);
  const std::vector<std::string> modules = {
      // The stem shape: 3 channels, 3x3 stride 2, SAME-style padding.
      Conv2DModule("f32", 1, 33, 31, 3, W(3, 2, 1, 1), W(3, 2, 0, 1), 16),
      // Vertical dilation only (horizontal dilation takes the patch path).
      Conv2DModule("f32", 2, 15, 13, 5, W(3, 1, 2, 2, 1, 2), W(3, 1, 1, 1), 7),
      // Padding wider than the kernel: whole output rows and edge pixels see only padding.
      Conv2DModule("f32", 1, 6, 7, 4, W(3, 1, 4, 4), W(3, 1, 4, 4), 9),
      // An input narrower than the kernel: every pixel is an edge.
      Conv2DModule("f32", 1, 9, 2, 6, W(3, 1, 1, 1), W(5, 1, 2, 2), 8),
      // Stride 3, 5x5, more than 6 interior pixels per row, 40 output channels.
      Conv2DModule("f32", 1, 40, 41, 8, W(5, 3, 2, 2), W(5, 3, 2, 2), 40),
      // Negative padding (a crop) on one side.
      Conv2DModule("f32", 1, 12, 14, 3, W(3, 1, 0, 0), W(3, 1, -1, 1), 5),
  };
  for (const std::string& hlo : modules) {
    EXPECT_TRUE(RunAndCompare(hlo, {3, 4}, kConvSpec)) << hlo;
    EXPECT_TRUE(RunAndCompare(hlo, {5}, kConvSpec, false, {}, &pool)) << hlo;
  }
}

// Float convolutions to few features (1-8 on AVX-512, 1-4 on AVX2: conv::UsesNarrow) run with
// output pixels in the vector lanes over a planar copy of the input (Conv2DNarrow; the
// 5-8-feature cases take the row GEMM under cpu_conv_test_avx2_kernels): feature counts; 1,
// 3, 8 and 9 input features (the 8x8 transposes and the rest); rows of 35-62 pixels (the
// path needs two vectors); SAME, VALID, wide and negative padding; vertical stride and
// dilation; batch 2; bands of rows on a pool. Its infinite-weight fallback:
// CpuConvPackedWeightsTest.
TEST(CpuConvNarrowTest, FewFeaturesMatchEvaluator) {
  ThreadPool pool(3);
  const std::vector<std::string> modules = {
      Conv2DModule("f32", 1, 10, 62, 8, W(3), W(3), 8),                          // gender's
      Conv2DModule("f32", 1, 9, 40, 1, W(3, 1, 1, 1), W(3, 1, 1, 1), 8),         // gray input
      Conv2DModule("f32", 2, 7, 35, 8, W(3, 1, 1, 1), W(3, 1, 1, 1), 1),         // a mask head
      Conv2DModule("f32", 1, 12, 40, 9, W(3, 2, 1, 1), W(3, 1, 1, 1), 3),        // stride 2 rows
      Conv2DModule("f32", 1, 11, 44, 3, W(3, 1, 2, 2, 1, 2), W(5, 1, 2, 2), 5),  // dilated rows
      Conv2DModule("f32", 1, 6, 36, 4, W(3, 1, 4, 4), W(3, 1, 4, 4), 2),         // wide padding
      Conv2DModule("f32", 1, 12, 40, 3, W(3, 1, 0, 0), W(3, 1, -1, 1), 7),       // a crop
      Conv2DModule("f32", 1, 5, 40, 2, W(2, 1, 0, 1), W(2, 1, 0, 1), 6),         // 2x2 kernel
  };
  for (const std::string& hlo : modules) {
    EXPECT_TRUE(RunAndCompare(hlo, {3, 4}, kConvSpec)) << hlo;
    EXPECT_TRUE(RunAndCompare(hlo, {5}, kConvSpec, false, {}, &pool)) << hlo;
  }
}

// `hlo` with its parameter 1 (%k, the weights) made a constant of seeded values in [-1, 1),
// the first of them `first` when given: compiled code reads constant float weights packed once
// at compile time (gemm::Pack), where they are finite.
std::string WithConstantWeights(std::string hlo, uint32_t seed,
                                std::optional<float> first = std::nullopt) {
  const size_t line = hlo.find("  %k = ");
  const size_t open = hlo.find('[', line), close = hlo.find(']', line);
  std::vector<int64_t> dims;
  for (absl::string_view d : absl::StrSplit(hlo.substr(open + 1, close - open - 1), ',')) {
    EXPECT_TRUE(absl::SimpleAtoi(d, &dims.emplace_back())) << hlo;
  }
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  bool at_first = true;
  // The literal's text: nested braces, one level per dim.
  std::function<std::string(size_t)> nested = [&](size_t level) {
    std::vector<std::string> parts;
    for (int64_t i = 0; i < dims[level]; ++i) {
      if (level + 1 < dims.size()) {
        parts.push_back(nested(level + 1));
        continue;
      }
      const float v = at_first && first.has_value() ? *first : u(rng);
      at_first = false;
      parts.push_back(std::isinf(v) ? (v > 0 ? "inf" : "-inf") : absl::StrCat(v));
    }
    return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
  };
  const size_t param = hlo.find("parameter(1)", line);
  hlo.replace(param, 12, absl::StrCat("constant(", nested(0), ")"));
  const size_t sig = hlo.find(", k: ");
  const size_t sig_end = std::min(hlo.find(')', sig), hlo.find(", ", sig + 2));
  hlo.erase(sig, sig_end - sig);
  // Later parameters (an epilogue's) move down one.
  for (int i = 2; i < 5; ++i) {
    const std::string from = absl::StrCat("parameter(", i, ")");
    if (const size_t at = hlo.find(from); at != std::string::npos) {
      hlo.replace(at, from.size(), absl::StrCat("parameter(", i - 1, ")"));
    }
  }
  return hlo;
}

// Constant weights, packed once: the row-GEMM convolutions of small images (edge pixels
// through the padded row), strides, a crop, pointwise convolutions split into column blocks,
// epilogues, and dots; a filter with an infinite weight is not packed (its padding taps are
// skipped, not multiplied by zero). Compared with the evaluator, inline and on a pool.
TEST(CpuConvPackedWeightsTest, ConstantWeightsMatchEvaluator) {
  ThreadPool pool(3);
  const std::string dot =
      "HloModule dot\n\nENTRY %main (x: f32[7,300], k: f32[300,70]) -> f32[7,70] {\n"
      "  %x = f32[7,300] parameter(0)\n  %k = f32[300,70] parameter(1)\n"
      "  ROOT %d = f32[7,70] dot(%x, %k), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
  const std::string gemv =
      "HloModule gemv\n\nENTRY %main (x: f32[1,64], k: f32[64,33]) -> f32[1,33] {\n"
      "  %x = f32[1,64] parameter(0)\n  %k = f32[64,33] parameter(1)\n"
      "  ROOT %d = f32[1,33] dot(%x, %k), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
  const std::vector<std::string> modules = {
      // 13x13, SAME 3x3, stride 1 and 2: two edge pixels of thirteen in every row.
      WithConstantWeights(Conv2DModule("f32", 1, 13, 13, 32, W(3, 1, 1, 1), W(3, 1, 1, 1), 40), 1),
      WithConstantWeights(Conv2DModule("f32", 1, 26, 26, 16, W(3, 2, 1, 1), W(3, 2, 1, 1), 33), 2),
      // Every pixel an edge; a crop on the left; stride 3 with a 5x5 kernel.
      WithConstantWeights(Conv2DModule("f32", 1, 9, 2, 6, W(3, 1, 1, 1), W(5, 1, 2, 2), 8), 3),
      WithConstantWeights(Conv2DModule("f32", 1, 12, 14, 3, W(3, 1, 0, 0), W(3, 1, -1, 1), 5), 4),
      WithConstantWeights(Conv2DModule("f32", 1, 40, 41, 8, W(5, 3, 2, 2), W(5, 3, 2, 2), 40), 5),
      // Short kernel rows (k_w * in_c < 16: conv::ShortKernelRows), one GEMM per output row
      // over the whole window: a stem with SAME stride 2 (rows copied into a zero-padded
      // band), a VALID one (rows read in place), vertical dilation 2 with one channel, a 7x1
      // kernel over batch 2, and 64 outputs over two column panels.
      WithConstantWeights(Conv2DModule("f32", 1, 17, 19, 3, W(3, 2, 0, 1), W(3, 2, 0, 1), 32), 15),
      WithConstantWeights(Conv2DModule("f32", 1, 12, 30, 3, W(3), W(3), 64), 16),
      WithConstantWeights(Conv2DModule("f32", 1, 14, 20, 1, W(3, 1, 2, 2, 1, 2), W(5, 1, 2, 2), 24),
                          17),
      WithConstantWeights(Conv2DModule("f32", 2, 16, 9, 2, W(7, 1, 3, 3), W(1), 20), 18),
      // Pointwise with 130 outputs over few pixels: the patch GEMM splits columns.
      WithConstantWeights(Conv2DModule("f32", 2, 5, 6, 37, W(1), W(1), 130), 6),
      // A 3x3 convolution with an epilogue (the output fusion reads the packed slot).
      WithConstantWeights(
          WithEpilogue(Conv2DModule("f32", 1, 8, 8, 4, W(3, 1, 1, 1), W(3, 1, 1, 1), 6), "f32", 6,
                       4, "relu"),
          7),
      WithConstantWeights(dot, 8),
      WithConstantWeights(gemv, 9),
      // An infinite weight: not packed; NaN where its tap meets the input, inf elsewhere.
      WithConstantWeights(Conv2DModule("f32", 1, 7, 7, 3, W(3, 1, 1, 1), W(3, 1, 1, 1), 4), 10,
                          std::numeric_limits<float>::infinity()),
      // Transposed convolutions, split into one convolution per output phase
      // (TransposedConvolutionSplitPass): stride-2 SAME with 3x3 and 4x4 kernels, stride 3
      // (a phase reading a slice of the input), a transposed depthwise, and an infinite
      // weight (no NaN: the holes of the dilation contribute no term).
      WithConstantWeights(Conv2DModule("f32", 1, 13, 11, 16, W(3, 1, 1, 2, 2), W(3, 1, 1, 2, 2), 8),
                          11),
      WithConstantWeights(Conv2DModule("f32", 1, 9, 10, 16, W(4, 1, 2, 2, 2), W(4, 1, 2, 2, 2), 16),
                          12),
      WithConstantWeights(Conv2DModule("f32", 2, 5, 4, 6, W(3, 1, 1, 1, 3), W(3, 1, 1, 1, 3), 5),
                          13),
      WithConstantWeights(Conv2DModule("f32", 1, 6, 5, 3, W(3, 1, 1, 2, 2), W(3, 1, 1, 2, 2), 6, 3),
                          14),
      WithConstantWeights(Conv2DModule("f32", 1, 5, 5, 4, W(4, 1, 2, 2, 2), W(4, 1, 2, 2, 2), 4),
                          15, std::numeric_limits<float>::infinity()),
  };
  for (const std::string& hlo : modules) {
    EXPECT_TRUE(RunAndCompare(hlo, {3, 4}, kConvSpec)) << hlo.substr(0, 400);
    EXPECT_TRUE(RunAndCompare(hlo, {5}, kConvSpec, false, {}, &pool)) << hlo.substr(0, 400);
  }
}

TEST(CpuConvFusionTest, ConvWithAnotherUserIsNotAHero) {
  std::string hlo = WithEpilogue(Conv2DModule("f32", 1, 8, 8, 4, W(3, 1, 1, 1), W(3, 1, 1, 1), 6),
                                 "f32", 6, 4, "relu");
  hlo.replace(hlo.find("  ROOT %r = f32[1,8,8,6] "), 25, "  %r = f32[1,8,8,6] ");
  hlo.replace(hlo.find(") -> f32[1,8,8,6]"), 17, ") -> (f32[1,8,8,6], f32[1,8,8,6])");
  hlo.insert(hlo.rfind("}"), "  ROOT %t = (f32[1,8,8,6], f32[1,8,8,6]) tuple(%r, %c)\n");
  auto exe = CompileCpu(hlo);
  ASSERT_TRUE(exe.ok()) << exe.status() << hlo;
  int convolutions = 0;
  for (const hlo::Instruction* inst : (*exe)->module().entry()->instructions()) {
    convolutions += inst->opcode() == hlo::Opcode::kConvolution;
    if (inst->opcode() == hlo::Opcode::kFusion) {
      EXPECT_EQ(inst->attrs().fusion_kind, "kLoop");
    }
  }
  EXPECT_EQ(convolutions, 1);
  EXPECT_TRUE(RunAndCompare(hlo, {5}, kConvSpec));
}

// The dots of separable resizes (rank-2 lhs, rhs contracted in the middle) on the pool.
TEST(CpuConvParallelTest, RhsOuterDotOnPoolMatchesEvaluator) {
  ThreadPool pool(4);
  const std::string hlo =
      "HloModule d\n\nENTRY %main (a: f32[64,32], b: f32[32,1,32,24]) -> f32[64,32,1,24] {\n"
      "  %a = f32[64,32] parameter(0)\n  %b = f32[32,1,32,24] parameter(1)\n"
      "  ROOT %d = f32[64,32,1,24] dot(%a, %b), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={2}\n}\n";
  EXPECT_TRUE(RunAndCompare(hlo, {4}, kConvSpec, false, {}, &pool));
}

// Hand-computed: x = 1..9 in a 3x3 image, kernel of ones 2x2, SAME-like pad 0_1: every output
// sums its 2x2 (clipped) neighbourhood.
TEST(CpuConvWorkedTest, BoxSumWithPadding) {
  auto exe = CompileCpu(Conv2DModule("f32", 1, 3, 3, 1, W(2, 1, 0, 1), W(2, 1, 0, 1), 1));
  ASSERT_TRUE(exe.ok()) << exe.status();
  Tensor x(DType::kFloat32, {1, 3, 3, 1});
  for (int i = 0; i < 9; ++i) x.data<float>()[i] = static_cast<float>(i + 1);
  Tensor k(DType::kFloat32, {2, 2, 1, 1});
  for (int i = 0; i < 4; ++i) k.data<float>()[i] = 1.0f;
  auto out = RunOnLiterals(**exe, {hlo::Literal::FromTensor(x), hlo::Literal::FromTensor(k)});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> want = {12, 16, 9, 24, 28, 15, 15, 17, 9};
  const float* got = out->data<float>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << i;
}

}  // namespace
}  // namespace tfjit
