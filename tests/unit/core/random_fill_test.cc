// Tests for core/random_fill: TF's known answers through FillRandom, independence of every
// element from the range it is filled in, dtype coverage, and the custom-call target table.
#include "core/random_fill.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "core/dtype.h"
#include "gtest/gtest.h"

namespace tfjit::random {
namespace {

constexpr RandomDistribution kDists[] = {RandomDistribution::kUniform, RandomDistribution::kNormal,
                                         RandomDistribution::kTruncatedNormal};
constexpr DType kTypes[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};

int64_t Bytes(DType t) { return t == DType::kFloat64 ? 8 : (t == DType::kFloat32 ? 4 : 2); }

// tf.random.Generator.from_seed(1234).normal([2, 3]): key 0, counter [1234, 0] (TF's docs).
TEST(RandomFillTest, NormalMatchesTfGeneratorKnownAnswer) {
  const PhiloxState s = StateFromKeyCounter(0, 1234, 0);
  std::vector<float> out(6);
  FillRandom(RandomDistribution::kNormal, DType::kFloat32, s, out.data(), 0, 6);
  EXPECT_EQ(out, (std::vector<float>{0.9356609f, 1.0854305f, -0.93788373f, -0.50615472f,
                                     1.31697023f, 0.71375787f}));
  // Uniform after one normal call of 6 outputs (the Generator skips 6 * 256 blocks).
  std::vector<float> u(3);
  FillRandom(RandomDistribution::kUniform, DType::kFloat32, StateFromKeyCounter(0, 1234 + 1536, 0),
             u.data(), 0, 3);
  EXPECT_EQ(u, (std::vector<float>{0.6512613f, 0.9295906f, 0.50873387f}));
}

// Any split of [0, n) gives the bytes of one whole fill (the CPU runtime shards the fill).
TEST(RandomFillTest, ElementsDoNotDependOnTheRange) {
  const PhiloxState s = StatelessSeedToState(uint64_t(-17), 99);
  const int64_t n = 1023;
  for (RandomDistribution dist : kDists) {
    for (DType t : kTypes) {
      std::vector<char> whole(static_cast<size_t>(n * Bytes(t)));
      std::vector<char> parts(whole.size(), 1);
      FillRandom(dist, t, s, whole.data(), 0, n);
      for (int64_t b = 0; b < n; b += 37) {
        FillRandom(dist, t, s, parts.data(), b, std::min<int64_t>(n, b + 37));
      }
      EXPECT_EQ(std::memcmp(whole.data(), parts.data(), whole.size()), 0)
          << static_cast<int>(dist) << " " << DTypeName(t);
    }
  }
}

TEST(RandomFillTest, DistributionsHaveTheirRanges) {
  const PhiloxState s = StatelessSeedToState(7, 8);
  std::vector<double> d(4001);
  FillRandom(RandomDistribution::kTruncatedNormal, DType::kFloat64, s, d.data(), 0, 4001);
  double sum = 0;
  for (double v : d) {
    EXPECT_LT(std::fabs(v), 2.0);
    sum += v;
  }
  EXPECT_LT(std::fabs(sum / 4001), 0.05);
  std::vector<float> f(4000);
  FillRandom(RandomDistribution::kUniform, DType::kFloat32, s, f.data(), 0, 4000);
  for (float v : f) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
  // Half normals are the float normals rounded (TF converts the float result).
  std::vector<float> nf(10);
  std::vector<half> nh(10);
  FillRandom(RandomDistribution::kNormal, DType::kFloat32, s, nf.data(), 0, 10);
  FillRandom(RandomDistribution::kNormal, DType::kFloat16, s, nh.data(), 0, 10);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(static_cast<float>(nh[i]), static_cast<float>(half(nf[i]))) << i;
  }
}

TEST(RandomFillTest, UnsupportedDTypeWritesNothing) {
  EXPECT_FALSE(IsRandomFillDType(DType::kInt32));
  EXPECT_TRUE(IsRandomFillDType(DType::kBFloat16));
  std::vector<int32_t> out(4, 7);
  FillRandom(RandomDistribution::kUniform, DType::kInt32, PhiloxState{}, out.data(), 0, 4);
  EXPECT_EQ(out, (std::vector<int32_t>{7, 7, 7, 7}));
}

TEST(RandomFillTest, TargetsAndStateWords) {
  for (RandomDistribution dist : kDists) {
    EXPECT_EQ(RandomDistributionOfTarget(RandomFillTarget(dist)), dist);
  }
  EXPECT_EQ(RandomDistributionOfTarget("tfjit.philox_random_normal"), RandomDistribution::kNormal);
  EXPECT_FALSE(RandomDistributionOfTarget("mystery").has_value());
  const PhiloxState s = StateFromKeyCounter(0x0123456789abcdefull, 0xfffffffffffffffeull, 3);
  uint64_t w[3];
  StateToU64x3(s, w);
  EXPECT_EQ(w[0], 0x0123456789abcdefull);
  EXPECT_EQ(w[1], 0xfffffffffffffffeull);
  EXPECT_EQ(w[2], 3u);
  const PhiloxState back = StateFromU64x3(w);
  EXPECT_EQ(back.key, s.key);
  EXPECT_EQ(back.counter, s.counter);
}

}  // namespace
}  // namespace tfjit::random
