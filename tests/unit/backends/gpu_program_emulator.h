// Runs a GpuProgram (backends/gpu/gpu_program.h) on the host, so the GPU backend's own logic
// is tested where there is no GPU: the buffer plan (every buffer a step reads must still hold
// what its producer wrote), the parameter, constant and output slots, the cuBLAS arguments
// (a column-major reference GEMM takes exactly what CublasArgsFor gives cuBLAS) and the
// convolution patch matrix (a host im2col with core/conv2d.h's geometry). Kernel steps are
// computed by the evaluator from the operand values read out of the emulated arena; the PTX
// itself is what ptxas and, on a GPU, the differential suite check.
#ifndef TFJIT_TESTS_UNIT_BACKENDS_GPU_PROGRAM_EMULATOR_H_
#define TFJIT_TESTS_UNIT_BACKENDS_GPU_PROGRAM_EMULATOR_H_

#include <vector>

#include "absl/status/statusor.h"
#include "backends/gpu/gpu_program.h"
#include "compiler/hlo/module.h"
#include "tfjit/tensor.h"

namespace tfjit::gpu {

// The program's outputs for `args` (one per entry parameter). INTERNAL naming the step and
// buffer when a step reads a buffer something else overwrote, or when a kernel's element
// count or a buffer's size is not its instruction's.
//
// A symbolic program's instance at batch size b (GpuProgram::AtBatch) is emulated with
// `specialized`, its module specialized at b (hlo::Specialize): each step's instruction is
// taken from there by name, so the instance's sizes, offsets and GEMM arguments are checked
// against the module built at b.
absl::StatusOr<std::vector<Tensor>> EmulateGpuProgram(const GpuProgram& program,
                                                      const std::vector<Tensor>& args,
                                                      const hlo::Module* specialized = nullptr);

}  // namespace tfjit::gpu

#endif  // TFJIT_TESTS_UNIT_BACKENDS_GPU_PROGRAM_EMULATOR_H_
