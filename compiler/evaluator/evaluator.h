// The HLO reference evaluator: the oracle every backend and pass is tested against.
#ifndef TFJIT_COMPILER_EVALUATOR_EVALUATOR_H_
#define TFJIT_COMPILER_EVALUATOR_EVALUATOR_H_

#include <vector>

#include "absl/status/statusor.h"
#include "compiler/hlo/module.h"

namespace tfjit::hlo {

// Evaluates the entry computation with one literal per parameter (shapes must match:
// INVALID_ARGUMENT otherwise). Semantics exactly as HLO.md; transcendental functions use the
// C++ standard library in the element type's precision (f16/bf16 computed in f32, rounded).
absl::StatusOr<Literal> Evaluate(const Module& module, const std::vector<Literal>& args);
absl::StatusOr<Literal> EvaluateComputation(const Computation& computation,
                                            const std::vector<Literal>& args);

// Evaluates one instruction on already-evaluated operand values (constant folding uses it).
// Called computations (reduce combiners, call, fusion, while) are evaluated as usual.
absl::StatusOr<Literal> EvaluateInstruction(const Instruction& inst,
                                            const std::vector<Literal>& operands);

// Coverage table: false for opcodes the evaluator does not implement yet (they fail with
// UNIMPLEMENTED naming the opcode).
bool EvaluatorSupports(Opcode opcode);

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_EVALUATOR_EVALUATOR_H_
