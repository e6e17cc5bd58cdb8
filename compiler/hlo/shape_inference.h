// Shape inference: the result shape of an opcode given operand shapes and attributes. Used by
// the Builder to create instructions and by the verifier to re-check every instruction.
#ifndef TFJIT_COMPILER_HLO_SHAPE_INFERENCE_H_
#define TFJIT_COMPILER_HLO_SHAPE_INFERENCE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "compiler/hlo/instruction.h"

namespace tfjit::hlo {

// `result_hint` is consulted only where the shape is not derivable from operands: parameter,
// constant (the literal's shape), iota, broadcast, reshape, custom-call, and convert /
// bitcast-convert (its element type). Errors are INVALID_ARGUMENT naming the opcode and the
// offending shapes/attributes.
absl::StatusOr<Shape> InferShape(Opcode opcode, const std::vector<const Shape*>& operands,
                                 const Attributes& attrs, const std::vector<Computation*>& called,
                                 const Shape& result_hint);

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_HLO_SHAPE_INFERENCE_H_
