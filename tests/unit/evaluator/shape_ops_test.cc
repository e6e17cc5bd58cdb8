// Evaluator tests: broadcast, reshape, transpose, slices, concatenate, pad, reverse, iota,
// get-dimension-size.
#include "tests/unit/evaluator/eval_test_util.h"

namespace tfjit::hlo {
namespace {

std::vector<float> RunF32(const std::string& sig, const std::string& body,
                          const std::vector<Literal>& args) {
  absl::StatusOr<Literal> r = ParseAndRun(Entry(sig, body), args);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? Values<float>(*r) : std::vector<float>{};
}

const std::vector<float> k23 = {1, 2, 3, 4, 5, 6};  // f32[2,3]

TEST(ShapeOpsTest, BroadcastMapsDimensions) {
  EXPECT_EQ(RunF32("(x: f32[3]) -> f32[2,3]",
                   "  %x = f32[3] parameter(0)\n"
                   "  ROOT %b = f32[2,3] broadcast(%x), dimensions={1}",
                   {Lit<float>({3}, {1, 2, 3})}),
            (std::vector<float>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(RunF32("(x: f32[2]) -> f32[2,3]",
                   "  %x = f32[2] parameter(0)\n"
                   "  ROOT %b = f32[2,3] broadcast(%x), dimensions={0}",
                   {Lit<float>({2}, {7, 8})}),
            (std::vector<float>{7, 7, 7, 8, 8, 8}));
}

TEST(ShapeOpsTest, TransposeAndReshape) {
  EXPECT_EQ(RunF32("(x: f32[2,3]) -> f32[3,2]",
                   "  %x = f32[2,3] parameter(0)\n"
                   "  ROOT %t = f32[3,2] transpose(%x), dimensions={1,0}",
                   {Lit<float>({2, 3}, k23)}),
            (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(RunF32("(x: f32[2,3]) -> f32[3,2]",
                   "  %x = f32[2,3] parameter(0)\n  ROOT %t = f32[3,2] reshape(%x)",
                   {Lit<float>({2, 3}, k23)}),
            k23);
}

TEST(ShapeOpsTest, SliceWithStride) {
  EXPECT_EQ(RunF32("(x: f32[2,3]) -> f32[2,2]",
                   "  %x = f32[2,3] parameter(0)\n"
                   "  ROOT %s = f32[2,2] slice(%x), slice={[0:2:1], [0:3:2]}",
                   {Lit<float>({2, 3}, k23)}),
            (std::vector<float>{1, 3, 4, 6}));
}

TEST(ShapeOpsTest, DynamicSliceClampsStarts) {
  EXPECT_EQ(RunF32("(x: f32[2,3], i: s32[], j: s32[]) -> f32[1,2]",
                   "  %x = f32[2,3] parameter(0)\n  %i = s32[] parameter(1)\n"
                   "  %j = s32[] parameter(2)\n"
                   "  ROOT %d = f32[1,2] dynamic-slice(%x, %i, %j), dynamic_slice_sizes={1,2}",
                   {Lit<float>({2, 3}, k23), Lit<int32_t>({}, {5}), Lit<int32_t>({}, {-3})}),
            (std::vector<float>{4, 5}));
}

TEST(ShapeOpsTest, DynamicUpdateSliceClampsStarts) {
  EXPECT_EQ(RunF32("(x: f32[2,3], u: f32[1,2], i: s32[], j: s32[]) -> f32[2,3]",
                   "  %x = f32[2,3] parameter(0)\n  %u = f32[1,2] parameter(1)\n"
                   "  %i = s32[] parameter(2)\n  %j = s32[] parameter(3)\n"
                   "  ROOT %d = f32[2,3] dynamic-update-slice(%x, %u, %i, %j)",
                   {Lit<float>({2, 3}, k23), Lit<float>({1, 2}, {9, 8}), Lit<int32_t>({}, {0}),
                    Lit<int32_t>({}, {7})}),
            (std::vector<float>{1, 9, 8, 4, 5, 6}));
}

TEST(ShapeOpsTest, Concatenate) {
  EXPECT_EQ(RunF32("(x: f32[2,3], y: f32[2,1]) -> f32[2,4]",
                   "  %x = f32[2,3] parameter(0)\n  %y = f32[2,1] parameter(1)\n"
                   "  ROOT %c = f32[2,4] concatenate(%x, %y), dimensions={1}",
                   {Lit<float>({2, 3}, k23), Lit<float>({2, 1}, {0, -1})}),
            (std::vector<float>{1, 2, 3, 0, 4, 5, 6, -1}));
}

TEST(ShapeOpsTest, PadWithInteriorAndNegativeEdges) {
  // dim0: lo=1 hi=0; dim1: lo=-1 (crop) hi=1 interior=1: row [a,0,b,0,c] cropped by 1 ->
  // [0,b,0,c,9pad]
  EXPECT_EQ(RunF32("(x: f32[2,3]) -> f32[3,5]",
                   "  %x = f32[2,3] parameter(0)\n  %z = f32[] constant(0)\n"
                   "  ROOT %p = f32[3,5] pad(%x, %z), padding=1_0x-1_1_1",
                   {Lit<float>({2, 3}, k23)}),
            (std::vector<float>{0, 0, 0, 0, 0,  //
                                0, 2, 0, 3, 0,  //
                                0, 5, 0, 6, 0}));
}

// get-dimension-size: a dim of the operand's shape as s32 (HLO.md).
TEST(ShapeOpsTest, GetDimensionSize) {
  absl::StatusOr<Literal> r =
      ParseAndRun(Entry("(x: f32[5,3]) -> (s32[], s32[])",
                        "  %x = f32[5,3] parameter(0)\n"
                        "  %n = s32[] get-dimension-size(%x), dimensions={0}\n"
                        "  %m = s32[] get-dimension-size(%x), dimensions={1}\n"
                        "  ROOT %t = (s32[], s32[]) tuple(%n, %m)"),
                  {Lit<float>({5, 3}, std::vector<float>(15, 0.5f))});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int32_t>(r->elements()[0]), (std::vector<int32_t>{5}));
  EXPECT_EQ(Values<int32_t>(r->elements()[1]), (std::vector<int32_t>{3}));
}

TEST(ShapeOpsTest, ReverseAndIota) {
  EXPECT_EQ(RunF32("(x: f32[2,3]) -> f32[2,3]",
                   "  %x = f32[2,3] parameter(0)\n"
                   "  ROOT %r = f32[2,3] reverse(%x), dimensions={1}",
                   {Lit<float>({2, 3}, k23)}),
            (std::vector<float>{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(RunF32("() -> f32[2,3]", "  ROOT %i = f32[2,3] iota(), iota_dimension=0", {}),
            (std::vector<float>{0, 0, 0, 1, 1, 1}));
}

}  // namespace
}  // namespace tfjit::hlo
