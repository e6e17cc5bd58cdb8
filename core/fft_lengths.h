// Facts about transform lengths shared by the FFT kernels (runtime/kernels/fft_kernels.cc)
// and the compiled FFTs (compiler/tf2hlo/fft_lowerings.cc): both choose their algorithm by a
// length's largest prime factor.
#ifndef TFJIT_CORE_FFT_LENGTHS_H_
#define TFJIT_CORE_FFT_LENGTHS_H_

#include <algorithm>
#include <cstdint>

namespace tfjit {

// The largest prime factor of n >= 1 (1 for n = 1).
inline int64_t LargestPrimeFactor(int64_t n) {
  int64_t largest = 1;
  for (int64_t p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      largest = p;
      n /= p;
    }
  }
  return n > 1 ? std::max(largest, n) : largest;
}

}  // namespace tfjit

#endif  // TFJIT_CORE_FFT_LENGTHS_H_
