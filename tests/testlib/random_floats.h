// Seeded uniform floats in [-1, 1) for kernel tests (header-only, so tests of any layer can
// use it without linking the test library).
#ifndef TFJIT_TESTS_TESTLIB_RANDOM_FLOATS_H_
#define TFJIT_TESTS_TESTLIB_RANDOM_FLOATS_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace tfjit::testing {

inline std::vector<float> RandomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

}  // namespace tfjit::testing

#endif  // TFJIT_TESTS_TESTLIB_RANDOM_FLOATS_H_
