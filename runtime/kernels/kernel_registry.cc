// RegisterAllKernels: every fallback kernel family, registered explicitly.
#include "runtime/kernels/kernel.h"

namespace tfjit::runtime {

void RegisterAllKernels(KernelRegistry& registry) {
  RegisterMathKernels(registry);
  RegisterArrayKernels(registry);
  RegisterNnKernels(registry);
  RegisterDebugKernels(registry);
  RegisterRandomKernels(registry);
}

}  // namespace tfjit::runtime
