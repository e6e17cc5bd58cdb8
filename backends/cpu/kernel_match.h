// Which HLO instructions the CPU backend computes by a runtime-library call (GEMM-shaped dots,
// NHWC convolutions) or by a special kernel (output fusions, column reductions), and the
// parameters of those calls. Shared by the IR emitter and the fusion policy.
#ifndef TFJIT_BACKENDS_CPU_KERNEL_MATCH_H_
#define TFJIT_BACKENDS_CPU_KERNEL_MATCH_H_

#include <cstdint>
#include <optional>

#include "backends/gemm_match.h"
#include "compiler/hlo/computation.h"
#include "core/conv2d.h"

namespace tfjit::cpu {

using backends::GemmShape;
using backends::MatchGemm;

using backends::MatchConv2D;  // the runtime's NHWC convolution (tfjit_cpu_conv2d_*)

// Whether the CPU backend computes `inst` (a dot or convolution) by a library call that can
// run a fused elementwise epilogue (kOutput fusions; CpuFusionPolicy).
bool IsEpilogueHero(const hlo::Instruction& inst);

// The dot or convolution of an output fusion's computation, or null.
const hlo::Instruction* OutputFusionHero(const hlo::Computation& fused);

// A kOutput fusion with a hero the library computes (emitted as the call plus an epilogue).
bool IsOutputFusion(const hlo::Instruction& inst);

// A reduce, or an input fusion rooted at one, that keeps its operand's innermost dim and
// reduces at least 16 elements per output: the reduce, or null.
const hlo::Instruction* ColumnReduction(const hlo::Instruction& inst);

}  // namespace tfjit::cpu

#endif  // TFJIT_BACKENDS_CPU_KERNEL_MATCH_H_
