// TF's float random distributions over a Philox stream, element by element: the one fill
// routine behind the fallback kernels and the compiled custom-calls (HLO.md, custom-call).
#ifndef TFJIT_CORE_RANDOM_FILL_H_
#define TFJIT_CORE_RANDOM_FILL_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "core/philox.h"
#include "tfjit/dtype.h"

namespace tfjit::random {

enum class RandomDistribution : int32_t {
  kUniform = 0,          // [0, 1) from the mantissa bits (Uint32ToFloat, Uint64ToDouble)
  kNormal = 1,           // Box-Muller on word pairs
  kTruncatedNormal = 2,  // Box-Muller, rejecting |x| >= 2, from 256 reserved samples per output
};

// Whether FillRandom supports `dtype`: float16, bfloat16, float32, float64.
bool IsRandomFillDType(DType dtype);

// Writes elements [begin, end) of the output of TF's FillPhiloxRandom for `dist` in `dtype`
// into `out` (the whole output's base pointer, element type `dtype`). Element i depends only on
// i and `state`, never on the range, so any sharding gives the same bits. Does nothing for a
// dtype IsRandomFillDType rejects. Thread-safe (pure).
void FillRandom(RandomDistribution dist, DType dtype, const PhiloxState& state, void* out,
                int64_t begin, int64_t end);

// Rough cycles per element, for sharding.
int64_t RandomFillCostPerElement(RandomDistribution dist);

// Custom-call targets that run FillRandom: operand u64[3] = [key, counter_lo, counter_hi] (the
// rng-bit-generator state layout), result an array of a float type (HLO.md).
inline constexpr char kPhiloxUniformTarget[] = "tfjit.philox_random_uniform";
inline constexpr char kPhiloxNormalTarget[] = "tfjit.philox_random_normal";
inline constexpr char kPhiloxTruncatedNormalTarget[] = "tfjit.philox_truncated_normal";
// The distribution of a target above; nullopt for any other target.
std::optional<RandomDistribution> RandomDistributionOfTarget(absl::string_view target);
const char* RandomFillTarget(RandomDistribution dist);

// The state of a u64[3] [key, counter_lo, counter_hi] and back.
PhiloxState StateFromU64x3(const uint64_t words[3]);
void StateToU64x3(const PhiloxState& state, uint64_t words[3]);

}  // namespace tfjit::random

#endif  // TFJIT_CORE_RANDOM_FILL_H_
