// TopKRows: per-row selection of the k best entries under a total order (value descending,
// NaN first, then column ascending).
#include "core/top_k.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include "core/dtype.h"

namespace tfjit::topk {
namespace {

// Whether x ranks strictly above y by value alone (NaN above everything, NaNs equal).
template <typename K>
inline bool Above(K x, K y) {
  if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(x)) return !std::isnan(y);
    if (std::isnan(y)) return false;
  }
  return x > y;
}

// f16/bf16 rows are ranked on float keys (exact: both widen to float without rounding).
template <typename T>
using KeyOf = std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bfloat16>, float, T>;

template <typename T>
void TopKTyped(const T* input, int64_t n, int64_t k, T* values, int32_t* indices, int64_t row_begin,
               int64_t row_end) {
  using K = KeyOf<T>;
  if (k == 0) return;
  std::vector<K> converted;
  std::vector<int32_t> order;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const T* row = input + r * n;
    const K* key;
    if constexpr (std::is_same_v<K, T>) {
      key = row;
    } else {
      converted.resize(static_cast<size_t>(n));
      for (int64_t c = 0; c < n; ++c) converted[static_cast<size_t>(c)] = static_cast<K>(row[c]);
      key = converted.data();
    }
    // a is ranked before b: the strict total order of the header.
    const auto before = [key](int32_t a, int32_t b) {
      return Above(key[a], key[b]) || (!Above(key[b], key[a]) && a < b);
    };
    int32_t* out = indices + r * k;
    if (k == 1) {
      int32_t best = 0;
      for (int32_t c = 1; c < n; ++c) {
        if (Above(key[c], key[best])) best = c;  // a tie keeps the lower column
      }
      out[0] = best;
    } else if (k * 4 <= n) {
      // A heap of the k best so far with the worst on top; columns arrive in increasing
      // order, so a later column that only ties the worst never displaces it.
      order.resize(static_cast<size_t>(k));
      std::iota(order.begin(), order.end(), 0);
      std::make_heap(order.begin(), order.end(), before);
      for (int32_t c = static_cast<int32_t>(k); c < n; ++c) {
        if (!before(c, order.front())) continue;
        std::pop_heap(order.begin(), order.end(), before);
        order.back() = c;
        std::push_heap(order.begin(), order.end(), before);
      }
      std::sort_heap(order.begin(), order.end(), before);
      std::copy(order.begin(), order.end(), out);
    } else {
      order.resize(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      if (k < n) std::nth_element(order.begin(), order.begin() + k, order.end(), before);
      std::sort(order.begin(), order.begin() + k, before);
      std::copy(order.begin(), order.begin() + k, out);
    }
    for (int64_t j = 0; j < k; ++j) values[r * k + j] = row[out[j]];
  }
}

}  // namespace

bool IsTopKDType(DType dtype) { return dtype != DType::kBool && IsNumericDType(dtype); }

void TopKRows(DType dtype, const void* input, int64_t n, int64_t k, void* values, int32_t* indices,
              int64_t row_begin, int64_t row_end) {
  if (!IsTopKDType(dtype) || k < 0 || k > n || row_begin >= row_end) return;
  DispatchNumeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      TopKTyped<T>(static_cast<const T*>(input), n, k, static_cast<T*>(values), indices, row_begin,
                   row_end);
    }
  });
}

int64_t TopKCostPerRow(int64_t n, int64_t k) {
  int64_t log_k = 1;
  while ((int64_t{1} << log_k) <= k) ++log_k;
  return 4 * n + 8 * k * log_k;
}

}  // namespace tfjit::topk
