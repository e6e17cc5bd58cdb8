// Fuzz target: HLO text through the parser and the verifier; a module that verifies must
// print, reparse, verify again and print the same text (the printer/parser round trip).
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::unique_ptr<tfjit::hlo::Module>> module = tfjit::hlo::ParseModule(text);
  if (!module.ok()) {
    TFJIT_FUZZ_CHECK(module.status().code() == absl::StatusCode::kInvalidArgument);
    return 0;
  }
  if (!tfjit::hlo::VerifyModule(**module).ok()) return 0;
  const std::string printed = tfjit::hlo::PrintModule(**module);
  absl::StatusOr<std::unique_ptr<tfjit::hlo::Module>> again =
      tfjit::hlo::ParseAndVerifyModule(printed);
  if (!again.ok()) {
    std::fprintf(stderr, "reparse failed: %s\n--- printed:\n%s\n",
                 std::string(again.status().message()).c_str(), printed.c_str());
  }
  TFJIT_FUZZ_CHECK(again.ok());
  TFJIT_FUZZ_CHECK(tfjit::hlo::PrintModule(**again) == printed);
  return 0;
}
