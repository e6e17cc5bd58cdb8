// Verifier: structural and shape invariants of a module (HLO.md, "The verifier").
#ifndef TFJIT_COMPILER_HLO_VERIFIER_H_
#define TFJIT_COMPILER_HLO_VERIFIER_H_

#include "absl/status/status.h"
#include "compiler/hlo/module.h"

namespace tfjit::hlo {

// Checks: operands defined before use and in the same computation; arity; every shape equals
// InferShape's; called computations have matching signatures; ROOT exists; names unique in the
// module; an entry exists; no cycles. Failures are INTERNAL and print the instruction.
absl::Status VerifyModule(const Module& module);

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_HLO_VERIFIER_H_
