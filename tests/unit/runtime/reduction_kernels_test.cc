// Tests for runtime/kernels/reduction_kernels.cc: axes (vector, scalar, negative), keep_dims,
// empty reductions, dtypes, NaN handling and axis errors.
#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/runtime/kernel_test_util.h"

namespace tfjit::runtime {
namespace {

using ::testing::ElementsAre;
using namespace ::tfjit::runtime::testing;  // NOLINT: test builders

absl::StatusOr<Tensor> Reduce(const std::string& op, const Tensor& x, const Tensor& axes,
                              bool keep_dims = false) {
  OpRunner r(op);
  if (op != "Any" && op != "All") r.T(x.dtype());
  return r.Type("Tidx", axes.dtype()).Bool("keep_dims", keep_dims).Input(x).Input(axes).Run0();
}

// x = [[1,2,3],[4,5,6]]
Tensor X() { return F32({2, 3}, {1, 2, 3, 4, 5, 6}); }

TEST(ReductionKernelsTest, SumOverEachAxis) {
  auto rows = Reduce("Sum", X(), I32({1}, {1}));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->ShapeString(), "float32[2]");
  EXPECT_THAT(Values(*rows), ElementsAre(6, 15));
  auto cols = Reduce("Sum", X(), I32({}, {0}));
  ASSERT_TRUE(cols.ok()) << cols.status();
  EXPECT_THAT(Values(*cols), ElementsAre(5, 7, 9));
  auto all = Reduce("Sum", X(), I64({2}, {0, 1}));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->rank(), 0);
  EXPECT_THAT(Values(*all), ElementsAre(21));
}

TEST(ReductionKernelsTest, NegativeAxesAndKeepDims) {
  auto out = Reduce("Max", X(), I32({1}, {-1}), /*keep_dims=*/true);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ShapeString(), "float32[2,1]");
  EXPECT_THAT(Values(*out), ElementsAre(3, 6));
  auto min = Reduce("Min", X(), I32({1}, {-2}), /*keep_dims=*/true);
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(min->ShapeString(), "float32[1,3]");
  EXPECT_THAT(Values(*min), ElementsAre(1, 2, 3));
}

TEST(ReductionKernelsTest, MiddleAxisOfRank3) {
  // [2,2,2] = 0..7; summing axis 1 pairs (0,2),(1,3),(4,6),(5,7).
  auto out = Reduce("Sum", I32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), I32({1}, {1}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ShapeString(), "int32[2,2]");
  EXPECT_THAT(Values(*out), ElementsAre(2, 4, 10, 12));
  auto outer = Reduce("Prod", I32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), I32({2}, {0, 2}));
  ASSERT_TRUE(outer.ok()) << outer.status();
  EXPECT_THAT(Values(*outer), ElementsAre(0 * 1 * 4 * 5, 2 * 3 * 6 * 7));
}

TEST(ReductionKernelsTest, MeanFloatIntAndHalf) {
  auto f = Reduce("Mean", X(), I32({1}, {1}));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_THAT(Values(*f), ElementsAre(2, 5));
  auto i = Reduce("Mean", I32({2, 2}, {1, 2, -3, -4}), I32({1}, {1}));
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_THAT(Values(*i), ElementsAre(1, -3));  // 3/2 -> 1, -7/2 -> -3 (truncation)
  auto h = Reduce("Mean", F16({4}, {1, 2, 3, 4.5}), I32({1}, {0}));
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->dtype(), DType::kFloat16);
  EXPECT_THAT(Values(*h), ElementsAre(2.625));
}

TEST(ReductionKernelsTest, EmptyReductionsGiveIdentities) {
  const Tensor empty = F32({0, 2}, {});
  auto sum = Reduce("Sum", empty, I32({1}, {0}));
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_THAT(Values(*sum), ElementsAre(0, 0));
  auto prod = Reduce("Prod", empty, I32({1}, {0}));
  ASSERT_TRUE(prod.ok());
  EXPECT_THAT(Values(*prod), ElementsAre(1, 1));
  auto max = Reduce("Max", empty, I32({1}, {0}));
  ASSERT_TRUE(max.ok());
  EXPECT_EQ(max->data<float>()[0], -std::numeric_limits<float>::infinity());
  auto min_int = Reduce("Min", I32({0}, {}), I32({1}, {0}));
  ASSERT_TRUE(min_int.ok());
  EXPECT_EQ(min_int->data<int32_t>()[0], std::numeric_limits<int32_t>::max());
  auto mean = Reduce("Mean", empty, I32({1}, {0}));
  ASSERT_TRUE(mean.ok());
  EXPECT_TRUE(std::isnan(mean->data<float>()[0]));
  // Reducing over no axes is the identity.
  auto none = Reduce("Sum", X(), I32({0}, {}));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->ShapeString(), "float32[2,3]");
  EXPECT_THAT(Values(*none), ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(ReductionKernelsTest, MaxPropagatesNaN) {
  auto out =
      Reduce("Max", F32({3}, {1, std::numeric_limits<float>::quiet_NaN(), 5}), I32({1}, {0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(std::isnan(out->data<float>()[0]));
}

TEST(ReductionKernelsTest, AnyAll) {
  const Tensor b = Bool({2, 2}, {true, false, false, false});
  auto any = Reduce("Any", b, I32({1}, {1}));
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_THAT(Values(*any), ElementsAre(1, 0));
  auto all = Reduce("All", b, I32({1}, {0}));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(Values(*all), ElementsAre(0, 0));
}

TEST(ReductionKernelsTest, AxisErrors) {
  TFJIT_EXPECT_ERROR(Reduce("Sum", X(), I32({1}, {2})), absl::StatusCode::kInvalidArgument,
                     "node 'op' (Sum): Invalid reduction dimension 2 for input float32[2,3]: "
                     "axes must be in [-2, 2)");
  TFJIT_EXPECT_ERROR(Reduce("Sum", X(), I32({2}, {1, -1})), absl::StatusCode::kInvalidArgument,
                     "contains dimension 1 twice");
  TFJIT_EXPECT_ERROR(Reduce("Sum", X(), I32({1, 1}, {0})), absl::StatusCode::kInvalidArgument,
                     "reduction_indices must be a scalar or vector");
  TFJIT_EXPECT_ERROR(Reduce("Sum", Bool({1}, {true}), I32({1}, {0})),
                     absl::StatusCode::kInvalidArgument, "no Sum kernel for dtype bool");
}

}  // namespace
}  // namespace tfjit::runtime
