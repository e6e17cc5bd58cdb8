// Philox-4x32-10, seed derivations and TF's bit-to-float conversions and Box-Muller.
#include "core/philox.h"

#include <cmath>
#include <cstring>

namespace tfjit::random {

PhiloxCounter Philox4x32(PhiloxCounter c, PhiloxKey key) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kPhiloxM4x32A) * c[0];
    const uint64_t p1 = static_cast<uint64_t>(kPhiloxM4x32B) * c[2];
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c = {hi1 ^ c[1] ^ key[0], lo1, hi0 ^ c[3] ^ key[1], lo0};
    key[0] += kPhiloxW32A;
    key[1] += kPhiloxW32B;
  }
  return c;
}

PhiloxCounter AddToCounter(PhiloxCounter c, uint64_t n) {
  const uint32_t lo = static_cast<uint32_t>(n);
  const uint32_t hi = static_cast<uint32_t>(n >> 32);
  c[0] += lo;
  uint32_t carry = c[0] < lo ? 1 : 0;
  const uint64_t w1 = static_cast<uint64_t>(c[1]) + hi + carry;
  c[1] = static_cast<uint32_t>(w1);
  carry = static_cast<uint32_t>(w1 >> 32);
  if (carry != 0 && ++c[2] == 0) ++c[3];
  return c;
}

PhiloxState StatelessSeedToState(uint64_t seed0, uint64_t seed1) {
  const PhiloxCounter in = {static_cast<uint32_t>(seed0), static_cast<uint32_t>(seed0 >> 32),
                            static_cast<uint32_t>(seed1), static_cast<uint32_t>(seed1 >> 32)};
  const PhiloxCounter mix = Philox4x32(in, {kSeedScrambleKey0, kSeedScrambleKey1});
  PhiloxState s;
  s.key = {mix[0], mix[1]};
  s.counter = {0, 0, mix[2], mix[3]};
  return s;
}

PhiloxState SeedPairToState(uint64_t seed, uint64_t seed2) {
  PhiloxState s;
  s.key = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  s.counter = {0, 0, static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)};
  return s;
}

PhiloxState StateFromKeyCounter(uint64_t key, uint64_t counter0, uint64_t counter1) {
  PhiloxState s;
  s.key = {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)};
  s.counter = {static_cast<uint32_t>(counter0), static_cast<uint32_t>(counter0 >> 32),
               static_cast<uint32_t>(counter1), static_cast<uint32_t>(counter1 >> 32)};
  return s;
}

uint64_t KeyAsU64(const PhiloxKey& key) { return key[0] | (static_cast<uint64_t>(key[1]) << 32); }

void CounterAsU64(const PhiloxCounter& c, uint64_t out[2]) {
  out[0] = c[0] | (static_cast<uint64_t>(c[1]) << 32);
  out[1] = c[2] | (static_cast<uint64_t>(c[3]) << 32);
}

float Uint32ToFloat(uint32_t x) {
  const uint32_t bits = (127u << 23) | (x & 0x7fffffu);
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f - 1.0f;
}

double Uint64ToDouble(uint32_t x0, uint32_t x1) {
  const uint64_t bits = (uint64_t{1023} << 52) | (static_cast<uint64_t>(x0 & 0xfffffu) << 32) | x1;
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d - 1.0;
}

// (1 + m/1024) - 1 and (1 + m/128) - 1 are exact in half/bfloat16: TF's results are m/1024
// and m/128, which float holds exactly.
float Uint32ToHalfValue(uint32_t x) { return static_cast<float>(x & 0x3ffu) / 1024.0f; }
float Uint32ToBfloat16Value(uint32_t x) { return static_cast<float>(x & 0x7fu) / 128.0f; }

void BoxMullerFloat(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  constexpr float kEpsilon = 1.0e-7f;
  float u1 = Uint32ToFloat(x0);
  if (u1 < kEpsilon) u1 = kEpsilon;
  // TF writes 2.0f * M_PI * u: M_PI is a double, so the angle is computed in double.
  const float v1 = static_cast<float>(2.0 * M_PI * static_cast<double>(Uint32ToFloat(x1)));
  // TF's unqualified log/sqrt on a float resolve to logf/sqrtf (a double log misses TF's
  // published tf.random.Generator values).
  const float u2 = std::sqrt(-2.0f * std::log(u1));
  sincosf(v1, f0, f1);
  *f0 *= u2;
  *f1 *= u2;
}

void BoxMullerDouble(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, double* d0, double* d1) {
  constexpr double kEpsilon = 1.0e-7;
  double u1 = Uint64ToDouble(x0, x1);
  if (u1 < kEpsilon) u1 = kEpsilon;
  const double v1 = 2 * M_PI * Uint64ToDouble(x2, x3);
  const double u2 = std::sqrt(-2.0 * std::log(u1));
  sincos(v1, d0, d1);
  *d0 *= u2;
  *d1 *= u2;
}

namespace {

// TF's SingleSampleAdapter: 32-bit words of consecutive blocks, one at a time.
class WordStream {
 public:
  WordStream(const PhiloxState& state, uint64_t first_block)
      : state_(state), next_block_(first_block) {}
  uint32_t Next() {
    if (used_ == 4) {
      words_ = state_.Block(next_block_++);
      used_ = 0;
    }
    return words_[static_cast<size_t>(used_++)];
  }

 private:
  const PhiloxState& state_;
  uint64_t next_block_;
  PhiloxCounter words_{};
  int used_ = 4;
};

}  // namespace

void TruncatedNormalFloatGroup(const PhiloxState& state, uint64_t group, float out[4]) {
  constexpr uint64_t kBlocksPerGroup = kTruncatedFloatGroup * kReservedSamplesPerOutput / 4;
  WordStream words(state, group * kBlocksPerGroup);
  int n = 0;
  while (true) {
    const uint32_t x0 = words.Next();
    const uint32_t x1 = words.Next();
    float f[2];
    BoxMullerFloat(x0, x1, &f[0], &f[1]);
    for (float v : f) {
      if (std::fabs(v) < 2.0f) {
        out[n++] = v;
        if (n == kTruncatedFloatGroup) return;
      }
    }
  }
}

void TruncatedNormalDoubleGroup(const PhiloxState& state, uint64_t group, double out[2]) {
  constexpr uint64_t kBlocksPerGroup = kTruncatedDoubleGroup * kReservedSamplesPerOutput / 4;
  WordStream words(state, group * kBlocksPerGroup);
  int n = 0;
  while (true) {
    const uint32_t x0 = words.Next(), x1 = words.Next(), x2 = words.Next(), x3 = words.Next();
    double d[2];
    BoxMullerDouble(x0, x1, x2, x3, &d[0], &d[1]);
    for (double v : d) {
      if (std::fabs(v) < 2.0) {
        out[n++] = v;
        if (n == kTruncatedDoubleGroup) return;
      }
    }
  }
}

}  // namespace tfjit::random
