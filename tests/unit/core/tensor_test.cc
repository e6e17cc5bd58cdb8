// Tests for the public Tensor: allocation, alignment, views, clones and printing.
#include "tfjit/tensor.h"

#include <cstdint>

#include "core/dtype.h"
#include "core/thread_pool.h"
#include "gtest/gtest.h"

namespace tfjit {
namespace {

TEST(TensorTest, ZeroFilledAndAligned) {
  Tensor t(DType::kFloat32, {3, 5});
  EXPECT_EQ(t.num_elements(), 15);
  EXPECT_EQ(t.byte_size(), 60u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u);
  for (int i = 0; i < 15; ++i) EXPECT_EQ(t.data<float>()[i], 0.0f);
}

TEST(TensorTest, ReshapeSharesCloneCopies) {
  Tensor t = Tensor::FromVector<int32_t>(DType::kInt32, {2, 2}, {1, 2, 3, 4});
  Tensor r = t.Reshaped({4});
  EXPECT_TRUE(r.SharesBufferWith(t));
  Tensor c = t.Clone();
  EXPECT_FALSE(c.SharesBufferWith(t));
  c.data<int32_t>()[0] = 9;
  EXPECT_EQ(t.data<int32_t>()[0], 1);
  EXPECT_EQ(t.DebugString(), "int32[2,2] {1, 2, 3, 4}");
}

TEST(TensorTest, EmptyAndScalar) {
  Tensor e(DType::kFloat64, {0, 4});
  EXPECT_EQ(e.num_elements(), 0);
  Tensor s(DType::kBool, {});
  EXPECT_EQ(s.num_elements(), 1);
  EXPECT_EQ(Tensor().num_elements(), 0);
  EXPECT_FALSE(Tensor().valid());
}

TEST(ThreadPoolTest, ParallelForCoversRangeOnce) {
  ThreadPool pool(2);
  std::vector<int> hits(1000, 0);
  pool.ParallelFor(1000, 1000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i]++;
  });
  for (int h : hits) EXPECT_EQ(h, 1);
}

}  // namespace
}  // namespace tfjit
