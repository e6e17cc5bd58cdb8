// RegisterAllKernels: every fallback kernel family, registered explicitly.
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {

void RegisterImageKernels(KernelRegistry& registry);  // image_kernels.cc
void RegisterNmsKernels(KernelRegistry& registry);    // image_nms_kernels.cc

void RegisterAllKernels(KernelRegistry& registry) {
  RegisterMathKernels(registry);
  RegisterArrayKernels(registry);
  RegisterNnKernels(registry);
  RegisterDebugKernels(registry);
  RegisterRandomKernels(registry);
  RegisterVariableKernels(registry);
  RegisterListKernels(registry);
  RegisterTensorArrayKernels(registry);
  RegisterMathCwiseMoreKernels(registry);
  RegisterSliceKernels(registry);
  RegisterShapeKernels(registry);
  RegisterGatherKernels(registry);
  RegisterReductionScanKernels(registry);
  RegisterLinalgMatmulKernels(registry);
  RegisterImageKernels(registry);
  RegisterNmsKernels(registry);
  RegisterConvKernels(registry);
  RegisterGradientsKernels(registry);
  RegisterOptimizersKernels(registry);
  RegisterLinalgKernels(registry);
  RegisterScatterSegmentKernels(registry);
  RegisterArrayMoreKernels(registry);
  RegisterSpecialKernels(registry);
  RegisterRandomMoreKernels(registry);
  RegisterImageMoreKernels(registry);
  RegisterNnMoreKernels(registry);
  RegisterStateMoreKernels(registry);
  RegisterCheckpointKernels(registry);
  RegisterFftKernels(registry);
  RegisterXlaKernels(registry);
  RegisterParsingKernels(registry);
  RegisterMathComplexKernels(registry);  // last: wraps earlier kernels with complex paths
}

}  // namespace tfjit::runtime
