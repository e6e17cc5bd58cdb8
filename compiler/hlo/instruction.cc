// Instruction helpers: comparison-direction names and root queries.
#include "compiler/hlo/instruction.h"

#include <array>

#include "compiler/hlo/computation.h"

namespace tfjit::hlo {
namespace {

constexpr std::array<absl::string_view, 6> kDirectionNames = {"EQ", "NE", "LT", "LE", "GT", "GE"};

}  // namespace

absl::string_view ComparisonDirectionName(ComparisonDirection d) {
  return kDirectionNames[static_cast<size_t>(d)];
}

std::optional<ComparisonDirection> ComparisonDirectionFromName(absl::string_view name) {
  for (size_t i = 0; i < kDirectionNames.size(); ++i) {
    if (kDirectionNames[i] == name) return static_cast<ComparisonDirection>(i);
  }
  return std::nullopt;
}

bool Instruction::IsRoot() const { return parent_ != nullptr && parent_->root() == this; }

}  // namespace tfjit::hlo
