// Tests for runtime/kernels/array_slice_kernels.cc: Slice, StridedSlice masks (begin/end, ellipsis,
// new axis, shrink), Split, SplitV, Unpack and Concat (v1), with hand-computed values.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/runtime/kernel_test_util.h"

namespace tfjit::runtime {
namespace {

using ::testing::ElementsAre;
using namespace ::tfjit::runtime::testing;  // NOLINT: test builders

// 0, 1, ..., n-1 as float32 of `dims`.
Tensor Iota(std::vector<int64_t> dims) {
  Tensor t(DType::kFloat32, dims);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

struct Masks {
  int begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink = 0;
};
absl::StatusOr<Tensor> StridedSlice(const Tensor& in, std::vector<int32_t> b,
                                    std::vector<int32_t> e, std::vector<int32_t> s, Masks m) {
  const int64_t n = static_cast<int64_t>(b.size());
  return OpRunner("StridedSlice")
      .T(in.dtype())
      .Type("Index", DType::kInt32)
      .Input(in)
      .Input(I32({n}, b))
      .Input(I32({n}, e))
      .Input(I32({n}, s))
      .Int("begin_mask", m.begin)
      .Int("end_mask", m.end)
      .Int("ellipsis_mask", m.ellipsis)
      .Int("new_axis_mask", m.new_axis)
      .Int("shrink_axis_mask", m.shrink)
      .Run0();
}

TEST(SliceKernelsTest, SliceWithMinusOneSize) {
  auto out = OpRunner("Slice")
                 .T(DType::kFloat32)
                 .Type("Index", DType::kInt32)
                 .Input(Iota({3, 4}))
                 .Input(I32({2}, {1, 2}))
                 .Input(I32({2}, {-1, 2}))
                 .Run0();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ShapeString(), "float32[2,2]");
  EXPECT_THAT(Values(*out), ElementsAre(6, 7, 10, 11));
  auto bad = OpRunner("Slice")
                 .T(DType::kFloat32)
                 .Type("Index", DType::kInt32)
                 .Input(Iota({3, 4}))
                 .Input(I32({2}, {1, 2}))
                 .Input(I32({2}, {3, 1}))
                 .Run0();
  TFJIT_EXPECT_ERROR(bad, absl::StatusCode::kInvalidArgument, "Expected size[0] in [0, 2]");
  auto empty = OpRunner("Slice")
                   .T(DType::kFloat32)
                   .Type("Index", DType::kInt32)
                   .Input(Iota({3, 4}))
                   .Input(I32({2}, {3, 0}))
                   .Input(I32({2}, {0, 4}))
                   .Run0();
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->ShapeString(), "float32[0,4]");
}

TEST(SliceKernelsTest, StridedSliceNegativeStrideAndClamping) {
  auto rev = StridedSlice(Iota({6}), {-1}, {0}, {-2}, {});
  ASSERT_TRUE(rev.ok()) << rev.status();
  EXPECT_THAT(Values(*rev), ElementsAre(5, 3, 1));
  auto clamp = StridedSlice(Iota({6}), {-100}, {100}, {4}, {});
  ASSERT_TRUE(clamp.ok()) << clamp.status();
  EXPECT_THAT(Values(*clamp), ElementsAre(0, 4));
  auto all_rev = StridedSlice(Iota({4}), {0}, {0}, {-1}, {.begin = 1, .end = 1});
  ASSERT_TRUE(all_rev.ok()) << all_rev.status();
  EXPECT_THAT(Values(*all_rev), ElementsAre(3, 2, 1, 0));
  auto empty = StridedSlice(Iota({6}), {4}, {2}, {1}, {});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->ShapeString(), "float32[0]");
}

TEST(SliceKernelsTest, StridedSliceEllipsisNewAxisAndShrink) {
  // x[..., 1] on [2,3,4] -> [2,3] (element 1 of each last row).
  auto ell = StridedSlice(Iota({2, 3, 4}), {0, 1}, {0, 2}, {1, 1}, {.ellipsis = 1, .shrink = 2});
  ASSERT_TRUE(ell.ok()) << ell.status();
  EXPECT_EQ(ell->ShapeString(), "float32[2,3]");
  EXPECT_THAT(Values(*ell), ElementsAre(1, 5, 9, 13, 17, 21));
  // x[1, tf.newaxis, :2] on [3,4] -> [1,2].
  auto na =
      StridedSlice(Iota({3, 4}), {1, 0, 0}, {2, 0, 2}, {1, 1, 1}, {.new_axis = 2, .shrink = 1});
  ASSERT_TRUE(na.ok()) << na.status();
  EXPECT_EQ(na->ShapeString(), "float32[1,2]");
  EXPECT_THAT(Values(*na), ElementsAre(4, 5));
  // x[-1] shrinks with a negative index.
  auto last = StridedSlice(Iota({3, 2}), {-1}, {0}, {1}, {.shrink = 1});
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->ShapeString(), "float32[2]");
  EXPECT_THAT(Values(*last), ElementsAre(4, 5));
}

TEST(SliceKernelsTest, StridedSliceErrors) {
  TFJIT_EXPECT_ERROR(StridedSlice(Iota({4}), {4}, {5}, {1}, {.shrink = 1}),
                     absl::StatusCode::kInvalidArgument,
                     "slice index 4 of dimension 0 out of bounds");
  TFJIT_EXPECT_ERROR(StridedSlice(Iota({4}), {0}, {4}, {0}, {}), absl::StatusCode::kInvalidArgument,
                     "strides[0] must be non-zero");
  TFJIT_EXPECT_ERROR(StridedSlice(Iota({4}), {0, 0}, {1, 1}, {1, 1}, {.ellipsis = 3}),
                     absl::StatusCode::kInvalidArgument, "Multiple ellipses");
  TFJIT_EXPECT_ERROR(StridedSlice(Iota({4}), {0, 0}, {1, 1}, {1, 1}, {}),
                     absl::StatusCode::kInvalidArgument, "Index out of range");
}

TEST(SliceKernelsTest, SplitSplitVAndUnpack) {
  auto split = OpRunner("Split")
                   .T(DType::kFloat32)
                   .Int("num_split", 2)
                   .Input(I32({}, {-1}))
                   .Input(Iota({2, 4}))
                   .Run();
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ(split->size(), 2u);
  EXPECT_THAT(Values((*split)[1]), ElementsAre(2, 3, 6, 7));
  auto uneven = OpRunner("Split")
                    .T(DType::kFloat32)
                    .Int("num_split", 3)
                    .Input(I32({}, {1}))
                    .Input(Iota({2, 4}))
                    .Run();
  TFJIT_EXPECT_ERROR(uneven, absl::StatusCode::kInvalidArgument, "evenly divide");
  auto splitv = OpRunner("SplitV")
                    .T(DType::kFloat32)
                    .Type("Tlen", DType::kInt32)
                    .Int("num_split", 3)
                    .Input(Iota({5}))
                    .Input(I32({3}, {1, -1, 2}))
                    .Input(I32({}, {0}))
                    .Run();
  ASSERT_TRUE(splitv.ok()) << splitv.status();
  EXPECT_THAT(Values((*splitv)[1]), ElementsAre(1, 2));
  EXPECT_THAT(Values((*splitv)[2]), ElementsAre(3, 4));
  auto two_unknown = OpRunner("SplitV")
                         .T(DType::kFloat32)
                         .Type("Tlen", DType::kInt32)
                         .Int("num_split", 2)
                         .Input(Iota({5}))
                         .Input(I32({2}, {-1, -1}))
                         .Input(I32({}, {0}))
                         .Run();
  TFJIT_EXPECT_ERROR(two_unknown, absl::StatusCode::kInvalidArgument, "only be one -1");
  auto unpack =
      OpRunner("Unpack").T(DType::kFloat32).Int("num", 3).Int("axis", -1).Input(Iota({2, 3})).Run();
  ASSERT_TRUE(unpack.ok()) << unpack.status();
  EXPECT_THAT(Values((*unpack)[2]), ElementsAre(2, 5));
  auto bad =
      OpRunner("Unpack").T(DType::kFloat32).Int("num", 2).Input(Iota({2, 3})).Int("axis", 1).Run();
  TFJIT_EXPECT_ERROR(bad, absl::StatusCode::kInvalidArgument, "must equal 2");
}

TEST(SliceKernelsTest, ConcatV1TakesTheAxisFirst) {
  auto out = OpRunner("Concat")
                 .T(DType::kFloat32)
                 .Int("N", 2)
                 .Input(I32({}, {1}))
                 .Input(Iota({2, 1}))
                 .Input(Iota({2, 2}))
                 .Run0();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ShapeString(), "float32[2,3]");
  EXPECT_THAT(Values(*out), ElementsAre(0, 0, 1, 1, 2, 3));
}

}  // namespace
}  // namespace tfjit::runtime
