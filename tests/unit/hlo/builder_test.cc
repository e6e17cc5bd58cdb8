// Tests for Builder: shape-checked creation, metadata stamping and shared combiners.
#include "compiler/hlo/builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler/hlo/module.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"

namespace tfjit::hlo {
namespace {

using ::testing::HasSubstr;

TEST(BuilderTest, BuildsVerifiableReduction) {
  Module m("m");
  Computation* add = GetOrAddScalarBinaryComputation(&m, Opcode::kAdd, DType::kFloat32);
  Computation* entry = m.AddComputation("main");
  m.set_entry(entry);
  Builder b(entry);
  Instruction* x = b.Parameter(0, Shape(DType::kFloat32, {4, 8}), "x");
  Instruction* y = b.Parameter(1, Shape(DType::kFloat32, {8}), "y");
  b.set_metadata({"dense/BiasAdd", "BiasAdd", "", 0});
  auto yb = b.Broadcast(y, {4, 8}, {1});
  ASSERT_TRUE(yb.ok()) << yb.status();
  b.set_metadata({});
  auto s = b.Binary(Opcode::kAdd, x, *yb);
  ASSERT_TRUE(s.ok());
  Instruction* zero = b.ScalarConstant<float>(DType::kFloat32, 0.0f);
  auto r = b.Reduce(*s, zero, {1}, add);
  ASSERT_TRUE(r.ok()) << r.status();
  entry->set_root(*r);
  EXPECT_EQ((*r)->shape().ToString(), "f32[4]");
  EXPECT_EQ((*yb)->metadata().tf_op, "BiasAdd");
  EXPECT_TRUE((*s)->metadata().empty());
  EXPECT_TRUE(VerifyModule(m).ok()) << VerifyModule(m);
  EXPECT_EQ(PrintModule(m),
            "HloModule m\n\n"
            "%add_f32 (lhs: f32[], rhs: f32[]) -> f32[] {\n"
            "  %lhs = f32[] parameter(0)\n"
            "  %rhs = f32[] parameter(1)\n"
            "  ROOT %add = f32[] add(%lhs, %rhs)\n"
            "}\n\n"
            "ENTRY %main (x: f32[4,8], y: f32[8]) -> f32[4] {\n"
            "  %x = f32[4,8] parameter(0)\n"
            "  %y = f32[8] parameter(1)\n"
            "  %broadcast = f32[4,8] broadcast(%y), dimensions={1}, "
            "meta={tf_node=\"dense/BiasAdd\" tf_op=\"BiasAdd\"}\n"
            "  %add.1 = f32[4,8] add(%x, %broadcast)\n"
            "  %constant = f32[] constant(0)\n"
            "  ROOT %reduce = f32[4] reduce(%add.1, %constant), dimensions={1}, to_apply=%add_f32\n"
            "}\n");
}

TEST(BuilderTest, RejectsBadShapesAndArity) {
  Module m("m");
  Computation* c = m.AddComputation("main");
  Builder b(c);
  Instruction* x = b.Parameter(0, Shape(DType::kFloat32, {2}));
  Instruction* y = b.Parameter(1, Shape(DType::kFloat32, {3}));
  auto bad = b.Binary(Opcode::kAdd, x, y);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("add(f32[2], f32[3])"));
  auto arity = b.Add(Opcode::kNegate, {x, y});
  ASSERT_FALSE(arity.ok());
  EXPECT_THAT(arity.status().message(), HasSubstr("expected 1 operands, got 2"));
  EXPECT_EQ(c->instruction_count(), 2);  // nothing was added on failure
}

TEST(BuilderTest, TypedHelpers) {
  Module m("m");
  Computation* c = m.AddComputation("main");
  Builder b(c);
  Instruction* x = b.Parameter(0, Shape(DType::kFloat32, {2, 3}));
  EXPECT_EQ((*b.Convert(x, DType::kInt32))->shape().ToString(), "s32[2,3]");
  EXPECT_EQ((*b.Reshape(x, {3, 2}))->shape().ToString(), "f32[3,2]");
  EXPECT_EQ((*b.Transpose(x, {1, 0}))->shape().ToString(), "f32[3,2]");
  EXPECT_EQ((*b.Slice(x, {{0, 2, 1}, {1, 3, 1}}))->shape().ToString(), "f32[2,2]");
  EXPECT_EQ((*b.Concatenate({x, x}, 1))->shape().ToString(), "f32[2,6]");
  EXPECT_EQ((*b.Iota(Shape(DType::kInt32, {4}), 0))->shape().ToString(), "s32[4]");
  auto cmp = b.Compare(ComparisonDirection::kGe, x, x);
  EXPECT_EQ((*cmp)->shape().ToString(), "pred[2,3]");
  EXPECT_EQ((*b.Select(*cmp, x, x))->shape().ToString(), "f32[2,3]");
  Instruction* lo = b.ScalarConstant<float>(DType::kFloat32, -1.0f);
  EXPECT_EQ((*b.Clamp(lo, x, lo))->shape().ToString(), "f32[2,3]");
  auto dot = b.Dot(x, *b.Transpose(x, {1, 0}), DotDims{{}, {}, {1}, {0}});
  EXPECT_EQ((*dot)->shape().ToString(), "f32[2,2]");
  auto t = b.Tuple({x, *dot});
  EXPECT_EQ((*b.GetTupleElement(*t, 1))->shape().ToString(), "f32[2,2]");
  EXPECT_FALSE(b.GetTupleElement(*t, 2).ok());
}

TEST(BuilderTest, ScalarCombinersAreNamedAndReused) {
  Module m("m");
  Computation* add = GetOrAddScalarBinaryComputation(&m, Opcode::kAdd, DType::kFloat32);
  Computation* max = GetOrAddScalarBinaryComputation(&m, Opcode::kMaximum, DType::kFloat32);
  Computation* add_s32 = GetOrAddScalarBinaryComputation(&m, Opcode::kAdd, DType::kInt32);
  EXPECT_EQ(add->name(), "add_f32");
  EXPECT_EQ(max->name(), "max_f32");
  EXPECT_EQ(add_s32->name(), "add_s32");
  EXPECT_EQ(GetOrAddScalarBinaryComputation(&m, Opcode::kAdd, DType::kFloat32), add);
  EXPECT_EQ(m.computations().size(), 3u);
  EXPECT_EQ(max->root()->opcode(), Opcode::kMaximum);
}

}  // namespace
}  // namespace tfjit::hlo
