// TF's Range(start, limit, delta): its size and values, as TF's CPU kernel computes them. The
// one routine behind the fallback kernel and the lowering (which folds a Range of constant
// inputs into a constant), so both paths give the same values by construction, in every dtype
// the kernel takes (16-bit floats included: they accumulate in the 16-bit type, as TF's do).
#ifndef TFJIT_CORE_RANGE_H_
#define TFJIT_CORE_RANGE_H_

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"

namespace tfjit::range {

// The number of values start, start + delta, ... short of limit, or TF's error: a zero delta,
// a delta pointing away from limit, a size past int64.
template <typename T>
absl::StatusOr<int64_t> Size(T start, T limit, T delta) {
  const double s = static_cast<double>(start), l = static_cast<double>(limit);
  const double d = static_cast<double>(delta);
  if (d == 0) return absl::InvalidArgumentError(absl::StrFormat("Requires delta != 0: %g", d));
  if (d > 0 ? s > l : s < l) {
    return absl::InvalidArgumentError(
        absl::StrFormat("Requires start %s limit when delta %s 0: %g/%g",
                        d > 0 ? "<=" : ">=", d > 0 ? ">" : "<", s, l));
  }
  if constexpr (std::is_integral_v<T>) {
    const int64_t span = std::abs(static_cast<int64_t>(limit) - static_cast<int64_t>(start));
    const int64_t step = std::abs(static_cast<int64_t>(delta));
    return (span + step - 1) / step;
  } else {
    const double size = std::ceil(std::abs((l - s) / d));
    if (!(size < 9.2e18)) {
      return absl::InvalidArgumentError("Requires the range size to be finite");
    }
    return static_cast<int64_t>(size);
  }
}

// out[i] for i < n: value = start, then value += delta in T each step (not start + i * delta,
// which rounds differently).
template <typename T>
void Fill(T start, T delta, int64_t n, T* out) {
  T value = start;
  for (int64_t i = 0; i < n; ++i) {
    out[i] = value;
    value = static_cast<T>(value + delta);
  }
}

}  // namespace tfjit::range

#endif  // TFJIT_CORE_RANGE_H_
