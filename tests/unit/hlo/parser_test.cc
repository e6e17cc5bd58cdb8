// Tests for the parser: print -> parse -> print round trips over every attribute form, the
// accepted spellings (no '%', comments, comma-separated metadata) and error messages.
#include "compiler/hlo/parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler/hlo/printer.h"

namespace tfjit::hlo {
namespace {

using ::testing::HasSubstr;

// Each module is already in printed form: parse + verify + print must give it back verbatim.
const char* const kRoundTrip[] = {
    R"(HloModule elementwise

ENTRY %main (x: f32[2,3], y: f32[2,3]) -> pred[2,3] {
  %x = f32[2,3] parameter(0)
  %y = f32[2,3] parameter(1)
  %a = f32[2,3] add(%x, %y), meta={tf_node="a/b" tf_op="AddV2" source_file="f \"q\".py" source_line=12}
  ROOT %c = pred[2,3] compare(%a, %y), direction=GE
}
)",
    R"(HloModule constants

ENTRY %main () -> (f32[2,2], pred[2], s8[], u64[], bf16[2], f16[], f64[3], s32[0]) {
  %a = f32[2,2] constant({{1, -2.5}, {nan, -inf}})
  %b = pred[2] constant({true, false})
  %c = s8[] constant(-128)
  %d = u64[] constant(18446744073709551615)
  %e = bf16[2] constant({1.5, 3.3895314e+38})
  %f = f16[] constant(0.099975586)
  %g = f64[3] constant({0.1, 1e+300, -0})
  %h = s32[0] constant({})
  ROOT %t = (f32[2,2], pred[2], s8[], u64[], bf16[2], f16[], f64[3], s32[0]) tuple(%a, %b, %c, %d, %e, %f, %g, %h)
}
)",
    R"(HloModule movement

ENTRY %main (x: f32[2,3], i: s32[]) -> (f32[4,2,3], f32[6], f32[2,2], f32[5,5], f32[3,3], f32[2,3], s32[2,3], f32[4,3]) {
  %x = f32[2,3] parameter(0)
  %b = f32[4,2,3] broadcast(%x), dimensions={1,2}
  %t = f32[3,2] transpose(%x), dimensions={1,0}
  %r = f32[6] reshape(%t)
  %s = f32[2,2] slice(%x), slice={[0:2:1], [0:3:2]}
  %z = f32[] constant(0)
  %p = f32[5,5] pad(%x, %z), padding=1_2_0x-1_1_1
  %p2 = f32[3,3] pad(%x, %z), padding=0_1x0_0
  %rv = f32[2,3] reverse(%x), dimensions={0}
  %io = s32[2,3] iota(), iota_dimension=1
  %cv = f32[2,3] convert(%io)
  %bc = s32[2,3] bitcast-convert(%cv)
  %i = s32[] parameter(1)
  %ds = f32[1,2] dynamic-slice(%x, %i, %i), dynamic_slice_sizes={1,2}
  %u = f32[2,3] dynamic-update-slice(%x, %ds, %i, %i)
  %cat = f32[4,3] concatenate(%x, %u), dimensions={0}
  ROOT %out = (f32[4,2,3], f32[6], f32[2,2], f32[5,5], f32[3,3], f32[2,3], s32[2,3], f32[4,3]) tuple(%b, %r, %s, %p, %p2, %rv, %bc, %cat)
}
)",
    R"(HloModule reductions

%add_f32 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[4,8]) -> (f32[4], f32[2,8], f32[2,4]) {
  %x = f32[4,8] parameter(0)
  %z = f32[] constant(0)
  %r = f32[4] reduce(%x, %z), dimensions={1}, to_apply=%add_f32
  %w = f32[2,8] reduce-window(%x, %z), window={size=2x3 stride=2x1 pad=0_0x1_1}, to_apply=%add_f32
  %w2 = f32[2,4] reduce-window(%x, %z), window={size=2x2 stride=2x2}, to_apply=%add_f32
  ROOT %t = (f32[4], f32[2,8], f32[2,4]) tuple(%r, %w, %w2)
}
)",
    R"(HloModule contractions

ENTRY %main (a: f32[2,3,4], b: f32[2,4,5], x: f32[1,7,7,4], k: f32[3,3,2,8]) -> (f32[2,3,5], f32[1,4,4,8]) {
  %a = f32[2,3,4] parameter(0)
  %b = f32[2,4,5] parameter(1)
  %d = f32[2,3,5] dot(%a, %b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  %x = f32[1,7,7,4] parameter(2)
  %k = f32[3,3,2,8] parameter(3)
  %c = f32[1,4,4,8] convolution(%x, %k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2
  ROOT %t = (f32[2,3,5], f32[1,4,4,8]) tuple(%d, %c)
}
)",
    R"(HloModule gather_scatter

%add_f32 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (t: f32[5,4], i: s32[3], u: f32[3,4]) -> (f32[3,4], f32[5,4]) {
  %t = f32[5,4] parameter(0)
  %i = s32[3] parameter(1)
  %g = f32[3,4] gather(%t, %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  %u = f32[3,4] parameter(2)
  %sc = f32[5,4] scatter(%t, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add_f32
  ROOT %r = (f32[3,4], f32[5,4]) tuple(%g, %sc)
}
)",
    R"(HloModule control

%cond (s: (s32[], f32[2])) -> pred[] {
  %s = (s32[], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (s.1: (s32[], f32[2])) -> (s32[], f32[2]) {
  %s.1 = (s32[], f32[2]) parameter(0)
  %i.1 = s32[] get-tuple-element(%s.1), index=0
  %one = s32[] constant(1)
  %i2 = s32[] add(%i.1, %one)
  %v = f32[2] get-tuple-element(%s.1), index=1
  ROOT %t = (s32[], f32[2]) tuple(%i2, %v)
}

%b0 (p: f32[2]) -> f32[2] {
  ROOT %p = f32[2] parameter(0)
}

%b1 (q: f32[2]) -> f32[2] {
  %q = f32[2] parameter(0)
  ROOT %nq = f32[2] negate(%q)
}

%fused (f0: f32[2], f1: f32[2]) -> f32[2] {
  %f0 = f32[2] parameter(0)
  %f1 = f32[2] parameter(1)
  ROOT %m = f32[2] multiply(%f0, %f1)
}

ENTRY %main (x: f32[2], k: s32[], st: u64[3]) -> (f32[2], f32[2], (u64[3], u32[4]), f32[3]) {
  %k = s32[] parameter(1)
  %z = s32[] constant(0)
  %x = f32[2] parameter(0)
  %init = (s32[], f32[2]) tuple(%z, %x)
  %w = (s32[], f32[2]) while(%init), condition=%cond, body=%body
  %wv = f32[2] get-tuple-element(%w), index=1
  %c = f32[2] conditional(%k, %wv, %x), branch_computations={%b0, %b1}
  %f = f32[2] fusion(%c, %x), kind=kLoop, calls=%fused
  %cl = f32[2] call(%f), to_apply=%b1
  %st = u64[3] parameter(2)
  %rng = (u64[3], u32[4]) rng-bit-generator(%st), algorithm=rng_philox
  %cc = f32[3] custom-call(%x, %f), custom_call_target="my_gemm"
  ROOT %out = (f32[2], f32[2], (u64[3], u32[4]), f32[3]) tuple(%f, %cl, %rng, %cc)
}
)",
};

TEST(ParserTest, RoundTripIsIdentity) {
  for (const char* text : kRoundTrip) {
    auto module = ParseAndVerifyModule(text);
    ASSERT_TRUE(module.ok()) << module.status() << "\n" << text;
    EXPECT_EQ(PrintModule(**module), text);
  }
}

// Every truncation of a valid module is rejected with INVALID_ARGUMENT (or, if the cut
// leaves a complete module, accepted) -- never a crash. Runs under ASan in sanitizer builds.
TEST(ParserTest, TruncatedInputFailsCleanly) {
  for (const char* text : kRoundTrip) {
    const std::string full = text;
    const size_t last_brace = full.rfind('}');
    for (size_t n = 0; n < last_brace; n += 3) {
      auto module = ParseAndVerifyModule(full.substr(0, n));
      if (module.ok()) continue;  // the cut fell just after a complete callee computation
      ASSERT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument)
          << module.status() << "\n"
          << full.substr(0, n);
    }
  }
}

TEST(ParserTest, AcceptsNamesWithoutPercentCommentsAndCommaMetadata) {
  const char* text = R"(// RUN: tfjit-opt %s | FileCheck %s
HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}

// CHECK: ENTRY
ENTRY main (x: f32[2]) -> f32[2] {
  x = f32[2]{0} parameter(0)   // trailing comment
  ROOT y = f32[2] negate(x), meta={tf_node="n", tf_op="Neg"}
}
)";
  auto module = ParseAndVerifyModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(PrintModule(**module),
            "HloModule m\n\nENTRY %main (x: f32[2]) -> f32[2] {\n"
            "  %x = f32[2] parameter(0)\n"
            "  ROOT %y = f32[2] negate(%x), meta={tf_node=\"n\" tf_op=\"Neg\"}\n}\n");
}

TEST(ParserTest, AcceptsDesignDocSpelling) {
  const char* text = R"(HloModule m
computation @add (a: f32[], b: f32[]) -> f32[] {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY computation @main (x: f32[3]) -> f32[] {
  x = f32[3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=@add
})";
  auto module = ParseAndVerifyModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ((*module)->entry()->root()->to_apply()->name(), "add");
}

TEST(ParserTest, ParsesValuesExactly) {
  auto module = ParseModule(R"(HloModule m
ENTRY %e () -> f32[3] {
  ROOT %c = f32[3] constant({0.1, 16777217, 1e-45})
})");
  ASSERT_TRUE(module.ok()) << module.status();
  const float* v = (*module)->entry()->root()->literal().data<float>();
  EXPECT_EQ(v[0], 0.1f);
  EXPECT_EQ(v[1], 16777216.0f);                                     // rounds to nearest float
  EXPECT_EQ(v[2], 1e-45f);                                          // denormal
  EXPECT_EQ((*module)->entry(), (*module)->computations().back());  // last is entry by default
}

struct ErrorCase {
  const char* text;
  const char* message;
};

TEST(ParserTest, ErrorsNameLineColumnAndWhatWasExpected) {
  const ErrorCase cases[] = {
      {"HloModul m", "line 1, column 1: expected 'HloModule', found 'HloModul'"},
      {"HloModule m\nENTRY %e () -> f32[] {\n  ROOT %c = f32[] constant(1)\n",
       "line 4, column 1: expected '}', found end of input"},
      {"HloModule m\nENTRY %e (x: f32[]) -> f32[] {\n  ROOT %y = f32[] negate(%z)\n}",
       "line 3, column 26: expected an instruction defined earlier in this computation, found "
       "'%z)'"},
      {"HloModule m\nENTRY %e () -> f32[] {\n  ROOT %y = f32[] frobnicate()\n}",
       "line 3, column 19: expected an opcode, found 'frobnicate()'"},
      {"HloModule m\nENTRY %e () -> f33[] {\n}", "expected a shape such as f32[2,3]"},
      {"HloModule m\nENTRY %e () -> f32[] {\n  %c = f32[] constant(1)\n  %c = f32[] constant(2)\n}",
       "line 4, column 3: expected a new instruction name, found 'c' (already defined)"},
      {"HloModule m\nENTRY %e () -> pred[] {\n  ROOT %c = pred[] constant(maybe)\n}",
       "expected a pred value, found 'maybe)'"},
      {"HloModule m\nENTRY %e () -> s8[] {\n  ROOT %c = s8[] constant(300)\n}",
       "expected a s8 value"},
      {"HloModule m\nENTRY %e () -> f32[2] {\n  ROOT %c = f32[2] constant({1})\n}",
       "expected ',', found '})'"},
      {"HloModule m\nENTRY %e (x: f32[2]) -> f32[2] {\n  %x = f32[2] parameter(0)\n"
       "  ROOT %y = f32[2] negate(%x), colour=blue\n}",
       "expected an attribute name, found 'colour=blue'"},
      {"HloModule m\nENTRY %e (x: f32[2]) -> pred[2] {\n  %x = f32[2] parameter(0)\n"
       "  ROOT %y = pred[2] compare(%x, %x), direction=LESS\n}",
       "expected EQ, NE, LT, LE, GT or GE"},
      {"HloModule m\nENTRY %e (x: f32[2]) -> f32[2] {\n  %x = f32[2] parameter(0)\n"
       "  ROOT %y = f32[2] call(%x), to_apply=%nowhere\n}",
       "expected a computation defined earlier, found '%nowhere'"},
      {"HloModule m\nENTRY %e (x: f32[3]) -> f32[2] {\n  ROOT %x = f32[2] parameter(0)\n}",
       "expected parameter instructions matching the header's parameters"},
      {"HloModule m\nENTRY %e () -> f32[2] {\n  ROOT %c = f32[] constant(1)\n}",
       "expected a ROOT of the header's shape f32[2], found f32[]"},
      {"HloModule m\nENTRY %e () -> f32[100000,100000] {\n"
       "  ROOT %c = f32[100000,100000] constant({})\n}",
       "expected a constant of at most 2^31 elements"},
      // Fuzz findings (tests/fuzz/regressions/hlo_text): sizes the text cannot back are refused
      // before anything is allocated for them.
      {"HloModule m\nENTRY %e () -> f32[100000000] {\n"
       "  ROOT %c = f32[100000000] constant({1})\n}",
       "expected a constant of at most 2^31 elements, each written in the text"},
      {"HloModule m\nENTRY %e (x: f32[]) -> f32[] {\n  ROOT %x = f32[] parameter(2082585612)\n}",
       "expected a parameter number below the number of parameters"},
      {"HloModule m\nENTRY %e () -> f32[2] {\n  ROOT %c = f32[2] constant({1, 2}), "
       "meta={tf_node=\"a\" colour=\"b\"}\n}",
       "expected tf_node, tf_op, source_file or source_line, found 'colour=\"b\"}'"},
      {"HloModule m\nENTRY %e (x: f32[4,4]) -> f32[4,4] {\n  %x = f32[4,4] parameter(0)\n"
       "  ROOT %c = f32[4,4] convolution(%x, %x), dim_labels=bxyf_01io->b01f\n}",
       "expected dim_labels such as b01f_01io->b01f"},
  };
  for (const ErrorCase& c : cases) {
    auto module = ParseModule(c.text);
    ASSERT_FALSE(module.ok()) << c.text;
    EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(module.status().message(), HasSubstr(c.message)) << c.text;
  }
}

TEST(ParserTest, ParseAndVerifyRejectsBadShapes) {
  auto module = ParseAndVerifyModule(
      "HloModule m\nENTRY %e (x: f32[2]) -> f32[3] {\n  %x = f32[2] parameter(0)\n"
      "  ROOT %y = f32[3] negate(%x)\n}");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(module.status().message(), HasSubstr("shape should be f32[2]"));
}

}  // namespace
}  // namespace tfjit::hlo
