// Fuzz target: .npy bytes through ParseNpy; a tensor that parses must survive
// SerializeNpy -> ParseNpy unchanged.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "absl/strings/string_view.h"
#include "runtime/io/npy.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tfjit::Tensor> t = tfjit::runtime::ParseNpy(bytes, "fuzz.npy");
  if (!t.ok()) return 0;
  // The data had to be in the file, so the tensor is no bigger than the input.
  TFJIT_FUZZ_CHECK(t->byte_size() <= size);
  const std::string again = tfjit::runtime::SerializeNpy(*t);
  TFJIT_FUZZ_CHECK(!again.empty());
  absl::StatusOr<tfjit::Tensor> back = tfjit::runtime::ParseNpy(again, "reserialized.npy");
  TFJIT_FUZZ_CHECK(back.ok());
  TFJIT_FUZZ_CHECK(back->dtype() == t->dtype() && back->dims() == t->dims());
  TFJIT_FUZZ_CHECK(t->byte_size() == 0 ||
                   std::memcmp(back->raw_data(), t->raw_data(), t->byte_size()) == 0);
  return 0;
}
