// CheckCpuSupport: whether the CPU backend can emit every instruction of a module (the
// sequenced computations' opcodes, the elemental ones inside fusions and reducers, library
// custom calls) and every value fits one tensor, before any buffer is planned.
#include <cstdint>
#include <string>

#include "backends/cpu/frame_plan.h"
#include "backends/cpu/ir_emitter.h"
#include "backends/cpu/kernel_match.h"
#include "backends/llvm/elemental_emitter.h"
#include "core/dtype.h"
#include "core/run_control.h"
#include "core/status.h"

namespace tfjit::cpu {

using hlo::Instruction;
using hlo::Opcode;

absl::Status UnsupportedOpcode(const Instruction& inst) {
  return Unimplemented("cpu backend: opcode '%s' is not supported (instruction '%s')",
                       std::string(hlo::OpcodeName(inst.opcode())), inst.name());
}

namespace {

// Computations of scalars or fused elements: every instruction has an elemental generator.
absl::Status CheckElemental(const hlo::Computation& computation) {
  for (const Instruction* inst : computation.instructions()) {
    if (inst->opcode() == Opcode::kParameter) continue;
    if (!llvm_ir::ElementalEmitter::Supports(*inst)) return UnsupportedOpcode(*inst);
    for (const hlo::Computation* called : inst->called_computations()) {
      TFJIT_RETURN_IF_ERROR(CheckElemental(*called));
    }
  }
  return absl::OkStatus();
}

// Computations the entry function sequences: the entry, while conditions and bodies,
// conditional branches and called computations.
absl::Status CheckSequenced(const hlo::Computation& computation, bool is_entry) {
  for (const Instruction* inst : computation.instructions()) {
    switch (inst->opcode()) {
      case Opcode::kParameter:
        if (is_entry && !inst->shape().IsArray()) {
          return Unimplemented(
              "cpu backend: tuple-shaped parameters are not supported "
              "(instruction '%s')",
              inst->name());
        }
        break;
      case Opcode::kConstant:
        if (!inst->shape().IsArray()) return UnsupportedOpcode(*inst);
        break;
      case Opcode::kTuple:
      case Opcode::kGetTupleElement:
      case Opcode::kReshape:
        break;
      case Opcode::kWhile:
      case Opcode::kConditional:
      case Opcode::kCall:
        for (const hlo::Computation* called : inst->called_computations()) {
          TFJIT_RETURN_IF_ERROR(CheckSequenced(*called, /*is_entry=*/false));
        }
        break;
      case Opcode::kCustomCall:
        if (!IsLibraryCustomCall(*inst)) {
          return Unimplemented(
              "cpu backend: opcode 'custom-call' is not supported (instruction "
              "'%s'): target \"%s\" with this shape has no implementation",
              inst->name(), inst->attrs().custom_call_target);
        }
        break;
      case Opcode::kScatter:
        if (!inst->shape().IsArray() || !IsIntegerDType(inst->operand(1)->shape().element_type())) {
          return UnsupportedOpcode(*inst);
        }
        TFJIT_RETURN_IF_ERROR(CheckElemental(*inst->to_apply()));
        break;
      case Opcode::kFusion:
        if (!inst->shape().IsArray()) {  // a multi-output reduce fusion (fusion.h)
          const Instruction* root = inst->called_computations()[0]->root();
          if (root->opcode() != Opcode::kTuple) return UnsupportedOpcode(*inst);
          for (const Instruction* r : root->operands()) {
            if (r->opcode() != Opcode::kReduce || !llvm_ir::ElementalEmitter::Supports(*r)) {
              return UnsupportedOpcode(*inst);
            }
          }
          for (const Instruction* i : inst->called_computations()[0]->instructions()) {
            if (i == root || i->opcode() == Opcode::kParameter) continue;
            if (!llvm_ir::ElementalEmitter::Supports(*i)) return UnsupportedOpcode(*i);
            for (const hlo::Computation* called : i->called_computations()) {
              TFJIT_RETURN_IF_ERROR(CheckElemental(*called));
            }
          }
          break;
        }
        if (!llvm_ir::ElementalEmitter::Supports(*inst)) return UnsupportedOpcode(*inst);
        for (const hlo::Computation* called : inst->called_computations()) {
          TFJIT_RETURN_IF_ERROR(CheckElemental(*called));
        }
        break;
      default:
        if (!llvm_ir::ElementalEmitter::Supports(*inst)) return UnsupportedOpcode(*inst);
        for (const hlo::Computation* called : inst->called_computations()) {
          TFJIT_RETURN_IF_ERROR(CheckElemental(*called));
        }
        break;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckCpuSupport(const hlo::Module& module) {
  if (module.entry() == nullptr) return InvalidArgument("module '%s' has no entry", module.name());
  // A value larger than one tensor may be (a Fill of [2^40, 2^40] folded into the cluster) is
  // refused before any buffer is planned: offsets and sizes past it would overflow int64.
  const int64_t max_bytes = MaxTensorBytes();
  for (const hlo::Computation* c : module.computations()) {
    for (const hlo::Instruction* inst : c->instructions()) {
      for (const hlo::Shape& s : LeafShapes(inst->shape())) {
        if (s.byte_size() > max_bytes) {
          return ResourceExhausted(
              "instruction '%s' of module '%s' has shape %s, %d bytes: more than one tensor may "
              "hold (%d bytes, the machine's memory); check the shapes fed or computed",
              inst->name(), module.name(), s.ToString(), s.byte_size(), max_bytes);
        }
      }
    }
  }
  return CheckSequenced(*module.entry(), /*is_entry=*/true);
}

}  // namespace tfjit::cpu
