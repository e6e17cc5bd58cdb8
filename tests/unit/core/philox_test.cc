// Tests for core/philox: Random123's published Philox-4x32-10 known answers, counter carries,
// the seed derivations and TF's bit-to-float conversions.
#include "core/philox.h"

#include <cmath>

#include "gtest/gtest.h"

namespace tfjit::random {
namespace {

// Random123 kat_vectors for philox4x32_10 (counter, key -> output).
TEST(PhiloxTest, Random123KnownAnswers) {
  EXPECT_EQ(Philox4x32({0, 0, 0, 0}, {0, 0}),
            (PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(Philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(PhiloxTest, CounterAdditionCarriesAcrossAllWords) {
  EXPECT_EQ(AddToCounter({0xffffffff, 0, 0, 0}, 1), (PhiloxCounter{0, 1, 0, 0}));
  EXPECT_EQ(AddToCounter({0xffffffff, 0xffffffff, 0xffffffff, 0}, 1), (PhiloxCounter{0, 0, 0, 1}));
  EXPECT_EQ(AddToCounter({5, 6, 7, 8}, 0x100000002ull), (PhiloxCounter{7, 7, 7, 8}));
  EXPECT_EQ(AddToCounter({0xfffffffe, 0xffffffff, 3, 0}, 3), (PhiloxCounter{1, 0, 4, 0}));
}

TEST(PhiloxTest, StatelessSeedIsOnePhiloxBlockUnderTheScrambleKey) {
  const PhiloxState s = StatelessSeedToState(0x0000000200000001ull, 0xfffffffffffffffdull);
  const PhiloxCounter mix = Philox4x32({1, 2, 0xfffffffd, 0xffffffff}, {0x3ec8f720, 0x02461e29});
  EXPECT_EQ(s.key, (PhiloxKey{mix[0], mix[1]}));
  EXPECT_EQ(s.counter, (PhiloxCounter{0, 0, mix[2], mix[3]}));
  const PhiloxState t = SeedPairToState(0x1122334455667788ull, 0x99aabbccddeeff00ull);
  EXPECT_EQ(t.key, (PhiloxKey{0x55667788, 0x11223344}));
  EXPECT_EQ(t.counter, (PhiloxCounter{0, 0, 0xddeeff00, 0x99aabbcc}));
  uint64_t c[2];
  CounterAsU64(t.counter, c);
  EXPECT_EQ(c[0], 0u);
  EXPECT_EQ(c[1], 0x99aabbccddeeff00ull);
  EXPECT_EQ(KeyAsU64(t.key), 0x1122334455667788ull);
}

TEST(PhiloxTest, BitsToFloatUseTheLowBits) {
  EXPECT_EQ(Uint32ToFloat(0), 0.0f);
  EXPECT_EQ(Uint32ToFloat(0xff800001u), std::ldexp(1.0f, -23));  // high bits ignored
  EXPECT_EQ(Uint32ToFloat(0x007fffffu), 1.0f - std::ldexp(1.0f, -23));
  EXPECT_EQ(Uint64ToDouble(0xfff00000u, 1), std::ldexp(1.0, -52));
  EXPECT_EQ(Uint64ToDouble(0x00080000u, 0), 0.5);
  EXPECT_EQ(Uint32ToHalfValue(0xfffffc01u), 1.0f / 1024);
  EXPECT_EQ(Uint32ToBfloat16Value(0xffffff40u), 0.5f);
}

TEST(PhiloxTest, BoxMullerFloorsTinyUniforms) {
  // x0 = 0 gives u1 = 0, floored at 1e-7: radius sqrt(-2 log 1e-7) ~ 5.68; x1 = 0: angle 0.
  float f0, f1;
  BoxMullerFloat(0, 0, &f0, &f1);
  EXPECT_EQ(f0, 0.0f);
  EXPECT_NEAR(f1, std::sqrt(-2.0 * std::log(1e-7)), 1e-5);
}

}  // namespace
}  // namespace tfjit::random
