// The CUDA driver API and cuBLAS, loaded with dlopen at run time: nothing links against CUDA,
// so every tfjit binary starts on machines without a GPU, and the build needs no CUDA
// headers. The few types and entry points used are declared here with the driver's ABI
// (cuda.h, CUDA 12/13); cuda_abi_test checks them against cuda.h where the toolkit exists.
//
// Entry points are taken by their versioned export names (cuMemAlloc_v2, ...: what cuda.h's
// macros turn the plain names into), so the functions called are the ones cuda.h declares.
#ifndef TFJIT_BACKENDS_GPU_CUDA_DRIVER_H_
#define TFJIT_BACKENDS_GPU_CUDA_DRIVER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tfjit::gpu {

// cuda.h's types, by ABI.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;

inline constexpr CUresult kCudaSuccess = 0;
inline constexpr int kAttrMultiprocessorCount = 16;  // CU_DEVICE_ATTRIBUTE_...
inline constexpr int kAttrComputeCapabilityMajor = 75;
inline constexpr int kAttrComputeCapabilityMinor = 76;
inline constexpr int kJitErrorLogBuffer = 5;           // CU_JIT_ERROR_LOG_BUFFER
inline constexpr int kJitErrorLogBufferSizeBytes = 6;  // CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES

// The driver entry points tfjit calls.
struct CudaApi {
  CUresult (*GetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*GetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*Init)(unsigned) = nullptr;
  CUresult (*DriverGetVersion)(int*) = nullptr;
  CUresult (*DeviceGetCount)(int*) = nullptr;
  CUresult (*DeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*DeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*DeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*DeviceTotalMem)(size_t*, CUdevice) = nullptr;  // cuDeviceTotalMem_v2
  CUresult (*DevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*CtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*ModuleLoadDataEx)(CUmodule*, const void*, unsigned, int*, void**) = nullptr;
  CUresult (*ModuleUnload)(CUmodule) = nullptr;
  CUresult (*ModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*MemAlloc)(CUdeviceptr*, size_t) = nullptr;  // cuMemAlloc_v2
  CUresult (*MemFree)(CUdeviceptr) = nullptr;            // cuMemFree_v2
  CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream) = nullptr;  // _v2
  CUresult (*MemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream) = nullptr;        // _v2
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream) = nullptr;  // _v2
  CUresult (*StreamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*StreamDestroy)(CUstream) = nullptr;  // cuStreamDestroy_v2
  CUresult (*StreamSynchronize)(CUstream) = nullptr;
  CUresult (*EventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*EventDestroy)(CUevent) = nullptr;  // cuEventDestroy_v2
  CUresult (*EventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*EventSynchronize)(CUevent) = nullptr;
  CUresult (*EventElapsedTime)(float*, CUevent, CUevent) = nullptr;  // _v2 where it exists
};

// One GPU as the driver describes it.
struct GpuInfo {
  int ordinal = 0;
  std::string name;  // "NVIDIA H200"
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0;
  int64_t memory_bytes = 0;
};

// The PTX target tfjit compiles for on a device of this compute capability: sm_90 for
// Hopper and newer (their drivers JIT sm_90 PTX), sm_80 for Ampere and Ada. UNIMPLEMENTED
// below 8.0 (CUDA 13 and tfjit's PTX need sm_80).
absl::StatusOr<std::string> PtxTargetFor(int cc_major, int cc_minor);

// The process's CUDA driver.
class CudaDriver {
 public:
  // Loads the driver on first use ($TFJIT_LIBCUDA, else libcuda.so.1) and initialises it;
  // later calls return the same result. FAILED_PRECONDITION saying what is missing: the
  // library (with dlerror's text), an entry point (the driver is too old), or a cuInit
  // failure (no device, the toolkit's stub library, ...). Thread-safe.
  static absl::StatusOr<CudaDriver*> Get();
  // The same from a given library path, uncached and owned by the caller (tests).
  static absl::StatusOr<std::unique_ptr<CudaDriver>> Load(const std::string& path);
  ~CudaDriver();

  const CudaApi& api() const { return api_; }
  const std::vector<GpuInfo>& devices() const { return devices_; }
  int driver_version() const { return driver_version_; }

  // OK for CUDA_SUCCESS; otherwise INTERNAL (RESOURCE_EXHAUSTED for out of memory) "CUDA
  // error NAME (code) in WHAT: description".
  absl::Status Check(CUresult result, absl::string_view what) const;
  // Makes device `ordinal`'s primary context current on the calling thread (retained once).
  absl::Status SetCurrent(int ordinal);

 private:
  CudaDriver() = default;
  void* library_ = nullptr;
  CudaApi api_;
  std::vector<GpuInfo> devices_;
  int driver_version_ = 0;
  std::mutex mu_;
  std::vector<CUcontext> contexts_;  // per ordinal, retained on first use; guarded by mu_
};

// The cuBLAS entry points tfjit calls (cublas_api.h, cuBLAS 12/13).
struct CublasApi {
  using Handle = struct cublasContext*;
  int (*Create)(Handle*) = nullptr;              // cublasCreate_v2
  int (*Destroy)(Handle) = nullptr;              // cublasDestroy_v2
  int (*SetStream)(Handle, CUstream) = nullptr;  // cublasSetStream_v2
  int (*SetMathMode)(Handle, int) = nullptr;
  const char* (*GetStatusString)(int) = nullptr;
  int (*SgemmStridedBatched)(Handle, int, int, int, int, int, const float*, const float*, int,
                             long long, const float*, int, long long, const float*, float*, int,
                             long long, int) = nullptr;
  int (*DgemmStridedBatched)(Handle, int, int, int, int, int, const double*, const double*, int,
                             long long, const double*, int, long long, const double*, double*, int,
                             long long, int) = nullptr;
};

inline constexpr int kCublasOpN = 0;
inline constexpr int kCublasOpT = 1;
inline constexpr int kCublasDefaultMath =
    0;  // CUBLAS_DEFAULT_MATH: float32 GEMMs in float32 (no TF32)

// cuBLAS, loaded on first use: $TFJIT_CUBLAS, else libcublas.so.13, libcublas.so.12.
// FAILED_PRECONDITION naming the paths tried when none loads.
class Cublas {
 public:
  static absl::StatusOr<Cublas*> Get();
  const CublasApi& api() const { return api_; }
  // A new handle on the current context's device, in the default math mode (float32 GEMMs in
  // float32). A handle carries its stream: each user (an executable, a timing) owns one, so
  // concurrent runs never re-point each other's GEMMs; the owner destroys it (api().Destroy).
  absl::StatusOr<CublasApi::Handle> CreateHandle() const;
  absl::Status Check(int status, absl::string_view what) const;

 private:
  Cublas() = default;
  void* library_ = nullptr;
  CublasApi api_;
};

// The cuBLASLt entry points tfjit calls (cublasLt.h, CUDA 12/13): a float32 GEMM with the
// bias epilogue. Descriptors are opaque pointers; the heuristic result is a 96-byte struct.
struct CublasLtApi {
  using Handle = struct cublasLtContext*;
  using Desc = void*;
  struct HeuristicResult {
    uint64_t algo[8];
    size_t workspace_size;
    int state;
    float waves;
    int reserved[4];
  };
  int (*Create)(Handle*) = nullptr;
  int (*MatmulDescCreate)(Desc*, int compute_type, int scale_type) = nullptr;
  int (*MatmulDescDestroy)(Desc) = nullptr;
  int (*MatmulDescSetAttribute)(Desc, int, const void*, size_t) = nullptr;
  int (*MatrixLayoutCreate)(Desc*, int type, uint64_t rows, uint64_t cols, int64_t ld) = nullptr;
  int (*MatrixLayoutDestroy)(Desc) = nullptr;
  int (*PreferenceCreate)(Desc*) = nullptr;
  int (*PreferenceDestroy)(Desc) = nullptr;
  int (*PreferenceSetAttribute)(Desc, int, const void*, size_t) = nullptr;
  int (*AlgoGetHeuristic)(Handle, Desc, Desc, Desc, Desc, Desc, Desc, int, HeuristicResult*,
                          int*) = nullptr;
  int (*Matmul)(Handle, Desc, const void*, const void*, Desc, const void*, Desc, const void*,
                const void*, Desc, void*, Desc, const void*, void*, size_t, CUstream) = nullptr;
};

// cublasLt.h / library_types.h constants.
inline constexpr int kCublasCompute32F = 68;        // CUBLAS_COMPUTE_32F
inline constexpr int kCudaR32F = 0;                 // CUDA_R_32F
inline constexpr int kLtDescTransA = 3;             // CUBLASLT_MATMUL_DESC_TRANSA (int32)
inline constexpr int kLtDescTransB = 4;             // CUBLASLT_MATMUL_DESC_TRANSB (int32)
inline constexpr int kLtDescEpilogue = 7;           // CUBLASLT_MATMUL_DESC_EPILOGUE (uint32)
inline constexpr int kLtDescBiasPointer = 8;        // CUBLASLT_MATMUL_DESC_BIAS_POINTER
inline constexpr uint32_t kLtEpilogueBias = 4;      // CUBLASLT_EPILOGUE_BIAS
inline constexpr int kLtPrefMaxWorkspaceBytes = 1;  // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES

// cuBLASLt, loaded on first use: $TFJIT_CUBLASLT, else libcublasLt.so.13, .12 (cuBLAS's own
// folder first, where a wheel installs both). One handle per process.
class CublasLt {
 public:
  static absl::StatusOr<CublasLt*> Get();
  const CublasLtApi& api() const { return api_; }
  CublasLtApi::Handle handle() const { return handle_; }

 private:
  CublasLt() = default;
  CublasLtApi api_;
  CublasLtApi::Handle handle_ = nullptr;
};

}  // namespace tfjit::gpu

#endif  // TFJIT_BACKENDS_GPU_CUDA_DRIVER_H_
