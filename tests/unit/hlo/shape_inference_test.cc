// Tests for InferShape: accepted shapes per opcode family and the errors for bad ones.
#include "compiler/hlo/shape_inference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler/hlo/builder.h"
#include "compiler/hlo/module.h"

namespace tfjit::hlo {
namespace {

using ::testing::HasSubstr;

Shape F32(std::vector<int64_t> dims) { return Shape(DType::kFloat32, std::move(dims)); }
Shape S32(std::vector<int64_t> dims) { return Shape(DType::kInt32, std::move(dims)); }
Shape Pred(std::vector<int64_t> dims) { return Shape(DType::kBool, std::move(dims)); }

absl::StatusOr<Shape> Infer(Opcode op, std::vector<Shape> operands, const Attributes& attrs = {},
                            std::vector<Computation*> called = {}, const Shape& hint = Shape()) {
  std::vector<const Shape*> ptrs;
  for (const Shape& s : operands) ptrs.push_back(&s);
  return InferShape(op, ptrs, attrs, called, hint);
}

std::string ErrorOf(const absl::StatusOr<Shape>& s) {
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(s.status().message());
}

TEST(ShapeInferenceTest, Elementwise) {
  EXPECT_EQ(*Infer(Opcode::kAdd, {F32({2, 3}), F32({2, 3})}), F32({2, 3}));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kAdd, {F32({2, 3}), F32({3, 2})})),
              HasSubstr("add(f32[2,3], f32[3,2]): operand shapes must be identical"));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kAdd, {F32({2})})), HasSubstr("expected 2 operands"));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kExp, {S32({2})})), HasSubstr("floating-point"));
  EXPECT_EQ(*Infer(Opcode::kNot, {Pred({2})}), Pred({2}));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kAnd, {F32({2}), F32({2})})), HasSubstr("pred or integer"));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kShiftLeft, {Pred({2}), Pred({2})})), HasSubstr("integers"));
  EXPECT_EQ(*Infer(Opcode::kCompare, {S32({4}), S32({4})}), Pred({4}));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kCompare, {S32({4}), F32({4})})),
              HasSubstr("compare(s32[4], f32[4]): operand shapes must be identical"));
  EXPECT_EQ(*Infer(Opcode::kIsFinite, {F32({4})}), Pred({4}));
}

TEST(ShapeInferenceTest, SelectClampConvert) {
  EXPECT_EQ(*Infer(Opcode::kSelect, {Pred({}), F32({3}), F32({3})}), F32({3}));
  EXPECT_EQ(*Infer(Opcode::kSelect, {Pred({3}), F32({3}), F32({3})}), F32({3}));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kSelect, {Pred({2}), F32({3}), F32({3})})),
              HasSubstr("predicate must be a scalar"));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kSelect, {F32({3}), F32({3}), F32({3})})),
              HasSubstr("predicate must be pred"));
  EXPECT_EQ(*Infer(Opcode::kClamp, {F32({}), F32({3}), F32({3})}), F32({3}));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kClamp, {F32({2}), F32({3}), F32({})})), HasSubstr("min/max"));
  EXPECT_EQ(*Infer(Opcode::kConvert, {F32({3})}, {}, {}, S32({3})), S32({3}));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kConvert, {F32({3})}, {}, {}, S32({4}))),
              HasSubstr("changes the dims"));
  EXPECT_THAT(
      ErrorOf(Infer(Opcode::kBitcastConvert, {F32({3})}, {}, {}, Shape(DType::kInt64, {3}))),
      HasSubstr("bit widths differ"));
}

TEST(ShapeInferenceTest, BroadcastReshapeTranspose) {
  Attributes a;
  a.dimensions = {1};
  EXPECT_EQ(*Infer(Opcode::kBroadcast, {F32({8})}, a, {}, F32({4, 8})), F32({4, 8}));
  a.dimensions = {0};
  EXPECT_THAT(ErrorOf(Infer(Opcode::kBroadcast, {F32({8})}, a, {}, F32({4, 8}))),
              HasSubstr("do not map onto f32[4,8]"));
  a.dimensions = {1, 0};
  EXPECT_THAT(ErrorOf(Infer(Opcode::kBroadcast, {F32({4, 4})}, a, {}, F32({4, 4}))),
              HasSubstr("increasing"));
  EXPECT_EQ(*Infer(Opcode::kReshape, {F32({2, 6})}, {}, {}, F32({3, 4})), F32({3, 4}));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kReshape, {F32({2, 6})}, {}, {}, F32({5}))),
              HasSubstr("element count"));
  a.dimensions = {2, 0, 1};
  EXPECT_EQ(*Infer(Opcode::kTranspose, {F32({2, 3, 4})}, a), F32({4, 2, 3}));
  a.dimensions = {0, 0, 1};
  EXPECT_THAT(ErrorOf(Infer(Opcode::kTranspose, {F32({2, 3, 4})}, a)), HasSubstr("repeats"));
}

TEST(ShapeInferenceTest, SliceDynamicSliceConcatPadReverse) {
  Attributes a;
  a.slice = {{0, 4, 1}, {2, 8, 2}};
  EXPECT_EQ(*Infer(Opcode::kSlice, {F32({4, 8})}, a), F32({4, 3}));
  a.slice = {{0, 5, 1}, {2, 8, 2}};
  EXPECT_THAT(ErrorOf(Infer(Opcode::kSlice, {F32({4, 8})}, a)), HasSubstr("bad slice [0:5:1]"));
  Attributes ds;
  ds.dynamic_slice_sizes = {2, 2};
  EXPECT_EQ(*Infer(Opcode::kDynamicSlice, {F32({4, 8}), S32({}), S32({})}, ds), F32({2, 2}));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kDynamicSlice, {F32({4, 8}), S32({})}, ds)),
              HasSubstr("needs 2 start indices"));
  EXPECT_EQ(*Infer(Opcode::kDynamicUpdateSlice, {F32({4, 8}), F32({2, 2}), S32({}), S32({})}),
            F32({4, 8}));
  Attributes c;
  c.dimensions = {0};
  EXPECT_EQ(*Infer(Opcode::kConcatenate, {F32({2, 3}), F32({5, 3})}, c), F32({7, 3}));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kConcatenate, {F32({2, 3}), F32({5, 4})}, c)),
              HasSubstr("differ outside the concatenated dim"));
  Attributes p;
  p.padding = {{1, 2, 0}, {-1, 0, 1}};
  EXPECT_EQ(*Infer(Opcode::kPad, {F32({2, 3}), F32({})}, p), F32({5, 4}));
  p.padding = {{0, 0, -1}, {0, 0, 0}};
  EXPECT_THAT(ErrorOf(Infer(Opcode::kPad, {F32({2, 3}), F32({})}, p)), HasSubstr("bad padding"));
  Attributes r;
  r.dimensions = {0, 2};
  EXPECT_THAT(ErrorOf(Infer(Opcode::kReverse, {F32({2, 3})}, r)), HasSubstr("out of range"));
}

TEST(ShapeInferenceTest, ReduceAndReduceWindow) {
  Module m("m");
  Computation* add = GetOrAddScalarBinaryComputation(&m, Opcode::kAdd, DType::kFloat32);
  Attributes a;
  a.dimensions = {1};
  EXPECT_EQ(*Infer(Opcode::kReduce, {F32({4, 8}), F32({})}, a, {add}), F32({4}));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kReduce, {S32({4, 8}), S32({})}, a, {add})),
              HasSubstr("to_apply=%add_f32 must map"));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kReduce, {F32({4, 8}), F32({2})}, a, {add})),
              HasSubstr("init values must be scalars"));
  Attributes w;
  w.window = {{2, 2, 0, 0, 1, 1}, {3, 1, 1, 1, 1, 1}};
  EXPECT_EQ(*Infer(Opcode::kReduceWindow, {F32({5, 8}), F32({})}, w, {add}), F32({2, 8}));
}

TEST(ShapeInferenceTest, VariadicReduceReturnsTuple) {
  Module m("m");
  Computation* c = m.AddComputation("argmax");
  Builder b(c);
  Instruction* v0 = b.Parameter(0, F32({}));
  Instruction* i0 = b.Parameter(1, S32({}));
  b.Parameter(2, F32({}));
  b.Parameter(3, S32({}));
  c->set_root(*b.Tuple({v0, i0}));
  Attributes a;
  a.dimensions = {0};
  EXPECT_EQ(*Infer(Opcode::kReduce, {F32({4, 8}), S32({4, 8}), F32({}), S32({})}, a, {c}),
            Shape::Tuple({F32({8}), S32({8})}));
}

TEST(ShapeInferenceTest, Dot) {
  Attributes a;
  a.dot = {{0}, {0}, {2}, {1}};
  EXPECT_EQ(*Infer(Opcode::kDot, {F32({2, 3, 4}), F32({2, 4, 5})}, a), F32({2, 3, 5}));
  a.dot = {{}, {}, {1}, {0}};
  EXPECT_EQ(*Infer(Opcode::kDot, {F32({3, 4}), F32({4, 5})}, a), F32({3, 5}));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kDot, {F32({3, 4}), F32({5, 4})}, a)),
              HasSubstr("batch/contracting sizes differ"));
}

TEST(ShapeInferenceTest, ConvolutionNhwc) {
  Attributes a;
  a.window = {{3, 2, 0, 1, 1, 1}, {3, 2, 0, 1, 1, 1}};
  a.conv = {0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}};
  EXPECT_EQ(*Infer(Opcode::kConvolution, {F32({1, 8, 8, 3}), F32({3, 3, 3, 16})}, a),
            F32({1, 4, 4, 16}));
  a.feature_group_count = 3;
  EXPECT_EQ(*Infer(Opcode::kConvolution, {F32({1, 8, 8, 3}), F32({3, 3, 1, 6})}, a),
            F32({1, 4, 4, 6}));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kConvolution, {F32({1, 8, 8, 3}), F32({3, 3, 3, 6})}, a)),
              HasSubstr("feature_group_count=3"));
}

TEST(ShapeInferenceTest, GatherAndScatter) {
  // Gather rows of a [5,4] table with indices [3]: result [3,4] (tf.gather axis 0).
  Attributes g;
  g.gather = {{1}, {0}, {0}, 1, {1, 4}};
  EXPECT_EQ(*Infer(Opcode::kGather, {F32({5, 4}), S32({3})}, g), F32({3, 4}));
  g.gather.slice_sizes = {2, 4};
  EXPECT_THAT(ErrorOf(Infer(Opcode::kGather, {F32({5, 4}), S32({3})}, g)),
              HasSubstr("bad slice_sizes"));
  Module m("m");
  Computation* add = GetOrAddScalarBinaryComputation(&m, Opcode::kAdd, DType::kFloat32);
  Attributes s;
  s.scatter = {{1}, {0}, {0}, 1};
  EXPECT_EQ(*Infer(Opcode::kScatter, {F32({5, 4}), S32({3}), F32({3, 4})}, s, {add}), F32({5, 4}));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kScatter, {F32({5, 4}), S32({3}), F32({2, 4})}, s, {add})),
              HasSubstr("index batch dims"));
}

TEST(ShapeInferenceTest, TuplesAndControlFlow) {
  EXPECT_EQ(*Infer(Opcode::kTuple, {F32({2}), S32({})}), Shape::Tuple({F32({2}), S32({})}));
  Attributes gte;
  gte.tuple_index = 1;
  EXPECT_EQ(*Infer(Opcode::kGetTupleElement, {Shape::Tuple({F32({2}), S32({})})}, gte), S32({}));
  gte.tuple_index = 2;
  EXPECT_THAT(ErrorOf(Infer(Opcode::kGetTupleElement, {Shape::Tuple({F32({2})})}, gte)),
              HasSubstr("index=2"));
  Module m("m");
  Computation* cond = m.AddComputation("cond");
  Builder cb(cond);
  Instruction* cp = cb.Parameter(0, S32({}));
  cond->set_root(*cb.Compare(ComparisonDirection::kLt, cp, cp));
  Computation* body = m.AddComputation("body");
  Builder bb(body);
  Instruction* bp = bb.Parameter(0, S32({}));
  body->set_root(*bb.Binary(Opcode::kAdd, bp, bp));
  EXPECT_EQ(*Infer(Opcode::kWhile, {S32({})}, {}, {cond, body}), S32({}));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kWhile, {S32({})}, {}, {body, body})),
              HasSubstr("must return pred[]"));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kWhile, {F32({})}, {}, {cond, body})),
              HasSubstr("do not match the parameters of %cond"));
  EXPECT_EQ(*Infer(Opcode::kConditional, {Pred({}), S32({}), S32({})}, {}, {body, body}), S32({}));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kConditional, {F32({}), S32({}), S32({})}, {}, {body, body})),
              HasSubstr("selector"));
  EXPECT_EQ(*Infer(Opcode::kCall, {S32({})}, {}, {body}), S32({}));
  EXPECT_EQ(*Infer(Opcode::kFusion, {S32({})}, {}, {body}), S32({}));
}

TEST(ShapeInferenceTest, LeavesAndRng) {
  Attributes c;
  c.literal = Literal(F32({2}));
  EXPECT_EQ(*Infer(Opcode::kConstant, {}, c, {}, F32({2})), F32({2}));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kConstant, {}, c, {}, F32({3}))), HasSubstr("literal is"));
  Attributes iota;
  iota.iota_dimension = 1;
  EXPECT_EQ(*Infer(Opcode::kIota, {}, iota, {}, S32({2, 3})), S32({2, 3}));
  iota.iota_dimension = 2;
  EXPECT_THAT(ErrorOf(Infer(Opcode::kIota, {}, iota, {}, S32({2, 3}))),
              HasSubstr("iota_dimension=2"));
  const Shape state(DType::kUInt64, {3});
  const Shape bits(DType::kUInt32, {8});
  EXPECT_EQ(*Infer(Opcode::kRngBitGenerator, {state}, {}, {}, Shape::Tuple({state, bits})),
            Shape::Tuple({state, bits}));
  EXPECT_THAT(ErrorOf(Infer(Opcode::kRngBitGenerator, {S32({3})}, {}, {}, bits)),
              HasSubstr("u64[3]"));
  EXPECT_EQ(*Infer(Opcode::kCustomCall, {F32({2})}, {}, {}, F32({7})), F32({7}));
}

}  // namespace
}  // namespace tfjit::hlo
