// Opcode table lookups generated from TFJIT_HLO_OPCODE_LIST.
#include "compiler/hlo/opcode.h"

#include <array>

namespace tfjit::hlo {
namespace {

struct OpcodeInfo {
  Opcode opcode;
  absl::string_view name;
  int arity;
  OpcodeKind kind;
};

constexpr std::array<OpcodeInfo, kOpcodeCount> kOpcodeInfos = {{
#define TFJIT_OPCODE_INFO(e, name, arity, kind) {Opcode::e, name, arity, OpcodeKind::kind},
    TFJIT_HLO_OPCODE_LIST(TFJIT_OPCODE_INFO)
#undef TFJIT_OPCODE_INFO
}};

}  // namespace

absl::string_view OpcodeName(Opcode opcode) {
  return kOpcodeInfos[static_cast<size_t>(opcode)].name;
}

std::optional<Opcode> OpcodeFromName(absl::string_view name) {
  for (const OpcodeInfo& info : kOpcodeInfos) {
    if (info.name == name) return info.opcode;
  }
  return std::nullopt;
}

int OpcodeArity(Opcode opcode) { return kOpcodeInfos[static_cast<size_t>(opcode)].arity; }

OpcodeKind OpcodeKindOf(Opcode opcode) { return kOpcodeInfos[static_cast<size_t>(opcode)].kind; }

bool IsElementwise(Opcode op) {
  switch (op) {
    case Opcode::kCompare:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kConvert:
    case Opcode::kIsFinite:
      return true;
    default:
      return IsElementwiseUnary(op) || IsElementwiseBinary(op);
  }
}

}  // namespace tfjit::hlo
