// Fuzz target: a binary GraphDef (.pb) through the parser, Graph::Build and Const decoding.
#include "tests/fuzz/fuzz_frontend.h"

[[maybe_unused]] static const bool kLimits = tfjit::fuzz::LowerLoaderLimits();

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tfjit::fuzz::FuzzGraphDef(data, size, /*is_text=*/false);
  return 0;
}
