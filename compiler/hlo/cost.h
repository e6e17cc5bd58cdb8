// Static cost figures of a module, for reports (`tfjit bench`, RunStats): not used to decide
// anything in the compiler.
#ifndef TFJIT_COMPILER_HLO_COST_H_
#define TFJIT_COMPILER_HLO_COST_H_

#include <cstdint>

#include "compiler/hlo/module.h"

namespace tfjit::hlo {

// Floating-point operations of the module's convolutions and dots, 2 per multiply-add (the
// convention of GFLOP/s figures), in every computation the module holds, fusions included.
// Each instruction counts once: a loop body counts as one iteration, and both branches of a
// conditional count.
int64_t MatmulFlops(const Module& module);

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_HLO_COST_H_
