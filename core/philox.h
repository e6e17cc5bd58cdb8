// Philox-4x32-10 and TensorFlow's random distributions on top of it, bit-exact with TF's CPU
// kernels (known-issues.md E). Dependency-free: shared by the fallback kernels, the lowering
// (compile-time seeds) and tests.
#ifndef TFJIT_CORE_PHILOX_H_
#define TFJIT_CORE_PHILOX_H_

#include <array>
#include <cstdint>

namespace tfjit::random {

using PhiloxCounter = std::array<uint32_t, 4>;  // word 0 least significant
using PhiloxKey = std::array<uint32_t, 2>;

inline constexpr uint32_t kPhiloxW32A = 0x9E3779B9;
inline constexpr uint32_t kPhiloxW32B = 0xBB67AE85;
inline constexpr uint32_t kPhiloxM4x32A = 0xD2511F53;
inline constexpr uint32_t kPhiloxM4x32B = 0xCD9E8D57;
// Key of the Philox block that scrambles a stateless seed pair (TF's GenerateKey).
inline constexpr uint32_t kSeedScrambleKey0 = 0x3ec8f720;
inline constexpr uint32_t kSeedScrambleKey1 = 0x02461e29;
// TF's FillPhiloxRandomTask reserves 256 samples per output for variable-sample distributions
// (truncated normal): a group of outputs starts group * 256 * group_size / 4 blocks in.
inline constexpr int64_t kReservedSamplesPerOutput = 256;

// One Philox-4x32-10 block: 10 rounds of the counter under the (bumped) key.
PhiloxCounter Philox4x32(PhiloxCounter counter, PhiloxKey key);

// counter + n as a 128-bit integer (TF's PhiloxRandom::Skip).
PhiloxCounter AddToCounter(PhiloxCounter counter, uint64_t n);

// A Philox stream position: block b of the stream is Philox4x32(counter + b, key).
struct PhiloxState {
  PhiloxKey key{};
  PhiloxCounter counter{};

  PhiloxCounter Block(uint64_t b) const { return Philox4x32(AddToCounter(counter, b), key); }
  void Skip(uint64_t blocks) { counter = AddToCounter(counter, blocks); }
};

// Stateless v1 ops: the seed pair (already sign-extended to 64 bits) scrambled by one Philox
// block into key = [mix0, mix1], counter = [0, 0, mix2, mix3] (TF's GenerateKey).
PhiloxState StatelessSeedToState(uint64_t seed0, uint64_t seed1);
// Stateful ops: TF's PhiloxRandom(seed, seed2): key = seed, counter = [0, 0, lo, hi](seed2).
PhiloxState SeedPairToState(uint64_t seed, uint64_t seed2);
// V2 ops: key u64[1] and counter u64[2] tensors, low word first in each u64.
PhiloxState StateFromKeyCounter(uint64_t key, uint64_t counter0, uint64_t counter1);
uint64_t KeyAsU64(const PhiloxKey& key);
void CounterAsU64(const PhiloxCounter& counter, uint64_t out[2]);

// TF's bit -> float conversions: the low 23 (float), 52 (double: x0's low 20 bits high, x1
// low), 10 (half) or 7 (bfloat16) bits as the mantissa of [1, 2), minus 1. The 16-bit ones
// are returned as the exact float value (m / 1024, m / 128).
float Uint32ToFloat(uint32_t x);
double Uint64ToDouble(uint32_t x0, uint32_t x1);
float Uint32ToHalfValue(uint32_t x);
float Uint32ToBfloat16Value(uint32_t x);

// Box-Muller as TF computes it on Linux: u1 floored at 1e-7, v1 = 2*pi*u2 in double then
// narrowed, radius via libm log/sqrt, sin and cos via sincos.
void BoxMullerFloat(uint32_t x0, uint32_t x1, float* f0, float* f1);
void BoxMullerDouble(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, double* d0, double* d1);

// Truncated normal (|x| < 2, rejection): output group `group` of TF's variable-sample fill.
// Float groups hold 4 outputs (also used for half/bfloat16), double groups 2.
inline constexpr int kTruncatedFloatGroup = 4;
inline constexpr int kTruncatedDoubleGroup = 2;
void TruncatedNormalFloatGroup(const PhiloxState& state, uint64_t group, float out[4]);
void TruncatedNormalDoubleGroup(const PhiloxState& state, uint64_t group, double out[2]);

}  // namespace tfjit::random

#endif  // TFJIT_CORE_PHILOX_H_
