// CpuBackend::Compile: HLO pipeline, support check, buffer plan, IR emission, O3, ORC JIT.
#include "backends/cpu/cpu_backend.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "backends/cpu/cpu_executable.h"
#include "backends/cpu/gemm_kernels.h"
#include "backends/cpu/ir_emitter.h"
#include "backends/cpu/kernel_match.h"
#include "backends/cpu/object_cache.h"
#include "backends/cpu/orc_jit.h"
#include "backends/llvm/target.h"
#include "compiler/hlo/cost.h"
#include "compiler/hlo/symbolic.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/standard_pipeline.h"
#include "core/logging.h"
#include "core/run_control.h"
#include "core/status.h"
#include "core/timing.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace tfjit::cpu {
namespace {

// TFJIT_PERF_MAP=1: names the compiled kernels for `perf report` in /tmp/perf-<pid>.map
// (perf's format for JIT code: "start size name" in hex), each kernel sized up to the next.
void WritePerfMap(OrcJit& jit, const std::string& module_name,
                  const std::vector<std::string>& kernel_names) {
  std::vector<std::pair<uint64_t, std::string>> symbols;
  auto add = [&](const std::string& symbol, const std::string& what) {
    absl::StatusOr<void*> address = jit.Lookup(symbol);
    if (address.ok()) {
      symbols.emplace_back(reinterpret_cast<uint64_t>(*address),
                           absl::StrCat("tfjit:", module_name, ":", what));
    }
  };
  add(kEntryFunctionName, kEntryFunctionName);
  for (size_t i = 0; i < kernel_names.size(); ++i) {
    add(absl::StrCat("kernel.", i), absl::StrCat("kernel.", i, "(", kernel_names[i], ")"));
  }
  std::sort(symbols.begin(), symbols.end());
  std::ofstream out(absl::StrCat("/tmp/perf-", getpid(), ".map"), std::ios::app);
  for (size_t i = 0; i < symbols.size(); ++i) {
    const uint64_t end = i + 1 < symbols.size() ? symbols[i + 1].first : symbols[i].first + 4096;
    out << absl::StrFormat("%x %x %s\n", symbols[i].first, end - symbols[i].first,
                           symbols[i].second);
  }
}

class CpuBackend : public backends::Backend {
 public:
  explicit CpuBackend(const CpuBackendOptions& options) : options_(options) {}

  absl::string_view name() const override { return "cpu"; }
  const passes::FusionPolicy& fusion_policy() const override { return policy_; }
  absl::StatusOr<std::unique_ptr<backends::Executable>> Compile(
      std::unique_ptr<hlo::Module> module) const override;
  absl::StatusOr<std::unique_ptr<backends::Executable>> CompileSymbolic(
      std::vector<backends::BatchProbeModule> probes) const override;
  bool compiles_symbolic() const override { return true; }

 private:
  // The host's generated GEMM kernels, before anything is packed for them.
  void InstallGemmKernels() const;
  IrEmitterOptions EmitOptions() const;
  // The backend options a compiled module depends on, for the disk cache's key.
  std::string CacheOptionsText() const;
  // The executable of `module` stored in `cache` under `key`, loaded and linked (`module`
  // moves into it); null on a miss.
  std::unique_ptr<backends::Executable> LoadFromCache(
      const ObjectCache& cache, const std::string& key, std::unique_ptr<hlo::Module>& module,
      double optimize_ms, std::chrono::steady_clock::time_point start) const;
  absl::Status Optimize(hlo::Module& module, const std::string& dump_prefix) const;
  struct LinkedObject {
    std::unique_ptr<OrcJit> jit;
    EntryFn entry = nullptr;
  };
  // JIT-links a relocatable object file of an emitted module.
  absl::StatusOr<LinkedObject> LinkObject(const std::vector<std::string>& objects) const;
  // Threads LLVM's work on one module is split over (CompileForHostInParts).
  int CompileThreads() const;
  std::unique_ptr<backends::Executable> MakeExecutable(
      std::unique_ptr<hlo::Module> module, BufferPlan plan, std::vector<std::string> profile_units,
      LinkedObject linked, backends::CompileStats stats,
      std::chrono::steady_clock::time_point start, bool from_cache) const;

  CpuBackendOptions options_;
  CpuFusionPolicy policy_;
};

absl::Status CpuBackend::Optimize(hlo::Module& module, const std::string& dump_prefix) const {
  passes::PipelineOptions pipeline_options;
  pipeline_options.verify = options_.verify_passes;
  if (!options_.dump_dir.empty() && !options_.dump_pass_regex.empty()) {
    pipeline_options.dump_dir = options_.dump_dir;
    pipeline_options.dump_after_regex = options_.dump_pass_regex;
    pipeline_options.dump_prefix = dump_prefix;
  }
  passes::PassPipeline pipeline("cpu", pipeline_options);
  passes::AddStandardPasses(pipeline, &policy_);
  absl::Status status = pipeline.Run(module).status();
  if (LogEnabled(LogLevel::kDebug)) {
    std::string times;
    for (const auto& [pass, ms] : pipeline.timings()) absl::StrAppend(&times, " ", pass, " ", ms);
    Log(LogLevel::kDebug, "cpu backend: HLO passes of module '%s' (ms):%s", module.name(), times);
  }
  return status;
}

absl::StatusOr<std::unique_ptr<backends::Executable>> CpuBackend::Compile(
    std::unique_ptr<hlo::Module> module) const {
  if (module == nullptr || module->entry() == nullptr) {
    return InvalidArgument("cpu backend: Compile needs a module with an entry computation");
  }
  InstallGemmKernels();
  backends::CompileStats stats;
  auto start = std::chrono::steady_clock::now();
  const bool dumps = !options_.dump_dir.empty() && !options_.dump_pass_regex.empty();
  const std::string dump_prefix = dumps ? backends::DumpPrefix(*module) : "";
  TFJIT_RETURN_IF_ERROR(Optimize(*module, dump_prefix));
  stats.optimize_ms = MillisSince(start);
  stats.flops = hlo::MatmulFlops(*module);

  TFJIT_RETURN_IF_ERROR(CheckCpuSupport(*module));

  const IrEmitterOptions emit_options = EmitOptions();

  // The disk cache, keyed by the optimized module.
  start = std::chrono::steady_clock::now();
  std::optional<ObjectCache> cache;
  std::string key;
  if (!options_.cache_dir.empty()) {
    cache.emplace(options_.cache_dir, options_.cache_max_bytes);
    key = ObjectCache::Key(*module, CacheOptionsText());
    // A dump compiles: a hit would skip the LLVM IR it asks for.
    if (!dumps) {
      if (auto hit = LoadFromCache(*cache, key, module, stats.optimize_ms, start)) return hit;
    }
  }

  // Where codegen's time goes (TFJIT_LOG=3): IR emission, LLVM, the cache entry, linking.
  auto phase_start = std::chrono::steady_clock::now();
  std::string phases;
  auto phase = [&](const char* name) {
    absl::StrAppendFormat(&phases, " %s %.1f", name, MillisSince(phase_start));
    phase_start = std::chrono::steady_clock::now();
  };
  // The run's deadline and cancellation hold between the stages (core/run_control.h); the
  // HLO passes and LLVM's parts check their own.
  TFJIT_RETURN_IF_ERROR(
      RunCheckpoint(absl::StrCat("emitting LLVM IR for module '", module->name(), "'")));
  TFJIT_ASSIGN_OR_RETURN(EmittedModule emitted, EmitCpuModule(*module, emit_options));
  phase("emit");
  stats.num_kernels = emitted.num_kernels;
  stats.temp_bytes = emitted.plan.arena_bytes();
  stats.temp_bytes_unshared = emitted.plan.unshared_bytes();

  std::vector<std::string> objects;
  if (dumps) {
    // The dump shows the whole optimised module, so it is compiled in one piece.
    TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm,
                           llvm_ir::CreateHostTargetMachine(options_.opt_level));
    llvm_ir::ConfigureModuleForTarget(*emitted.module, *tm);
    if (options_.opt_level > 0) llvm_ir::MergeIdenticalFunctions(*emitted.module);
    // What LLVM is given (after merging identical functions), then what it made of it.
    auto write = [&](const char* suffix) -> absl::Status {
      const std::string path = absl::StrCat(options_.dump_dir, "/", dump_prefix, suffix);
      std::error_code error;
      llvm::raw_fd_ostream out(path, error);
      if (error) return NotFound("cannot open dump file '%s' for writing", path);
      emitted.module->print(out, nullptr);
      return absl::OkStatus();
    };
    TFJIT_RETURN_IF_ERROR(write("unoptimized.ll"));
    llvm_ir::OptimizeModule(*emitted.module, *tm, options_.opt_level);
    TFJIT_RETURN_IF_ERROR(write("ll"));
    TFJIT_ASSIGN_OR_RETURN(std::string object, llvm_ir::EmitObjectFile(*emitted.module, *tm));
    objects.push_back(std::move(object));
  } else {
    const int threads = CompileThreads();
    // Several parts per thread: their costs differ, and a thread that finishes early takes
    // the next (a part of fewer than 4 kernels saves less than its bitcode round trip).
    const int parts = std::min(4 * threads, emitted.num_kernels / 4);
    TFJIT_ASSIGN_OR_RETURN(objects, llvm_ir::CompileForHostInParts(
                                        *emitted.module, options_.opt_level, parts, threads));
  }
  phase("llvm");
  if (cache.has_value()) {
    CachedObject entry{stats, emitted.plan, emitted.profile_units, objects};
    entry.stats.codegen_ms = MillisSince(start);
    absl::Status stored = cache->Store(key, *module, entry);
    if (!stored.ok()) {
      Log(LogLevel::kWarning, "not storing module '%s' in the disk cache: %s", module->name(),
          stored.message());
    }
  }
  phase("cache-store");
  TFJIT_RETURN_IF_ERROR(RunCheckpoint(absl::StrCat("linking module '", module->name(), "'")));
  TFJIT_ASSIGN_OR_RETURN(LinkedObject linked, LinkObject(objects));
  phase("link");
  Log(LogLevel::kDebug, "cpu backend: codegen of module '%s' (ms):%s", module->name(), phases);
  if (const char* env = std::getenv("TFJIT_PERF_MAP"); env != nullptr && env[0] == '1') {
    WritePerfMap(*linked.jit, module->name(), emitted.kernel_names);
  }
  return MakeExecutable(std::move(module), std::move(emitted.plan),
                        std::move(emitted.profile_units), std::move(linked), stats, start,
                        /*from_cache=*/false);
}

void CpuBackend::InstallGemmKernels() const {
  // Once per process, so not cut short by the run that happens to come first: its deadline
  // and cancellation are not installed for it.
  std::optional<ScopedRunControl> detached(std::in_place, nullptr, AllocationMode::kCharge);
  if (absl::Status gemm_kernels =
          InstallHostGemmKernels(options_.cache_dir, options_.cache_max_bytes);
      !gemm_kernels.ok()) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      Log(LogLevel::kWarning, "cpu backend: GEMM kernels: %s", gemm_kernels.ToString());
    });
  }
}

IrEmitterOptions CpuBackend::EmitOptions() const {
  IrEmitterOptions emit_options;
  emit_options.parallel = options_.parallel;
  emit_options.parallel_min_elements = options_.parallel_min_elements;
  emit_options.small_kernel_elements = options_.small_kernel_elements;
  return emit_options;
}

// The LLVM IR of `emitted` as text (the independence check compares two).
std::string IrText(const EmittedModule& emitted) {
  std::string text;
  llvm::raw_string_ostream out(text);
  emitted.module->print(out, nullptr);
  out.flush();
  return text;
}

// The first line where `a` and `b` differ, for a message.
std::string FirstDifference(const std::string& a, const std::string& b) {
  size_t line_start = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] != b[i]) {
      const size_t end = a.find('\n', i);
      std::string line =
          a.substr(line_start,
                   std::min<size_t>(end == std::string::npos ? a.size() : end, line_start + 200) -
                       line_start);
      // The function it is in ("define internal void @kernel.3.body(...").
      const size_t define = a.rfind("\ndefine ", line_start);
      if (define != std::string::npos) {
        const size_t at = a.find('@', define);
        const size_t paren = a.find('(', at);
        if (at != std::string::npos && paren != std::string::npos) {
          line = absl::StrCat(a.substr(at, paren - at), ": ", line);
        }
      }
      return line;
    }
    if (a[i] == '\n') line_start = i + 1;
  }
  return "(one is longer)";
}

absl::StatusOr<std::unique_ptr<backends::Executable>> CpuBackend::CompileSymbolic(
    std::vector<backends::BatchProbeModule> probes) const {
  InstallGemmKernels();
  backends::CompileStats stats;
  auto start = std::chrono::steady_clock::now();
  TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module,
                         backends::OptimizeAndSymbolize(probes, [this](hlo::Module& m) {
                           return Optimize(m, /*dump_prefix=*/"");
                         }));
  probes.clear();
  stats.optimize_ms = MillisSince(start);
  stats.flops = hlo::MatmulFlops(*module);
  TFJIT_RETURN_IF_ERROR(CheckCpuSupport(*module));
  start = std::chrono::steady_clock::now();
  TFJIT_RETURN_IF_ERROR(
      RunCheckpoint(absl::StrCat("emitting LLVM IR for module '", module->name(), "'")));
  // The code must not depend on the representative batch size the module's dims hold: it is
  // emitted at the representative and at the next size, and the two must be the same IR (a
  // dim an emitter read without asking for its symbolic form would differ). The buffer sizes
  // of the two plans give each buffer's bytes per batch row.
  const int64_t representative = module->batch_representative();
  const IrEmitterOptions emit_options = EmitOptions();
  // The disk cache, keyed by the symbolic module (its text spells the batch ?b).
  std::optional<ObjectCache> cache;
  std::string key;
  if (!options_.cache_dir.empty()) {
    cache.emplace(options_.cache_dir, options_.cache_max_bytes);
    key = ObjectCache::Key(*module, CacheOptionsText());
    if (auto hit = LoadFromCache(*cache, key, module, stats.optimize_ms, start)) return hit;
  }
  TFJIT_ASSIGN_OR_RETURN(EmittedModule emitted, EmitCpuModule(*module, emit_options));
  {
    std::unique_ptr<hlo::Module> next = hlo::Rebase(*module, representative + 1);
    TFJIT_ASSIGN_OR_RETURN(EmittedModule at_next, EmitCpuModule(*next, emit_options));
    const std::string a = IrText(emitted);
    const std::string b = IrText(at_next);
    if (a != b) {
      std::string where = FirstDifference(a, b);
      // "@kernel.6.body: ..." names the HLO instruction the kernel computes.
      int kernel = -1;
      if (absl::StartsWith(where, "@kernel.") &&
          absl::SimpleAtoi(where.substr(8, where.find('.', 8) - 8), &kernel) && kernel >= 0 &&
          kernel < static_cast<int>(emitted.kernel_names.size())) {
        where =
            absl::StrCat("%", emitted.kernel_names[static_cast<size_t>(kernel)], " (", where, ")");
      }
      return FailedPrecondition(
          "the CPU code of module '%s' depends on the batch size; first difference: %s",
          module->name(), where);
    }
    TFJIT_RETURN_IF_ERROR(emitted.plan.MakeSymbolic(at_next.plan, representative));
  }
  stats.num_kernels = emitted.num_kernels;
  stats.temp_bytes = emitted.plan.arena_bytes();
  stats.temp_bytes_unshared = emitted.plan.unshared_bytes();
  const int threads = CompileThreads();
  const int parts = std::min(4 * threads, emitted.num_kernels / 4);
  TFJIT_ASSIGN_OR_RETURN(
      std::vector<std::string> objects,
      llvm_ir::CompileForHostInParts(*emitted.module, options_.opt_level, parts, threads));
  if (cache.has_value()) {
    CachedObject entry{stats, emitted.plan, emitted.profile_units, objects};
    entry.stats.codegen_ms = MillisSince(start);
    if (absl::Status stored = cache->Store(key, *module, entry); !stored.ok()) {
      Log(LogLevel::kWarning, "not storing module '%s' in the disk cache: %s", module->name(),
          stored.message());
    }
  }
  TFJIT_RETURN_IF_ERROR(RunCheckpoint(absl::StrCat("linking module '", module->name(), "'")));
  TFJIT_ASSIGN_OR_RETURN(LinkedObject linked, LinkObject(objects));
  return MakeExecutable(std::move(module), std::move(emitted.plan),
                        std::move(emitted.profile_units), std::move(linked), stats, start,
                        /*from_cache=*/false);
}

std::unique_ptr<backends::Executable> CpuBackend::LoadFromCache(
    const ObjectCache& cache, const std::string& key, std::unique_ptr<hlo::Module>& module,
    double optimize_ms, std::chrono::steady_clock::time_point start) const {
  std::optional<CachedObject> hit = cache.Load(key, *module);
  if (!hit.has_value()) return nullptr;
  absl::StatusOr<LinkedObject> linked = LinkObject(hit->objects);
  if (!linked.ok()) {
    // An entry that does not link is a miss: it goes, and the compile stores a new one.
    Log(LogLevel::kWarning, "disk cache: '%s' does not link (%s); compiling instead",
        cache.PathOf(key), linked.status().message());
    cache.Remove(key);
    return nullptr;
  }
  hit->stats.optimize_ms = optimize_ms;
  return MakeExecutable(std::move(module), std::move(hit->plan), std::move(hit->profile_units),
                        std::move(*linked), hit->stats, start, /*from_cache=*/true);
}

std::string CpuBackend::CacheOptionsText() const {
  return absl::StrCat("opt=", options_.opt_level, " parallel=", options_.parallel,
                      " min=", options_.parallel_min_elements,
                      " small=", options_.small_kernel_elements);
}

int CpuBackend::CompileThreads() const {
  if (options_.compile_threads > 0) return options_.compile_threads;
  return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 4);
}

absl::StatusOr<CpuBackend::LinkedObject> CpuBackend::LinkObject(
    const std::vector<std::string>& objects) const {
  LinkedObject linked;
  TFJIT_ASSIGN_OR_RETURN(linked.jit, OrcJit::Create(options_.opt_level));
  for (const std::string& object : objects) TFJIT_RETURN_IF_ERROR(linked.jit->AddObject(object));
  TFJIT_ASSIGN_OR_RETURN(void* entry, linked.jit->Lookup(kEntryFunctionName));  // links
  linked.entry = reinterpret_cast<EntryFn>(entry);
  return linked;
}

std::unique_ptr<backends::Executable> CpuBackend::MakeExecutable(
    std::unique_ptr<hlo::Module> module, BufferPlan plan, std::vector<std::string> profile_units,
    LinkedObject linked, backends::CompileStats stats, std::chrono::steady_clock::time_point start,
    bool from_cache) const {
  stats.codegen_ms = MillisSince(start);
  stats.loaded_from_disk_cache = from_cache;
  stats.temp_bytes = plan.arena_bytes(0);
  stats.temp_bytes_per_row = plan.arena_bytes(1) - plan.arena_bytes(0);
  return std::unique_ptr<backends::Executable>(
      new CpuExecutable(std::move(module), std::move(plan), std::move(profile_units),
                        std::move(linked.jit), linked.entry, stats));
}

}  // namespace

bool CpuFusionPolicy::IsOutputFusionHero(const hlo::Instruction& inst) const {
  return IsEpilogueHero(inst);
}

std::unique_ptr<backends::Backend> CreateCpuBackend(const CpuBackendOptions& options) {
  return std::make_unique<CpuBackend>(options);
}

}  // namespace tfjit::cpu
