// GpuBackend and GpuExecutable: compile to a GpuProgram, load its PTX with the driver, run it.
#include "backends/gpu/gpu_backend.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "backends/gpu/cuda_driver.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/cost.h"
#include "compiler/passes/call_inliner.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/standard_pipeline.h"
#include "core/run_control.h"
#include "core/status.h"

namespace tfjit::gpu {
namespace {

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Device memory of one GPU, cached: freed blocks are kept by size and handed out again, so a
// run after the first allocates nothing. Sizes are rounded (to 512 bytes, then to 1/8 of the
// power of two below them) so blocks of similar sizes are reused. Out of memory: the cache is
// released and the allocation tried once more.
class DeviceAllocator {
 public:
  static DeviceAllocator& For(int ordinal) {
    static std::mutex mu;
    static std::map<int, DeviceAllocator*>* allocators = new std::map<int, DeviceAllocator*>();
    std::lock_guard<std::mutex> lock(mu);
    DeviceAllocator*& a = (*allocators)[ordinal];
    if (a == nullptr) a = new DeviceAllocator();
    return *a;
  }

  static int64_t RoundUp(int64_t bytes) {
    if (bytes <= 512) return 512;
    int64_t power = 1;
    while (power * 2 <= bytes) power *= 2;
    const int64_t step = std::max<int64_t>(power / 8, 512);
    return (bytes + step - 1) / step * step;
  }

  absl::StatusOr<CUdeviceptr> Allocate(CudaDriver& d, int64_t bytes) {
    bytes = RoundUp(bytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(bytes);
      if (it != free_.end()) {
        const CUdeviceptr p = it->second;
        free_.erase(it);
        return p;
      }
    }
    CUdeviceptr p = 0;
    CUresult r = d.api().MemAlloc(&p, static_cast<size_t>(bytes));
    if (r == 2) {  // CUDA_ERROR_OUT_OF_MEMORY: give the cache back and try again
      ReleaseCache(d);
      r = d.api().MemAlloc(&p, static_cast<size_t>(bytes));
    }
    TFJIT_RETURN_IF_ERROR(d.Check(r, absl::StrCat("cuMemAlloc of ", bytes, " bytes")));
    return p;
  }

  void Free(CUdeviceptr p, int64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.emplace(RoundUp(bytes), p);
  }

 private:
  void ReleaseCache(CudaDriver& d) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [bytes, p] : free_) d.api().MemFree(p);
    free_.clear();
  }

  std::mutex mu_;
  std::multimap<int64_t, CUdeviceptr> free_;
};

// A block of DeviceAllocator memory, returned to the cache on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_ != 0) DeviceAllocator::For(ordinal_).Free(ptr_, bytes_);
  }
  absl::Status Allocate(CudaDriver& d, int ordinal, int64_t bytes) {
    if (bytes <= 0) return absl::OkStatus();
    TFJIT_ASSIGN_OR_RETURN(ptr_, DeviceAllocator::For(ordinal).Allocate(d, bytes));
    ordinal_ = ordinal;
    bytes_ = bytes;
    return absl::OkStatus();
  }
  CUdeviceptr ptr() const { return ptr_; }

 private:
  CUdeviceptr ptr_ = 0;
  int ordinal_ = 0;
  int64_t bytes_ = 0;
};

constexpr unsigned kThreadsPerBlock = 256;
constexpr int64_t kLtWorkspaceBytes = int64_t{4} << 20;  // cuBLASLt's scratch per executable

// Whether `steps` (nested ones included) hold a GEMM through cuBLASLt (`bias`) or cuBLAS.
bool HasGemm(const std::vector<GpuStep>& steps, bool bias) {
  for (const GpuStep& s : steps) {
    if (s.kind == GpuStep::Kind::kGemm && (s.bias >= 0) == bias) return true;
    for (const std::vector<GpuStep>& nested : s.nested) {
      if (HasGemm(nested, bias)) return true;
    }
  }
  return false;
}

// Milliseconds per call of `enqueue` (which queues work on `stream`), over `iterations` calls
// between two CUDA events.
template <typename Enqueue>
absl::StatusOr<double> TimeOnStream(CudaDriver& d, CUstream stream, int iterations,
                                    const Enqueue& enqueue) {
  const CudaApi& api = d.api();
  CUevent start = nullptr, stop = nullptr;
  TFJIT_RETURN_IF_ERROR(d.Check(api.EventCreate(&start, 0), "cuEventCreate"));
  TFJIT_RETURN_IF_ERROR(d.Check(api.EventCreate(&stop, 0), "cuEventCreate"));
  absl::Status status = d.Check(api.EventRecord(start, stream), "cuEventRecord");
  for (int i = 0; status.ok() && i < iterations; ++i) status = enqueue();
  if (status.ok()) status = d.Check(api.EventRecord(stop, stream), "cuEventRecord");
  if (status.ok()) status = d.Check(api.EventSynchronize(stop), "cuEventSynchronize");
  float ms = 0;
  if (status.ok()) status = d.Check(api.EventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
  api.EventDestroy(start);
  api.EventDestroy(stop);
  if (!status.ok()) return status;
  return static_cast<double>(ms) / std::max(1, iterations);
}

// One warm-up call of `enqueue`, then TimeOnStream; destroys `stream` either way.
template <typename Enqueue>
absl::StatusOr<double> WarmAndTime(CudaDriver& d, CUstream stream, int iterations,
                                   const Enqueue& enqueue) {
  const absl::Status warm = enqueue();
  absl::StatusOr<double> ms =
      warm.ok() ? TimeOnStream(d, stream, iterations, enqueue) : absl::StatusOr<double>(warm);
  d.api().StreamSynchronize(stream);  // the caller's buffers outlive no queued work
  d.api().StreamDestroy(stream);
  return ms;
}

class GpuExecutable : public backends::Executable {
 public:
  GpuExecutable(std::unique_ptr<hlo::Module> module, GpuProgram program, int ordinal,
                backends::CompileStats stats)
      : module_(std::move(module)),
        program_(std::move(program)),
        ordinal_(ordinal),
        stats_(stats) {}

  ~GpuExecutable() override {
    absl::StatusOr<CudaDriver*> d = CudaDriver::Get();
    if (!d.ok() || loaded_ == nullptr || !(*d)->SetCurrent(ordinal_).ok()) return;
    Release(**d, *loaded_);
  }

  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& args,
                                          ThreadPool* pool) const override {
    (void)pool;
    int64_t batch = 0;
    TFJIT_RETURN_IF_ERROR(backends::CheckArguments(*module_, args, &batch));
    TFJIT_ASSIGN_OR_RETURN(CudaDriver * d, CudaDriver::Get());
    TFJIT_RETURN_IF_ERROR(d->SetCurrent(ordinal_));
    std::lock_guard<std::mutex> lock(mu_);
    TFJIT_RETURN_IF_ERROR(LoadLocked(*d));
    // A symbolic program runs as its instance at the arguments' batch size.
    TFJIT_ASSIGN_OR_RETURN(const GpuProgram* program, ProgramAtLocked(batch));
    const GpuProgram& p = *program;
    const CudaApi& api = d->api();
    DeviceBuffer arena;
    TFJIT_RETURN_IF_ERROR(arena.Allocate(*d, ordinal_, p.arena_bytes));
    // Whatever the run queued is done before the arena goes back to the shared cache, on
    // every path out (errors and cancellation included).
    StreamSync sync{*d, stream()};
    auto address = [&](int slot) { return SlotAddress(p, arena, slot); };
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].byte_size() == 0) continue;
      TFJIT_RETURN_IF_ERROR(
          d->Check(api.MemcpyHtoDAsync(address(p.parameter_slots[i]), args[i].raw_data(),
                                       args[i].byte_size(), stream()),
                   "copying an argument to the GPU"));
    }
    TFJIT_RETURN_IF_ERROR(EnqueueSteps(*d, p, address, p.steps));
    std::vector<Tensor> outputs;
    for (size_t k = 0; k < p.output_slots.size(); ++k) {
      const hlo::Shape& shape = p.output_shapes[k];
      outputs.push_back(Tensor::Uninitialized(shape.element_type(), shape.dims()));
      if (outputs.back().byte_size() == 0) continue;
      TFJIT_RETURN_IF_ERROR(
          d->Check(api.MemcpyDtoHAsync(outputs.back().raw_data(), address(p.output_slots[k]),
                                       outputs.back().byte_size(), stream()),
                   "copying an output from the GPU"));
    }
    TFJIT_RETURN_IF_ERROR(d->Check(api.StreamSynchronize(stream()),
                                   absl::StrCat("running module '", module_->name(), "'")));
    return outputs;
  }

  const backends::CompileStats& stats() const override { return stats_; }
  const hlo::Module& module() const override { return *module_; }
  const GpuProgram& program() const { return program_; }

  // TimeStepsOnDevice (gpu_backend.h).
  absl::StatusOr<double> TimeSteps(int iterations) const {
    TFJIT_ASSIGN_OR_RETURN(CudaDriver * d, CudaDriver::Get());
    TFJIT_RETURN_IF_ERROR(d->SetCurrent(ordinal_));
    std::lock_guard<std::mutex> lock(mu_);
    TFJIT_RETURN_IF_ERROR(LoadLocked(*d));
    // A symbolic program is timed at its representative batch size.
    const GpuProgram& p = program_;
    DeviceBuffer arena;
    TFJIT_RETURN_IF_ERROR(arena.Allocate(*d, ordinal_, p.arena_bytes));
    StreamSync sync{*d, stream()};
    auto address = [&](int slot) { return SlotAddress(p, arena, slot); };
    TFJIT_RETURN_IF_ERROR(EnqueueSteps(*d, p, address, p.steps));  // warm-up
    return TimeOnStream(*d, stream(), iterations,
                        [&]() { return EnqueueSteps(*d, p, address, p.steps); });
  }
  backends::CompileStats& mutable_stats() { return stats_; }

  // Loads the PTX (the driver compiles it for the device), uploads the constants and makes
  // the stream and the cuBLAS handle. Called once, under mu_ or before the executable is
  // shared; nothing is kept when a step fails, so a later call starts over.
  absl::Status LoadLocked(CudaDriver& d) const {
    if (loaded_ != nullptr) return absl::OkStatus();
    auto loaded = std::make_unique<Loaded>();
    absl::Status status = Load(d, *loaded);
    if (!status.ok()) {
      Release(d, *loaded);
      return status;
    }
    loaded_ = std::move(loaded);
    return absl::OkStatus();
  }

 private:
  // What a loaded executable holds on its device.
  struct Loaded {
    CUmodule module = nullptr;
    std::vector<CUfunction> functions;
    CUstream stream = nullptr;
    DeviceBuffer constants;
    DeviceBuffer workspace;              // cuBLASLt's, when a step has a bias
    CublasApi::Handle cublas = nullptr;  // this executable's, bound to `stream`
    int max_blocks = 1;
  };

  // Synchronizes a stream when it goes out of scope.
  struct StreamSync {
    CudaDriver& d;
    CUstream stream;
    ~StreamSync() { d.api().StreamSynchronize(stream); }
  };

  CUstream stream() const { return loaded_->stream; }

  absl::Status Load(CudaDriver& d, Loaded& l) const {
    const CudaApi& api = d.api();
    if (!program_.ptx.kernels.empty()) {
      std::string log(8192, '\0');
      int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes};
      void* values[] = {log.data(), reinterpret_cast<void*>(log.size())};
      const CUresult r =
          api.ModuleLoadDataEx(&l.module, program_.ptx.ptx.c_str(), 2, options, values);
      if (r != kCudaSuccess) {
        l.module = nullptr;
        log.resize(std::strlen(log.c_str()));
        return Internal(
            "the CUDA driver rejected the PTX of module '%s' (%s): %s; this is "
            "tfjit's bug, please report it with the module (--dump-dir)",
            module_->name(), program_.sm, d.Check(r, "cuModuleLoadDataEx").message(), log);
      }
      for (const PtxKernel& k : program_.ptx.kernels) {
        CUfunction f = nullptr;
        TFJIT_RETURN_IF_ERROR(
            d.Check(api.ModuleGetFunction(&f, l.module, k.name.c_str()), "cuModuleGetFunction"));
        l.functions.push_back(f);
      }
    }
    TFJIT_RETURN_IF_ERROR(d.Check(api.StreamCreate(&l.stream, 0), "cuStreamCreate"));
    if (HasGemm(program_.steps, /*bias=*/false)) {
      TFJIT_ASSIGN_OR_RETURN(Cublas * cublas, Cublas::Get());
      TFJIT_ASSIGN_OR_RETURN(l.cublas, cublas->CreateHandle());
      TFJIT_RETURN_IF_ERROR(
          cublas->Check(cublas->api().SetStream(l.cublas, l.stream), "cublasSetStream"));
    }
    TFJIT_RETURN_IF_ERROR(l.constants.Allocate(d, ordinal_, program_.constant_bytes));
    if (HasGemm(program_.steps, /*bias=*/true)) {
      TFJIT_RETURN_IF_ERROR(l.workspace.Allocate(d, ordinal_, kLtWorkspaceBytes));
    }
    for (const GpuSlot& slot : program_.slots) {
      if (slot.kind != GpuSlot::Kind::kConstant || slot.bytes == 0) continue;
      TFJIT_RETURN_IF_ERROR(
          d.Check(api.MemcpyHtoDAsync(l.constants.ptr() + static_cast<CUdeviceptr>(slot.offset),
                                      slot.constant->literal().tensor().raw_data(),
                                      static_cast<size_t>(slot.bytes), l.stream),
                  "copying a constant to the GPU"));
    }
    TFJIT_RETURN_IF_ERROR(d.Check(api.StreamSynchronize(l.stream), "uploading constants"));
    const GpuInfo& info = d.devices()[static_cast<size_t>(ordinal_)];
    l.max_blocks = std::max(1, info.multiprocessors) * 16;
    return absl::OkStatus();
  }

  // Waits for `l`'s work and destroys its handle, stream and module; its buffers return to
  // the cache when `l` is destroyed, after this.
  void Release(CudaDriver& d, Loaded& l) const {
    const CudaApi& api = d.api();
    if (l.stream != nullptr) api.StreamSynchronize(l.stream);
    if (l.cublas != nullptr) {
      if (absl::StatusOr<Cublas*> cublas = Cublas::Get(); cublas.ok()) {
        (*cublas)->api().Destroy(l.cublas);
      }
    }
    if (l.stream != nullptr) api.StreamDestroy(l.stream);
    if (l.module != nullptr) api.ModuleUnload(l.module);
  }

  // The program to run at batch size `batch` (0: a static module's): the compiled one, or a
  // symbolic one's instance there, kept for the next runs of that size (a few sizes).
  absl::StatusOr<const GpuProgram*> ProgramAtLocked(int64_t batch) const {
    if (program_.batch_representative <= 0 || batch == program_.batch_representative) {
      return &program_;
    }
    auto it = at_batch_.find(batch);
    if (it != at_batch_.end()) return it->second.get();
    TFJIT_ASSIGN_OR_RETURN(GpuProgram at, program_.AtBatch(batch));
    if (at_batch_.size() >= kProgramsKept) at_batch_.clear();
    auto [inserted, _] = at_batch_.emplace(batch, std::make_unique<GpuProgram>(std::move(at)));
    return inserted->second.get();
  }
  static constexpr size_t kProgramsKept = 16;

  // Where `slot` of program `p` is on the device for a run using `arena`.
  CUdeviceptr SlotAddress(const GpuProgram& p, const DeviceBuffer& arena, int slot) const {
    const GpuSlot& s = p.slots[static_cast<size_t>(slot)];
    return (s.kind == GpuSlot::Kind::kConstant ? loaded_->constants.ptr() : arena.ptr()) +
           static_cast<CUdeviceptr>(s.offset);
  }

  // Launches `steps` on the stream; control flow reads its predicates back (a sync each).
  template <typename Address>
  absl::Status EnqueueSteps(CudaDriver& d, const GpuProgram& p, const Address& address,
                            const std::vector<GpuStep>& steps) const {
    const CudaApi& api = d.api();
    for (const GpuStep& step : steps) {
      // The run's deadline and cancellation hold between launches (what is queued finishes).
      TFJIT_RETURN_IF_ERROR(RunCheckpoint("between the kernels of a GPU module"));
      switch (step.kind) {
        case GpuStep::Kind::kGemm:
          TFJIT_RETURN_IF_ERROR(RunGemm(step, address));
          continue;
        case GpuStep::Kind::kCopy: {
          const int64_t bytes = p.slots[static_cast<size_t>(step.output)].bytes;
          if (bytes == 0) continue;
          TFJIT_RETURN_IF_ERROR(
              d.Check(api.MemcpyDtoDAsync(address(step.output), address(step.operands[0]),
                                          static_cast<size_t>(bytes), stream()),
                      absl::StrCat("copying for '", step.inst->name(), "'")));
          continue;
        }
        case GpuStep::Kind::kWhile:
          for (;;) {
            // The run's deadline and cancellation stop a loop between iterations.
            if (const RunControl* control = CurrentRunControl();
                control != nullptr && control->ShouldStop()) {
              return control->Check(absl::StrCat("GPU while loop '", step.inst->name(), "'"));
            }
            TFJIT_RETURN_IF_ERROR(EnqueueSteps(d, p, address, step.nested[0]));
            TFJIT_ASSIGN_OR_RETURN(int64_t go, ReadScalar(d, p, address, step.predicate));
            if (go == 0) break;
            TFJIT_RETURN_IF_ERROR(EnqueueSteps(d, p, address, step.nested[1]));
          }
          continue;
        case GpuStep::Kind::kConditional: {
          TFJIT_ASSIGN_OR_RETURN(int64_t index, ReadScalar(d, p, address, step.predicate));
          const int64_t n = static_cast<int64_t>(step.nested.size());
          const GpuSlot& slot = p.slots[static_cast<size_t>(step.predicate)];
          // pred: true is branch 0; s32: out of range is the last branch.
          const int64_t branch = slot.bytes == 1           ? (index != 0 ? 0 : 1)
                                 : index < 0 || index >= n ? n - 1
                                                           : index;
          TFJIT_RETURN_IF_ERROR(
              EnqueueSteps(d, p, address, step.nested[static_cast<size_t>(branch)]));
          continue;
        }
        case GpuStep::Kind::kHost:
          TFJIT_RETURN_IF_ERROR(RunOnHost(d, address, step));
          continue;
        case GpuStep::Kind::kKernel:
          break;
      }
      if (step.elements == 0) continue;
      std::vector<CUdeviceptr> pointers;
      pointers.push_back(address(step.output));
      for (int operand : step.operands) pointers.push_back(address(operand));
      int64_t n = step.elements;
      // A symbolic program's kernels also take the batch size.
      int64_t batch = p.batch_representative;
      std::vector<void*> params;
      for (CUdeviceptr& pointer : pointers) params.push_back(&pointer);
      params.push_back(&n);
      if (batch > 0) params.push_back(&batch);
      const PtxKernel& kernel = p.ptx.kernels[static_cast<size_t>(step.kernel)];
      const int64_t threads =
          n * kernel.threads_per_element / std::max(1, kernel.elements_per_thread);
      const int64_t blocks =
          kernel.one_block ? 1
                           : std::min<int64_t>((threads + kThreadsPerBlock - 1) / kThreadsPerBlock,
                                               int64_t{loaded_->max_blocks});
      TFJIT_RETURN_IF_ERROR(
          d.Check(api.LaunchKernel(loaded_->functions[static_cast<size_t>(step.kernel)],
                                   static_cast<unsigned>(blocks), 1, 1, kThreadsPerBlock, 1, 1, 0,
                                   stream(), params.data(), nullptr),
                  absl::StrCat("launching the kernel of '", step.inst->name(), "'")));
    }
    return absl::OkStatus();
  }

  // A kHost step: the operands back to the host, the evaluator, the results to the device.
  template <typename Address>
  absl::Status RunOnHost(CudaDriver& d, const Address& address, const GpuStep& step) const {
    const CudaApi& api = d.api();
    std::vector<hlo::Literal> operands;
    for (size_t k = 0; k < step.operands.size(); ++k) {
      const hlo::Shape& shape = step.inst->operand(static_cast<int>(k))->shape();
      Tensor t = Tensor::Uninitialized(shape.element_type(), shape.dims());
      if (t.byte_size() > 0) {
        TFJIT_RETURN_IF_ERROR(d.Check(
            api.MemcpyDtoHAsync(t.raw_data(), address(step.operands[k]), t.byte_size(), stream()),
            "copying a host step's operand"));
      }
      operands.push_back(hlo::Literal::FromTensor(t));
    }
    TFJIT_RETURN_IF_ERROR(d.Check(api.StreamSynchronize(stream()), "a host step's operands"));
    TFJIT_ASSIGN_OR_RETURN(hlo::Literal value, hlo::EvaluateInstruction(*step.inst, operands));
    std::vector<const Tensor*> parts;
    if (value.shape().IsTuple()) {
      for (const hlo::Literal& e : value.elements()) parts.push_back(&e.tensor());
    } else {
      parts.push_back(&value.tensor());
    }
    for (size_t k = 0; k < parts.size() && k < step.results.size(); ++k) {
      if (parts[k]->byte_size() == 0) continue;
      TFJIT_RETURN_IF_ERROR(
          d.Check(api.MemcpyHtoDAsync(address(step.results[k]), parts[k]->raw_data(),
                                      parts[k]->byte_size(), stream()),
                  "copying a host step's result"));
    }
    // `value` dies here: its copies must be done.
    return d.Check(api.StreamSynchronize(stream()), "a host step's results");
  }

  // The pred (1 byte) or s32 scalar in `slot`, once the stream has computed it.
  template <typename Address>
  absl::StatusOr<int64_t> ReadScalar(CudaDriver& d, const GpuProgram& p, const Address& address,
                                     int slot) const {
    const int64_t bytes = p.slots[static_cast<size_t>(slot)].bytes;
    int32_t value = 0;
    uint8_t flag = 0;
    void* host = bytes == 1 ? static_cast<void*>(&flag) : static_cast<void*>(&value);
    TFJIT_RETURN_IF_ERROR(
        d.Check(d.api().MemcpyDtoHAsync(host, address(slot),
                                        static_cast<size_t>(bytes == 1 ? 1 : 4), stream()),
                "reading a loop or branch predicate"));
    TFJIT_RETURN_IF_ERROR(d.Check(d.api().StreamSynchronize(stream()), "control flow"));
    return bytes == 1 ? int64_t{flag} : int64_t{value};
  }

  template <typename Address>
  absl::Status RunGemm(const GpuStep& step, const Address& address) const {
    if (step.bias >= 0) return RunBiasGemm(step, address);
    TFJIT_ASSIGN_OR_RETURN(Cublas * cublas, Cublas::Get());
    CublasApi::Handle handle = loaded_->cublas;  // bound to stream() at load time
    const CublasApi& api = cublas->api();
    const CublasGemmArgs a = CublasArgsFor(step.gemm);
    const CUdeviceptr lhs = address(step.operands[0]), rhs = address(step.operands[1]);
    const CUdeviceptr out = address(step.output);
    int status = 0;
    if (step.type == DType::kFloat32) {
      const float one = 1, zero = 0;
      status = api.SgemmStridedBatched(
          handle, a.transa, a.transb, a.m, a.n, a.k, &one, reinterpret_cast<const float*>(rhs),
          a.lda, a.stride_a, reinterpret_cast<const float*>(lhs), a.ldb, a.stride_b, &zero,
          reinterpret_cast<float*>(out), a.ldc, a.stride_c, a.batch);
    } else {
      const double one = 1, zero = 0;
      status = api.DgemmStridedBatched(
          handle, a.transa, a.transb, a.m, a.n, a.k, &one, reinterpret_cast<const double*>(rhs),
          a.lda, a.stride_a, reinterpret_cast<const double*>(lhs), a.ldb, a.stride_b, &zero,
          reinterpret_cast<double*>(out), a.ldc, a.stride_c, a.batch);
    }
    return cublas->Check(status, absl::StrCat("the GEMM of '", step.inst->name(), "'"));
  }

  // A float32 GEMM plus bias (GpuStep::bias) through cuBLASLt's bias epilogue: the same
  // column-major arguments as RunGemm, with the bias (length m, one value per row of the
  // column-major result, i.e. per feature of the row-major output) added before the store.
  template <typename Address>
  absl::Status RunBiasGemm(const GpuStep& step, const Address& address) const {
    TFJIT_ASSIGN_OR_RETURN(CublasLt * lt, CublasLt::Get());
    const CublasLtApi& api = lt->api();
    const CublasGemmArgs a = CublasArgsFor(step.gemm);
    const std::string what = absl::StrCat("the GEMM with bias of '", step.inst->name(), "'");
    auto check = [&](int status, const char* call) -> absl::Status {
      if (status == 0) return absl::OkStatus();
      return Internal("cuBLASLt error %d in %s (%s)", status, call, what);
    };
    CublasLtApi::Desc op = nullptr, la = nullptr, lb = nullptr, lc = nullptr, pref = nullptr;
    absl::Status status =
        check(api.MatmulDescCreate(&op, kCublasCompute32F, kCudaR32F), "cublasLtMatmulDescCreate");
    const int32_t transa = a.transa, transb = a.transb;
    const uint32_t epilogue = kLtEpilogueBias;
    const CUdeviceptr bias_address = address(step.bias);
    const void* bias = reinterpret_cast<const void*>(bias_address);
    if (status.ok()) {
      status =
          check(api.MatmulDescSetAttribute(op, kLtDescTransA, &transa, sizeof(transa)), "TRANSA");
    }
    if (status.ok()) {
      status =
          check(api.MatmulDescSetAttribute(op, kLtDescTransB, &transb, sizeof(transb)), "TRANSB");
    }
    if (status.ok()) {
      status = check(api.MatmulDescSetAttribute(op, kLtDescEpilogue, &epilogue, sizeof(epilogue)),
                     "EPILOGUE");
    }
    if (status.ok()) {
      status = check(api.MatmulDescSetAttribute(op, kLtDescBiasPointer, &bias, sizeof(bias)),
                     "BIAS_POINTER");
    }
    // Layouts of the matrices as stored (column-major): A is op(A)'s transpose when transa.
    if (status.ok()) {
      status = check(
          api.MatrixLayoutCreate(&la, kCudaR32F, transa ? a.k : a.m, transa ? a.m : a.k, a.lda),
          "layout A");
    }
    if (status.ok()) {
      status = check(
          api.MatrixLayoutCreate(&lb, kCudaR32F, transb ? a.n : a.k, transb ? a.k : a.n, a.ldb),
          "layout B");
    }
    if (status.ok()) {
      status = check(api.MatrixLayoutCreate(&lc, kCudaR32F, a.m, a.n, a.ldc), "layout C");
    }
    const uint64_t workspace_bytes = kLtWorkspaceBytes;
    if (status.ok()) status = check(api.PreferenceCreate(&pref), "preference");
    if (status.ok()) {
      status = check(api.PreferenceSetAttribute(pref, kLtPrefMaxWorkspaceBytes, &workspace_bytes,
                                                sizeof(workspace_bytes)),
                     "workspace");
    }
    CublasLtApi::HeuristicResult result{};
    int found = 0;
    if (status.ok()) {
      status =
          check(api.AlgoGetHeuristic(lt->handle(), op, la, lb, lc, lc, pref, 1, &result, &found),
                "cublasLtMatmulAlgoGetHeuristic");
    }
    if (status.ok() && found == 0) {
      status = Internal("cuBLASLt has no algorithm for %s (%d x %d x %d)", what, a.m, a.n, a.k);
    }
    if (status.ok()) {
      const float one = 1, zero = 0;
      const CUdeviceptr lhs = address(step.operands[0]), rhs = address(step.operands[1]);
      void* out = reinterpret_cast<void*>(address(step.output));
      status = check(api.Matmul(lt->handle(), op, &one, reinterpret_cast<const void*>(rhs), la,
                                reinterpret_cast<const void*>(lhs), lb, &zero, out, lc, out, lc,
                                result.algo, reinterpret_cast<void*>(loaded_->workspace.ptr()),
                                static_cast<size_t>(workspace_bytes), stream()),
                     "cublasLtMatmul");
    }
    if (pref != nullptr) api.PreferenceDestroy(pref);
    for (CublasLtApi::Desc layout : {la, lb, lc}) {
      if (layout != nullptr) api.MatrixLayoutDestroy(layout);
    }
    if (op != nullptr) api.MatmulDescDestroy(op);
    return status;
  }

  std::unique_ptr<hlo::Module> module_;
  GpuProgram program_;
  int ordinal_;
  backends::CompileStats stats_;
  mutable std::mutex mu_;  // one run at a time: the runs share the stream
  mutable std::unique_ptr<Loaded> loaded_;
  // A symbolic program's instances by batch size (under mu_).
  mutable std::map<int64_t, std::unique_ptr<GpuProgram>> at_batch_;
};

class GpuFusionPolicy : public passes::FusionPolicy {};

class GpuBackend : public backends::Backend {
 public:
  GpuBackend(const GpuBackendOptions& options, std::string sm)
      : options_(options), sm_(std::move(sm)) {}

  absl::string_view name() const override { return "gpu"; }
  const passes::FusionPolicy& fusion_policy() const override { return policy_; }

  absl::StatusOr<std::unique_ptr<backends::Executable>> Compile(
      std::unique_ptr<hlo::Module> module) const override {
    if (module == nullptr || module->entry() == nullptr) {
      return InvalidArgument("gpu backend: Compile needs a module with an entry computation");
    }
    backends::CompileStats stats;
    auto start = std::chrono::steady_clock::now();
    const bool dumps = !options_.dump_dir.empty() && !options_.dump_pass_regex.empty();
    const std::string dump_prefix = dumps ? backends::DumpPrefix(*module) : "";
    TFJIT_RETURN_IF_ERROR(Optimize(*module, dump_prefix));
    stats.optimize_ms = MillisSince(start);
    return Finish(std::move(module), stats, dump_prefix);
  }

  // One program for every batch size >= the probes' smallest: the probes optimized and made
  // one symbolic module (backends::OptimizeAndSymbolize), whose program (BuildGpuProgram)
  // must have the same PTX at two batch sizes; its runs take the batch size from the
  // arguments.
  absl::StatusOr<std::unique_ptr<backends::Executable>> CompileSymbolic(
      std::vector<backends::BatchProbeModule> probes) const override {
    backends::CompileStats stats;
    auto start = std::chrono::steady_clock::now();
    TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module,
                           backends::OptimizeAndSymbolize(probes, [this](hlo::Module& m) {
                             return Optimize(m, /*dump_prefix=*/"");
                           }));
    probes.clear();
    stats.optimize_ms = MillisSince(start);
    const bool dumps = !options_.dump_dir.empty() && !options_.dump_pass_regex.empty();
    const std::string dump_prefix = dumps ? backends::DumpPrefix(*module) : "";
    return Finish(std::move(module), stats, dump_prefix);
  }
  bool compiles_symbolic() const override { return true; }

 private:
  // The GPU's pass pipeline; dumps after matching passes when `dump_prefix` is set.
  absl::Status Optimize(hlo::Module& module, const std::string& dump_prefix) const {
    passes::PipelineOptions pipeline_options;
    pipeline_options.verify = options_.verify_passes;
    if (!dump_prefix.empty()) {
      pipeline_options.dump_dir = options_.dump_dir;
      pipeline_options.dump_after_regex = options_.dump_pass_regex;
      pipeline_options.dump_prefix = dump_prefix;
    }
    passes::PassPipeline pipeline("gpu", pipeline_options);
    pipeline.AddPass<passes::CallInlinerPass>();  // kernels are per instruction: no calls
    passes::AddStandardPasses(pipeline, &policy_);
    return pipeline.Run(module).status();
  }

  // An optimized module's program, executable and (with a driver) loaded PTX.
  absl::StatusOr<std::unique_ptr<backends::Executable>> Finish(
      std::unique_ptr<hlo::Module> module, backends::CompileStats stats,
      const std::string& dump_prefix) const {
    stats.flops = hlo::MatmulFlops(*module);
    auto start = std::chrono::steady_clock::now();
    // The run's deadline and cancellation hold between the stages (core/run_control.h).
    TFJIT_RETURN_IF_ERROR(
        RunCheckpoint(absl::StrCat("emitting PTX for module '", module->name(), "'")));
    TFJIT_ASSIGN_OR_RETURN(GpuProgram program, BuildGpuProgram(*module, sm_));
    if (!dump_prefix.empty()) {
      const std::string path = absl::StrCat(options_.dump_dir, "/", dump_prefix, "ptx");
      std::ofstream out(path);
      if (!out) return NotFound("cannot open dump file '%s' for writing", path);
      out << program.ptx.ptx;
    }
    stats.num_kernels = static_cast<int>(program.steps.size());
    stats.temp_bytes =
        program.arena_bytes - program.arena_bytes_per_row * program.batch_representative;
    stats.temp_bytes_per_row = program.arena_bytes_per_row;
    stats.temp_bytes_unshared = program.arena_bytes_unshared;
    auto exe = std::make_unique<GpuExecutable>(std::move(module), std::move(program),
                                               options_.device_ordinal, stats);
    // With a driver, the PTX is loaded now, so the driver's errors surface at compile time.
    if (absl::StatusOr<CudaDriver*> d = CudaDriver::Get();
        d.ok() && options_.device_ordinal < static_cast<int>((*d)->devices().size())) {
      TFJIT_RETURN_IF_ERROR(
          RunCheckpoint(absl::StrCat("loading the PTX of module '", exe->module().name(), "'")));
      TFJIT_RETURN_IF_ERROR((*d)->SetCurrent(options_.device_ordinal));
      TFJIT_RETURN_IF_ERROR(exe->LoadLocked(**d));
    }
    exe->mutable_stats().codegen_ms = MillisSince(start);
    return std::unique_ptr<backends::Executable>(std::move(exe));
  }

  GpuBackendOptions options_;
  std::string sm_;
  GpuFusionPolicy policy_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<backends::Backend>> CreateGpuBackend(
    const GpuBackendOptions& options) {
  std::string sm = options.sm;
  if (sm.empty()) {
    TFJIT_ASSIGN_OR_RETURN(CudaDriver * d, CudaDriver::Get());
    if (options.device_ordinal < 0 ||
        options.device_ordinal >= static_cast<int>(d->devices().size())) {
      return FailedPrecondition("GPU:%d does not exist: the CUDA driver reports %d GPU(s)",
                                options.device_ordinal, d->devices().size());
    }
    const GpuInfo& info = d->devices()[static_cast<size_t>(options.device_ordinal)];
    TFJIT_ASSIGN_OR_RETURN(sm, PtxTargetFor(info.cc_major, info.cc_minor));
  }
  return std::unique_ptr<backends::Backend>(new GpuBackend(options, sm));
}

const GpuProgram* ProgramOf(const backends::Executable& executable) {
  const auto* gpu = dynamic_cast<const GpuExecutable*>(&executable);
  return gpu == nullptr ? nullptr : &gpu->program();
}

absl::StatusOr<double> TimeStepsOnDevice(const backends::Executable& executable, int iterations) {
  const auto* gpu = dynamic_cast<const GpuExecutable*>(&executable);
  if (gpu == nullptr) return InvalidArgument("TimeStepsOnDevice: not a GPU executable");
  return gpu->TimeSteps(iterations);
}

absl::StatusOr<double> TimeDeviceCopy(int64_t bytes, int iterations, int ordinal) {
  TFJIT_ASSIGN_OR_RETURN(CudaDriver * d, CudaDriver::Get());
  TFJIT_RETURN_IF_ERROR(d->SetCurrent(ordinal));
  DeviceBuffer from, to;
  TFJIT_RETURN_IF_ERROR(from.Allocate(*d, ordinal, bytes));
  TFJIT_RETURN_IF_ERROR(to.Allocate(*d, ordinal, bytes));
  CUstream stream = nullptr;
  TFJIT_RETURN_IF_ERROR(d->Check(d->api().StreamCreate(&stream, 0), "cuStreamCreate"));
  auto copy = [&]() {
    return d->Check(
        d->api().MemcpyDtoDAsync(to.ptr(), from.ptr(), static_cast<size_t>(bytes), stream),
        "cuMemcpyDtoDAsync");
  };
  return WarmAndTime(*d, stream, iterations, copy);
}

absl::StatusOr<double> TimeCublasSgemm(int m, int n, int k, int iterations, int ordinal) {
  TFJIT_ASSIGN_OR_RETURN(CudaDriver * d, CudaDriver::Get());
  TFJIT_RETURN_IF_ERROR(d->SetCurrent(ordinal));
  TFJIT_ASSIGN_OR_RETURN(Cublas * cublas, Cublas::Get());
  TFJIT_ASSIGN_OR_RETURN(CublasApi::Handle handle, cublas->CreateHandle());
  struct DestroyHandle {
    Cublas* cublas;
    CublasApi::Handle handle;
    ~DestroyHandle() { cublas->api().Destroy(handle); }
  } destroy{cublas, handle};
  DeviceBuffer a, b, c;
  TFJIT_RETURN_IF_ERROR(a.Allocate(*d, ordinal, int64_t{4} * m * k));
  TFJIT_RETURN_IF_ERROR(b.Allocate(*d, ordinal, int64_t{4} * k * n));
  TFJIT_RETURN_IF_ERROR(c.Allocate(*d, ordinal, int64_t{4} * m * n));
  CUstream stream = nullptr;
  TFJIT_RETURN_IF_ERROR(d->Check(d->api().StreamCreate(&stream, 0), "cuStreamCreate"));
  TFJIT_RETURN_IF_ERROR(cublas->Check(cublas->api().SetStream(handle, stream), "cublasSetStream"));
  const float one = 1, zero = 0;
  auto gemm = [&]() {
    // Column-major C[m, n] = A[m, k] * B[k, n], one batch.
    return cublas->Check(
        cublas->api().SgemmStridedBatched(handle, kCublasOpN, kCublasOpN, m, n, k, &one,
                                          reinterpret_cast<const float*>(a.ptr()), m, 0,
                                          reinterpret_cast<const float*>(b.ptr()), k, 0, &zero,
                                          reinterpret_cast<float*>(c.ptr()), m, 0, 1),
        "cublasSgemmStridedBatched");
  };
  return WarmAndTime(*d, stream, iterations, gemm);
}

int VisibleGpuCount(std::string* why) {
  absl::StatusOr<CudaDriver*> d = CudaDriver::Get();
  if (!d.ok()) {
    if (why != nullptr) *why = std::string(d.status().message());
    return 0;
  }
  if ((*d)->devices().empty() && why != nullptr) {
    *why = "the CUDA driver loaded and reports no GPU";
  }
  return static_cast<int>((*d)->devices().size());
}

absl::Status CheckGpu(int ordinal) {
  std::string why;
  const int count = VisibleGpuCount(&why);
  if (count == 0) return FailedPrecondition("%s", why);
  if (ordinal < 0 || ordinal >= count) {
    return FailedPrecondition("the CUDA driver reports %d GPU(s); use GPU:0..GPU:%d", count,
                              count - 1);
  }
  const GpuInfo& info = (*CudaDriver::Get())->devices()[static_cast<size_t>(ordinal)];
  absl::StatusOr<std::string> sm = PtxTargetFor(info.cc_major, info.cc_minor);
  if (!sm.ok()) {
    return FailedPrecondition("it is %s: %s", info.name, sm.status().message());
  }
  return absl::OkStatus();
}

}  // namespace tfjit::gpu
