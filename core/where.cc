// TF's Where (where.h).
#include "core/where.h"

#include <algorithm>
#include <vector>

namespace tfjit::where {

int64_t CountTrue(const bool* mask, int64_t n) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += mask[i] ? 1 : 0;
  return count;
}

int64_t TrueCoordinates(const bool* mask, const int64_t* dims, int rank, int64_t rows,
                        int64_t* coords) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= dims[d];
  // The current element's coordinates, advanced like an odometer: no division per element.
  std::vector<int64_t> at(static_cast<size_t>(rank), 0);
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (mask[i]) {
      std::copy(at.begin(), at.end(), coords + count * rank);
      ++count;
    }
    for (int d = rank - 1; d >= 0; --d) {
      if (++at[static_cast<size_t>(d)] < dims[d]) break;
      at[static_cast<size_t>(d)] = 0;
    }
  }
  std::fill(coords + count * rank, coords + rows * rank, int64_t{0});
  return count;
}

}  // namespace tfjit::where
