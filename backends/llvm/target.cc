// Host detection, target machines and the O3 pipeline, in one TU (PassBuilder is slow to parse).
#include "backends/llvm/target.h"

#include <mutex>

#include "core/status.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

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
  auto level = opt_level >= 2 ? llvm::CodeGenOptLevel::Aggressive
                              : (opt_level == 1 ? llvm::CodeGenOptLevel::Less
                                                : llvm::CodeGenOptLevel::None);
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

void OptimizeModule(llvm::Module& module, llvm::TargetMachine& tm, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = opt_level >= 2;
  tuning.SLPVectorization = opt_level >= 2;
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
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
  mpm.run(module, mam);
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

}  // namespace tfjit::llvm_ir
