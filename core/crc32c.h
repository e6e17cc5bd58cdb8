// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as used by TF checkpoints and the
// LevelDB-style table container (shared/docs/formats.md 2.4). Debian 12 ships no C++ CRC32C
// library (no libcrc32c-dev; abseil 20220623 has no absl/crc), hence our own.
#ifndef TFJIT_CORE_CRC32C_H_
#define TFJIT_CORE_CRC32C_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace tfjit::crc32c {

// Extends `crc` (a finished CRC of earlier bytes; 0 for none) with `n` more bytes.
uint32_t Extend(uint32_t crc, const void* data, size_t n);

inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }
inline uint32_t Value(absl::string_view bytes) { return Extend(0, bytes.data(), bytes.size()); }

// Stored CRCs are masked: computing the CRC of bytes that contain embedded CRCs is
// error-prone, so the writers rotate and offset the value.
constexpr uint32_t kMaskDelta = 0xa282ead8u;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  const uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace tfjit::crc32c

#endif  // TFJIT_CORE_CRC32C_H_
