// Loading the CUDA driver and cuBLAS with dlopen, and turning their error codes into statuses.
#include "backends/gpu/cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status.h"

namespace tfjit::gpu {
namespace {

// dlsym into `fn`, or a message naming the missing symbol.
template <typename Fn>
bool Bind(void* library, const char* symbol, Fn* fn, std::vector<std::string>* missing) {
  *fn = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (*fn == nullptr) missing->emplace_back(symbol);
  return *fn != nullptr;
}

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : fallback;
}

// dlopens the first of `paths` that loads and whose entry points `bind` finds (bind returns the
// missing symbols' names); its handle, or the reasons each path failed in `errors`.
void* LoadFirst(const std::vector<std::string>& paths,
                const std::function<std::vector<std::string>(void*)>& bind,
                std::vector<std::string>* errors) {
  for (const std::string& path : paths) {
    void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* error = dlerror();
      errors->push_back(error != nullptr ? error : path);
      continue;
    }
    const std::vector<std::string> missing = bind(library);
    if (missing.empty()) return library;
    errors->push_back(absl::StrCat(path, " lacks ", absl::StrJoin(missing, ", ")));
    dlclose(library);
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<std::string> PtxTargetFor(int cc_major, int cc_minor) {
  if (cc_major >= 9) return std::string("sm_90");
  if (cc_major == 8) return std::string("sm_80");
  return Unimplemented(
      "GPU of compute capability %d.%d: tfjit compiles for sm_80 and newer "
      "(Ampere, Ada, Hopper and later)",
      cc_major, cc_minor);
}

absl::StatusOr<CudaDriver*> CudaDriver::Get() {
  static absl::StatusOr<std::unique_ptr<CudaDriver>>* driver =
      new absl::StatusOr<std::unique_ptr<CudaDriver>>(Load(EnvOr("TFJIT_LIBCUDA", "libcuda.so.1")));
  if (!driver->ok()) return driver->status();
  return driver->value().get();
}

absl::StatusOr<std::unique_ptr<CudaDriver>> CudaDriver::Load(const std::string& path) {
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = dlerror();
    return FailedPrecondition(
        "no CUDA driver: cannot load '%s' (%s); a GPU needs NVIDIA's driver "
        "installed (set TFJIT_LIBCUDA to load it from another path)",
        path, error != nullptr ? error : "unknown error");
  }
  std::unique_ptr<CudaDriver> d(new CudaDriver());
  d->library_ = library;
  CudaApi& a = d->api_;
  std::vector<std::string> missing;
  Bind(library, "cuGetErrorString", &a.GetErrorString, &missing);
  Bind(library, "cuGetErrorName", &a.GetErrorName, &missing);
  Bind(library, "cuInit", &a.Init, &missing);
  Bind(library, "cuDriverGetVersion", &a.DriverGetVersion, &missing);
  Bind(library, "cuDeviceGetCount", &a.DeviceGetCount, &missing);
  Bind(library, "cuDeviceGet", &a.DeviceGet, &missing);
  Bind(library, "cuDeviceGetName", &a.DeviceGetName, &missing);
  Bind(library, "cuDeviceGetAttribute", &a.DeviceGetAttribute, &missing);
  Bind(library, "cuDeviceTotalMem_v2", &a.DeviceTotalMem, &missing);
  Bind(library, "cuDevicePrimaryCtxRetain", &a.DevicePrimaryCtxRetain, &missing);
  Bind(library, "cuCtxSetCurrent", &a.CtxSetCurrent, &missing);
  Bind(library, "cuModuleLoadDataEx", &a.ModuleLoadDataEx, &missing);
  Bind(library, "cuModuleUnload", &a.ModuleUnload, &missing);
  Bind(library, "cuModuleGetFunction", &a.ModuleGetFunction, &missing);
  Bind(library, "cuLaunchKernel", &a.LaunchKernel, &missing);
  Bind(library, "cuMemAlloc_v2", &a.MemAlloc, &missing);
  Bind(library, "cuMemFree_v2", &a.MemFree, &missing);
  Bind(library, "cuMemcpyHtoDAsync_v2", &a.MemcpyHtoDAsync, &missing);
  Bind(library, "cuMemcpyDtoHAsync_v2", &a.MemcpyDtoHAsync, &missing);
  Bind(library, "cuMemcpyDtoDAsync_v2", &a.MemcpyDtoDAsync, &missing);
  Bind(library, "cuStreamCreate", &a.StreamCreate, &missing);
  Bind(library, "cuStreamDestroy_v2", &a.StreamDestroy, &missing);
  Bind(library, "cuStreamSynchronize", &a.StreamSynchronize, &missing);
  Bind(library, "cuEventCreate", &a.EventCreate, &missing);
  Bind(library, "cuEventDestroy_v2", &a.EventDestroy, &missing);
  Bind(library, "cuEventRecord", &a.EventRecord, &missing);
  Bind(library, "cuEventSynchronize", &a.EventSynchronize, &missing);
  // CUDA 12.8+ exports cuEventElapsedTime_v2 (what cuda.h's macro names); older drivers only
  // the plain one, whose signature is the same.
  a.EventElapsedTime =
      reinterpret_cast<decltype(a.EventElapsedTime)>(dlsym(library, "cuEventElapsedTime_v2"));
  if (a.EventElapsedTime == nullptr) {
    Bind(library, "cuEventElapsedTime", &a.EventElapsedTime, &missing);
  }
  if (!missing.empty()) {
    return FailedPrecondition(
        "the CUDA driver '%s' lacks %s; it is older than CUDA 12 or not "
        "NVIDIA's driver: update the driver",
        path, absl::StrJoin(missing, ", "));
  }
  const CUresult init = a.Init(0);
  if (init != kCudaSuccess) {
    absl::Status status = d->Check(init, "cuInit");
    return FailedPrecondition("the CUDA driver '%s' did not start: %s%s", path, status.message(),
                              init == 34 ? " ('" + path +
                                               "' is the CUDA toolkit's stub library, "
                                               "not a driver)"
                                         : "");
  }
  TFJIT_RETURN_IF_ERROR(d->Check(a.DriverGetVersion(&d->driver_version_), "cuDriverGetVersion"));
  int count = 0;
  TFJIT_RETURN_IF_ERROR(d->Check(a.DeviceGetCount(&count), "cuDeviceGetCount"));
  for (int i = 0; i < count; ++i) {
    GpuInfo info;
    info.ordinal = i;
    CUdevice device = 0;
    TFJIT_RETURN_IF_ERROR(d->Check(a.DeviceGet(&device, i), "cuDeviceGet"));
    char name[256] = {};
    TFJIT_RETURN_IF_ERROR(
        d->Check(a.DeviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName"));
    info.name = name;
    TFJIT_RETURN_IF_ERROR(d->Check(
        a.DeviceGetAttribute(&info.cc_major, kAttrComputeCapabilityMajor, device), "attribute"));
    TFJIT_RETURN_IF_ERROR(d->Check(
        a.DeviceGetAttribute(&info.cc_minor, kAttrComputeCapabilityMinor, device), "attribute"));
    TFJIT_RETURN_IF_ERROR(
        d->Check(a.DeviceGetAttribute(&info.multiprocessors, kAttrMultiprocessorCount, device),
                 "attribute"));
    size_t bytes = 0;
    TFJIT_RETURN_IF_ERROR(d->Check(a.DeviceTotalMem(&bytes, device), "cuDeviceTotalMem"));
    info.memory_bytes = static_cast<int64_t>(bytes);
    d->devices_.push_back(std::move(info));
  }
  d->contexts_.assign(d->devices_.size(), nullptr);
  return d;
}

CudaDriver::~CudaDriver() {
  // A driver that did not start is unloaded, so a later dlopen of libcuda.so.1 does not find
  // it by its soname. One that started stays loaded with its primary contexts: the process's
  // driver (Get) lives to the end, and the driver releases the contexts at exit.
  if (library_ != nullptr && devices_.empty() && contexts_.empty()) dlclose(library_);
}

absl::Status CudaDriver::Check(CUresult result, absl::string_view what) const {
  if (result == kCudaSuccess) return absl::OkStatus();
  const char* name = nullptr;
  const char* text = nullptr;
  if (api_.GetErrorName != nullptr) api_.GetErrorName(result, &name);
  if (api_.GetErrorString != nullptr) api_.GetErrorString(result, &text);
  // The codes a driver that cannot describe itself (the toolkit's stub) returns at startup.
  if (name == nullptr) {
    switch (result) {
      case 34:
        name = "CUDA_ERROR_STUB_LIBRARY";
        text = "the CUDA stub library was loaded";
        break;
      case 35:
        name = "CUDA_ERROR_INSUFFICIENT_DRIVER";
        text = "the driver is older than the runtime";
        break;
      case 100:
        name = "CUDA_ERROR_NO_DEVICE";
        text = "no CUDA-capable device is detected";
        break;
      default:
        break;
    }
  }
  const std::string message =
      absl::StrCat("CUDA error ", name != nullptr ? name : "(unnamed)", " (", result, ") in ", what,
                   ": ", text != nullptr ? text : "no description");
  // CUDA_ERROR_OUT_OF_MEMORY = 2.
  return result == 2 ? absl::ResourceExhaustedError(message) : absl::InternalError(message);
}

absl::Status CudaDriver::SetCurrent(int ordinal) {
  if (ordinal < 0 || ordinal >= static_cast<int>(devices_.size())) {
    return FailedPrecondition("GPU:%d does not exist: the driver reports %d GPU(s)", ordinal,
                              devices_.size());
  }
  CUcontext context = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    CUcontext& slot = contexts_[static_cast<size_t>(ordinal)];
    if (slot == nullptr) {
      CUdevice device = 0;
      TFJIT_RETURN_IF_ERROR(Check(api_.DeviceGet(&device, ordinal), "cuDeviceGet"));
      TFJIT_RETURN_IF_ERROR(
          Check(api_.DevicePrimaryCtxRetain(&slot, device), "cuDevicePrimaryCtxRetain"));
    }
    context = slot;
  }
  return Check(api_.CtxSetCurrent(context), "cuCtxSetCurrent");
}

absl::StatusOr<Cublas*> Cublas::Get() {
  static absl::StatusOr<Cublas*>* cublas = [] {
    std::vector<std::string> paths;
    if (const char* env = std::getenv("TFJIT_CUBLAS"); env != nullptr && env[0] != '\0') {
      paths.push_back(env);
    }
    paths.push_back("libcublas.so.13");
    paths.push_back("libcublas.so.12");
    auto* c = new Cublas();
    std::vector<std::string> errors;
    c->library_ = LoadFirst(
        paths,
        [c](void* library) {
          CublasApi& a = c->api_;
          std::vector<std::string> missing;
          Bind(library, "cublasCreate_v2", &a.Create, &missing);
          Bind(library, "cublasDestroy_v2", &a.Destroy, &missing);
          Bind(library, "cublasSetStream_v2", &a.SetStream, &missing);
          Bind(library, "cublasSetMathMode", &a.SetMathMode, &missing);
          Bind(library, "cublasGetStatusString", &a.GetStatusString, &missing);
          Bind(library, "cublasSgemmStridedBatched", &a.SgemmStridedBatched, &missing);
          Bind(library, "cublasDgemmStridedBatched", &a.DgemmStridedBatched, &missing);
          return missing;
        },
        &errors);
    if (c->library_ != nullptr) return new absl::StatusOr<Cublas*>(c);
    delete c;
    return new absl::StatusOr<Cublas*>(FailedPrecondition(
        "cuBLAS is not available (%s); dots on the GPU need libcublas.so.13 or .12 on the "
        "loader path, or TFJIT_CUBLAS naming the file",
        absl::StrJoin(errors, "; ")));
  }();
  return *cublas;
}

absl::StatusOr<CublasApi::Handle> Cublas::CreateHandle() const {
  CublasApi::Handle handle = nullptr;
  TFJIT_RETURN_IF_ERROR(Check(api_.Create(&handle), "cublasCreate"));
  // Full float32 products, as the CPU backend and the evaluator compute them (TF enables TF32
  // by default on Ampere and newer; tfjit gives the same answers on every device instead).
  if (absl::Status s = Check(api_.SetMathMode(handle, kCublasDefaultMath), "cublasSetMathMode");
      !s.ok()) {
    api_.Destroy(handle);
    return s;
  }
  return handle;
}

absl::Status Cublas::Check(int status, absl::string_view what) const {
  if (status == 0) return absl::OkStatus();
  return Internal("cuBLAS error %d in %s: %s", status, what,
                  api_.GetStatusString != nullptr ? api_.GetStatusString(status) : "");
}

absl::StatusOr<CublasLt*> CublasLt::Get() {
  static absl::StatusOr<CublasLt*>* lt = [] {
    const std::vector<std::string> kLtNames = {"libcublasLt.so.13", "libcublasLt.so.12"};
    std::vector<std::string> paths;
    if (const char* env = std::getenv("TFJIT_CUBLASLT"); env != nullptr && env[0] != '\0') {
      paths.push_back(env);
    }
    // Beside the cuBLAS in use (TFJIT_CUBLAS may name a wheel's copy).
    if (const char* cublas = std::getenv("TFJIT_CUBLAS"); cublas != nullptr && cublas[0] != '\0') {
      std::string dir(cublas);
      dir = dir.substr(0, dir.rfind('/') + 1);
      for (const std::string& name : kLtNames) paths.push_back(absl::StrCat(dir, name));
    }
    paths.insert(paths.end(), kLtNames.begin(), kLtNames.end());
    auto* c = new CublasLt();
    std::vector<std::string> errors;
    void* library = LoadFirst(
        paths,
        [c](void* library) {
          CublasLtApi& a = c->api_;
          std::vector<std::string> missing;
          Bind(library, "cublasLtCreate", &a.Create, &missing);
          Bind(library, "cublasLtMatmulDescCreate", &a.MatmulDescCreate, &missing);
          Bind(library, "cublasLtMatmulDescDestroy", &a.MatmulDescDestroy, &missing);
          Bind(library, "cublasLtMatmulDescSetAttribute", &a.MatmulDescSetAttribute, &missing);
          Bind(library, "cublasLtMatrixLayoutCreate", &a.MatrixLayoutCreate, &missing);
          Bind(library, "cublasLtMatrixLayoutDestroy", &a.MatrixLayoutDestroy, &missing);
          Bind(library, "cublasLtMatmulPreferenceCreate", &a.PreferenceCreate, &missing);
          Bind(library, "cublasLtMatmulPreferenceDestroy", &a.PreferenceDestroy, &missing);
          Bind(library, "cublasLtMatmulPreferenceSetAttribute", &a.PreferenceSetAttribute,
               &missing);
          Bind(library, "cublasLtMatmulAlgoGetHeuristic", &a.AlgoGetHeuristic, &missing);
          Bind(library, "cublasLtMatmul", &a.Matmul, &missing);
          return missing;
        },
        &errors);
    if (library != nullptr) {
      if (int status = c->api_.Create(&c->handle_); status == 0) {
        return new absl::StatusOr<CublasLt*>(c);
      } else {
        errors.push_back(absl::StrCat("cublasLtCreate returned ", status));
      }
    }
    delete c;
    return new absl::StatusOr<CublasLt*>(FailedPrecondition(
        "cuBLASLt is not available (%s); GEMMs with a fused bias need libcublasLt.so.13 or .12 "
        "on the loader path, or TFJIT_CUBLASLT naming the file",
        absl::StrJoin(errors, "; ")));
  }();
  return *lt;
}

}  // namespace tfjit::gpu
