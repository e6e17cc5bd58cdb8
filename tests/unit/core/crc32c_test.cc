// CRC-32C against the published check value, the worked examples of formats.md 2.4/2.6, and a
// bit-at-a-time reference (which exercises the slicing-by-8 path at every length/alignment).
#include "core/crc32c.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tfjit::crc32c {
namespace {

// The definition: one bit at a time, reflected polynomial 0x82F63B78.
uint32_t NaiveCrc32c(const uint8_t* p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int b = 0; b < 8; ++b) c = (c >> 1) ^ ((c & 1u) ? 0x82F63B78u : 0u);
  }
  return c ^ 0xffffffffu;
}

TEST(Crc32cTest, CheckValue) {
  EXPECT_EQ(Value(absl::string_view("123456789")), 0xE3069283u);
  EXPECT_EQ(Value("", 0), 0u);
}

TEST(Crc32cTest, MaskedFloatHalfFromFormatsDoc) {
  // float 0.5 little-endian; formats.md 2.4: stored as `35 06 38 27 1f`.
  const uint8_t bytes[] = {0x00, 0x00, 0x00, 0x3f};
  EXPECT_EQ(Mask(Value(bytes, sizeof(bytes))), 0x1f273806u);
  EXPECT_EQ(Unmask(0x1f273806u), Value(bytes, sizeof(bytes)));
}

TEST(Crc32cTest, CounterIndexBlockTrailerFromFormatsDoc) {
  // formats.md 2.6: the 38-byte data block of saved_model_counter's index plus its type byte
  // 00 has the masked CRC 5f a0 10 73.
  const std::vector<uint8_t> block = {
      0x00, 0x00, 0x06, 0x08, 0x01, 0x1a, 0x02, 0x08, 0x01,              // "" header
      0x00, 0x07, 0x0b, 'c',  'o',  'u',  'n',  't',  'e',  'r',         // "counter"
      0x08, 0x01, 0x12, 0x00, 0x28, 0x04, 0x35, 0xa6, 0x7b, 0x11, 0x3a,  // its entry
      0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,                    // restarts
      0x00};                                                             // type byte
  ASSERT_EQ(block.size(), 39u);
  EXPECT_EQ(Mask(Value(block.data(), block.size())), 0x7310a05fu);
}

TEST(Crc32cTest, MaskRoundTrips) {
  for (uint32_t v : {0u, 1u, 0xE3069283u, 0xffffffffu, 0x80000000u}) {
    EXPECT_EQ(Unmask(Mask(v)), v);
    EXPECT_NE(Mask(v), v);
  }
}

TEST(Crc32cTest, MatchesBitwiseReferenceAndExtendComposes) {
  std::mt19937 rng(7);
  std::vector<uint8_t> buf(300);
  for (uint8_t& b : buf) b = static_cast<uint8_t>(rng());
  for (size_t start = 0; start < 9; ++start) {
    for (size_t n = 0; start + n <= buf.size(); n += 13) {
      const uint32_t want = NaiveCrc32c(buf.data() + start, n);
      ASSERT_EQ(Value(buf.data() + start, n), want) << "start " << start << " n " << n;
      const size_t cut = n / 3;
      EXPECT_EQ(Extend(Value(buf.data() + start, cut), buf.data() + start + cut, n - cut), want);
    }
  }
}

}  // namespace
}  // namespace tfjit::crc32c
