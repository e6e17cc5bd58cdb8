// Which HLO instructions the CPU backend computes by a runtime-library call (GEMM-shaped dots,
// NHWC convolutions, its custom-calls, prefix scans) or by a special kernel (output fusions,
// column reductions), and the parameters of those calls. Shared by the IR emitter and the
// fusion policy.
#ifndef TFJIT_BACKENDS_CPU_KERNEL_MATCH_H_
#define TFJIT_BACKENDS_CPU_KERNEL_MATCH_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "backends/gemm_match.h"
#include "compiler/hlo/computation.h"
#include "core/conv2d.h"
#include "core/dtype.h"

namespace tfjit::cpu {

using backends::GemmShape;
using backends::MatchGemm;

using backends::MatchConv2D;  // the runtime's NHWC convolution (tfjit_cpu_conv2d_*)

// How the runtime reads `weights`, the constant rhs of the dot or convolution `hero`, packed
// once at compile time (gemm::Pack): a float32 dot with batch 1 and neither operand
// transposed, or a convolution's filter (conv::FilterPackingOf) when every element is finite
// (the runtime then multiplies padding zeros by it instead of skipping those taps). Empty
// (blocks 0) when it reads them unpacked, or this CPU's GEMM does not pack.
gemm::Packing ConstantWeightPacking(const hlo::Instruction& hero, const hlo::Instruction& weights);

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

// A custom-call the runtime library implements (Philox fills, top-k, linalg, non-max
// suppression, Where's rows), with operand and result shapes its routine takes (HLO.md).
bool IsLibraryCustomCall(const hlo::Instruction& inst);

// A reduce-window that is an inclusive prefix scan along one dim (the form tf2hlo gives
// Cumsum and Cumprod: window = the dim's size, padded size - 1 low, init the combiner's
// identity, every other dim a window of 1): the runtime library scans each line in order in
// O(n) (tfjit_cpu_scan) where the elemental loop would reduce a whole window per element.
struct ScanShape {
  bool multiply = false;  // the combiner: add or multiply
  DType type = DType::kInvalid;
  int64_t outer = 1, n = 1, inner = 1;  // the operand viewed as [outer, n, inner]
};
std::optional<ScanShape> MatchScan(const hlo::Instruction& inst);

}  // namespace tfjit::cpu

#endif  // TFJIT_BACKENDS_CPU_KERNEL_MATCH_H_
