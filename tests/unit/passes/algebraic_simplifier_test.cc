// AlgebraicSimplifierPass tests: one test per rule, plus the cases a rule must not touch.
#include "compiler/passes/algebraic_simplifier.h"

#include "compiler/passes/dce.h"
#include "tests/unit/passes/pass_test_util.h"

namespace tfjit::passes {
namespace {

using hlo::Opcode;

std::string Module(const std::string& sig, const std::string& body) {
  return "HloModule m\n\nENTRY %main " + sig + " {\n" + body + "\n}\n";
}

// Runs the simplifier (checked) and returns the root's opcode.
Opcode SimplifiedRoot(const std::string& text, bool expect_changed) {
  AlgebraicSimplifierPass pass;
  bool changed = !expect_changed;
  EXPECT_TRUE(testlib::CheckPassPreservesSemantics(text, pass, 3, {}, &changed));
  EXPECT_EQ(changed, expect_changed);
  std::unique_ptr<hlo::Module> m = testlib::RunPassChecked(text, pass);
  return m == nullptr ? Opcode::kCustomCall : m->entry()->root()->opcode();
}

TEST(AlgebraicSimplifierTest, AddZeroForIntegersOnly) {
  EXPECT_EQ(SimplifiedRoot(Module("(x: s32[4]) -> s32[4]",
                                  "  %x = s32[4] parameter(0)\n  %z = s32[] constant(0)\n"
                                  "  %zb = s32[4] broadcast(%z), dimensions={}\n"
                                  "  ROOT %a = s32[4] add(%zb, %x)"),
                           true),
            Opcode::kParameter);
  // Floats keep the add: -0.0 + 0.0 is +0.0.
  EXPECT_EQ(
      SimplifiedRoot(Module("(x: f32[4]) -> f32[4]",
                            "  %x = f32[4] parameter(0)\n  %z = f32[4] constant({0, 0, 0, 0})\n"
                            "  ROOT %a = f32[4] add(%x, %z)"),
                     false),
      Opcode::kAdd);
}

TEST(AlgebraicSimplifierTest, MultiplyOne) {
  EXPECT_EQ(SimplifiedRoot(Module("(x: f32[4]) -> f32[4]",
                                  "  %x = f32[4] parameter(0)\n  %o = f32[] constant(1)\n"
                                  "  %ob = f32[4] broadcast(%o), dimensions={}\n"
                                  "  ROOT %m = f32[4] multiply(%x, %ob)"),
                           true),
            Opcode::kParameter);
  EXPECT_EQ(SimplifiedRoot(Module("(x: f32[2]) -> f32[2]",
                                  "  %x = f32[2] parameter(0)\n  %o = f32[2] constant({1, 2})\n"
                                  "  ROOT %m = f32[2] multiply(%x, %o)"),
                           false),
            Opcode::kMultiply);
}

TEST(AlgebraicSimplifierTest, ReshapeRules) {
  EXPECT_EQ(SimplifiedRoot(Module("(x: f32[2,3]) -> f32[2,3]",
                                  "  %x = f32[2,3] parameter(0)\n"
                                  "  ROOT %r = f32[2,3] reshape(%x)"),
                           true),
            Opcode::kParameter);
  AlgebraicSimplifierPass pass;
  std::unique_ptr<hlo::Module> m =
      testlib::RunPassChecked(Module("(x: f32[2,3]) -> f32[3,2]",
                                     "  %x = f32[2,3] parameter(0)\n  %r1 = f32[6] reshape(%x)\n"
                                     "  ROOT %r2 = f32[3,2] reshape(%r1)"),
                              pass);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->root()->opcode(), Opcode::kReshape);
  EXPECT_EQ(m->entry()->root()->operand(0)->opcode(), Opcode::kParameter);
}

TEST(AlgebraicSimplifierTest, TransposeRules) {
  EXPECT_EQ(SimplifiedRoot(Module("(x: f32[2,3]) -> f32[2,3]",
                                  "  %x = f32[2,3] parameter(0)\n"
                                  "  ROOT %t = f32[2,3] transpose(%x), dimensions={0,1}"),
                           true),
            Opcode::kParameter);
  // Two transposes that cancel out.
  EXPECT_EQ(SimplifiedRoot(Module("(x: f32[2,3]) -> f32[2,3]",
                                  "  %x = f32[2,3] parameter(0)\n"
                                  "  %t = f32[3,2] transpose(%x), dimensions={1,0}\n"
                                  "  ROOT %u = f32[2,3] transpose(%t), dimensions={1,0}"),
                           true),
            Opcode::kParameter);
  // Two rotations compose into one transpose (checked numerically by the helper).
  AlgebraicSimplifierPass pass;
  std::unique_ptr<hlo::Module> m =
      testlib::RunPassChecked(Module("(x: f32[2,3,4]) -> f32[4,2,3]",
                                     "  %x = f32[2,3,4] parameter(0)\n"
                                     "  %t = f32[3,4,2] transpose(%x), dimensions={1,2,0}\n"
                                     "  ROOT %u = f32[4,2,3] transpose(%t), dimensions={1,2,0}"),
                              pass);
  ASSERT_NE(m, nullptr);
  // Rotating twice = dims {2,0,1}; the new transpose reads x directly.
  EXPECT_EQ(m->entry()->root()->opcode(), Opcode::kTranspose);
  EXPECT_EQ(m->entry()->root()->dimensions(), (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(m->entry()->root()->operand(0)->opcode(), Opcode::kParameter);
}

TEST(AlgebraicSimplifierTest, ConvertAndBroadcastNoops) {
  EXPECT_EQ(SimplifiedRoot(Module("(x: f32[2]) -> f32[2]",
                                  "  %x = f32[2] parameter(0)\n  ROOT %c = f32[2] convert(%x)"),
                           true),
            Opcode::kParameter);
  EXPECT_EQ(SimplifiedRoot(Module("(x: f32[2]) -> f32[2]",
                                  "  %x = f32[2] parameter(0)\n"
                                  "  ROOT %b = f32[2] broadcast(%x), dimensions={0}"),
                           true),
            Opcode::kParameter);
  EXPECT_EQ(SimplifiedRoot(Module("(x: f32[2]) -> s32[2]",
                                  "  %x = f32[2] parameter(0)\n  ROOT %c = s32[2] convert(%x)"),
                           false),
            Opcode::kConvert);
}

// A zero pad of the spatial dims before a convolution with a constant finite filter moves
// into the window; negative padding or a non-constant filter stay.
std::string PadConv(const std::string& pad, const std::string& filter) {
  return Module("(x: f32[1,5,6,2]" + std::string(filter.empty() ? ", k: f32[3,3,2,3]" : "") +
                    ") -> f32[1,5,6,3]",
                "  %x = f32[1,5,6,2] parameter(0)\n  %z = f32[] constant(0)\n" + pad +
                    (filter.empty() ? "  %k = f32[3,3,2,3] parameter(1)\n" : filter) +
                    "  ROOT %c = f32[1,5,6,3] convolution(%p, %k), window={size=3x3}, "
                    "dim_labels=b01f_01io->b01f");
}

TEST(AlgebraicSimplifierTest, ZeroPadFoldsIntoConvolutionWindow) {
  std::string weights = "{";
  for (int a = 0; a < 3; ++a) {
    weights += (a ? ", {" : "{");
    for (int b = 0; b < 3; ++b) {
      weights += (b ? ", {" : "{");
      for (int c = 0; c < 2; ++c) {
        weights += (c ? ", {" : "{");
        for (int d = 0; d < 3; ++d)
          weights += (d ? ", " : "") + std::to_string(0.1 * (a + b - c + d));
        weights += "}";
      }
      weights += "}";
    }
    weights += "}";
  }
  weights += "}";
  const std::string k = "  %k = f32[3,3,2,3] constant(" + weights + ")\n";
  const std::string spatial = "  %p = f32[1,7,8,2] pad(%x, %z), padding=0_0x1_1x1_1x0_0\n";
  AlgebraicSimplifierPass pass;
  std::unique_ptr<hlo::Module> m = testlib::RunPassChecked(PadConv(spatial, k), pass);
  ASSERT_NE(m, nullptr);
  const hlo::Instruction* root = m->entry()->root();
  ASSERT_EQ(root->opcode(), Opcode::kConvolution);
  EXPECT_EQ(root->operand(0)->opcode(), Opcode::kParameter);
  EXPECT_EQ(root->attrs().window[0].pad_lo, 1);
  EXPECT_EQ(root->attrs().window[1].pad_hi, 1);
  // Not folded: negative padding (a crop), and a filter that is not a constant.
  const std::string crop = "  %p = f32[1,7,8,2] pad(%x, %z), padding=0_0x3_-1x1_1x0_0\n";
  EXPECT_EQ(SimplifiedRoot(PadConv(crop, k), false), Opcode::kConvolution);
  EXPECT_EQ(SimplifiedRoot(PadConv(spatial, ""), false), Opcode::kConvolution);
}

}  // namespace
}  // namespace tfjit::passes
