// Which dots and convolutions are library calls: the batched row-major matrix product a dot
// computes, and a convolution's NHWC geometry; shared by every backend that calls a GEMM or
// convolution library (the CPU runtime's, cuBLAS).
#ifndef TFJIT_BACKENDS_GEMM_MATCH_H_
#define TFJIT_BACKENDS_GEMM_MATCH_H_

#include <cstdint>
#include <optional>

#include "compiler/hlo/instruction.h"
#include "core/conv2d.h"

namespace tfjit::backends {

// A dot that maps onto a batched row-major GEMM (the CPU runtime's, cuBLAS's).
struct GemmShape {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool transpose_lhs = false, transpose_rhs = false;
  // > 0: no batch dims, a rank-2 lhs and a rhs [outer, k, n] (the products of the rhs dims
  // before and after its contracting dim), so out [m, outer, n] is `outer` GEMMs with
  // strided output rows (the CPU's tfjit_cpu_matmul_outer_*). Separable resizes produce these.
  int64_t rhs_outer = 0;
};

// The GEMM a dot maps onto, or nullopt (f32/f64 only).
std::optional<GemmShape> MatchGemm(const hlo::Instruction& dot);

// A convolution in the layout tf2hlo emits for Conv2D, depthwise and transposed
// convolutions (f32 or f64, 2-D, dim_labels b01f_01io->b01f): its NHWC geometry, which the
// CPU runtime's convolution and the GPU's patches-times-filter GEMM compute. nullopt for
// anything else, which keeps the elemental loop.
std::optional<conv::Conv2DParams> MatchConv2D(const hlo::Instruction& inst);

}  // namespace tfjit::backends

#endif  // TFJIT_BACKENDS_GEMM_MATCH_H_
