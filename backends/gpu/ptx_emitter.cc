// EmitPtx: one NVPTX kernel per elemental instruction of the entry computation, optimised at
// O3 by the NVPTX target machine and printed as PTX.
#include "backends/gpu/ptx_emitter.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "backends/gemm_match.h"
#include "backends/llvm/elemental_emitter.h"
#include "backends/llvm/ir_array.h"
#include "backends/llvm/loop_emitter.h"
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
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/SourceMgr.h"
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
// Every buffer a kernel gets is aligned to this (GpuProgram places slots at 256-byte
// boundaries; cuMemAlloc returns 256-byte aligned memory).
constexpr uint64_t kBufferAlignment = 256;

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
    return InvalidArgument(
        "gpu backend: compute capability '%s' is not supported; use sm_80, "
        "sm_90 or sm_90a",
        sm);
  }
  InitializeNvptx();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (target == nullptr) return Internal("LLVM has no NVPTX target: %s", error);
  // PTX 8.0: accepted for sm_80 and sm_90 by the CUDA 12+ ptxas; sm_90a needs it.
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(kTriple, sm, "+ptx80", llvm::TargetOptions(), std::nullopt,
                                  std::nullopt, llvm::CodeGenOptLevel::Aggressive));
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

// Every kernel's signature: `pointers` pointer parameters (the output, then the operands),
// then i64 n and, for a symbolic module (docs/HLO.md, "Symbolic batch size"), i64 batch: the
// run's batch size, from which the elemental emitter computes symbolic dims. Pointers are
// noalias; `aligned` also says they are kBufferAlignment-aligned.
struct KernelSignature {
  llvm::Function* fn = nullptr;
  llvm::Value* n = nullptr;
  llvm::Value* batch = nullptr;  // null for a static module
};
KernelSignature CreateKernel(const std::string& name, size_t pointers, bool symbolic, bool aligned,
                             llvm::Module& module, llvm::IRBuilder<>& b) {
  std::vector<llvm::Type*> params(pointers, b.getPtrTy());
  params.push_back(b.getInt64Ty());
  if (symbolic) params.push_back(b.getInt64Ty());
  llvm::Function* fn = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), params, false),
                                              llvm::GlobalValue::ExternalLinkage, name, &module);
  fn->setCallingConv(llvm::CallingConv::PTX_Kernel);
  for (unsigned i = 0; i < pointers; ++i) {
    fn->addParamAttr(i, llvm::Attribute::NoAlias);
    if (aligned) {
      fn->addParamAttr(
          i, llvm::Attribute::getWithAlignment(module.getContext(), llvm::Align(kBufferAlignment)));
    }
  }
  KernelSignature k;
  k.fn = fn;
  k.n = fn->getArg(static_cast<unsigned>(pointers));
  if (symbolic) k.batch = fn->getArg(static_cast<unsigned>(pointers) + 1);
  return k;
}

// The generator of a kernel's output element, from generators of its operands.
using RootFactory =
    std::function<absl::StatusOr<ElementGenerator>(const std::vector<ElementGenerator>& ops)>;

// kernel(ptr out, ptr operand..., i64 n): for (i = unroll * global thread id; i < n;
// i += unroll * threads) out[i .. i + unroll) = elements i .. of the value `root` generates
// (of shape `out_shape`); n is a multiple of `unroll`. Every buffer is 256-byte aligned
// (GpuProgram's slots), which the pointer parameters say, so the NVPTX backend can merge an
// unrolled thread's adjacent loads and stores into vector ones.
// Writes element `index` (of the kernel's iteration space) with `value`, given the kernel's
// operand generators; null: out[index] = value.
using WriteFn =
    std::function<absl::Status(llvm::Value* out, const IrIndex& index, llvm::Value* value,
                               const std::vector<ElementGenerator>& ops)>;

// `elemental`, when not null, gets the kernel's batch size (symbolic modules).
absl::Status EmitGridStrideKernel(const std::string& name, const hlo::Shape& out_shape,
                                  const std::vector<hlo::Shape>& operand_shapes,
                                  const RootFactory& make_root, llvm::Module& module,
                                  llvm::IRBuilder<>& b, bool symbolic,
                                  llvm_ir::ElementalEmitter* elemental, int64_t unroll = 1,
                                  const WriteFn& write = nullptr) {
  llvm::LLVMContext& ctx = module.getContext();
  const KernelSignature sig =
      CreateKernel(name, operand_shapes.size() + 1, symbolic, /*aligned=*/true, module, b);
  llvm::Function* fn = sig.fn;
  if (elemental != nullptr) elemental->set_batch(sig.batch);
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx, "loop", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "exit", fn);
  b.SetInsertPoint(entry);
  llvm::Value* n = sig.n;
  llvm::Value* block = ReadSreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  llvm::Value* threads = ReadSreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  llvm::Value* first =
      b.CreateMul(b.CreateAdd(b.CreateMul(block, threads),
                              ReadSreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x)),
                  b.getInt64(unroll));
  llvm::Value* stride =
      b.CreateMul(b.CreateMul(ReadSreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), threads),
                  b.getInt64(unroll));
  b.CreateCondBr(b.CreateICmpULT(first, n), loop, exit);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, "i");
  i->addIncoming(first, entry);
  std::vector<ElementGenerator> ops;
  for (size_t k = 0; k < operand_shapes.size(); ++k) {
    IrArray array(fn->getArg(static_cast<unsigned>(k + 1)), operand_shapes[k]);
    ops.push_back([&b, array](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
      return array.EmitRead(index, b);
    });
  }
  TFJIT_ASSIGN_OR_RETURN(ElementGenerator root, make_root(ops));
  for (int64_t u = 0; u < unroll; ++u) {
    const IrIndex index = IrIndex::FromLinear(b.CreateAdd(i, b.getInt64(u)), out_shape.dims(), b);
    TFJIT_ASSIGN_OR_RETURN(llvm::Value * v, root(index));
    if (write) {
      TFJIT_RETURN_IF_ERROR(write(fn->getArg(0), index, v, ops));
    } else {
      IrArray(fn->getArg(0), out_shape).EmitWrite(index, v, b);
    }
  }
  llvm::Value* next = b.CreateAdd(i, stride);
  i->addIncoming(next, b.GetInsertBlock());
  b.CreateCondBr(b.CreateICmpULT(next, n), loop, exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  return absl::OkStatus();
}

std::vector<hlo::Shape> OperandShapes(const Instruction& inst) {
  std::vector<hlo::Shape> shapes;
  for (const Instruction* op : inst.operands()) shapes.push_back(op->shape());
  return shapes;
}

// Elements per thread of `inst`'s kernel: 4 for large elementwise ops and loop fusions whose
// size is a multiple of 4 (their loads and stores become 16-byte vector ones), else 1. For a
// symbolic dim 0 of extent k * b + c, the size is a multiple of 4 at every batch size only
// when both of its parts are.
int64_t ElementsPerThread(const Instruction& inst) {
  const bool elementwise =
      hlo::IsElementwise(inst.opcode()) ||
      (inst.opcode() == Opcode::kFusion && inst.attrs().fusion_kind == "kLoop");
  const hlo::Shape& shape = inst.shape();
  const int64_t n = shape.num_elements();
  bool multiple = n % 4 == 0;
  if (shape.has_symbolic_dim0()) {
    const int64_t row = shape.dim(0) == 0 ? 0 : n / shape.dim(0);
    multiple = (row * shape.symbolic_dim0().k) % 4 == 0 && (row * shape.symbolic_dim0().c) % 4 == 0;
  }
  return elementwise && n >= 4096 && multiple ? 4 : 1;
}

// One thread per output element of `inst` (or per ElementsPerThread of them).
absl::Status EmitKernel(const Instruction& inst, const std::string& name, llvm::Module& module,
                        llvm_ir::ElementalEmitter& elemental, llvm::IRBuilder<>& b, bool symbolic) {
  return EmitGridStrideKernel(
      name, inst.shape(), OperandShapes(inst),
      [&](const std::vector<ElementGenerator>& ops) { return elemental.MakeGenerator(inst, ops); },
      module, b, symbolic, &elemental, ElementsPerThread(inst));
}

// kernel(ptr out, ptr operand, ptr update, ptr start..., i64 n) for a dynamic-update-slice
// done in place: `out` is the operand's own buffer, so only the n update elements are
// written, at the clamped start indices (HLO.md).
absl::Status EmitInPlaceUpdateKernel(const Instruction& dus, const std::string& name,
                                     llvm::Module& module, llvm_ir::ElementalEmitter& elemental,
                                     llvm::IRBuilder<>& b, bool symbolic) {
  const hlo::Shape update = dus.operand(1)->shape();
  return EmitGridStrideKernel(
      name, update, OperandShapes(dus),
      [](const std::vector<ElementGenerator>& ops) -> absl::StatusOr<ElementGenerator> {
        return ops[1];
      },
      module, b, symbolic, &elemental, 1,
      [&](llvm::Value* out, const IrIndex& index, llvm::Value* value,
          const std::vector<ElementGenerator>& ops) -> absl::Status {
        TFJIT_ASSIGN_OR_RETURN(std::vector<llvm::Value*> starts,
                               elemental.EmitClampedStarts(dus, ops, 2, update));
        std::vector<llvm::Value*> coords;
        for (size_t d = 0; d < starts.size(); ++d)
          coords.push_back(b.CreateAdd(starts[d], index[d]));
        IrArray(out, dus.shape()).EmitWrite(IrIndex(coords, dus.shape().dims()), value, b);
        return absl::OkStatus();
      });
}

// The input position output coordinate `o` reads at tap `k` of one spatial dim, and whether
// it is inside the input (core/conv2d.h's TapSource, in IR); the position is clamped into
// the input when it is not, so reading it is safe.
std::pair<llvm::Value*, llvm::Value*> EmitTap(llvm::IRBuilder<>& b, llvm::Value* o, llvm::Value* k,
                                              int64_t stride, int64_t rhs_dilate, int64_t pad,
                                              int64_t lhs_dilate, int64_t in) {
  llvm::Value* pos = b.CreateSub(
      b.CreateAdd(b.CreateMul(o, b.getInt64(stride)), b.CreateMul(k, b.getInt64(rhs_dilate))),
      b.getInt64(pad));
  llvm::Value* ok = b.CreateICmpSGE(pos, b.getInt64(0));
  if (lhs_dilate != 1) {
    ok = b.CreateAnd(ok, b.CreateICmpEQ(b.CreateSRem(pos, b.getInt64(lhs_dilate)), b.getInt64(0)));
    pos = b.CreateSDiv(pos, b.getInt64(lhs_dilate));
  }
  ok = b.CreateAnd(ok, b.CreateICmpSLT(pos, b.getInt64(in)));
  return {b.CreateSelect(ok, pos, b.getInt64(0)), ok};
}

// kernel(ptr patches, ptr input, i64 n): the patch matrix of convolution `conv`
// [batch * out_h * out_w, k_h * k_w * in_c], row p holding the input taps of output pixel p in
// the filter's (k_h, k_w, in_c) order (zero for padding and lhs-dilation holes), so that the
// convolution is patches times the filter seen as [k_h * k_w * in_c, out_c].
absl::Status EmitPatchesKernel(const Instruction& conv, const std::string& name,
                               llvm::Module& module, llvm::IRBuilder<>& b, bool symbolic) {
  std::optional<conv::Conv2DParams> found = backends::MatchConv2D(conv);
  if (!found.has_value() || found->groups != 1) {
    return Internal("gpu backend: '%s' is not a one-group NHWC convolution", conv.name());
  }
  const conv::Conv2DParams p = *found;
  const DType type = conv.shape().element_type();
  const hlo::Shape patches(type, {p.batch * p.out_h * p.out_w, p.k_h * p.k_w * p.in_c});
  const hlo::Shape input = conv.operand(0)->shape();
  return EmitGridStrideKernel(
      name, patches, {input},
      [&](const std::vector<ElementGenerator>& ops) -> absl::StatusOr<ElementGenerator> {
        ElementGenerator read = ops[0];
        return ElementGenerator([&b, p, input, read,
                                 type](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
          llvm::Value* pixel = index[0];
          llvm::Value* tap = index[1];
          llvm::Value* ow = b.CreateURem(pixel, b.getInt64(p.out_w));
          llvm::Value* rest = b.CreateUDiv(pixel, b.getInt64(p.out_w));
          llvm::Value* oh = b.CreateURem(rest, b.getInt64(p.out_h));
          llvm::Value* image = b.CreateUDiv(rest, b.getInt64(p.out_h));
          llvm::Value* ci = b.CreateURem(tap, b.getInt64(p.in_c));
          llvm::Value* kk = b.CreateUDiv(tap, b.getInt64(p.in_c));
          llvm::Value* kw = b.CreateURem(kk, b.getInt64(p.k_w));
          llvm::Value* kh = b.CreateUDiv(kk, b.getInt64(p.k_w));
          auto [ih, h_ok] =
              EmitTap(b, oh, kh, p.stride_h, p.rhs_dilate_h, p.pad_top, p.lhs_dilate_h, p.in_h);
          auto [iw, w_ok] =
              EmitTap(b, ow, kw, p.stride_w, p.rhs_dilate_w, p.pad_left, p.lhs_dilate_w, p.in_w);
          TFJIT_ASSIGN_OR_RETURN(llvm::Value * v, read(IrIndex({image, ih, iw, ci}, input.dims())));
          return b.CreateSelect(b.CreateAnd(h_ok, w_ok), v,
                                llvm::Constant::getNullValue(v->getType()));
        });
      },
      module, b, symbolic, /*elemental=*/nullptr);
}

// A reduce, or an input fusion rooted at one, over the innermost dims of its (single) input,
// with at least kWarpSize elements per output: the reduce, or null. Each output then reduces
// one contiguous row, which a warp reads coalesced.
constexpr int64_t kWarpSize = 32;

const Instruction* RowReduction(const Instruction& inst) {
  const Instruction* reduce = &inst;
  if (inst.opcode() == Opcode::kFusion) {
    if (inst.called_computations().empty()) return nullptr;
    reduce = inst.called_computations()[0]->root();
  }
  if (reduce->opcode() != Opcode::kReduce || reduce->operand_count() != 2 ||
      !reduce->shape().IsArray()) {
    return nullptr;
  }
  const hlo::Shape& input = reduce->operand(0)->shape();
  std::vector<int64_t> dims = reduce->dimensions();
  std::sort(dims.begin(), dims.end());
  int64_t row = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != input.rank() - static_cast<int64_t>(dims.size()) + static_cast<int64_t>(i)) {
      return nullptr;
    }
    row *= input.dim(static_cast<int>(dims[i]));
  }
  return row >= kWarpSize ? reduce : nullptr;
}

// `v` from lane (lane + delta) of the warp (shfl.sync.down over all 32 lanes), for a value of
// any type: its bits move as 32-bit words.
llvm::Value* ShuffleDown(llvm::IRBuilder<>& b, const llvm::DataLayout& layout, llvm::Value* v,
                         unsigned delta) {
  llvm::Type* type = v->getType();
  const unsigned bits = static_cast<unsigned>(layout.getTypeSizeInBits(type));
  const unsigned words = (bits + 31) / 32;
  llvm::Value* as_int = type->isIntegerTy() ? v : b.CreateBitCast(v, b.getIntNTy(bits));
  llvm::Value* wide = b.CreateZExt(as_int, b.getIntNTy(words * 32));
  llvm::Value* result = llvm::ConstantInt::get(wide->getType(), 0);
  for (unsigned w = 0; w < words; ++w) {
    llvm::Value* word = b.CreateTrunc(b.CreateLShr(wide, w * 32), b.getInt32Ty());
    llvm::Value* moved =
        b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_down_i32, {},
                          {b.getInt32(0xffffffffu), word, b.getInt32(delta), b.getInt32(0x1f)});
    result = b.CreateOr(result, b.CreateShl(b.CreateZExt(moved, wide->getType()), w * 32));
  }
  llvm::Value* narrow = b.CreateTrunc(result, b.getIntNTy(bits));
  return type->isIntegerTy() ? narrow : b.CreateBitCast(narrow, type);
}

// Rows at least this long take a whole block of kBlockThreads threads per output.
constexpr int64_t kBlockRow = 8192;
constexpr int64_t kBlockThreads = 256;  // GpuExecutable's block size

// The threads that reduce one row of `reduce` (a RowReduction): a warp, or a block for long
// rows.
int64_t RowReductionThreads(const Instruction& reduce) {
  const int64_t row = reduce.operand(0)->shape().num_elements() /
                      std::max<int64_t>(1, reduce.shape().num_elements());
  return row >= kBlockRow ? kBlockThreads : kWarpSize;
}

// (value, valid) of every lane meet in a shuffle tree: lane 0 ends with the combination of the
// warp's valid values and whether there was any.
absl::Status EmitWarpTree(llvm::IRBuilder<>& b, const llvm::DataLayout& layout,
                          llvm_ir::ElementalEmitter& elemental, const hlo::Computation& reducer,
                          llvm::Value*& total, llvm::Value*& valid) {
  for (unsigned delta = kWarpSize / 2; delta >= 1; delta /= 2) {
    llvm::Value* other = ShuffleDown(b, layout, total, delta);
    llvm::Value* other_valid = ShuffleDown(b, layout, valid, delta);
    TFJIT_ASSIGN_OR_RETURN(llvm::Value * both,
                           elemental.EmitScalarComputation(reducer, {total, other}));
    llvm::Value* use_both = b.CreateAnd(b.CreateICmpNE(valid, b.getInt32(0)),
                                        b.CreateICmpNE(other_valid, b.getInt32(0)));
    llvm::Value* only_other = b.CreateICmpEQ(valid, b.getInt32(0));
    total = b.CreateSelect(use_both, both, b.CreateSelect(only_other, other, total));
    valid = b.CreateOr(valid, other_valid);
  }
  return absl::OkStatus();
}

// kernel(ptr out, ptr operand..., i64 n) for a row reduction (RowReduction): a group of G
// threads per output element (a warp, or a block of 256 for rows of kBlockRow elements or
// more), grid-stride over the n outputs. Each thread combines the row's elements t, t + G,
// ...; a warp's partial results meet in a shuffle tree; with a block, each warp's result goes
// through shared memory to warp 0, which combines them the same way. Thread 0 of the group
// writes reducer(init, total), or init for an empty row. The combiner is associative and
// commutative (HLO.md), so only the rounding differs from a sequential reduction.
absl::Status EmitRowReductionKernel(const Instruction& inst, const Instruction& reduce,
                                    const std::string& name, llvm::Module& module,
                                    llvm_ir::ElementalEmitter& elemental, llvm::IRBuilder<>& b,
                                    bool symbolic) {
  const int64_t group = RowReductionThreads(reduce);
  llvm::LLVMContext& ctx = module.getContext();
  const KernelSignature sig = CreateKernel(name, static_cast<size_t>(inst.operand_count()) + 1,
                                           symbolic, /*aligned=*/false, module, b);
  llvm::Function* fn = sig.fn;
  elemental.set_batch(sig.batch);
  auto block = [&](const char* label) { return llvm::BasicBlock::Create(ctx, label, fn); };
  llvm::BasicBlock* entry = block("entry");
  llvm::BasicBlock* outer = block("output");
  llvm::BasicBlock* inner = block("row");
  llvm::BasicBlock* reduced = block("reduced");
  llvm::BasicBlock* write = block("write");
  llvm::BasicBlock* next_output = block("next_output");
  llvm::BasicBlock* exit = block("exit");
  b.SetInsertPoint(entry);
  llvm::Value* n = sig.n;
  llvm::Value* threads = ReadSreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  llvm::Value* thread =
      b.CreateAdd(b.CreateMul(ReadSreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), threads),
                  ReadSreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
  llvm::Value* lane = b.CreateURem(thread, b.getInt64(group));  // within the group
  llvm::Value* first = b.CreateUDiv(thread, b.getInt64(group));
  llvm::Value* warps =
      b.CreateUDiv(b.CreateMul(ReadSreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), threads),
                   b.getInt64(group));

  // Generators of the reduce's input and init, from the kernel's operands.
  std::vector<ElementGenerator> ops;
  for (int k = 0; k < inst.operand_count(); ++k) {
    IrArray array(fn->getArg(static_cast<unsigned>(k + 1)), inst.operand(k)->shape());
    ops.push_back([&b, array](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
      return array.EmitRead(index, b);
    });
  }
  ElementGenerator input, init;
  if (inst.opcode() == Opcode::kFusion) {
    const hlo::Computation& fused = *inst.called_computations()[0];
    TFJIT_ASSIGN_OR_RETURN(
        input, elemental.MakeComputationGenerator(fused, ops, nullptr, reduce.operand(0)));
    TFJIT_ASSIGN_OR_RETURN(
        init, elemental.MakeComputationGenerator(fused, ops, nullptr, reduce.operand(1)));
  } else {
    input = ops[0];
    init = ops[1];
  }
  const hlo::Shape& in_shape = reduce.operand(0)->shape();
  const int64_t row = in_shape.num_elements() / std::max<int64_t>(1, inst.shape().num_elements());
  b.CreateCondBr(b.CreateICmpULT(first, n), outer, exit);

  // for (o = group; o < n; o += groups): uniform across the group.
  b.SetInsertPoint(outer);
  llvm::PHINode* o = b.CreatePHI(b.getInt64Ty(), 2, "o");
  o->addIncoming(first, entry);
  TFJIT_ASSIGN_OR_RETURN(llvm::Value * init_value, init(IrIndex()));
  llvm::Value* has_rows = b.CreateICmpULT(lane, b.getInt64(row));
  llvm::BasicBlock* outer_end = b.GetInsertBlock();
  b.CreateCondBr(has_rows, inner, reduced);

  // for (i = lane; i < row; i += G) acc = i == lane ? x : f(acc, x).
  b.SetInsertPoint(inner);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, "i");
  llvm::PHINode* acc = b.CreatePHI(init_value->getType(), 2, "acc");
  i->addIncoming(lane, outer_end);
  acc->addIncoming(init_value, outer_end);
  llvm::Value* linear = b.CreateAdd(b.CreateMul(o, b.getInt64(row)), i);
  TFJIT_ASSIGN_OR_RETURN(llvm::Value * x, input(IrIndex::FromLinear(linear, in_shape.dims(), b)));
  TFJIT_ASSIGN_OR_RETURN(llvm::Value * combined,
                         elemental.EmitScalarComputation(*reduce.to_apply(), {acc, x}));
  llvm::Value* value = b.CreateSelect(b.CreateICmpEQ(i, lane), x, combined);
  llvm::Value* next_i = b.CreateAdd(i, b.getInt64(group));
  i->addIncoming(next_i, b.GetInsertBlock());
  acc->addIncoming(value, b.GetInsertBlock());
  llvm::BasicBlock* inner_end = b.GetInsertBlock();
  b.CreateCondBr(b.CreateICmpULT(next_i, b.getInt64(row)), inner, reduced);

  // Every lane is here: the tree over (value, valid) pairs.
  b.SetInsertPoint(reduced);
  llvm::PHINode* part = b.CreatePHI(init_value->getType(), 2, "part");
  part->addIncoming(init_value, outer_end);
  part->addIncoming(value, inner_end);
  llvm::Value* valid = b.CreateZExt(has_rows, b.getInt32Ty());
  llvm::Value* total = part;
  const llvm::DataLayout& layout = module.getDataLayout();
  TFJIT_RETURN_IF_ERROR(EmitWarpTree(b, layout, elemental, *reduce.to_apply(), total, valid));
  if (group > kWarpSize) {
    // Lane 0 of each warp leaves its result in shared memory; after a barrier warp 0 combines
    // them; a second barrier keeps the next output's writes after these reads. Every thread
    // reaches both barriers.
    const uint64_t warps_per_group = static_cast<uint64_t>(group / kWarpSize);
    auto shared = [&](llvm::Type* type, const std::string& what) {
      llvm::Type* array = llvm::ArrayType::get(type, warps_per_group);
      return new llvm::GlobalVariable(module, array, false, llvm::GlobalValue::InternalLinkage,
                                      llvm::UndefValue::get(array), name + what, nullptr,
                                      llvm::GlobalValue::NotThreadLocal, 3);
    };
    llvm::GlobalVariable* totals = shared(total->getType(), "_totals");
    llvm::GlobalVariable* valids = shared(b.getInt32Ty(), "_valids");
    llvm::Value* warp = b.CreateUDiv(lane, b.getInt64(kWarpSize));
    llvm::Value* in_warp = b.CreateURem(lane, b.getInt64(kWarpSize));
    auto element = [&](llvm::GlobalVariable* g, llvm::Value* index) {
      return b.CreateInBoundsGEP(g->getValueType(), g, {b.getInt64(0), index});
    };
    llvm::BasicBlock* store = block("store_partial");
    llvm::BasicBlock* stored = block("stored");
    b.CreateCondBr(b.CreateICmpEQ(in_warp, b.getInt64(0)), store, stored);
    b.SetInsertPoint(store);
    b.CreateStore(total, element(totals, warp));
    b.CreateStore(valid, element(valids, warp));
    b.CreateBr(stored);
    b.SetInsertPoint(stored);
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
    llvm::Value* slot = b.CreateSelect(b.CreateICmpULT(in_warp, b.getInt64(warps_per_group)),
                                       in_warp, b.getInt64(0));
    llvm::Value* mine = b.CreateAnd(b.CreateICmpULT(in_warp, b.getInt64(warps_per_group)),
                                    b.CreateICmpEQ(warp, b.getInt64(0)));
    total = b.CreateLoad(total->getType(), element(totals, slot));
    valid =
        b.CreateSelect(mine, b.CreateLoad(b.getInt32Ty(), element(valids, slot)), b.getInt32(0));
    TFJIT_RETURN_IF_ERROR(EmitWarpTree(b, layout, elemental, *reduce.to_apply(), total, valid));
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
  }
  TFJIT_ASSIGN_OR_RETURN(llvm::Value * with_init,
                         elemental.EmitScalarComputation(*reduce.to_apply(), {init_value, total}));
  llvm::Value* result = b.CreateSelect(b.CreateICmpNE(valid, b.getInt32(0)), with_init, init_value);
  b.CreateCondBr(b.CreateICmpEQ(lane, b.getInt64(0)), write, next_output);

  b.SetInsertPoint(write);
  IrArray(fn->getArg(0), inst.shape())
      .EmitWrite(IrIndex::FromLinear(o, inst.shape().dims(), b), result, b);
  b.CreateBr(next_output);

  b.SetInsertPoint(next_output);
  llvm::Value* next_o = b.CreateAdd(o, warps);
  o->addIncoming(next_o, next_output);
  b.CreateCondBr(b.CreateICmpULT(next_o, n), outer, exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  return absl::OkStatus();
}

// kernel(ptr out, ptr operand, ptr indices, ptr updates, i64 n) for a scatter, run as one
// block: its threads copy the operand's n elements into out, meet at a barrier, and thread 0
// applies the updates in order (updates may hit one element several times, and HLO.md's
// scatter combines them in update order, as the CPU and the evaluator do).
absl::Status EmitScatterKernel(const Instruction& inst, const std::string& name,
                               llvm::Module& module, llvm_ir::ElementalEmitter& elemental,
                               llvm::IRBuilder<>& b, bool symbolic) {
  llvm::LLVMContext& ctx = module.getContext();
  const KernelSignature sig = CreateKernel(name, 4, symbolic, /*aligned=*/false, module, b);
  llvm::Function* fn = sig.fn;
  elemental.set_batch(sig.batch);
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  llvm::BasicBlock* copy = llvm::BasicBlock::Create(ctx, "copy", fn);
  llvm::BasicBlock* copied = llvm::BasicBlock::Create(ctx, "copied", fn);
  llvm::BasicBlock* update = llvm::BasicBlock::Create(ctx, "update", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "exit", fn);
  b.SetInsertPoint(entry);
  llvm::Value* n = sig.n;
  llvm::Value* tid = ReadSreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  llvm::Value* threads = ReadSreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  b.CreateCondBr(b.CreateICmpULT(tid, n), copy, copied);
  b.SetInsertPoint(copy);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, "i");
  i->addIncoming(tid, entry);
  const hlo::Shape& shape = inst.shape();
  IrArray out(fn->getArg(0), shape);
  IrArray operand(fn->getArg(1), inst.operand(0)->shape());
  const IrIndex index = IrIndex::FromLinear(i, shape.dims(), b);
  out.EmitWrite(index, operand.EmitRead(index, b), b);
  llvm::Value* next = b.CreateAdd(i, threads);
  i->addIncoming(next, b.GetInsertBlock());
  b.CreateCondBr(b.CreateICmpULT(next, n), copy, copied);
  b.SetInsertPoint(copied);
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
  b.CreateCondBr(b.CreateICmpEQ(tid, b.getInt64(0)), update, exit);
  b.SetInsertPoint(update);
  std::vector<ElementGenerator> ops;
  for (int k = 0; k < 3; ++k) {
    IrArray array(fn->getArg(static_cast<unsigned>(k + 1)), inst.operand(k)->shape());
    ops.push_back([&b, array](const IrIndex& at) -> absl::StatusOr<llvm::Value*> {
      return array.EmitRead(at, b);
    });
  }
  const hlo::Shape& updates = inst.operand(2)->shape();
  if (updates.num_elements() > 0) {
    TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> window,
                           llvm_ir::ElementalEmitter::ScatterWindow(inst));
    TFJIT_RETURN_IF_ERROR(llvm_ir::EmitShapeLoop(
        b, updates.dims(), llvm_ir::LoopShape::kNested, b.getInt64(0),
        b.getInt64(llvm_ir::PartitionExtent(updates.dims(), llvm_ir::LoopShape::kNested)),
        [&](const IrIndex& ui) {
          return elemental.EmitScatterUpdate(inst, ops, out, window, ui);
        }));
  }
  b.CreateBr(exit);
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
    return Unimplemented(
        "gpu backend: '%s' in module '%s' needs CUDA's libdevice, and '%s' does "
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
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<PtxModule> EmitPtx(const hlo::Module& module, const std::string& sm) {
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr) return InvalidArgument("module '%s' has no entry", module.name());
  std::vector<KernelSpec> kernels;
  for (const Instruction* inst : entry->MakePostOrder()) {
    if (!IsPlumbing(*inst)) kernels.push_back(KernelSpec{inst});
  }
  return EmitPtxKernels(module, kernels, sm);
}

absl::StatusOr<PtxModule> EmitPtxKernels(const hlo::Module& module,
                                         const std::vector<KernelSpec>& kernels,
                                         const std::string& sm) {
  TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, CreateNvptxTargetMachine(sm));
  llvm::LLVMContext ctx;
  llvm::Module llvm_module(module.name(), ctx);
  llvm_module.setTargetTriple(kTriple);
  llvm_module.setDataLayout(tm->createDataLayout());
  llvm::IRBuilder<> b(ctx);
  llvm_ir::ElementalEmitter elemental(&b, &llvm_module);
  const bool symbolic = module.batch_representative() > 0;
  PtxModule out;
  for (const KernelSpec& spec : kernels) {
    const Instruction* inst = spec.inst;
    if (!spec.patches && !IsElementalKernel(*inst) && inst->opcode() != Opcode::kScatter) {
      return Unimplemented(
          "gpu backend: opcode '%s' is not compiled to PTX yet (instruction "
          "'%s')",
          std::string(hlo::OpcodeName(inst->opcode())), inst->name());
    }
    PtxKernel k;
    k.name = absl::StrCat("kernel_", out.kernels.size());
    k.instruction = inst->name();
    k.num_operands = inst->operand_count();
    if (spec.patches) {
      TFJIT_RETURN_IF_ERROR(EmitPatchesKernel(*inst, k.name, llvm_module, b, symbolic));
    } else if (spec.in_place) {
      TFJIT_RETURN_IF_ERROR(
          EmitInPlaceUpdateKernel(*inst, k.name, llvm_module, elemental, b, symbolic));
    } else if (inst->opcode() == Opcode::kScatter) {
      k.one_block = true;
      TFJIT_RETURN_IF_ERROR(EmitScatterKernel(*inst, k.name, llvm_module, elemental, b, symbolic));
    } else if (const Instruction* reduce = RowReduction(*inst)) {
      k.threads_per_element = static_cast<int>(RowReductionThreads(*reduce));
      TFJIT_RETURN_IF_ERROR(
          EmitRowReductionKernel(*inst, *reduce, k.name, llvm_module, elemental, b, symbolic));
    } else {
      k.elements_per_thread = static_cast<int>(ElementsPerThread(*inst));
      TFJIT_RETURN_IF_ERROR(EmitKernel(*inst, k.name, llvm_module, elemental, b, symbolic));
    }
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
