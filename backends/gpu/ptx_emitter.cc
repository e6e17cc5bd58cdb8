// EmitPtx: one NVPTX kernel per elemental instruction of the entry computation, optimised at
// O3 by the NVPTX target machine and printed as PTX.
#include "backends/gpu/ptx_emitter.h"

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "backends/llvm/elemental_emitter.h"
#include "backends/llvm/ir_array.h"
#include "backends/llvm/target.h"
#include "core/status.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace tfjit::gpu {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using llvm_ir::ElementGenerator;
using llvm_ir::IrArray;
using llvm_ir::IrIndex;

constexpr char kTriple[] = "nvptx64-nvidia-cuda";

void InitializeNvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateNvptxTargetMachine(
    const std::string& sm) {
  if (sm != "sm_80" && sm != "sm_90" && sm != "sm_90a") {
    return InvalidArgument("gpu backend: compute capability '%s' is not supported; use sm_80, "
                           "sm_90 or sm_90a", sm);
  }
  InitializeNvptx();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (target == nullptr) return Internal("LLVM has no NVPTX target: %s", error);
  // PTX 8.0: accepted for sm_80 and sm_90 by the CUDA 12+ ptxas; sm_90a needs it.
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      kTriple, sm, "+ptx80", llvm::TargetOptions(), std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (tm == nullptr) return Internal("cannot create an NVPTX target machine for %s", sm);
  return tm;
}

// What this step compiles: every array instruction the elemental emitter generates, one
// thread per output element (a reduction, dot or convolution runs its inner loop in that
// thread: correct, not yet fast; warp-level reductions and cuBLAS come next).
bool IsElementalKernel(const Instruction& inst) {
  return inst.shape().IsArray() && llvm_ir::ElementalEmitter::Supports(inst);
}

llvm::Value* ReadSreg(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id) {
  return b.CreateZExt(b.CreateIntrinsic(id, {}, {}), b.getInt64Ty());
}

// kernel(ptr out, ptr operand..., i64 n): for (i = global thread id; i < n; i += threads)
// out[i] = element i of `inst`.
absl::Status EmitKernel(const Instruction& inst, const std::string& name, llvm::Module& module,
                        llvm_ir::ElementalEmitter& elemental, llvm::IRBuilder<>& b) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::Type* ptr = b.getPtrTy();
  std::vector<llvm::Type*> params(static_cast<size_t>(inst.operand_count()) + 1, ptr);
  params.push_back(b.getInt64Ty());
  llvm::Function* fn = llvm::Function::Create(
      llvm::FunctionType::get(b.getVoidTy(), params, false), llvm::GlobalValue::ExternalLinkage,
      name, &module);
  fn->setCallingConv(llvm::CallingConv::PTX_Kernel);
  for (unsigned i = 0; i + 1 < fn->arg_size(); ++i) fn->addParamAttr(i, llvm::Attribute::NoAlias);
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx, "loop", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "exit", fn);
  b.SetInsertPoint(entry);
  llvm::Value* n = fn->getArg(fn->arg_size() - 1);
  llvm::Value* block = ReadSreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  llvm::Value* threads = ReadSreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  llvm::Value* first = b.CreateAdd(b.CreateMul(block, threads),
                                   ReadSreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
  llvm::Value* stride =
      b.CreateMul(ReadSreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), threads);
  b.CreateCondBr(b.CreateICmpULT(first, n), loop, exit);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, "i");
  i->addIncoming(first, entry);
  std::vector<ElementGenerator> ops;
  for (int k = 0; k < inst.operand_count(); ++k) {
    IrArray array(fn->getArg(static_cast<unsigned>(k + 1)), inst.operand(k)->shape());
    ops.push_back([&b, array](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
      return array.EmitRead(index, b);
    });
  }
  TFJIT_ASSIGN_OR_RETURN(ElementGenerator root, elemental.MakeGenerator(inst, ops));
  const IrIndex index = IrIndex::FromLinear(i, inst.shape().dims(), b);
  TFJIT_ASSIGN_OR_RETURN(llvm::Value * v, root(index));
  IrArray(fn->getArg(0), inst.shape()).EmitWrite(index, v, b);
  llvm::Value* next = b.CreateAdd(i, stride);
  i->addIncoming(next, b.GetInsertBlock());
  b.CreateCondBr(b.CreateICmpULT(next, n), loop, exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  return absl::OkStatus();
}

// The libm functions the elemental emitter calls (sinf, pow, ...).
std::vector<llvm::Function*> LibmCalls(llvm::Module& m) {
  std::vector<llvm::Function*> out;
  for (llvm::Function& f : m) {
    // __nvvm_reflect (libdevice's configuration queries) is resolved by NVVMReflect, which the
    // NVPTX target runs at the start of optimisation.
    if (f.isDeclaration() && !f.isIntrinsic() && !f.use_empty() &&
        f.getName() != "__nvvm_reflect") {
      out.push_back(&f);
    }
  }
  return out;
}

// CUDA's libdevice: $TFJIT_LIBDEVICE, else the toolkit's.
std::string LibdevicePath() {
  const char* env = std::getenv("TFJIT_LIBDEVICE");
  return env != nullptr ? env : "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
}

// Math the elemental emitter leaves to libm has no PTX body: it becomes libdevice's
// (`sinf` -> `__nv_sinf`), linked in (only what is called) and internalised; libdevice's
// __nvvm_reflect queries see ftz off (IEEE denormals, as on the CPU).
absl::Status LinkLibdevice(llvm::Module& m, const std::string& module_name) {
  std::vector<llvm::Function*> calls = LibmCalls(m);
  if (calls.empty()) return absl::OkStatus();
  const std::string path = LibdevicePath();
  if (!std::filesystem::exists(path)) {
    return Unimplemented("gpu backend: '%s' in module '%s' needs CUDA's libdevice, and '%s' does "
                         "not exist (install the CUDA toolkit or set TFJIT_LIBDEVICE)",
                         calls[0]->getName().str(), module_name, path);
  }
  for (llvm::Function* f : calls) f->setName("__nv_" + f->getName().str());
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> libdevice = llvm::parseIRFile(path, diagnostic, m.getContext());
  if (libdevice == nullptr) {
    return Internal("cannot read libdevice '%s': %s", path, diagnostic.getMessage().str());
  }
  libdevice->setTargetTriple(m.getTargetTriple());
  libdevice->setDataLayout(m.getDataLayout());
  if (llvm::Linker::linkModules(m, std::move(libdevice), llvm::Linker::Flags::LinkOnlyNeeded)) {
    return Internal("linking libdevice '%s' into module '%s' failed", path, module_name);
  }
  for (llvm::Function& f : m) {
    if (!f.isDeclaration() && f.getCallingConv() != llvm::CallingConv::PTX_Kernel) {
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
    }
  }
  m.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
  for (llvm::Function* f : LibmCalls(m)) {
    return Unimplemented("gpu backend: libdevice has no '%s' (module '%s')", f->getName().str(),
                         module_name);
  }
  return absl::OkStatus();
}

}  // namespace

bool IsPlumbing(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kTuple:
    case Opcode::kGetTupleElement:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<PtxModule> EmitPtx(const hlo::Module& module, const std::string& sm) {
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr) return InvalidArgument("module '%s' has no entry", module.name());
  std::vector<const Instruction*> kernels;
  for (const Instruction* inst : entry->MakePostOrder()) {
    if (!IsPlumbing(*inst)) kernels.push_back(inst);
  }
  return EmitPtxKernels(module, kernels, sm);
}

absl::StatusOr<PtxModule> EmitPtxKernels(const hlo::Module& module,
                                         const std::vector<const hlo::Instruction*>& kernels,
                                         const std::string& sm) {
  TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, CreateNvptxTargetMachine(sm));
  llvm::LLVMContext ctx;
  llvm::Module llvm_module(module.name(), ctx);
  llvm_module.setTargetTriple(kTriple);
  llvm_module.setDataLayout(tm->createDataLayout());
  llvm::IRBuilder<> b(ctx);
  llvm_ir::ElementalEmitter elemental(&b, &llvm_module);
  PtxModule out;
  for (const Instruction* inst : kernels) {
    if (!IsElementalKernel(*inst)) {
      return Unimplemented("gpu backend: opcode '%s' is not compiled to PTX yet (instruction "
                           "'%s')", std::string(hlo::OpcodeName(inst->opcode())), inst->name());
    }
    PtxKernel k;
    k.name = absl::StrCat("kernel_", out.kernels.size());
    k.instruction = inst->name();
    k.num_operands = inst->operand_count();
    TFJIT_RETURN_IF_ERROR(EmitKernel(*inst, k.name, llvm_module, elemental, b));
    out.kernels.push_back(std::move(k));
  }
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::verifyModule(llvm_module, &os)) {
    return Internal("gpu backend emitted invalid LLVM IR for module '%s': %s", module.name(),
                    os.str());
  }
  TFJIT_RETURN_IF_ERROR(LinkLibdevice(llvm_module, module.name()));
  llvm_ir::OptimizeModule(llvm_module, *tm, 3);
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream ptx(buffer);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, ptx, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    return Internal("the NVPTX target cannot emit assembly");
  }
  pm.run(llvm_module);
  out.ptx.assign(buffer.data(), buffer.size());
  return out;
}

}  // namespace tfjit::gpu
