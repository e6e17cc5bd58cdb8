// Tests for runtime/kernels/linalg_matmul_kernels.cc: BatchMatMul{,V2,V3} (broadcast batch dims,
// adjoints, shape errors) and Einsum (matmul, trace, diagonal, ellipsis, implicit output); its
// MatMul is tested in math_kernels_test.cc, from when math_kernels.cc held it.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/runtime/kernel_test_util.h"

namespace tfjit::runtime {
namespace {

using ::testing::ElementsAre;
using namespace ::tfjit::runtime::testing;  // NOLINT: test builders

TEST(BatchMatMulKernelsTest, BroadcastsBatchAndAppliesAdjoints) {
  // x [2,1,2] (two row vectors), y [2,2] broadcast to both batches.
  auto out = OpRunner("BatchMatMulV2")
                 .T(DType::kFloat32)
                 .Input(F32({2, 1, 2}, {1, 2, 3, 4}))
                 .Input(F32({2, 2}, {1, 10, 100, 1000}))
                 .Run0();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ShapeString(), "float32[2,1,2]");
  EXPECT_THAT(Values(*out), ElementsAre(201, 2010, 403, 4030));
  auto adj = OpRunner("BatchMatMul")
                 .T(DType::kInt32)
                 .Bool("adj_x", true)
                 .Bool("adj_y", true)
                 .Input(I32({1, 2, 1}, {1, 2}))
                 .Input(I32({1, 1, 2}, {3, 4}))
                 .Run0();
  ASSERT_TRUE(adj.ok()) << adj.status();
  EXPECT_EQ(adj->ShapeString(), "int32[1,1,1]");
  EXPECT_THAT(Values(*adj), ElementsAre(11));
  auto v3 = OpRunner("BatchMatMulV3")
                .Type("Ta", DType::kFloat64)
                .Type("Tb", DType::kFloat64)
                .Type("Tout", DType::kFloat64)
                .Input(F64({1, 2}, {1, 2}))
                .Input(F64({2, 1}, {3, 4}))
                .Run0();
  ASSERT_TRUE(v3.ok()) << v3.status();
  EXPECT_THAT(Values(*v3), ElementsAre(11));
}

TEST(BatchMatMulKernelsTest, ShapeErrors) {
  auto inner = OpRunner("BatchMatMulV2")
                   .T(DType::kFloat32)
                   .Input(F32({2, 3}, {}))
                   .Input(F32({2, 3}, {}))
                   .Run0();
  TFJIT_EXPECT_ERROR(inner, absl::StatusCode::kInvalidArgument, "Matrix size-incompatible");
  auto batch = OpRunner("BatchMatMulV2")
                   .T(DType::kFloat32)
                   .Input(F32({2, 1, 1}, {}))
                   .Input(F32({3, 1, 1}, {}))
                   .Run0();
  TFJIT_EXPECT_ERROR(batch, absl::StatusCode::kInvalidArgument, "compatible batch dimensions");
  auto v1 = OpRunner("BatchMatMul")
                .T(DType::kFloat32)
                .Input(F32({2, 1, 1}, {}))
                .Input(F32({1, 1, 1}, {}))
                .Run0();
  TFJIT_EXPECT_ERROR(v1, absl::StatusCode::kInvalidArgument, "compatible batch dimensions");
}

absl::StatusOr<Tensor> Einsum(const std::string& eq, std::vector<Tensor> in) {
  OpRunner r("Einsum");
  r.T(in[0].dtype()).Int("N", static_cast<int64_t>(in.size())).Str("equation", eq);
  for (Tensor& t : in) r.Input(t);
  return r.Run0();
}

TEST(BatchMatMulKernelsTest, EinsumForms) {
  const Tensor a = I32({2, 2}, {1, 2, 3, 4});
  auto mm = Einsum("ij,jk->ik", {a, a});
  auto trace = Einsum("ii->", {a});
  auto diag = Einsum("ii->i", {a});
  auto implicit = Einsum("ij,jk", {a, a});
  auto ell = Einsum("...ij,...j->...i", {I32({2, 1, 2}, {1, 2, 3, 4}), I32({2}, {10, 1})});
  ASSERT_TRUE(mm.ok() && trace.ok() && diag.ok() && implicit.ok() && ell.ok())
      << mm.status() << trace.status() << diag.status() << implicit.status() << ell.status();
  EXPECT_THAT(Values(*mm), ElementsAre(7, 10, 15, 22));
  EXPECT_THAT(Values(*trace), ElementsAre(5));
  EXPECT_THAT(Values(*diag), ElementsAre(1, 4));
  EXPECT_THAT(Values(*implicit), ElementsAre(7, 10, 15, 22));
  EXPECT_EQ(ell->ShapeString(), "int32[2,1]");
  EXPECT_THAT(Values(*ell), ElementsAre(12, 34));
  TFJIT_EXPECT_ERROR(Einsum("ij,jk->ik", {a, I32({3}, {1, 2, 3})}),
                     absl::StatusCode::kInvalidArgument, "does not match an operand of rank 1");
  TFJIT_EXPECT_ERROR(Einsum("ij,jk->ik", {a, I32({3, 1}, {1, 2, 3})}),
                     absl::StatusCode::kInvalidArgument, "label sizes disagree");
}

}  // namespace
}  // namespace tfjit::runtime
