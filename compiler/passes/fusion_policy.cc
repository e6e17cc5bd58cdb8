// The default FusionPolicy: elemental producers fuse into elemental consumers and reductions.
#include "compiler/passes/fusion_policy.h"

#include "core/dtype.h"

namespace tfjit::passes {
namespace {

using hlo::Opcode;

// Ops whose every output element is a cheap function of a few operand elements, which the
// backends' elemental emitters generate inside a loop (the fusion contract in fusion.h).
bool IsElemental(const hlo::Instruction& inst) {
  if (!inst.shape().IsArray()) return false;
  switch (inst.opcode()) {
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kConcatenate:
    case Opcode::kIota:
    case Opcode::kGetDimensionSize:  // a dim of its operand's shape: no element is read
      return true;
    case Opcode::kConstant:
      return inst.shape().IsScalar();  // bigger constants stay buffers, passed as operands
    case Opcode::kBitcastConvert:      // the same bits read as another type of the same size
      return tfjit::DTypeSize(inst.shape().element_type()) ==
             tfjit::DTypeSize(inst.operand(0)->shape().element_type());
    case Opcode::kGather:  // one operand element per output element, at computed indices
      return tfjit::IsIntegerDType(inst.operand(1)->shape().element_type());
    default:
      return hlo::IsElementwise(inst.opcode());
  }
}

// A single-output reduce can root an input fusion.
bool IsFusibleReduce(const hlo::Instruction& inst) {
  return inst.opcode() == Opcode::kReduce && inst.operand_count() == 2 && inst.shape().IsArray();
}

}  // namespace

bool FusionPolicy::IsFusible(const hlo::Instruction& inst) const {
  return IsElemental(inst) || IsFusibleReduce(inst);
}

bool FusionPolicy::IsExpensive(const hlo::Instruction& inst) const {
  switch (inst.opcode()) {
    case Opcode::kAtan2:
    case Opcode::kCbrt:
    case Opcode::kCosine:
    case Opcode::kDivide:
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kPower:
    case Opcode::kRemainder:
    case Opcode::kRsqrt:
    case Opcode::kSine:
    case Opcode::kSqrt:
    case Opcode::kTan:
    case Opcode::kTanh:
    case Opcode::kGather:
      return true;
    default:
      return false;
  }
}

bool FusionPolicy::ShouldFuse(const hlo::Instruction& producer,
                              const hlo::Instruction& consumer) const {
  // A reduce is only ever a fusion root: an elemental loop cannot recompute it per element.
  if (!IsElemental(producer)) return false;
  // What a gather reads stays a buffer: fused, the producer would be recomputed for every
  // element read at a computed index, and chains of gathers (a resize of a resize) multiply
  // that work level by level.
  if (consumer.opcode() == Opcode::kGather && consumer.operand(0) == &producer) return false;
  return IsElemental(consumer) || IsFusibleReduce(consumer) || consumer.opcode() == Opcode::kFusion;
}

}  // namespace tfjit::passes
