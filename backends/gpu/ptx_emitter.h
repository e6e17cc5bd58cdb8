// PTX emission for NVIDIA GPUs (issue 7, first steps): the kernels of an optimized HLO module
// (every array instruction and fusion the elemental emitter generates: elementwise ops,
// shape ops, reductions, gathers, pads, windows, and naive dots and convolutions) compiled by
// LLVM's NVPTX target to PTX text for a compute capability, with the same elemental emitter
// as the CPU backend, one thread per output element. Each kernel is a
// `.entry` with the PTX kernel calling convention, parameters (out, operands..., i64 n, and
// for a symbolic module the run's i64 batch size, from which symbolic dims are computed), and
// a grid-stride loop over the output's n elements in row-major order. The runtime half
// (CUDA driver, launches) and the remaining opcodes come later; what is not supported yet is
// UNIMPLEMENTED naming the instruction. Math without an inline form calls libdevice.
#ifndef TFJIT_BACKENDS_GPU_PTX_EMITTER_H_
#define TFJIT_BACKENDS_GPU_PTX_EMITTER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/hlo/module.h"

namespace tfjit::gpu {

struct PtxKernel {
  std::string name;         // the .entry symbol: "kernel_0", ...
  std::string instruction;  // the HLO instruction it computes
  int num_operands = 0;     // pointer parameters after the output
  // Threads that cooperate on one output element: 1, or 32 for a row reduction (a warp per
  // output). The launch covers n * threads_per_element threads (n: the last parameter).
  int threads_per_element = 1;
  // Output elements each thread computes: the launch covers n / elements_per_thread threads.
  int elements_per_thread = 1;
  // The kernel runs as one block (a scatter: its threads copy, then one applies the updates).
  bool one_block = false;
};

struct PtxModule {
  std::string ptx;  // PTX assembly text
  std::vector<PtxKernel> kernels;
};

// `sm`: "sm_80", "sm_90" or "sm_90a". INVALID_ARGUMENT for another; UNIMPLEMENTED for an
// instruction the GPU path does not compile yet, or for math that needs CUDA's libdevice
// (sine, power, ...: linked from $TFJIT_LIBDEVICE or
// /usr/local/cuda/nvvm/libdevice/libdevice.10.bc) when that file is missing.
absl::StatusOr<PtxModule> EmitPtx(const hlo::Module& module, const std::string& sm);

// What one kernel computes: the value of an instruction of the entry, or (patches) the patch
// matrix of a one-group NHWC convolution, [batch * out_h * out_w, k_h * k_w * in_c], which a
// GEMM multiplies by the filter.
struct KernelSpec {
  const hlo::Instruction* inst = nullptr;
  bool patches = false;
  // A dynamic-update-slice that writes its update into its operand's buffer (which holds the
  // output): the kernel runs over the update's elements only.
  bool in_place = false;
};

// The same for the given kernels only, kernel i computing kernels[i] (the GPU backend leaves
// out what cuBLAS computes).
absl::StatusOr<PtxModule> EmitPtxKernels(const hlo::Module& module,
                                         const std::vector<KernelSpec>& kernels,
                                         const std::string& sm);

// Whether `inst` is plumbing with no kernel: a parameter, constant, tuple or
// get-tuple-element.
bool IsPlumbing(const hlo::Instruction& inst);

}  // namespace tfjit::gpu

#endif  // TFJIT_BACKENDS_GPU_PTX_EMITTER_H_
