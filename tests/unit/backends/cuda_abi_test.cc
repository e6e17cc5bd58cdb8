// backends/gpu/cuda_driver.h declares the CUDA driver, cuBLAS and cuBLASLt entry points and
// constants by hand (the build needs no CUDA headers). Where the toolkit's headers exist, this
// test compiles them next to those declarations and checks, at compile time, that every
// constant equals the header's, that the heuristic-result struct has the header's layout, and
// that every entry point takes as many parameters, of the same sizes, as the header's. The
// CMake rule builds it only when cuda.h is found.
#include <array>
#include <cstddef>

#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda.h>

#include "backends/gpu/cuda_driver.h"
#include "gtest/gtest.h"

namespace tfjit::gpu {
namespace {

template <typename R, typename... A>
constexpr std::array<size_t, sizeof...(A) + 1> Sizes(R (*)(A...)) {
  return {sizeof(R), sizeof(A)...};
}
template <typename F, typename G>
constexpr bool SameAbi(F f, G g) {
  const auto a = Sizes(f);
  const auto b = Sizes(g);
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}
#define TFJIT_SAME_ABI(theirs, ours) \
  static_assert(SameAbi(&theirs, decltype(ours){}), #theirs " and " #ours " differ")

// The driver, by the versioned names tfjit binds.
TFJIT_SAME_ABI(cuGetErrorString, CudaApi::GetErrorString);
TFJIT_SAME_ABI(cuGetErrorName, CudaApi::GetErrorName);
TFJIT_SAME_ABI(cuInit, CudaApi::Init);
TFJIT_SAME_ABI(cuDriverGetVersion, CudaApi::DriverGetVersion);
TFJIT_SAME_ABI(cuDeviceGetCount, CudaApi::DeviceGetCount);
TFJIT_SAME_ABI(cuDeviceGet, CudaApi::DeviceGet);
TFJIT_SAME_ABI(cuDeviceGetName, CudaApi::DeviceGetName);
TFJIT_SAME_ABI(cuDeviceGetAttribute, CudaApi::DeviceGetAttribute);
TFJIT_SAME_ABI(cuDeviceTotalMem_v2, CudaApi::DeviceTotalMem);
TFJIT_SAME_ABI(cuDevicePrimaryCtxRetain, CudaApi::DevicePrimaryCtxRetain);
TFJIT_SAME_ABI(cuCtxSetCurrent, CudaApi::CtxSetCurrent);
TFJIT_SAME_ABI(cuModuleLoadDataEx, CudaApi::ModuleLoadDataEx);
TFJIT_SAME_ABI(cuModuleUnload, CudaApi::ModuleUnload);
TFJIT_SAME_ABI(cuModuleGetFunction, CudaApi::ModuleGetFunction);
TFJIT_SAME_ABI(cuLaunchKernel, CudaApi::LaunchKernel);
TFJIT_SAME_ABI(cuMemAlloc_v2, CudaApi::MemAlloc);
TFJIT_SAME_ABI(cuMemFree_v2, CudaApi::MemFree);
TFJIT_SAME_ABI(cuMemcpyHtoDAsync_v2, CudaApi::MemcpyHtoDAsync);
TFJIT_SAME_ABI(cuMemcpyDtoHAsync_v2, CudaApi::MemcpyDtoHAsync);
TFJIT_SAME_ABI(cuMemcpyDtoDAsync_v2, CudaApi::MemcpyDtoDAsync);
TFJIT_SAME_ABI(cuStreamCreate, CudaApi::StreamCreate);
TFJIT_SAME_ABI(cuStreamDestroy_v2, CudaApi::StreamDestroy);
TFJIT_SAME_ABI(cuStreamSynchronize, CudaApi::StreamSynchronize);
TFJIT_SAME_ABI(cuEventCreate, CudaApi::EventCreate);
TFJIT_SAME_ABI(cuEventDestroy_v2, CudaApi::EventDestroy);
TFJIT_SAME_ABI(cuEventRecord, CudaApi::EventRecord);
TFJIT_SAME_ABI(cuEventSynchronize, CudaApi::EventSynchronize);
TFJIT_SAME_ABI(cuEventElapsedTime_v2, CudaApi::EventElapsedTime);

// cuBLAS and cuBLASLt.
TFJIT_SAME_ABI(cublasCreate_v2, CublasApi::Create);
TFJIT_SAME_ABI(cublasDestroy_v2, CublasApi::Destroy);
TFJIT_SAME_ABI(cublasSetStream_v2, CublasApi::SetStream);
TFJIT_SAME_ABI(cublasSetMathMode, CublasApi::SetMathMode);
TFJIT_SAME_ABI(cublasGetStatusString, CublasApi::GetStatusString);
TFJIT_SAME_ABI(cublasSgemmStridedBatched, CublasApi::SgemmStridedBatched);
TFJIT_SAME_ABI(cublasDgemmStridedBatched, CublasApi::DgemmStridedBatched);
TFJIT_SAME_ABI(cublasLtCreate, CublasLtApi::Create);
TFJIT_SAME_ABI(cublasLtMatmulDescCreate, CublasLtApi::MatmulDescCreate);
TFJIT_SAME_ABI(cublasLtMatmulDescDestroy, CublasLtApi::MatmulDescDestroy);
TFJIT_SAME_ABI(cublasLtMatmulDescSetAttribute, CublasLtApi::MatmulDescSetAttribute);
TFJIT_SAME_ABI(cublasLtMatrixLayoutCreate, CublasLtApi::MatrixLayoutCreate);
TFJIT_SAME_ABI(cublasLtMatrixLayoutDestroy, CublasLtApi::MatrixLayoutDestroy);
TFJIT_SAME_ABI(cublasLtMatmulPreferenceCreate, CublasLtApi::PreferenceCreate);
TFJIT_SAME_ABI(cublasLtMatmulPreferenceDestroy, CublasLtApi::PreferenceDestroy);
TFJIT_SAME_ABI(cublasLtMatmulPreferenceSetAttribute, CublasLtApi::PreferenceSetAttribute);
TFJIT_SAME_ABI(cublasLtMatmulAlgoGetHeuristic, CublasLtApi::AlgoGetHeuristic);
TFJIT_SAME_ABI(cublasLtMatmul, CublasLtApi::Matmul);

// Constants.
static_assert(kCudaSuccess == CUDA_SUCCESS);
static_assert(kAttrMultiprocessorCount == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
static_assert(kAttrComputeCapabilityMajor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(kAttrComputeCapabilityMinor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(kJitErrorLogBuffer == CU_JIT_ERROR_LOG_BUFFER);
static_assert(kJitErrorLogBufferSizeBytes == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
static_assert(kCublasOpN == CUBLAS_OP_N && kCublasOpT == CUBLAS_OP_T);
static_assert(kCublasDefaultMath == CUBLAS_DEFAULT_MATH);
static_assert(kCublasCompute32F == CUBLAS_COMPUTE_32F);
static_assert(kCudaR32F == CUDA_R_32F);
static_assert(kLtDescTransA == CUBLASLT_MATMUL_DESC_TRANSA);
static_assert(kLtDescTransB == CUBLASLT_MATMUL_DESC_TRANSB);
static_assert(kLtDescEpilogue == CUBLASLT_MATMUL_DESC_EPILOGUE);
static_assert(kLtDescBiasPointer == CUBLASLT_MATMUL_DESC_BIAS_POINTER);
static_assert(kLtEpilogueBias == CUBLASLT_EPILOGUE_BIAS);
static_assert(kLtPrefMaxWorkspaceBytes == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
static_assert(sizeof(CUdeviceptr) == sizeof(gpu::CUdeviceptr));
static_assert(sizeof(CublasLtApi::HeuristicResult) == sizeof(cublasLtMatmulHeuristicResult_t));
static_assert(offsetof(CublasLtApi::HeuristicResult, workspace_size) ==
              offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize));
static_assert(offsetof(CublasLtApi::HeuristicResult, state) ==
              offsetof(cublasLtMatmulHeuristicResult_t, state));

TEST(CudaAbiTest, DeclarationsMatchTheToolkitHeaders) {
  SUCCEED() << "checked at compile time against CUDA " << CUDA_VERSION;
}

}  // namespace
}  // namespace tfjit::gpu
