// Host detection, target machines and the O3 pipeline, in one TU (PassBuilder is slow to parse).
#include "backends/llvm/target.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/logging.h"
#include "core/run_control.h"
#include "core/status.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/IPO/MergeFunctions.h"
#include "llvm/Transforms/Utils/SplitModule.h"

namespace tfjit::llvm_ir {

void InitializeLlvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

const HostTarget& GetHostTarget() {
  static const HostTarget* host = [] {
    InitializeLlvm();
    auto* h = new HostTarget;
    h->triple = llvm::sys::getProcessTriple();
    h->cpu = llvm::sys::getHostCPUName().str();
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    std::string joined;
    for (const auto& f : features) {
      if (!joined.empty()) joined += ",";
      joined += (f.getValue() ? "+" : "-");
      joined += f.getKey().str();
    }
    h->features = joined;
    auto it = features.find("avx512f");
    h->has_avx512 = it != features.end() && it->getValue();
    return h;
  }();
  return *host;
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateHostTargetMachine(int opt_level) {
  const HostTarget& host = GetHostTarget();
  return CreateTargetMachine(host.cpu, host.features, opt_level);
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(
    const std::string& cpu, const std::string& features, int opt_level) {
  const HostTarget& host = GetHostTarget();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(host.triple, error);
  if (target == nullptr) {
    return Internal("cannot find an LLVM target for host triple '%s': %s", host.triple, error);
  }
  llvm::TargetOptions options;
  // No FP contraction across HLO instructions: add/multiply must stay bit-identical to the
  // evaluator (HLO.md accuracy rules).
  options.AllowFPOpFusion = llvm::FPOpFusion::Standard;
  auto level = opt_level >= 2
                   ? llvm::CodeGenOptLevel::Aggressive
                   : (opt_level == 1 ? llvm::CodeGenOptLevel::Less : llvm::CodeGenOptLevel::None);
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      host.triple, cpu, features, options, llvm::Reloc::PIC_, std::nullopt, level,
      /*JIT=*/true));
  if (tm == nullptr) return Internal("cannot create a target machine for '%s'", cpu);
  return tm;
}

void SetHostFunctionAttributes(llvm::Function& function) {
  const HostTarget& host = GetHostTarget();
  function.addFnAttr("target-cpu", host.cpu);
  function.addFnAttr("target-features", host.features);
  if (host.has_avx512) function.addFnAttr("prefer-vector-width", "512");
}

void ConfigureModuleForTarget(llvm::Module& module, llvm::TargetMachine& tm) {
  module.setTargetTriple(tm.getTargetTriple().str());
  module.setDataLayout(tm.createDataLayout());
}

namespace {

// The new pass manager's four analysis managers, registered with `pb` and cross-linked.
struct AnalysisManagers {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  explicit AnalysisManagers(llvm::PassBuilder& pb) {
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
  }
};

}  // namespace

void OptimizeModule(llvm::Module& module, llvm::TargetMachine& tm, int opt_level) {
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = opt_level >= 2;
  tuning.SLPVectorization = opt_level >= 2;
  llvm::PassBuilder pb(&tm, tuning);
  AnalysisManagers am(pb);
  llvm::OptimizationLevel level = llvm::OptimizationLevel::O3;
  if (opt_level <= 0) {
    level = llvm::OptimizationLevel::O0;
  } else if (opt_level == 1) {
    level = llvm::OptimizationLevel::O1;
  } else if (opt_level == 2) {
    level = llvm::OptimizationLevel::O2;
  }
  llvm::ModulePassManager mpm = level == llvm::OptimizationLevel::O0
                                    ? pb.buildO0DefaultPipeline(level)
                                    : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, am.mam);
}

absl::StatusOr<std::string> EmitObjectFile(llvm::Module& module, llvm::TargetMachine& tm) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    return Internal("LLVM target '%s' cannot emit object files", tm.getTargetTriple().str());
  }
  pm.run(module);
  return std::string(buffer.data(), buffer.size());
}

namespace {

// One part: parsed into its own context, optimised, compiled.
absl::StatusOr<std::string> CompileBitcode(const std::string& bitcode, const std::string& cpu,
                                           const std::string& features, int opt_level) {
  llvm::LLVMContext ctx;
  llvm::Expected<std::unique_ptr<llvm::Module>> module = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(llvm::StringRef(bitcode.data(), bitcode.size()), "part"), ctx);
  if (!module) {
    return Internal("cannot read back a module part: %s", llvm::toString(module.takeError()));
  }
  TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm,
                         CreateTargetMachine(cpu, features, opt_level));
  ConfigureModuleForTarget(**module, *tm);
  OptimizeModule(**module, *tm, opt_level);
  return EmitObjectFile(**module, *tm);
}

}  // namespace

absl::StatusOr<std::vector<std::string>> CompileForHostInParts(llvm::Module& module, int opt_level,
                                                               int parts, int threads) {
  const HostTarget& host = GetHostTarget();
  return CompileInParts(module, host.cpu, host.features, opt_level, parts, threads);
}

int MergeIdenticalFunctions(llvm::Module& module) {
  const size_t before = module.size();
  llvm::PassBuilder pb;
  AnalysisManagers am(pb);
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::MergeFunctionsPass());
  mpm.run(module, am.mam);
  return static_cast<int>(before - module.size());
}

absl::StatusOr<std::vector<std::string>> CompileInParts(llvm::Module& module,
                                                        const std::string& cpu,
                                                        const std::string& features, int opt_level,
                                                        int parts, int threads) {
  if (opt_level > 0) {
    const auto merge_start = std::chrono::steady_clock::now();
    const int merged = MergeIdenticalFunctions(module);
    Log(LogLevel::kDebug, "llvm: %d identical functions merged in %.1f ms, %zu left", merged,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - merge_start)
            .count(),
        module.size());
  }
  const std::string name = module.getName().str();
  if (parts <= 1 || threads <= 1) {
    TFJIT_RETURN_IF_ERROR(RunCheckpoint(absl::StrCat("LLVM code generation of '", name, "'")));
    TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm,
                           CreateTargetMachine(cpu, features, opt_level));
    ConfigureModuleForTarget(module, *tm);
    OptimizeModule(module, *tm, opt_level);
    TFJIT_ASSIGN_OR_RETURN(std::string object, EmitObjectFile(module, *tm));
    return std::vector<std::string>{std::move(object)};
  }
  const auto start = std::chrono::steady_clock::now();
  auto ms_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  };
  std::vector<std::string> bitcodes;
  // Round robin: LLVM deals the functions out largest first, so the parts get about equal
  // amounts of IR.
  llvm::SplitModule(
      module, static_cast<unsigned>(parts),
      [&](std::unique_ptr<llvm::Module> part) {
        std::string bitcode;
        llvm::raw_string_ostream os(bitcode);
        llvm::WriteBitcodeToFile(*part, os);
        os.flush();
        bitcodes.push_back(std::move(bitcode));
      },
      /*PreserveLocals=*/false, /*RoundRobin=*/true);
  const double split_ms = ms_since(start);
  std::vector<absl::StatusOr<std::string>> objects(bitcodes.size(), std::string());
  std::vector<double> part_ms(bitcodes.size());
  auto compile = [&](size_t i) {
    const auto part_start = std::chrono::steady_clock::now();
    objects[i] = CompileBitcode(bitcodes[i], cpu, features, opt_level);
    part_ms[i] = ms_since(part_start);
  };
  // The parts' costs differ a lot (a vectorised elementwise kernel costs LLVM far more than a
  // library call of the same size), so `threads` workers take parts one at a time, largest
  // bitcode first, until none is left.
  std::vector<size_t> order(bitcodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return bitcodes[a].size() > bitcodes[b].size(); });
  // The run's deadline and cancellation hold between parts, on every worker: once one sees
  // the run stop, no worker starts another part (core/run_control.h).
  const RunControl* control = CurrentRunControl();
  std::atomic<size_t> next{0};
  std::mutex stop_mu;
  absl::Status stopped;
  auto work = [&] {
    ScopedRunControl scope(control, AllocationMode::kUncharged);
    for (size_t k = next++; k < order.size(); k = next++) {
      absl::Status s = RunCheckpoint(
          absl::StrCat("LLVM code generation of '", name, "', part ", k + 1, " of ", order.size()));
      if (!s.ok()) {
        next = order.size();
        std::lock_guard<std::mutex> lock(stop_mu);
        if (stopped.ok()) stopped = std::move(s);
        return;
      }
      compile(order[k]);
    }
  };
  std::vector<std::thread> workers;
  for (int w = 1; w < std::min<int>(threads, static_cast<int>(order.size())); ++w) {
    workers.emplace_back(work);
  }
  work();
  for (std::thread& t : workers) t.join();
  if (!stopped.ok()) return stopped;
  std::string parts_text;
  for (size_t i = 0; i < part_ms.size(); ++i) {
    parts_text += (i > 0 ? ", " : "") + std::to_string(static_cast<int>(part_ms[i])) + " ms (" +
                  std::to_string(bitcodes[i].size() / 1024) + " KiB bitcode)";
  }
  Log(LogLevel::kDebug, "llvm: split in %.1f ms, %zu parts compiled in parallel: %s", split_ms,
      part_ms.size(), parts_text);
  std::vector<std::string> out;
  for (absl::StatusOr<std::string>& object : objects) {
    if (!object.ok()) return object.status();
    out.push_back(std::move(*object));
  }
  return out;
}

}  // namespace tfjit::llvm_ir
