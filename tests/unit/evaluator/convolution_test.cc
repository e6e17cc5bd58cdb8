// Evaluator tests: convolution (NHWC/HWIO, padding, stride, dilation, feature groups).
#include "tests/unit/evaluator/eval_test_util.h"

namespace tfjit::hlo {
namespace {

std::vector<float> Conv(const std::string& sig, const std::string& conv_line,
                        const std::vector<Literal>& args) {
  const std::string body = "  %x = " + sig.substr(4, sig.find("], ") + 1 - 4) + " parameter(0)\n";
  absl::StatusOr<Literal> r = ParseAndRun(Entry(sig, body + conv_line), args);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? Values<float>(*r) : std::vector<float>{};
}

TEST(ConvolutionTest, OneDimensionalValidAndSamePadding) {
  // x = [1,2,3,4] (N=1, W=4, C=1), kernel [1,0,-1] (W=3, I=1, O=1).
  const std::vector<Literal> args = {Lit<float>({1, 4, 1}, {1, 2, 3, 4}),
                                     Lit<float>({3, 1, 1}, {1, 0, -1})};
  EXPECT_EQ(Conv("(x: f32[1,4,1], k: f32[3,1,1]) -> f32[1,2,1]",
                 "  %k = f32[3,1,1] parameter(1)\n"
                 "  ROOT %c = f32[1,2,1] convolution(%x, %k), window={size=3}, "
                 "dim_labels=b0f_0io->b0f",
                 args),
            (std::vector<float>{-2, -2}));
  EXPECT_EQ(Conv("(x: f32[1,4,1], k: f32[3,1,1]) -> f32[1,4,1]",
                 "  %k = f32[3,1,1] parameter(1)\n"
                 "  ROOT %c = f32[1,4,1] convolution(%x, %k), window={size=3 pad=1_1}, "
                 "dim_labels=b0f_0io->b0f",
                 args),
            (std::vector<float>{-2, -2, -2, 3}));
}

TEST(ConvolutionTest, StrideAndRhsDilation) {
  const std::vector<Literal> args = {Lit<float>({1, 5, 1}, {1, 2, 3, 4, 5}),
                                     Lit<float>({2, 1, 1}, {1, 10})};
  // Dilated kernel taps x[i] and x[i+2]; stride 2 -> i = 0, 2.
  EXPECT_EQ(Conv("(x: f32[1,5,1], k: f32[2,1,1]) -> f32[1,2,1]",
                 "  %k = f32[2,1,1] parameter(1)\n"
                 "  ROOT %c = f32[1,2,1] convolution(%x, %k), window={size=2 stride=2 "
                 "rhs_dilate=2}, dim_labels=b0f_0io->b0f",
                 args),
            (std::vector<float>{31, 53}));
}

TEST(ConvolutionTest, LhsDilationIsTransposedConvolution) {
  // x dilated by 2: [1,0,2]; kernel [1,1] -> [1, 2].
  EXPECT_EQ(Conv("(x: f32[1,2,1], k: f32[2,1,1]) -> f32[1,2,1]",
                 "  %k = f32[2,1,1] parameter(1)\n"
                 "  ROOT %c = f32[1,2,1] convolution(%x, %k), window={size=2 lhs_dilate=2}, "
                 "dim_labels=b0f_0io->b0f",
                 {Lit<float>({1, 2, 1}, {1, 2}), Lit<float>({2, 1, 1}, {1, 1})}),
            (std::vector<float>{1, 2}));
}

TEST(ConvolutionTest, ChannelsAndDepthwiseGroups) {
  // 1x1 convolution mixing 2 input channels into 2 outputs.
  const Literal x = Lit<float>({1, 1, 2}, {3, 5});
  EXPECT_EQ(Conv("(x: f32[1,1,2], k: f32[1,2,2]) -> f32[1,1,2]",
                 "  %k = f32[1,2,2] parameter(1)\n"
                 "  ROOT %c = f32[1,1,2] convolution(%x, %k), window={size=1}, "
                 "dim_labels=b0f_0io->b0f",
                 {x, Lit<float>({1, 2, 2}, {1, 2, 10, 20})}),
            (std::vector<float>{53, 106}));
  // Depthwise: each channel scaled by its own weight.
  EXPECT_EQ(Conv("(x: f32[1,1,2], k: f32[1,1,2]) -> f32[1,1,2]",
                 "  %k = f32[1,1,2] parameter(1)\n"
                 "  ROOT %c = f32[1,1,2] convolution(%x, %k), window={size=1}, "
                 "dim_labels=b0f_0io->b0f, feature_group_count=2",
                 {x, Lit<float>({1, 1, 2}, {2, 4})}),
            (std::vector<float>{6, 20}));
}

}  // namespace
}  // namespace tfjit::hlo
