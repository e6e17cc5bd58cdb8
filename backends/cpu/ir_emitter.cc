// CPU kernel and entry emission. Each kernel is an internal body function with one noalias
// pointer per distinct buffer (so the vectoriser needs no runtime alias checks) wrapped by a
// function of the fixed kernel ABI that loads those pointers from the buffer table.
#include "backends/cpu/ir_emitter.h"

#include <optional>
#include <string>

#include "backends/llvm/elemental_emitter.h"
#include "backends/llvm/loop_emitter.h"
#include "backends/llvm/target.h"
#include "core/status.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

namespace tfjit::cpu {

using hlo::Instruction;
using hlo::Opcode;
using llvm_ir::ElementGenerator;
using llvm_ir::IrArray;
using llvm_ir::IrIndex;

EmittedModule::EmittedModule() = default;
EmittedModule::~EmittedModule() = default;
EmittedModule::EmittedModule(EmittedModule&&) noexcept = default;
EmittedModule& EmittedModule::operator=(EmittedModule&&) noexcept = default;

namespace {

absl::Status UnsupportedOpcode(const Instruction& inst) {
  return Unimplemented("cpu backend: opcode '%s' is not supported (instruction '%s')",
                       std::string(hlo::OpcodeName(inst.opcode())), inst.name());
}

absl::Status CheckComputation(const hlo::Computation& computation, bool is_entry) {
  for (const Instruction* inst : computation.instructions()) {
    const Opcode op = inst->opcode();
    if (op == Opcode::kParameter) continue;
    if (is_entry && (op == Opcode::kTuple || op == Opcode::kGetTupleElement)) continue;
    if (!llvm_ir::ElementalEmitter::Supports(*inst)) return UnsupportedOpcode(*inst);
    for (const hlo::Computation* called : inst->called_computations()) {
      TFJIT_RETURN_IF_ERROR(CheckComputation(*called, /*is_entry=*/false));
    }
  }
  return absl::OkStatus();
}

// A dot that maps onto the runtime's batched row-major GEMM.
struct GemmShape {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool transpose_lhs = false, transpose_rhs = false;
};

std::optional<GemmShape> MatchGemm(const Instruction& dot) {
  const DType type = dot.shape().element_type();
  if (type != DType::kFloat32 && type != DType::kFloat64) return std::nullopt;
  const hlo::DotDims& dn = dot.attrs().dot;
  const hlo::Shape& lhs = dot.operand(0)->shape();
  const hlo::Shape& rhs = dot.operand(1)->shape();
  const int nb = static_cast<int>(dn.lhs_batch.size());
  if (dn.lhs_contracting.size() != 1) return std::nullopt;
  GemmShape g;
  for (int i = 0; i < nb; ++i) {
    if (dn.lhs_batch[i] != i || dn.rhs_batch[i] != i) return std::nullopt;
    g.batch *= lhs.dim(i);
  }
  const int64_t lc = dn.lhs_contracting[0], rc = dn.rhs_contracting[0];
  g.k = lhs.dim(static_cast<int>(lc));
  if (lhs.rank() == nb + 1) {
    if (lc != nb) return std::nullopt;
  } else if (lhs.rank() == nb + 2) {
    g.transpose_lhs = lc == nb;
    g.m = lhs.dim(g.transpose_lhs ? nb + 1 : nb);
  } else {
    return std::nullopt;
  }
  if (rhs.rank() == nb + 1) {
    if (rc != nb) return std::nullopt;
  } else if (rhs.rank() == nb + 2) {
    g.transpose_rhs = rc == nb + 1;
    g.n = rhs.dim(g.transpose_rhs ? nb : nb + 1);
  } else {
    return std::nullopt;
  }
  return g;
}

// Kernels that only index their operands like their output run as one flat loop (the fastest
// form for the vectoriser, whatever the inner dimension's size).
bool IsLinearOp(const Instruction& inst) {
  const Opcode op = inst.opcode();
  if (hlo::IsElementwise(op) || op == Opcode::kParameter || op == Opcode::kReshape) return true;
  if (op == Opcode::kConstant) return inst.shape().num_elements() == 1;
  if (op == Opcode::kBroadcast) return inst.operand(0)->shape().num_elements() == 1;
  return false;
}

bool IsLinearKernel(const Instruction& inst) {
  if (inst.opcode() != Opcode::kFusion) return IsLinearOp(inst);
  for (const Instruction* i : inst.called_computations()[0]->instructions()) {
    if (!IsLinearOp(*i)) return false;
  }
  return true;
}

struct KernelInfo {
  llvm::Function* function = nullptr;
  int64_t extent = 1;
  bool parallel = false;
  int64_t cost_per_unit = 1;
};

class CpuIrEmitter {
 public:
  CpuIrEmitter(const BufferPlan& plan, const IrEmitterOptions& options, llvm::Module* module)
      : plan_(plan), options_(options), module_(module), b_(module->getContext()),
        elemental_(&b_, module) {}

  absl::StatusOr<KernelInfo> EmitKernel(const Instruction& inst, int id);
  void EmitEntry(const std::vector<KernelInfo>& kernels);

 private:
  llvm::Function* NewFunction(const std::string& name, llvm::FunctionType* type, bool internal);
  absl::Status EmitElementalBody(const Instruction& inst, const std::vector<ElementGenerator>& ops,
                                 const IrArray& out, llvm::Value* begin, llvm::Value* end,
                                 KernelInfo& info);
  void EmitGemmBody(const Instruction& inst, const GemmShape& g, llvm::Value* out,
                    llvm::Value* lhs, llvm::Value* rhs, llvm::Value* ctx);

  const BufferPlan& plan_;
  const IrEmitterOptions& options_;
  llvm::Module* module_;
  llvm::IRBuilder<> b_;
  llvm_ir::ElementalEmitter elemental_;
};

llvm::Function* CpuIrEmitter::NewFunction(const std::string& name, llvm::FunctionType* type,
                                          bool internal) {
  llvm::Function* fn = llvm::Function::Create(
      type, internal ? llvm::GlobalValue::InternalLinkage : llvm::GlobalValue::ExternalLinkage,
      name, module_);
  fn->setDoesNotThrow();
  llvm_ir::SetHostFunctionAttributes(*fn);
  return fn;
}

absl::StatusOr<KernelInfo> CpuIrEmitter::EmitKernel(const Instruction& inst, int id) {
  llvm::LLVMContext& ctx = module_->getContext();
  llvm::Type* ptr = b_.getPtrTy();
  // Distinct buffer slots read by the kernel, in operand order; constants read globals.
  std::vector<int> slots;
  std::vector<int> operand_arg(static_cast<size_t>(inst.operand_count()), -1);
  std::vector<ValueLocation> operand_loc;
  for (int i = 0; i < inst.operand_count(); ++i) {
    TFJIT_ASSIGN_OR_RETURN(ValueLocation loc, plan_.LocationOf(inst.operand(i)));
    operand_loc.push_back(loc);
    if (loc.slot < 0) continue;
    auto it = std::find(slots.begin(), slots.end(), loc.slot);
    operand_arg[static_cast<size_t>(i)] = static_cast<int>(it - slots.begin()) + 1;
    if (it == slots.end()) slots.push_back(loc.slot);
  }
  TFJIT_ASSIGN_OR_RETURN(ValueLocation out_loc, plan_.LocationOf(&inst));

  // Body: void(ptr noalias out, ptr noalias in..., ptr ctx, i64 begin, i64 end).
  std::vector<llvm::Type*> params(slots.size() + 2, ptr);
  params.push_back(b_.getInt64Ty());
  params.push_back(b_.getInt64Ty());
  const std::string name = "kernel." + std::to_string(id);
  llvm::Function* body = NewFunction(
      name + ".body", llvm::FunctionType::get(b_.getVoidTy(), params, false), true);
  for (size_t i = 0; i <= slots.size(); ++i) body->addParamAttr(static_cast<unsigned>(i),
                                                                llvm::Attribute::NoAlias);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", body));
  llvm::Value* run_ctx = body->getArg(static_cast<unsigned>(slots.size() + 1));
  llvm::Value* begin = body->getArg(static_cast<unsigned>(slots.size() + 2));
  llvm::Value* end = body->getArg(static_cast<unsigned>(slots.size() + 3));

  std::vector<llvm::Value*> operand_ptrs;
  std::vector<ElementGenerator> ops;
  for (int i = 0; i < inst.operand_count(); ++i) {
    const size_t ui = static_cast<size_t>(i);
    llvm::Value* base = operand_arg[ui] >= 0
                            ? static_cast<llvm::Value*>(body->getArg(static_cast<unsigned>(operand_arg[ui])))
                            : elemental_.ConstantGlobal(*operand_loc[ui].constant);
    operand_ptrs.push_back(base);
    IrArray array(base, inst.operand(i)->shape());
    ops.push_back([this, array](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
      return array.EmitRead(index, b_);
    });
  }
  KernelInfo info;
  std::optional<GemmShape> gemm =
      inst.opcode() == Opcode::kDot ? MatchGemm(inst) : std::nullopt;
  if (gemm.has_value()) {
    EmitGemmBody(inst, *gemm, body->getArg(0), operand_ptrs[0], operand_ptrs[1], run_ctx);
  } else {
    IrArray out(body->getArg(0), inst.shape());
    TFJIT_RETURN_IF_ERROR(EmitElementalBody(inst, ops, out, begin, end, info));
  }
  b_.CreateRetVoid();

  // Wrapper with the kernel ABI: loads the buffer pointers and calls the body.
  llvm::Function* wrapper = NewFunction(
      name, llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, b_.getInt64Ty(), b_.getInt64Ty()},
                                    false),
      false);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", wrapper));
  std::vector<llvm::Value*> args;
  auto load_slot = [&](int slot) {
    llvm::Value* p = b_.CreateConstInBoundsGEP1_64(ptr, wrapper->getArg(0),
                                                   static_cast<uint64_t>(slot));
    return b_.CreateAlignedLoad(ptr, p, llvm::Align(8));
  };
  args.push_back(load_slot(out_loc.slot));
  for (int slot : slots) args.push_back(load_slot(slot));
  args.push_back(wrapper->getArg(1));
  args.push_back(wrapper->getArg(2));
  args.push_back(wrapper->getArg(3));
  b_.CreateCall(body, args);
  b_.CreateRetVoid();
  info.function = wrapper;
  return info;
}

absl::Status CpuIrEmitter::EmitElementalBody(const Instruction& inst,
                                             const std::vector<ElementGenerator>& ops,
                                             const IrArray& out, llvm::Value* begin,
                                             llvm::Value* end, KernelInfo& info) {
  TFJIT_ASSIGN_OR_RETURN(ElementGenerator root, elemental_.MakeGenerator(inst, ops));
  const llvm_ir::LoopShape loop_shape =
      IsLinearKernel(inst) ? llvm_ir::LoopShape::kFlat : llvm_ir::LoopShape::kNested;
  const std::vector<int64_t>& dims = inst.shape().dims();
  info.extent = llvm_ir::PartitionExtent(dims, loop_shape);
  // Work: every output element, plus every element a reduction or fusion reads.
  int64_t work = inst.shape().num_elements();
  for (const Instruction* op : inst.operands()) work = std::max(work, op->shape().num_elements());
  info.parallel = options_.parallel && work >= options_.parallel_min_elements && info.extent > 1;
  info.cost_per_unit = std::max<int64_t>(1, work / std::max<int64_t>(1, info.extent)) * 4;
  return llvm_ir::EmitShapeLoop(b_, dims, loop_shape, begin, end,
                                [&](const IrIndex& index) -> absl::Status {
                                  TFJIT_ASSIGN_OR_RETURN(llvm::Value * v, root(index));
                                  out.EmitWrite(index, v, b_);
                                  return absl::OkStatus();
                                });
}

void CpuIrEmitter::EmitGemmBody(const Instruction& inst, const GemmShape& g, llvm::Value* out,
                                llvm::Value* lhs, llvm::Value* rhs, llvm::Value* ctx) {
  const bool f32 = inst.shape().element_type() == DType::kFloat32;
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::FunctionCallee fn = module_->getOrInsertFunction(
      f32 ? "tfjit_cpu_matmul_f32" : "tfjit_cpu_matmul_f64",
      llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, ptr, ptr, i64, i64, i64, i64, i32, i32},
                              false));
  b_.CreateCall(fn, {ctx, out, lhs, rhs, b_.getInt64(g.batch), b_.getInt64(g.m),
                     b_.getInt64(g.n), b_.getInt64(g.k), b_.getInt32(g.transpose_lhs ? 1 : 0),
                     b_.getInt32(g.transpose_rhs ? 1 : 0)});
}

void CpuIrEmitter::EmitEntry(const std::vector<KernelInfo>& kernels) {
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Function* entry = NewFunction(
      kEntryFunctionName, llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr}, false), false);
  b_.SetInsertPoint(llvm::BasicBlock::Create(module_->getContext(), "entry", entry));
  llvm::FunctionCallee parallel_for = module_->getOrInsertFunction(
      "tfjit_cpu_parallel_for",
      llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, ptr, i64, i64}, false));
  llvm::Value* buffers = entry->getArg(0);
  llvm::Value* ctx = entry->getArg(1);
  for (const KernelInfo& k : kernels) {
    if (k.parallel) {
      b_.CreateCall(parallel_for, {ctx, k.function, buffers, b_.getInt64(k.extent),
                                   b_.getInt64(k.cost_per_unit)});
    } else {
      b_.CreateCall(k.function, {buffers, ctx, b_.getInt64(0), b_.getInt64(k.extent)});
    }
  }
  b_.CreateRetVoid();
}

}  // namespace

absl::Status CheckCpuSupport(const hlo::Module& module) {
  if (module.entry() == nullptr) return InvalidArgument("module '%s' has no entry", module.name());
  return CheckComputation(*module.entry(), /*is_entry=*/true);
}

absl::StatusOr<EmittedModule> EmitCpuModule(const hlo::Module& module, const BufferPlan& plan,
                                            const IrEmitterOptions& options) {
  EmittedModule result;
  result.context = std::make_unique<llvm::LLVMContext>();
  result.module = std::make_unique<llvm::Module>(module.name(), *result.context);
  CpuIrEmitter emitter(plan, options, result.module.get());
  std::vector<KernelInfo> kernels;
  int id = 0;
  for (const Instruction* inst : plan.kernels()) {
    if (inst->shape().num_elements() == 0) continue;  // nothing to compute
    TFJIT_ASSIGN_OR_RETURN(KernelInfo info, emitter.EmitKernel(*inst, id++));
    kernels.push_back(info);
  }
  emitter.EmitEntry(kernels);
  result.num_kernels = static_cast<int>(kernels.size());
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::verifyModule(*result.module, &os)) {
    return Internal("cpu backend emitted invalid LLVM IR for module '%s': %s", module.name(),
                    os.str());
  }
  return result;
}

}  // namespace tfjit::cpu
