// LLJIT setup: host target machine builder, runtime symbols, process symbol generator.
#include "backends/cpu/orc_jit.h"

#include <string>

#include "backends/cpu/runtime_abi.h"
#include "backends/llvm/target.h"
#include "core/status.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/MemoryBuffer.h"

namespace tfjit::cpu {
namespace {

std::string ErrorToString(llvm::Error error) { return llvm::toString(std::move(error)); }

}  // namespace

OrcJit::OrcJit(std::unique_ptr<llvm::orc::LLJIT> jit) : jit_(std::move(jit)) {}
OrcJit::~OrcJit() = default;

absl::StatusOr<std::unique_ptr<OrcJit>> OrcJit::Create(int opt_level) {
  llvm_ir::InitializeLlvm();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) return Internal("cannot detect the host target: %s", ErrorToString(jtmb.takeError()));
  jtmb->setCodeGenOptLevel(opt_level >= 2 ? llvm::CodeGenOptLevel::Aggressive
                                          : llvm::CodeGenOptLevel::None);
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
  if (!jit) return Internal("cannot create the LLVM JIT: %s", ErrorToString(jit.takeError()));
  llvm::orc::JITDylib& dylib = (*jit)->getMainJITDylib();

  llvm::orc::SymbolMap symbols;
  for (const auto& [name, address] : RuntimeSymbols()) {
    symbols[(*jit)->mangleAndIntern(name)] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(address),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  }
  if (llvm::Error e = dylib.define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
    return Internal("cannot register runtime symbols: %s", ErrorToString(std::move(e)));
  }
  // libm (expf, tanhf, ...), memcpy/memset that LLVM may introduce, compiler-rt helpers.
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!process) {
    return Internal("cannot search process symbols: %s", ErrorToString(process.takeError()));
  }
  dylib.addGenerator(std::move(*process));
  return std::unique_ptr<OrcJit>(new OrcJit(std::move(*jit)));
}

absl::Status OrcJit::AddObject(absl::string_view object) {
  std::unique_ptr<llvm::MemoryBuffer> buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(object.data(), object.size()), "tfjit-object");
  if (llvm::Error e = jit_->addObjectFile(std::move(buffer))) {
    return Internal("cannot add an object file to the JIT: %s", ErrorToString(std::move(e)));
  }
  return absl::OkStatus();
}

absl::StatusOr<void*> OrcJit::Lookup(absl::string_view name) {
  auto address = jit_->lookup(llvm::StringRef(name.data(), name.size()));
  if (!address) {
    return Internal("JIT lookup of '%s' failed: %s", std::string(name),
                    ErrorToString(address.takeError()));
  }
  return address->toPtr<void*>();
}

}  // namespace tfjit::cpu
