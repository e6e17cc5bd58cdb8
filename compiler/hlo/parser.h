// Text parser: the inverse of the printer (print -> parse -> print is the identity).
#ifndef TFJIT_COMPILER_HLO_PARSER_H_
#define TFJIT_COMPILER_HLO_PARSER_H_

#include <memory>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "compiler/hlo/module.h"

namespace tfjit::hlo {

// INVALID_ARGUMENT with "line:column: what was expected, what was found" on bad text.
absl::StatusOr<std::unique_ptr<Module>> ParseModule(absl::string_view text);
// ParseModule followed by VerifyModule.
absl::StatusOr<std::unique_ptr<Module>> ParseAndVerifyModule(absl::string_view text);

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_HLO_PARSER_H_
