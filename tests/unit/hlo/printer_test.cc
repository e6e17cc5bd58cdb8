// Tests for the printer: instruction lines, canonical renumbering and fingerprints.
#include "compiler/hlo/printer.h"

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"

namespace tfjit::hlo {
namespace {

std::unique_ptr<Module> Parse(const char* text) {
  auto m = ParseAndVerifyModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

const char* kModule = R"(HloModule first

%add_f32 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(%a, %b)
}

ENTRY %main (x: f32[4,8]) -> f32[4] {
  %x = f32[4,8] parameter(0)
  %n = f32[4,8] negate(%x), meta={tf_node="neg" tf_op="Neg"}
  %zero = f32[] constant(0)
  ROOT %r = f32[4] reduce(%n, %zero), dimensions={1}, to_apply=%add_f32
}
)";

// kModule with every name changed, metadata changed and instructions listed in another
// (still valid) order.
const char* kRenamed = R"(HloModule second

%sum_comp (p: f32[], q: f32[]) -> f32[] {
  %q = f32[] parameter(1)
  %p = f32[] parameter(0)
  ROOT %s = f32[] add(%p, %q)
}

ENTRY %entry (input: f32[4,8]) -> f32[4] {
  %init = f32[] constant(0)
  %input = f32[4,8] parameter(0)
  %neg = f32[4,8] negate(%input), meta={tf_node="other" tf_op="Neg"}
  ROOT %out = f32[4] reduce(%neg, %init), dimensions={1}, to_apply=%sum_comp
}
)";

TEST(PrinterTest, InstructionLine) {
  auto m = Parse(kModule);
  const Instruction* n = m->entry()->root()->operand(0);
  EXPECT_EQ(PrintInstruction(*n), "%n = f32[4,8] negate(%x), meta={tf_node=\"neg\" tf_op=\"Neg\"}");
  PrintOptions no_meta;
  no_meta.print_metadata = false;
  EXPECT_EQ(PrintInstruction(*n, no_meta), "%n = f32[4,8] negate(%x)");
  EXPECT_EQ(PrintInstruction(*m->entry()->root()),
            "%r = f32[4] reduce(%n, %zero), dimensions={1}, to_apply=%add_f32");
}

TEST(PrinterTest, CanonicalRenumbersAndDropsMetadata) {
  auto m = Parse(kModule);
  EXPECT_EQ(Fingerprint(*m),
            "HloModule m\n\n"
            "%c0 (i0: f32[], i1: f32[]) -> f32[] {\n"
            "  %i0 = f32[] parameter(0)\n"
            "  %i1 = f32[] parameter(1)\n"
            "  ROOT %i2 = f32[] add(%i0, %i1)\n"
            "}\n\n"
            "ENTRY %c1 (i3: f32[4,8]) -> f32[4] {\n"
            "  %i3 = f32[4,8] parameter(0)\n"
            "  %i4 = f32[4,8] negate(%i3)\n"
            "  %i5 = f32[] constant(0)\n"
            "  ROOT %i6 = f32[4] reduce(%i4, %i5), dimensions={1}, to_apply=%c0\n"
            "}\n");
  // The canonical text is itself parseable.
  auto again = Parse(Fingerprint(*m).c_str());
  EXPECT_EQ(Fingerprint(*again), Fingerprint(*m));
}

TEST(PrinterTest, FingerprintIgnoresNamesOrderAndMetadataButNotSemantics) {
  auto a = Parse(kModule);
  auto b = Parse(kRenamed);
  EXPECT_NE(PrintModule(*a), PrintModule(*b));
  EXPECT_EQ(Fingerprint(*a), Fingerprint(*b));
  std::string changed = kRenamed;
  changed.replace(changed.find("dimensions={1}"), 14, "dimensions={0}");
  changed.replace(changed.find("-> f32[4] {\n  %init"), 9, "-> f32[8]");
  changed.replace(changed.find("ROOT %out = f32[4]"), 18, "ROOT %out = f32[8]");
  auto c = Parse(changed.c_str());
  ASSERT_NE(c, nullptr);
  EXPECT_NE(Fingerprint(*a), Fingerprint(*c));
}

TEST(PrinterTest, PrintComputationMarksEntry) {
  auto m = Parse(kModule);
  const std::string text = PrintComputation(*m->entry());
  EXPECT_EQ(text.rfind("ENTRY %main (x: f32[4,8]) -> f32[4] {\n", 0), 0u) << text;
  EXPECT_EQ(PrintComputation(*m->computations()[0]).rfind("%add_f32 (", 0), 0u);
}

}  // namespace
}  // namespace tfjit::hlo
