// core/where: TrueCoordinates against coordinates computed by division from each true
// element's flat index, on random masks of ranks 0-3 and the edge cases of the branch-free
// loop (no true element, all true, a true element only at either end, trailing false ones).
#include "core/where.h"

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace tfjit::where {
namespace {

std::vector<int64_t> Reference(const std::vector<char>& mask, const std::vector<int64_t>& dims) {
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < static_cast<int64_t>(mask.size()); ++i) {
    if (!mask[static_cast<size_t>(i)]) continue;
    std::vector<int64_t> at(dims.size());
    int64_t rest = i;
    for (size_t d = dims.size(); d-- > 0;) {
      at[d] = rest % dims[d];
      rest /= dims[d];
    }
    rows.insert(rows.end(), at.begin(), at.end());
  }
  return rows;
}

void Check(const std::vector<char>& mask, const std::vector<int64_t>& dims, int64_t padding) {
  std::unique_ptr<bool[]> m(new bool[mask.size() + 1]);
  for (size_t i = 0; i < mask.size(); ++i) m[i] = mask[i] != 0;
  const std::vector<int64_t> want = Reference(mask, dims);
  const int rank = static_cast<int>(dims.size());
  const int64_t count = CountTrue(m.get(), static_cast<int64_t>(mask.size()));
  ASSERT_EQ(count * rank, static_cast<int64_t>(want.size()));
  const int64_t rows = count + padding;
  // One guard row past the end must stay untouched.
  std::vector<int64_t> coords(static_cast<size_t>((rows + 1) * rank), -7);
  EXPECT_EQ(TrueCoordinates(m.get(), dims.data(), rank, rows, coords.data()), count);
  for (int64_t k = 0; k < count * rank; ++k) EXPECT_EQ(coords[k], want[k]) << k;
  for (int64_t k = count * rank; k < rows * rank; ++k) EXPECT_EQ(coords[k], 0) << k;
  for (int64_t k = rows * rank; k < (rows + 1) * rank; ++k) EXPECT_EQ(coords[k], -7) << k;
}

TEST(WhereTest, RandomMasksOfEveryRank) {
  std::mt19937 rng(7);
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{}, {1}, {37}, {5, 7}, {3, 1, 4}, {2, 3, 5}, {0, 4}}) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    for (double p : {0.0, 0.1, 0.5, 0.9, 1.0}) {
      std::bernoulli_distribution bit(p);
      std::vector<char> mask(static_cast<size_t>(n));
      for (char& c : mask) c = bit(rng) ? 1 : 0;
      Check(mask, dims, 0);
      Check(mask, dims, 3);  // the compiled form's padded rows
    }
  }
}

TEST(WhereTest, TrueOnlyAtTheEnds) {
  std::vector<char> first(9, 0), last(9, 0), both(9, 0);
  first[0] = 1;
  last[8] = 1;
  both[0] = both[8] = 1;
  for (const auto& m : {first, last, both}) {
    Check(m, {9}, 0);
    Check(m, {3, 3}, 0);
  }
}

}  // namespace
}  // namespace tfjit::where
