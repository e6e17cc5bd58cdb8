// Static cost figures of a module, for reports (`tfjit bench`, RunStats): not used to decide
// anything in the compiler.
#ifndef TFJIT_COMPILER_HLO_COST_H_
#define TFJIT_COMPILER_HLO_COST_H_

#include <cstdint>
#include <string>

#include "compiler/hlo/module.h"

namespace tfjit::hlo {

// Floating-point operations of the module's convolutions and dots, 2 per multiply-add (the
// convention of GFLOP/s figures), in every computation the module holds, fusions included.
// Each instruction counts once: a loop body counts as one iteration, and both branches of a
// conditional count.
int64_t MatmulFlops(const Module& module);

// The same for one instruction: a dot's or convolution's, a fusion's summed over the
// instructions it fuses (calls of other computations count 0).
int64_t InstructionFlops(const Instruction& instr);

// Bytes of the instruction's operands and result (every leaf of tuple shapes): what a kernel
// computing it reads and writes at least once.
int64_t InstructionBytes(const Instruction& instr);

// What the instruction computes, for profiles: its opcode, or for a fusion the distinct
// opcodes of the fused computation in order ("convolution+add+clamp"), parameters,
// constants and tuple plumbing left out, at most 8 then "+...".
std::string OpsSummary(const Instruction& instr);

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_HLO_COST_H_
