// RegisterAllKernels: every fallback kernel family, registered explicitly.
#include "runtime/kernels/kernel.h"

namespace tfjit::runtime {

void RegisterAllKernels(KernelRegistry& registry) {
  RegisterMathKernels(registry);
  RegisterArrayKernels(registry);
  RegisterNnKernels(registry);
  RegisterDebugKernels(registry);
  RegisterRandomKernels(registry);
  RegisterVariableKernels(registry);
  RegisterListKernels(registry);
  RegisterTensorArrayKernels(registry);
}

}  // namespace tfjit::runtime
