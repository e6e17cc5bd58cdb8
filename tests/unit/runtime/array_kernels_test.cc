// Tests for runtime/kernels/array_kernels.cc: Const, Identity family, Placeholder, Reshape,
// Transpose, ConcatV2, Pack, Shape, Squeeze, ExpandDims, Fill, ZerosLike, OnesLike; and
// graph_debug_kernels.cc's CheckNumerics/CheckNumericsV2 messages (TF's check_numerics_op.cc text).
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/runtime/kernel_test_util.h"

namespace tfjit::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace ::tfjit::runtime::testing;  // NOLINT: test builders

const auto kInvalid = absl::StatusCode::kInvalidArgument;

TEST(ArrayKernelsTest, ConstDecodesValue) {
  auto out = OpRunner("Const")
                 .Type("dtype", DType::kFloat32)
                 .RawAttr("value",
                          "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } "
                          "float_val: 1.5 float_val: -2 }")
                 .Run0();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ShapeString(), "float32[2]");
  EXPECT_THAT(Values(*out), ElementsAre(1.5, -2));
}

TEST(ArrayKernelsTest, IdentityFamilySharesBuffers) {
  const Tensor x = F32({2}, {1, 2});
  for (const char* op : {"Identity", "StopGradient"}) {
    auto out = OpRunner(op).T(DType::kFloat32).Input(x).Run0();
    ASSERT_TRUE(out.ok()) << op << out.status();
    EXPECT_TRUE(out->SharesBufferWith(x));
  }
  auto n = OpRunner("IdentityN")
               .RawAttr("T", "list { type: DT_FLOAT type: DT_INT32 }")
               .Input(x)
               .Input(I32({}, {7}))
               .Run();
  ASSERT_TRUE(n.ok()) << n.status();
  ASSERT_EQ(n->size(), 2u);
  EXPECT_THAT(Values((*n)[1]), ElementsAre(7));
  auto noop = OpRunner("NoOp").Run();
  ASSERT_TRUE(noop.ok()) << noop.status();
  EXPECT_TRUE(noop->empty());
}

TEST(ArrayKernelsTest, PlaceholderMustBeFed) {
  TFJIT_EXPECT_ERROR(OpRunner("Placeholder").Type("dtype", DType::kFloat32).Run0(), kInvalid,
                     "You must feed a value for placeholder tensor 'op' with dtype float32");
}

TEST(ArrayKernelsTest, ReshapeInfersMinusOne) {
  const Tensor x = I32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = OpRunner("Reshape").T(DType::kInt32).Input(x).Input(I32({2}, {-1, 2})).Run0();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ShapeString(), "int32[3,2]");
  EXPECT_TRUE(out->SharesBufferWith(x));
  auto scalar =
      OpRunner("Reshape").T(DType::kInt32).Input(I32({1, 1}, {5})).Input(I32({0}, {})).Run0();
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_EQ(scalar->rank(), 0);
}

TEST(ArrayKernelsTest, ReshapeErrors) {
  auto reshape = [](const Tensor& shape) {
    return OpRunner("Reshape").T(DType::kFloat32).Input(F32({2, 3}, {})).Input(shape).Run0();
  };
  TFJIT_EXPECT_ERROR(reshape(I32({2}, {2, 4})), kInvalid,
                     "node 'op' (Reshape): Input to reshape is a tensor with 6 values, but the "
                     "requested shape has 8");
  TFJIT_EXPECT_ERROR(reshape(I32({2}, {-1, 4})), kInvalid, "requires a multiple of 4");
  TFJIT_EXPECT_ERROR(reshape(I32({2}, {-1, -1})), kInvalid, "Only one input size may be -1");
  TFJIT_EXPECT_ERROR(reshape(I32({2}, {-2, 3})), kInvalid, "Size 0 must be non-negative");
  TFJIT_EXPECT_ERROR(reshape(I32({}, {6})), kInvalid, "shape must be a vector");
  TFJIT_EXPECT_ERROR(
      OpRunner("Reshape").T(DType::kFloat32).Input(F32({0, 3}, {})).Input(I32({2}, {2, 3})).Run0(),
      kInvalid, "Input to reshape is a tensor with 0 values, but the requested shape has 6");
}

// TF's answers for empty tensors (reshape_op.h leaves zero-sized requested dims out of the
// product it infers -1 from).
TEST(ArrayKernelsTest, ReshapeEmptyInfersAsTF) {
  auto shape_of = [](std::vector<int64_t> in, std::vector<int32_t> to) {
    auto r = OpRunner("Reshape")
                 .T(DType::kFloat32)
                 .Input(F32(in, {}))
                 .Input(I32({static_cast<int64_t>(to.size())}, to))
                 .Run0();
    return r.ok() ? r->ShapeString() : std::string(r.status().message());
  };
  EXPECT_EQ(shape_of({0, 3}, {-1, 0}), "float32[3,0]");
  EXPECT_EQ(shape_of({0, 3}, {-1, 3}), "float32[0,3]");
  EXPECT_EQ(shape_of({0, 3}, {0, -1}), "float32[0,3]");
  EXPECT_EQ(shape_of({0}, {-1}), "float32[0]");
  EXPECT_EQ(shape_of({2, 0, 5}, {5, -1, 0}), "float32[5,2,0]");
}

TEST(ArrayKernelsTest, TransposeRank2And3) {
  auto t2 = OpRunner("Transpose")
                .T(DType::kFloat32)
                .Input(F32({2, 3}, {1, 2, 3, 4, 5, 6}))
                .Input(I32({2}, {1, 0}))
                .Run0();
  ASSERT_TRUE(t2.ok()) << t2.status();
  EXPECT_EQ(t2->ShapeString(), "float32[3,2]");
  EXPECT_THAT(Values(*t2), ElementsAre(1, 4, 2, 5, 3, 6));
  // x[i][j][k] = 4i + 2j + k over [2,2,2]; perm (2,0,1) gives y[k][i][j].
  ThreadPool pool(2);
  auto t3 = OpRunner("Transpose")
                .T(DType::kInt64)
                .Type("Tperm", DType::kInt64)
                .Input(I64({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}))
                .Input(I64({3}, {2, 0, 1}))
                .Pool(&pool)
                .Run0();
  ASSERT_TRUE(t3.ok()) << t3.status();
  EXPECT_THAT(Values(*t3), ElementsAre(0, 2, 4, 6, 1, 3, 5, 7));
  auto b = OpRunner("Transpose")
               .T(DType::kBool)
               .Input(Bool({1, 2}, {true, false}))
               .Input(I32({2}, {1, 0}))
               .Run0();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->ShapeString(), "bool[2,1]");
}

TEST(ArrayKernelsTest, TransposeErrors) {
  auto transpose = [](const Tensor& perm) {
    return OpRunner("Transpose").T(DType::kFloat32).Input(F32({2, 3}, {})).Input(perm).Run0();
  };
  TFJIT_EXPECT_ERROR(transpose(I32({3}, {0, 1, 2})), kInvalid,
                     "transpose expects a vector of size 2");
  TFJIT_EXPECT_ERROR(transpose(I32({2}, {-1, 0})), kInvalid, "perm [-1,0] is not a permutation");
  TFJIT_EXPECT_ERROR(transpose(I32({2}, {1, 1})), kInvalid, "is not a permutation of [0, 2)");
}

absl::StatusOr<Tensor> Concat(const std::vector<Tensor>& values, int axis) {
  OpRunner r("ConcatV2");
  r.T(values.empty() ? DType::kFloat32 : values[0].dtype()).Int("N", values.size());
  for (const Tensor& v : values) r.Input(v);
  return r.Input(I32({}, {axis})).Run0();
}

TEST(ArrayKernelsTest, ConcatV2AxesAndEmptyInputs) {
  const Tensor a = F32({2, 1}, {1, 2});
  const Tensor b = F32({2, 2}, {3, 4, 5, 6});
  auto c1 = Concat({a, b}, 1);
  ASSERT_TRUE(c1.ok()) << c1.status();
  EXPECT_EQ(c1->ShapeString(), "float32[2,3]");
  EXPECT_THAT(Values(*c1), ElementsAre(1, 3, 4, 2, 5, 6));
  auto neg = Concat({a, F32({2, 0}, {}), b}, -1);
  ASSERT_TRUE(neg.ok()) << neg.status();
  EXPECT_THAT(Values(*neg), ElementsAre(1, 3, 4, 2, 5, 6));
  auto c0 = Concat({F32({1, 2}, {1, 2}), F32({0, 2}, {}), F32({1, 2}, {3, 4})}, 0);
  ASSERT_TRUE(c0.ok()) << c0.status();
  EXPECT_EQ(c0->ShapeString(), "float32[2,2]");
  EXPECT_THAT(Values(*c0), ElementsAre(1, 2, 3, 4));
}

TEST(ArrayKernelsTest, ConcatV2Errors) {
  TFJIT_EXPECT_ERROR(Concat({F32({2, 1}, {}), F32({3, 1}, {})}, 1), kInvalid,
                     "values[0] is float32[2,1] but values[1] is float32[3,1]");
  TFJIT_EXPECT_ERROR(Concat({F32({2, 1}, {}), F32({2}, {})}, 0), kInvalid, "same dtype and rank");
  TFJIT_EXPECT_ERROR(Concat({F32({2, 1}, {}), F32({2, 1}, {})}, 2), kInvalid,
                     "axis 2 is out of range [-2, 2)");
  TFJIT_EXPECT_ERROR(Concat({F32({}, {1}), F32({}, {2})}, 0), kInvalid, "use Pack instead");
}

TEST(ArrayKernelsTest, PackAxes) {
  const Tensor a = I32({2}, {1, 2});
  const Tensor b = I32({2}, {3, 4});
  auto p0 = OpRunner("Pack").T(DType::kInt32).Int("N", 2).Input(a).Input(b).Run0();
  ASSERT_TRUE(p0.ok()) << p0.status();
  EXPECT_EQ(p0->ShapeString(), "int32[2,2]");
  EXPECT_THAT(Values(*p0), ElementsAre(1, 2, 3, 4));
  auto p1 = OpRunner("Pack").T(DType::kInt32).Int("N", 2).Int("axis", -1).Input(a).Input(b).Run0();
  ASSERT_TRUE(p1.ok()) << p1.status();
  EXPECT_THAT(Values(*p1), ElementsAre(1, 3, 2, 4));
  auto scalars = OpRunner("Pack")
                     .T(DType::kFloat32)
                     .Int("N", 2)
                     .Input(F32({}, {1}))
                     .Input(F32({}, {2}))
                     .Run0();
  ASSERT_TRUE(scalars.ok()) << scalars.status();
  EXPECT_EQ(scalars->ShapeString(), "float32[2]");
  TFJIT_EXPECT_ERROR(
      OpRunner("Pack").T(DType::kInt32).Int("N", 2).Input(a).Input(I32({3}, {})).Run0(), kInvalid,
      "Shapes of all inputs must match: values[0] is int32[2] != "
      "values[1] is int32[3]");
  TFJIT_EXPECT_ERROR(OpRunner("Pack").T(DType::kInt32).Int("N", 1).Int("axis", 3).Input(a).Run0(),
                     kInvalid, "axis 3 is out of range [-2, 2)");
}

TEST(ArrayKernelsTest, ShapeOutTypes) {
  auto s32 = OpRunner("Shape").T(DType::kFloat32).Input(F32({2, 0, 5}, {})).Run0();
  ASSERT_TRUE(s32.ok()) << s32.status();
  EXPECT_EQ(s32->ShapeString(), "int32[3]");
  EXPECT_THAT(Values(*s32), ElementsAre(2, 0, 5));
  auto s64 = OpRunner("Shape")
                 .T(DType::kFloat32)
                 .Type("out_type", DType::kInt64)
                 .Input(F32({}, {1}))
                 .Run0();
  ASSERT_TRUE(s64.ok()) << s64.status();
  EXPECT_EQ(s64->ShapeString(), "int64[0]");
}

TEST(ArrayKernelsTest, SqueezeAndExpandDims) {
  const Tensor x = F32({1, 2, 1}, {1, 2});
  auto all = OpRunner("Squeeze").T(DType::kFloat32).Input(x).Run0();
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->ShapeString(), "float32[2]");
  auto some = OpRunner("Squeeze").T(DType::kFloat32).Ints("squeeze_dims", {-1}).Input(x).Run0();
  ASSERT_TRUE(some.ok()) << some.status();
  EXPECT_EQ(some->ShapeString(), "float32[1,2]");
  TFJIT_EXPECT_ERROR(
      OpRunner("Squeeze").T(DType::kFloat32).Ints("squeeze_dims", {1}).Input(x).Run0(), kInvalid,
      "Can not squeeze dim[1], expected a dimension of 1, got 2");
  auto e =
      OpRunner("ExpandDims").T(DType::kFloat32).Input(F32({2}, {1, 2})).Input(I32({}, {-1})).Run0();
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->ShapeString(), "float32[2,1]");
  TFJIT_EXPECT_ERROR(
      OpRunner("ExpandDims").T(DType::kFloat32).Input(F32({2}, {1, 2})).Input(I32({}, {3})).Run0(),
      kInvalid, "axis 3 is out of range [-2, 2)");
}

TEST(ArrayKernelsTest, FillZerosOnes) {
  auto fill =
      OpRunner("Fill").T(DType::kFloat32).Input(I32({2}, {2, 2})).Input(F32({}, {7})).Run0();
  ASSERT_TRUE(fill.ok()) << fill.status();
  EXPECT_THAT(Values(*fill), ElementsAre(7, 7, 7, 7));
  TFJIT_EXPECT_ERROR(
      OpRunner("Fill").T(DType::kFloat32).Input(I32({1}, {-2})).Input(F32({}, {7})).Run0(),
      kInvalid, "negative size");
  TFJIT_EXPECT_ERROR(
      OpRunner("Fill").T(DType::kFloat32).Input(I32({1}, {2})).Input(F32({1}, {7})).Run0(),
      kInvalid, "value must be a scalar");
  auto zeros = OpRunner("ZerosLike").T(DType::kInt32).Input(I32({2}, {5, 6})).Run0();
  ASSERT_TRUE(zeros.ok()) << zeros.status();
  EXPECT_THAT(Values(*zeros), ElementsAre(0, 0));
  auto ones = OpRunner("OnesLike").T(DType::kFloat16).Input(F16({2}, {5, 6})).Run0();
  ASSERT_TRUE(ones.ok()) << ones.status();
  EXPECT_THAT(Values(*ones), ElementsAre(1, 1));
}

TEST(DebugKernelsTest, CheckNumericsNamesWhatTheTensorHeldAsTfDoes) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto run = [](const char* op, std::vector<float> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    return OpRunner(op).T(DType::kFloat32).Str("message", "check").Input(F32({n}, v)).Run0();
  };
  struct Want {
    std::vector<float> v;
    const char* v1;
    const char* v2;
  };
  for (const Want& w :
       std::vector<Want>{{{1, nan}, "NaN", "NaN"},
                         {{inf, 2}, "Inf", "+Inf"},
                         {{-inf, 2}, "Inf", "-Inf"},
                         {{nan, -inf}, "Inf and NaN", "-Inf and NaN"},
                         {{inf, -inf}, "Inf", "-Inf and +Inf"},
                         {{nan, inf, -inf}, "Inf and NaN", "-Inf, +Inf, and NaN"}}) {
    for (const char* op : {"CheckNumerics", "CheckNumericsV2"}) {
      auto out = run(op, w.v);
      ASSERT_FALSE(out.ok()) << op;
      const std::string want = absl::StrCat(
          "check : Tensor had ", std::string(op) == "CheckNumerics" ? w.v1 : w.v2, " values");
      EXPECT_TRUE(absl::StrContains(out.status().message(), want))
          << op << ": " << out.status() << " wants " << want;
    }
  }
  auto fine = run("CheckNumericsV2", {1, -2, 0});
  ASSERT_TRUE(fine.ok()) << fine.status();
  EXPECT_THAT(Values(*fine), ElementsAre(1, -2, 0));
}

}  // namespace
}  // namespace tfjit::runtime
