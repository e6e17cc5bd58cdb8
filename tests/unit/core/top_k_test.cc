// Tests for core/top_k: TopKRows against a naive reference (a stable sort of the whole row with
// an explicit NaN-first key), hand-computed ties, every path (k = 1, heap, nth_element, k = n),
// k = 0, rows of one column, every supported dtype and row-range independence.
#include "core/top_k.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "gtest/gtest.h"

namespace tfjit::topk {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The reference: rank 0 for NaN, 1 for numbers; stable-sort columns by (rank, value desc).
std::vector<int32_t> NaiveOrder(const std::vector<double>& row) {
  std::vector<int32_t> order(row.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const bool na = std::isnan(row[static_cast<size_t>(a)]);
    const bool nb = std::isnan(row[static_cast<size_t>(b)]);
    if (na != nb) return na;
    if (na) return false;
    return row[static_cast<size_t>(a)] > row[static_cast<size_t>(b)];
  });
  return order;
}

struct Result {
  std::vector<double> values;  // NaN compared as NaN by SameValues
  std::vector<int32_t> indices;
};

// Runs TopKRows on `rows` rows of n doubles, stored as T.
template <typename T>
Result TopK(const std::vector<double>& in, int64_t n, int64_t k, int64_t split = -1) {
  const int64_t rows = n == 0 ? 0 : static_cast<int64_t>(in.size()) / n;
  std::vector<T> typed(in.size());
  for (size_t i = 0; i < in.size(); ++i) typed[i] = static_cast<T>(in[i]);
  std::vector<T> values(static_cast<size_t>(rows * k));
  std::vector<int32_t> indices(static_cast<size_t>(rows * k), -7);
  const DType dtype = DTypeOf<T>::value;
  if (split < 0) {
    TopKRows(dtype, typed.data(), n, k, values.data(), indices.data(), 0, rows);
  } else {
    TopKRows(dtype, typed.data(), n, k, values.data(), indices.data(), 0, split);
    TopKRows(dtype, typed.data(), n, k, values.data(), indices.data(), split, rows);
  }
  Result r;
  for (const T& v : values) r.values.push_back(static_cast<double>(v));
  r.indices = indices;
  return r;
}

Result Naive(const std::vector<double>& in, int64_t n, int64_t k) {
  Result r;
  for (size_t start = 0; start + static_cast<size_t>(n) <= in.size() && n > 0;
       start += static_cast<size_t>(n)) {
    const std::vector<double> row(in.begin() + static_cast<std::ptrdiff_t>(start),
                                  in.begin() + static_cast<std::ptrdiff_t>(start) + n);
    const std::vector<int32_t> order = NaiveOrder(row);
    for (int64_t j = 0; j < k; ++j) {
      r.indices.push_back(order[static_cast<size_t>(j)]);
      r.values.push_back(row[static_cast<size_t>(order[static_cast<size_t>(j)])]);
    }
  }
  return r;
}

void ExpectSame(const Result& got, const Result& want) {
  ASSERT_EQ(got.indices, want.indices);
  ASSERT_EQ(got.values.size(), want.values.size());
  for (size_t i = 0; i < got.values.size(); ++i) {
    if (std::isnan(want.values[i])) {
      EXPECT_TRUE(std::isnan(got.values[i])) << i;
    } else {
      EXPECT_EQ(got.values[i], want.values[i]) << i;
    }
  }
}

TEST(TopKTest, HandComputedTiesKeepColumnOrder) {
  // TF's documented example: tf.math.top_k([1,1,0,1,0,1,0,0,1,0,0,0,1,0], k=3) -> [0,1,3].
  const std::vector<double> in = {1, 1, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0};
  const Result r = TopK<int32_t>(in, 14, 3);
  EXPECT_EQ(r.indices, (std::vector<int32_t>{0, 1, 3}));
  EXPECT_EQ(r.values, (std::vector<double>{1, 1, 1}));
  // TF's doc: top_k([1,2,98,1,1,99,3,1,3,96,4,1], k=3) -> values [99,98,96], indices [5,2,9].
  const Result d = TopK<float>({1, 2, 98, 1, 1, 99, 3, 1, 3, 96, 4, 1}, 12, 3);
  EXPECT_EQ(d.indices, (std::vector<int32_t>{5, 2, 9}));
  EXPECT_EQ(d.values, (std::vector<double>{99, 98, 96}));
}

TEST(TopKTest, NaNRanksFirstAndZerosTie) {
  const std::vector<double> in = {1, kNaN, -0.0, kInf, 0.0, kNaN, -kInf};
  const Result r = TopK<float>(in, 7, 7);
  EXPECT_EQ(r.indices, (std::vector<int32_t>{1, 5, 3, 0, 2, 4, 6}));
  EXPECT_TRUE(std::signbit(r.values[4]));  // -0 (column 2) before +0 (column 4)
  EXPECT_FALSE(std::signbit(r.values[5]));
  for (int64_t k = 0; k <= 7; ++k) ExpectSame(TopK<double>(in, 7, k), Naive(in, 7, k));
}

TEST(TopKTest, KZeroWritesNothingAndKEqualsNSortsTheRow) {
  const std::vector<double> in = {3, 1, 2, 5, 5, 4};
  EXPECT_TRUE(TopK<float>(in, 3, 0).indices.empty());
  const Result r = TopK<float>(in, 3, 3);
  EXPECT_EQ(r.indices, (std::vector<int32_t>{0, 2, 1, 0, 1, 2}));
  EXPECT_EQ(r.values, (std::vector<double>{3, 2, 1, 5, 5, 4}));
}

TEST(TopKTest, RowsOfOneColumn) {
  const std::vector<double> in = {4, kNaN, -2};
  ExpectSame(TopK<float>(in, 1, 1), Naive(in, 1, 1));
  EXPECT_EQ(TopK<float>(in, 1, 1).indices, (std::vector<int32_t>{0, 0, 0}));
  EXPECT_TRUE(TopK<float>(in, 1, 0).indices.empty());
}

// Random rows drawn from few distinct values (many ties) plus NaNs, for every k, so the
// k = 1 scan, the heap (4k <= n), nth_element and full-sort paths all meet the reference.
TEST(TopKTest, MatchesNaiveStableSortOnEveryPath) {
  std::mt19937 gen(7);
  std::uniform_int_distribution<int> pick(0, 9);
  for (int64_t n : {1, 2, 5, 17, 64}) {
    std::vector<double> in(static_cast<size_t>(3 * n));
    for (double& v : in) {
      const int p = pick(gen);
      v = p == 0 ? kNaN : (p == 1 ? -kInf : static_cast<double>(p % 4) - 1.5);
    }
    for (int64_t k = 0; k <= n; ++k) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " k=" << k);
      ExpectSame(TopK<float>(in, n, k), Naive(in, n, k));
      ExpectSame(TopK<double>(in, n, k), Naive(in, n, k));
      ExpectSame(TopK<half>(in, n, k), Naive(in, n, k));
      ExpectSame(TopK<bfloat16>(in, n, k), Naive(in, n, k));
      ExpectSame(TopK<float>(in, n, k, /*split=*/1), Naive(in, n, k));
    }
  }
}

TEST(TopKTest, IntegerTypesIncludingExtremes) {
  std::mt19937 gen(11);
  std::uniform_int_distribution<int> pick(-3, 3);
  std::vector<double> in(40);
  for (double& v : in) v = pick(gen);
  for (int64_t k : {0, 1, 2, 5, 10}) {
    ExpectSame(TopK<int8_t>(in, 10, k), Naive(in, 10, k));
    ExpectSame(TopK<int16_t>(in, 10, k), Naive(in, 10, k));
    ExpectSame(TopK<int32_t>(in, 10, k), Naive(in, 10, k));
    ExpectSame(TopK<int64_t>(in, 10, k), Naive(in, 10, k));
  }
  std::vector<double> u(in.size());
  for (size_t i = 0; i < in.size(); ++i) u[i] = in[i] + 3;
  ExpectSame(TopK<uint8_t>(u, 10, 3), Naive(u, 10, 3));
  ExpectSame(TopK<uint16_t>(u, 20, 4), Naive(u, 20, 4));
  ExpectSame(TopK<uint32_t>(u, 40, 40), Naive(u, 40, 40));
  ExpectSame(TopK<uint64_t>(u, 8, 1), Naive(u, 8, 1));
  // int64 values a double cannot tell apart: compared exactly, not through double.
  const std::vector<int64_t> big = {INT64_MAX - 1, INT64_MAX, INT64_MIN, INT64_MAX};
  std::vector<int64_t> values(2);
  std::vector<int32_t> idx(2);
  TopKRows(DType::kInt64, big.data(), 4, 2, values.data(), idx.data(), 0, 1);
  EXPECT_EQ(idx, (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(values, (std::vector<int64_t>{INT64_MAX, INT64_MAX}));
}

TEST(TopKTest, DTypeSupport) {
  EXPECT_FALSE(IsTopKDType(DType::kBool));
  EXPECT_FALSE(IsTopKDType(DType::kString));
  EXPECT_TRUE(IsTopKDType(DType::kUInt8));
  EXPECT_TRUE(IsTopKDType(DType::kBFloat16));
  EXPECT_TRUE(IsTopKDType(DType::kFloat64));
}

}  // namespace
}  // namespace tfjit::topk
