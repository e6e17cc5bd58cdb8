// Wall-clock intervals for logs and statistics.
#ifndef TFJIT_CORE_TIMING_H_
#define TFJIT_CORE_TIMING_H_

#include <chrono>

namespace tfjit {

// Milliseconds from `start` to now, on the steady clock.
inline double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace tfjit

#endif  // TFJIT_CORE_TIMING_H_
