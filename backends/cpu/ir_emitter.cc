// CPU IR emission. Kernels: each kernel is an internal body function with one noalias pointer
// per distinct buffer (so the vectoriser needs no runtime alias checks) wrapped by a function
// of the fixed kernel ABI that loads those pointers from the buffer table. Sequencing: the
// entry function runs a computation's kernels in post order; while and conditional become
// LLVM loops and switches in the entry function around their computations' kernels, each
// called computation planned (frame_plan.h) and emitted once per call site. Library and custom
// calls are ir_emitter_calls.cc; the class is ir_emitter_internal.h.
#include "backends/cpu/ir_emitter.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/frame_plan.h"
#include "backends/cpu/ir_emitter_internal.h"
#include "backends/cpu/kernel_match.h"
#include "backends/cpu/runtime_abi.h"
#include "backends/llvm/elemental_emitter.h"
#include "backends/llvm/loop_emitter.h"
#include "backends/llvm/target.h"
#include "core/dtype.h"
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

// How many leading dims a nested kernel's partitioned loop covers: enough for about
// kMinPartitions units of parallel work, never the innermost dim (the vectorised loop).
constexpr int64_t kMinPartitions = 256;
size_t OuterDims(const std::vector<int64_t>& dims) {
  if (dims.size() < 2) return 1;
  size_t k = 1;
  int64_t extent = dims[0];
  while (k + 1 < dims.size() && extent < kMinPartitions) extent *= dims[k++];
  return k;
}

// Kernel operands that are array constants of at most this size are globals of the module
// (LLVM sees their values: index vectors fold); larger ones (weights, biases) are read
// through the buffer table, so kernels alike but for their constants have identical bodies,
// which are compiled once (llvm_ir::MergeIdenticalFunctions).
constexpr int64_t kMaxInlineConstantBytes = 32;

// The most elements a kernel of `inst` writes or reads through one operand: its work for
// the parallel split and the small-kernel rule (a fusion's operands count whole).
int64_t ElementsTouched(const Instruction& inst) {
  int64_t n = inst.shape().num_elements();
  for (const Instruction* op : inst.operands()) n = std::max(n, op->shape().num_elements());
  return n;
}

// Compiled code asks whether the run must stop (tfjit_cpu_checkpoint) after a kernel outside
// loops once the kernels since the last ask touched this many elements, and after every
// library or custom call: a stop waits for at most about this much work (tens of
// microseconds) beyond one kernel, and models of many small kernels do not pay a clock read
// per kernel (asking after every one cost facemesh-attention 1.7% at one thread).
constexpr int64_t kCheckpointElements = int64_t{1} << 16;

}  // namespace

llvm::Function* CpuIrEmitter::NewFunction(const std::string& name, llvm::FunctionType* type,
                                          bool internal) {
  llvm::Function* fn = llvm::Function::Create(
      type, internal ? llvm::GlobalValue::InternalLinkage : llvm::GlobalValue::ExternalLinkage,
      name, module_);
  fn->setDoesNotThrow();
  llvm_ir::SetHostFunctionAttributes(*fn);
  return fn;
}

llvm::Value* CpuIrEmitter::LoadBatch(llvm::IRBuilder<>& b, llvm::Value* ctx) {
  llvm::Value* field =
      b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), ctx, offsetof(RunContext, batch));
  return b.CreateAlignedLoad(b.getInt64Ty(), field, llvm::Align(8), "batch");
}

llvm::Value* CpuIrEmitter::ScaledByDim0(const hlo::Shape& shape, int64_t value) {
  const int64_t rows = shape.dim(0);
  if (!shape.has_symbolic_dim0() || rows == 0 || value % rows != 0) return b_.getInt64(value);
  return b_.CreateMul(elemental_.Dim(shape, 0), b_.getInt64(value / rows), "", true, true);
}

llvm::Value* CpuIrEmitter::ExtentValue(const hlo::SymbolicExtent& e, int64_t value,
                                       llvm::Value* batch) {
  if (e.k == 0 || batch == nullptr) return b_.getInt64(value);
  return b_.CreateAdd(b_.CreateMul(batch, b_.getInt64(e.k), "", true, true), b_.getInt64(e.c), "",
                      false, true);
}

// `in_place`: a dynamic-update-slice or scatter whose output buffer is its operand's; operand
// 0 is then not passed (it is the output) and only the updated elements are written.
ValueLocation CpuIrEmitter::Resolve(const ValueLocation& loc) {
  if (loc.constant == nullptr || loc.constant->shape().byte_size() <= kMaxInlineConstantBytes) {
    return loc;
  }
  return ValueLocation{plan_.AddConstant(loc.constant), nullptr};
}

absl::StatusOr<KernelInfo> CpuIrEmitter::EmitKernel(const Instruction& inst,
                                                    const std::vector<ValueLocation>& unresolved,
                                                    const std::vector<ValueLocation>& out_locs,
                                                    bool in_place) {
  const size_t num_outs = out_locs.size();
  std::vector<ValueLocation> operand_loc;
  for (const ValueLocation& loc : unresolved) operand_loc.push_back(Resolve(loc));
  llvm::IRBuilderBase::InsertPointGuard guard(b_);
  llvm::LLVMContext& ctx = module_->getContext();
  llvm::Type* ptr = b_.getPtrTy();
  // Distinct buffer slots read by the kernel, in operand order; constants read globals.
  std::vector<int> slots;
  std::vector<int> operand_arg(operand_loc.size(), -1);
  for (size_t i = 0; i < operand_loc.size(); ++i) {
    if (operand_loc[i].id < 0 || (in_place && i == 0)) continue;
    auto it = std::find(slots.begin(), slots.end(), operand_loc[i].id);
    operand_arg[i] = static_cast<int>(it - slots.begin() + num_outs);
    if (it == slots.end()) slots.push_back(operand_loc[i].id);
  }

  // A dot's or convolution's constant weights packed once: one more slot the kernel reads.
  int packed_arg = -1;
  if (inst.opcode() == Opcode::kDot || inst.opcode() == Opcode::kConvolution) {
    const int packed_slot = PackedRhsSlot(inst, unresolved[1]);
    if (packed_slot >= 0) {
      packed_arg = static_cast<int>(num_outs + slots.size());
      slots.push_back(packed_slot);
    }
  }

  // Body: void(ptr noalias out..., ptr noalias in..., ptr ctx, i64 begin, i64 end).
  std::vector<llvm::Type*> params(num_outs + slots.size() + 1, ptr);
  params.push_back(b_.getInt64Ty());
  params.push_back(b_.getInt64Ty());
  const std::string name = "kernel." + std::to_string(num_kernels_++);
  kernel_names_.push_back(inst.name());
  llvm::Function* body =
      NewFunction(name + ".body", llvm::FunctionType::get(b_.getVoidTy(), params, false), true);
  for (size_t i = 0; i < num_outs + slots.size(); ++i) {
    body->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
  }
  // Bodies of identical kernels are merged into one before optimisation
  // (llvm_ir::MergeIdenticalFunctions); inlined back into each wrapper, they would be optimised
  // and compiled once per kernel again.
  body->addFnAttr(llvm::Attribute::NoInline);
  // The entry block is the hoist region (ElementalEmitter::OpenHoistRegion): loop-invariant
  // scalars go there, ahead of the loops in `start`.
  llvm::BasicBlock* hoist = llvm::BasicBlock::Create(ctx, "entry", body);
  llvm::BasicBlock* start = llvm::BasicBlock::Create(ctx, "start", body);
  elemental_.OpenHoistRegion(hoist);
  b_.SetInsertPoint(start);
  llvm::Value* run_ctx = body->getArg(static_cast<unsigned>(num_outs + slots.size()));
  // A symbolic module's kernels read the batch size once, ahead of their loops.
  llvm::Value* const outer_batch = elemental_.batch();
  if (symbolic_) {
    llvm::IRBuilder<> at_hoist(hoist);
    elemental_.set_batch(LoadBatch(at_hoist, run_ctx));
  }
  llvm::Value* begin = body->getArg(static_cast<unsigned>(num_outs + slots.size() + 1));
  llvm::Value* end = body->getArg(static_cast<unsigned>(num_outs + slots.size() + 2));

  std::vector<llvm::Value*> operand_ptrs;
  std::vector<ElementGenerator> ops;
  for (size_t i = 0; i < operand_loc.size(); ++i) {
    llvm::Value* base = nullptr;
    if (operand_arg[i] >= 0) {
      base = body->getArg(static_cast<unsigned>(operand_arg[i]));
    } else if (operand_loc[i].constant != nullptr) {
      base = elemental_.ConstantGlobal(*operand_loc[i].constant);
    } else {
      base = body->getArg(0);  // the in-place operand: the output buffer itself
    }
    operand_ptrs.push_back(base);
    IrArray array(base, inst.operand(static_cast<int>(i))->shape());
    ops.push_back([this, array](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
      return array.EmitRead(index, b_);
    });
  }
  KernelInfo info;
  // One array per output buffer: the tuple's leaves for a multi-output fusion.
  std::vector<IrArray> outs;
  const std::vector<hlo::Shape> out_shapes =
      num_outs > 1 ? LeafShapes(inst.shape()) : std::vector<hlo::Shape>{inst.shape()};
  for (size_t k = 0; k < num_outs; ++k) {
    outs.emplace_back(body->getArg(static_cast<unsigned>(k)), out_shapes[k]);
  }
  const IrArray& out = outs[0];
  std::optional<GemmShape> gemm = inst.opcode() == Opcode::kDot ? MatchGemm(inst) : std::nullopt;
  std::optional<conv::Conv2DParams> conv2d =
      inst.opcode() == Opcode::kConvolution ? MatchConv2D(inst) : std::nullopt;
  llvm::Value* null = llvm::ConstantPointerNull::get(b_.getPtrTy());
  if (num_outs > 1) {
    TFJIT_RETURN_IF_ERROR(EmitMultiOutputBody(inst, ops, outs, begin, end, info));
  } else if (IsOutputFusion(inst)) {
    TFJIT_RETURN_IF_ERROR(EmitEpilogueBody(inst, ops, out, begin, end, info));
  } else if (const Instruction* reduce = ColumnReduction(inst)) {
    TFJIT_RETURN_IF_ERROR(EmitColumnReductionBody(inst, {reduce}, ops, outs, info));
  } else if (gemm.has_value()) {
    llvm::Value* packed = packed_arg >= 0 ? body->getArg(static_cast<unsigned>(packed_arg)) : null;
    EmitGemmBody(inst, *gemm, body->getArg(0), operand_ptrs[0], operand_ptrs[1], packed, run_ctx,
                 null, null);
  } else if (conv2d.has_value()) {
    llvm::Value* packed = packed_arg >= 0 ? body->getArg(static_cast<unsigned>(packed_arg)) : null;
    EmitConvBody(inst, *conv2d, body->getArg(0), operand_ptrs[0], operand_ptrs[1], packed, run_ctx,
                 null, null);
  } else if (inst.opcode() == Opcode::kScatter) {
    TFJIT_RETURN_IF_ERROR(EmitScatterBody(inst, ops, out, in_place, info));
  } else if (in_place) {
    TFJIT_RETURN_IF_ERROR(EmitInPlaceUpdateBody(inst, ops, out, begin, end, info));
  } else {
    TFJIT_RETURN_IF_ERROR(EmitElementalBody(inst, ops, out, begin, end, info));
  }
  b_.CreateRetVoid();
  b_.SetInsertPoint(elemental_.CloseHoistRegion());
  b_.CreateBr(start);
  elemental_.set_batch(outer_batch);
  // A small kernel run once per call of the module is compiled for size (IrEmitterOptions).
  if (loop_depth_ == 0 && ElementsTouched(inst) <= options_.small_kernel_elements) {
    body->addFnAttr(llvm::Attribute::MinSize);
    body->addFnAttr(llvm::Attribute::OptimizeForSize);
  }

  // Wrapper with the kernel ABI: loads the buffer pointers and calls the body.
  llvm::Function* wrapper = NewFunction(
      name,
      llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, b_.getInt64Ty(), b_.getInt64Ty()}, false),
      false);
  // Kept out of tfjit_entry: LLVM would otherwise inline single-use kernels there, growing one
  // function to the whole module (slower to optimise) and hiding kernels from profiles.
  wrapper->addFnAttr(llvm::Attribute::NoInline);
  // It loads a few pointers and calls the body once: not worth LLVM's optimisation pipeline.
  wrapper->addFnAttr(llvm::Attribute::OptimizeNone);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", wrapper));
  std::vector<llvm::Value*> args;
  auto load_slot = [&](int slot) {
    plan_.Touch(slot);
    llvm::Value* p =
        b_.CreateConstInBoundsGEP1_64(ptr, wrapper->getArg(0), static_cast<uint64_t>(slot));
    return b_.CreateAlignedLoad(ptr, p, llvm::Align(8));
  };
  for (const ValueLocation& out_loc : out_locs) args.push_back(load_slot(out_loc.id));
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
  TFJIT_ASSIGN_OR_RETURN(ElementGenerator root,
                         elemental_.MakeGenerator(inst, ops, /*operands_invariant=*/true));
  const llvm_ir::LoopShape loop_shape =
      IsLinearKernel(inst) ? llvm_ir::LoopShape::kFlat : llvm_ir::LoopShape::kNested;
  const std::vector<int64_t>& dims = inst.shape().dims();
  // A nested loop partitions its outermost loop, which runs over the leading `outer` dims
  // collapsed into one: a batch-1 [1, H, W, C] kernel then splits over H (or H * W) instead
  // of running on one thread.
  const size_t outer = loop_shape == llvm_ir::LoopShape::kNested ? OuterDims(dims) : 1;
  int64_t extent = 1;
  for (size_t d = 0; d < outer && d < dims.size(); ++d) extent *= dims[d];
  std::vector<int64_t> loop_dims = dims;
  if (outer > 1) {
    loop_dims.erase(loop_dims.begin(), loop_dims.begin() + static_cast<int64_t>(outer));
    loop_dims.insert(loop_dims.begin(), extent);
  }
  info.extent = llvm_ir::PartitionExtent(loop_dims, loop_shape);
  if (inst.shape().has_symbolic_dim0() && outer == 1) {
    // The partitioned loop runs over dim 0 (nested) or every element (flat): b rows of
    // `row` elements each.
    const hlo::SymbolicExtent& e = inst.shape().symbolic_dim0();
    int64_t row = 1;
    for (size_t d = 1; d < dims.size() && loop_shape == llvm_ir::LoopShape::kFlat; ++d) {
      row *= dims[d];
    }
    info.symbolic_extent = {e.k * row, e.c * row};
  }
  // Work: every output element, plus every element a reduction or fusion reads.
  const int64_t work = ElementsTouched(inst);
  info.parallel = options_.parallel && work >= options_.parallel_min_elements && info.extent > 1;
  info.cost_per_unit = std::max<int64_t>(1, work / std::max<int64_t>(1, info.extent)) * 4;
  return EmitRootLoop(dims, loop_shape, outer, root, out, begin, end);
}

absl::Status CpuIrEmitter::EmitRootLoop(const std::vector<int64_t>& dims,
                                        llvm_ir::LoopShape loop_shape, size_t outer,
                                        const ElementGenerator& root, const IrArray& out,
                                        llvm::Value* begin, llvm::Value* end) {
  std::vector<int64_t> loop_dims = dims;
  if (outer > 1) {
    int64_t extent = 1;
    for (size_t d = 0; d < outer; ++d) extent *= dims[d];
    loop_dims.erase(loop_dims.begin(), loop_dims.begin() + static_cast<int64_t>(outer));
    loop_dims.insert(loop_dims.begin(), extent);
  }
  return llvm_ir::EmitShapeLoop(
      b_, loop_dims, loop_shape, begin, end, [&](const IrIndex& loop_index) -> absl::Status {
        IrIndex index = loop_index;
        if (outer > 1) {
          // Split the collapsed coordinate back into the leading dims (loop-invariant in the
          // inner loops, so LICM hoists the divisions); the linear index is unchanged.
          std::vector<llvm::Value*> coords(dims.size());
          llvm::Value* rest = loop_index[0];
          for (size_t d = outer; d-- > 0;) {
            if (dims[d] == 1) {
              coords[d] = b_.getInt64(0);
              continue;
            }
            coords[d] = d == 0 ? rest : b_.CreateURem(rest, b_.getInt64(dims[d]));
            if (d > 0) rest = b_.CreateUDiv(rest, b_.getInt64(dims[d]));
          }
          for (size_t d = outer; d < dims.size(); ++d) coords[d] = loop_index[d - outer + 1];
          index = IrIndex(std::move(coords), dims, loop_index.linear());
        }
        TFJIT_ASSIGN_OR_RETURN(llvm::Value * v, root(index));
        out.EmitWrite(index, v, b_);
        return absl::OkStatus();
      });
}

// The tuple root's reduces share one index space (fusion.h). Column reductions: initialise
// every output, then walk the operand space once, folding each reduce's element into its
// output. Otherwise: one loop over the output space computing every reduce per element.
absl::Status CpuIrEmitter::EmitMultiOutputBody(const Instruction& inst,
                                               const std::vector<ElementGenerator>& ops,
                                               const std::vector<IrArray>& outs, llvm::Value* begin,
                                               llvm::Value* end, KernelInfo& info) {
  const hlo::Computation& fused = *inst.called_computations()[0];
  const Instruction* root = fused.root();
  std::vector<const Instruction*> reduces(root->operands().begin(), root->operands().end());
  const Instruction& first = *reduces[0];
  const std::vector<int64_t>& out_dims = first.shape().dims();
  if (ColumnReduction(first) != nullptr) {
    return EmitColumnReductionBody(inst, reduces, ops, outs, info);
  }
  std::vector<ElementGenerator> gens;
  for (const Instruction* r : reduces) {
    TFJIT_ASSIGN_OR_RETURN(ElementGenerator g,
                           elemental_.MakeComputationGenerator(fused, ops, nullptr, r, true));
    gens.push_back(std::move(g));
  }
  info.extent = llvm_ir::PartitionExtent(out_dims, llvm_ir::LoopShape::kNested);
  if (first.shape().has_symbolic_dim0()) info.symbolic_extent = first.shape().symbolic_dim0();
  const int64_t work = first.operand(0)->shape().num_elements() * static_cast<int64_t>(gens.size());
  info.parallel = options_.parallel && work >= options_.parallel_min_elements && info.extent > 1;
  info.cost_per_unit = std::max<int64_t>(1, work / std::max<int64_t>(1, info.extent)) * 4;
  return llvm_ir::EmitShapeLoop(b_, out_dims, llvm_ir::LoopShape::kNested, begin, end,
                                [&](const IrIndex& index) -> absl::Status {
                                  for (size_t k = 0; k < gens.size(); ++k) {
                                    TFJIT_ASSIGN_OR_RETURN(llvm::Value * v, gens[k](index));
                                    outs[k].EmitWrite(index, v, b_);
                                  }
                                  return absl::OkStatus();
                                });
}

// Every output = its init, then for every operand element in memory order, out[kept index] =
// combiner(out[kept index], element): the inner loop runs along the kept innermost dim,
// contiguous in both. One thread (the output stays in cache; the operand streams once).
// Reductions may reassociate (HLO.md); the order per output is the elemental loop's anyway.
absl::Status CpuIrEmitter::EmitColumnReductionBody(const Instruction& inst,
                                                   const std::vector<const Instruction*>& reduces,
                                                   const std::vector<ElementGenerator>& ops,
                                                   const std::vector<IrArray>& outs,
                                                   KernelInfo& info) {
  // Each reduce's operand and init: the kernel's operands for a plain reduce, else the
  // reduce's operands inside the fused computation.
  std::vector<ElementGenerator> inputs, inits;
  for (const Instruction* r : reduces) {
    if (r == &inst) {
      inputs.push_back(ops[0]);
      inits.push_back(ops[1]);
      continue;
    }
    const hlo::Computation& fused = *inst.called_computations()[0];
    TFJIT_ASSIGN_OR_RETURN(ElementGenerator in, elemental_.MakeComputationGenerator(
                                                    fused, ops, nullptr, r->operand(0), true));
    TFJIT_ASSIGN_OR_RETURN(ElementGenerator init, elemental_.MakeComputationGenerator(
                                                      fused, ops, nullptr, r->operand(1), true));
    inputs.push_back(std::move(in));
    inits.push_back(std::move(init));
  }
  info.extent = 1;
  info.parallel = false;
  const Instruction& first = *reduces[0];
  const std::vector<int64_t>& out_dims = first.shape().dims();
  TFJIT_RETURN_IF_ERROR(
      llvm_ir::EmitShapeLoop(b_, out_dims, llvm_ir::LoopShape::kNested, b_.getInt64(0),
                             out_dims.empty() ? b_.getInt64(1) : elemental_.Dim(first.shape(), 0),
                             [&](const IrIndex& index) -> absl::Status {
                               for (size_t k = 0; k < reduces.size(); ++k) {
                                 TFJIT_ASSIGN_OR_RETURN(llvm::Value * v, inits[k](IrIndex()));
                                 outs[k].EmitWrite(index, v, b_);
                               }
                               return absl::OkStatus();
                             }));
  const hlo::Shape& in = first.operand(0)->shape();
  std::vector<bool> is_reduced(static_cast<size_t>(in.rank()), false);
  for (int64_t d : first.dimensions()) is_reduced[static_cast<size_t>(d)] = true;
  return llvm_ir::EmitShapeLoop(
      b_, in.dims(), llvm_ir::LoopShape::kNested, b_.getInt64(0), elemental_.Dim(in, 0),
      [&](const IrIndex& index) -> absl::Status {
        std::vector<llvm::Value*> kept;
        for (size_t d = 0; d < is_reduced.size(); ++d) {
          if (!is_reduced[d]) kept.push_back(index[d]);
        }
        const IrIndex out_index(std::move(kept), out_dims);
        for (size_t k = 0; k < reduces.size(); ++k) {
          // The fused producers keep strict IEEE semantics; only the combiner may reassociate.
          TFJIT_ASSIGN_OR_RETURN(llvm::Value * x, inputs[k](index));
          llvm::IRBuilder<>::FastMathFlagGuard guard(b_);
          llvm::FastMathFlags fmf;
          fmf.setAllowReassoc();
          b_.setFastMathFlags(fmf);
          llvm::Value* current = outs[k].EmitRead(out_index, b_);
          TFJIT_ASSIGN_OR_RETURN(llvm::Value * next, elemental_.EmitScalarComputation(
                                                         *reduces[k]->to_apply(), {current, x}));
          outs[k].EmitWrite(out_index, next, b_);
        }
        return absl::OkStatus();
      });
}

// An output fusion's epilogue kernel: rows [begin, end) of the result viewed as [rows, last
// dim], rewritten in place. The hero's value is what the library call left in the output
// buffer (same shape: fusion.h), read at the element about to be written.
absl::Status CpuIrEmitter::EmitEpilogueBody(const Instruction& inst,
                                            const std::vector<ElementGenerator>& ops,
                                            const IrArray& out, llvm::Value* begin,
                                            llvm::Value* end, KernelInfo& info) {
  const hlo::Computation& fused = *inst.called_computations()[0];
  const Instruction* hero = OutputFusionHero(fused);
  if (hero == nullptr) {
    return Internal("output fusion '%s' has no dot or convolution", inst.name());
  }
  const IrArray hero_value(out.base(), hero->shape());
  llvm_ir::ElementalEmitter::Overrides overrides;
  overrides[hero] = [this, hero_value](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    return hero_value.EmitRead(index, b_);
  };
  TFJIT_ASSIGN_OR_RETURN(ElementGenerator root, elemental_.MakeComputationGenerator(
                                                    fused, ops, &overrides, nullptr, true));
  const std::vector<int64_t>& dims = inst.shape().dims();
  info.extent = inst.shape().num_elements() / std::max<int64_t>(1, dims.back());
  if (inst.shape().has_symbolic_dim0() && dims.size() >= 2) {
    const hlo::SymbolicExtent& e = inst.shape().symbolic_dim0();
    const int64_t rows = info.extent / std::max<int64_t>(1, dims[0]);  // per batch row
    info.symbolic_extent = {e.k * rows, e.c * rows};
  }
  info.parallel = false;  // the library call runs it, per finished block of rows
  return EmitRootLoop(dims, llvm_ir::LoopShape::kNested, dims.size() - 1, root, out, begin, end);
}

int CpuIrEmitter::PackedRhsSlot(const Instruction& hero, const ValueLocation& rhs) {
  if (rhs.constant == nullptr) return -1;
  const gemm::Packing packing = ConstantWeightPacking(hero, *rhs.constant);
  return packing.blocks == 0 ? -1 : plan_.AddPackedConstant(rhs.constant, packing);
}

absl::Status CpuIrEmitter::EmitInPlaceUpdateBody(const Instruction& inst,
                                                 const std::vector<ElementGenerator>& ops,
                                                 const IrArray& out, llvm::Value* begin,
                                                 llvm::Value* end, KernelInfo& info) {
  const hlo::Shape& update = inst.operand(1)->shape();
  TFJIT_ASSIGN_OR_RETURN(std::vector<llvm::Value*> starts,
                         elemental_.EmitClampedStarts(inst, ops, 2, update));
  info.extent = llvm_ir::PartitionExtent(update.dims(), llvm_ir::LoopShape::kNested);
  const int64_t work = update.num_elements();
  info.parallel = options_.parallel && work >= options_.parallel_min_elements && info.extent > 1;
  info.cost_per_unit = std::max<int64_t>(1, work / std::max<int64_t>(1, info.extent)) * 2;
  return llvm_ir::EmitShapeLoop(b_, update.dims(), llvm_ir::LoopShape::kNested, begin, end,
                                [&](const IrIndex& index) -> absl::Status {
                                  TFJIT_ASSIGN_OR_RETURN(llvm::Value * v, ops[1](index));
                                  std::vector<llvm::Value*> coords(starts.size());
                                  for (size_t d = 0; d < starts.size(); ++d) {
                                    coords[d] = b_.CreateAdd(index[d], starts[d], "", true, true);
                                  }
                                  out.EmitWrite(IrIndex(std::move(coords), out.shape().dims()), v,
                                                b_);
                                  return absl::OkStatus();
                                });
}

// XLA's scatter: out = operand, then for every update element in order, the element of its
// window combines into out unless the window falls outside the operand (skipped, HLO.md).
// Updates may hit one element several times, so the kernel runs on one thread.
absl::Status CpuIrEmitter::EmitScatterBody(const Instruction& inst,
                                           const std::vector<ElementGenerator>& ops,
                                           const IrArray& out, bool in_place, KernelInfo& info) {
  info.extent = 1;
  info.parallel = false;
  const hlo::Shape& shape = inst.shape();
  if (!in_place) {
    TFJIT_RETURN_IF_ERROR(llvm_ir::EmitShapeLoop(
        b_, shape.dims(), llvm_ir::LoopShape::kFlat, b_.getInt64(0),
        b_.getInt64(shape.num_elements()), [&](const IrIndex& index) -> absl::Status {
          TFJIT_ASSIGN_OR_RETURN(llvm::Value * v, ops[0](index));
          out.EmitWrite(index, v, b_);
          return absl::OkStatus();
        }));
  }
  const hlo::Shape& updates = inst.operand(2)->shape();
  if (updates.num_elements() == 0) return absl::OkStatus();
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> window,
                         llvm_ir::ElementalEmitter::ScatterWindow(inst));
  return llvm_ir::EmitShapeLoop(
      b_, updates.dims(), llvm_ir::LoopShape::kNested, b_.getInt64(0),
      b_.getInt64(llvm_ir::PartitionExtent(updates.dims(), llvm_ir::LoopShape::kNested)),
      [&](const IrIndex& ui) { return elemental_.EmitScatterUpdate(inst, ops, out, window, ui); });
}

// ---- Sequencing. ----

llvm::Value* CpuIrEmitter::Pointer(const ValueLocation& unresolved) {
  const ValueLocation loc = Resolve(unresolved);
  if (loc.constant != nullptr) return elemental_.ConstantGlobal(*loc.constant);
  plan_.Touch(loc.id);
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Value* p = b_.CreateConstInBoundsGEP1_64(ptr, buffers_, static_cast<uint64_t>(loc.id));
  return b_.CreateAlignedLoad(ptr, p, llvm::Align(8));
}

llvm::Value* CpuIrEmitter::LoadScalar(const ValueLocation& loc, DType dtype) {
  return IrArray(Pointer(loc), hlo::Shape::Scalar(dtype)).EmitRead(IrIndex(), b_);
}

void CpuIrEmitter::EmitCopy(const ValueLocation& to, const ValueLocation& from, int64_t bytes) {
  if (bytes == 0 || to == from) return;
  b_.CreateMemCpy(Pointer(to), llvm::MaybeAlign(1), Pointer(from), llvm::MaybeAlign(1),
                  static_cast<uint64_t>(bytes));
}

void CpuIrEmitter::EmitStateUpdate(const Leaves& dest, const Leaves& src,
                                   const std::vector<hlo::Shape>& shapes) {
  Leaves from = src;
  for (size_t i = 0; i < dest.size(); ++i) {
    const bool is_other_dest =
        src[i] != dest[i] && std::find(dest.begin(), dest.end(), src[i]) != dest.end();
    if (!is_other_dest || shapes[i].byte_size() == 0) continue;
    const ValueLocation scratch{plan_.AddBuffer(shapes[i].byte_size()), nullptr};
    EmitCopy(scratch, src[i], shapes[i].byte_size());
    from[i] = scratch;
  }
  for (size_t i = 0; i < dest.size(); ++i) EmitCopy(dest[i], from[i], shapes[i].byte_size());
}

absl::Status CpuIrEmitter::EmitFrame(const FramePlan& frame) {
  for (const Instruction* inst : frame.order()) {
    TFJIT_RETURN_IF_ERROR(EmitInstruction(*inst, frame));
  }
  return absl::OkStatus();
}

absl::Status CpuIrEmitter::EmitInstruction(const Instruction& inst, const FramePlan& frame) {
  plan_.NextStep();  // buffer liveness (buffer_plan.h)
  switch (inst.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kReshape:
      return absl::OkStatus();  // buffers only (frame_plan.h)
    case Opcode::kWhile:
      return EmitWhile(inst, frame);
    case Opcode::kConditional:
      return EmitConditional(inst, frame);
    case Opcode::kCall:
      return EmitCall(inst, frame);
    default:
      return EmitProfiledUnit(inst, frame);
  }
}

absl::Status CpuIrEmitter::EmitProfiledUnit(const Instruction& inst, const FramePlan& frame) {
  const int32_t unit = static_cast<int32_t>(profile_units_.size());
  profile_units_.push_back(inst.name());
  b_.CreateCall(profile_begin_, {run_ctx_});
  absl::Status emitted;
  if (inst.opcode() == Opcode::kCustomCall) {
    emitted = EmitCustomCall(inst, frame);
  } else if (std::optional<ScanShape> scan;
             inst.opcode() == Opcode::kReduceWindow && (scan = MatchScan(inst)).has_value()) {
    emitted = EmitScan(*scan, inst, frame);
  } else {
    emitted = EmitKernelCall(inst, frame);
  }
  TFJIT_RETURN_IF_ERROR(emitted);
  b_.CreateCall(profile_end_, {run_ctx_, b_.getInt32(unit)});
  unchecked_elements_ += ElementsTouched(inst);
  const bool library = inst.opcode() == Opcode::kCustomCall || inst.opcode() == Opcode::kDot ||
                       inst.opcode() == Opcode::kConvolution || IsOutputFusion(inst);
  if (loop_depth_ == 0 && (library || unchecked_elements_ >= kCheckpointElements)) {
    EmitCheckpoint();
    unchecked_elements_ = 0;
  }
  return absl::OkStatus();
}

void CpuIrEmitter::EmitCheckpoint() {
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::LLVMContext& ctx = module_->getContext();
  if (stop_ == nullptr) {
    stop_ = llvm::BasicBlock::Create(ctx, "stop", fn);
    llvm::IRBuilder<>(stop_).CreateRetVoid();
  }
  llvm::BasicBlock* go_on = llvm::BasicBlock::Create(ctx, "go_on", fn);
  b_.CreateCondBr(b_.CreateICmpNE(b_.CreateCall(checkpoint_, {run_ctx_}), b_.getInt32(0)), stop_,
                  go_on);
  b_.SetInsertPoint(go_on);
}

absl::Status CpuIrEmitter::EmitKernelCall(const Instruction& inst, const FramePlan& frame) {
  if (inst.shape().num_elements() == 0) return absl::OkStatus();  // nothing to compute
  const bool in_place = frame.in_place(&inst);
  if (in_place && inst.opcode() == Opcode::kDynamicUpdateSlice &&
      inst.operand(1)->shape().num_elements() == 0) {
    return absl::OkStatus();
  }
  if (IsOutputFusion(inst)) return EmitOutputFusion(inst, frame);
  std::vector<ValueLocation> operands;
  for (const Instruction* op : inst.operands()) operands.push_back(frame.leaves(op)[0]);
  // A multi-output fusion writes every leaf of its tuple; anything else one buffer.
  const Leaves& out_leaves = frame.leaves(&inst);
  const std::vector<ValueLocation> outs =
      inst.shape().IsArray() ? Leaves{out_leaves[0]} : out_leaves;
  TFJIT_ASSIGN_OR_RETURN(KernelInfo k, EmitKernel(inst, operands, outs, in_place));
  llvm::Value* extent = ExtentValue(k.symbolic_extent, k.extent, entry_batch_);
  if (k.parallel) {
    b_.CreateCall(parallel_for_,
                  {run_ctx_, k.function, buffers_, extent, b_.getInt64(k.cost_per_unit)});
  } else {
    b_.CreateCall(k.function, {buffers_, run_ctx_, b_.getInt64(0), extent});
  }
  return absl::OkStatus();
}

// The hero's library call, straight from the entry function, with the epilogue kernel it runs
// on each finished block of rows.
absl::Status CpuIrEmitter::EmitOutputFusion(const Instruction& inst, const FramePlan& frame) {
  const Instruction* hero = OutputFusionHero(*inst.called_computations()[0]);
  std::vector<ValueLocation> operands;
  for (const Instruction* op : inst.operands()) operands.push_back(frame.leaves(op)[0]);
  const ValueLocation& out = frame.leaves(&inst)[0];
  TFJIT_ASSIGN_OR_RETURN(KernelInfo epilogue, EmitKernel(inst, operands, {out}, false));
  // The hero's operands are parameters of the fused computation (fusion.h).
  ValueLocation hero_operand[2];
  for (int i = 0; i < 2; ++i) {
    const Instruction* param = hero->operand(i);
    if (param->opcode() != Opcode::kParameter) {
      return Internal("output fusion '%s': operand %d of its hero is not a parameter", inst.name(),
                      i);
    }
    hero_operand[i] = operands.at(static_cast<size_t>(param->parameter_number()));
  }
  llvm::Value* out_ptr = Pointer(out);
  llvm::Value* lhs = Pointer(hero_operand[0]);
  llvm::Value* rhs = Pointer(hero_operand[1]);
  const int packed_slot = PackedRhsSlot(*hero, hero_operand[1]);
  llvm::Value* packed = packed_slot >= 0 ? Pointer(ValueLocation{packed_slot, nullptr})
                                         : llvm::ConstantPointerNull::get(b_.getPtrTy());
  if (hero->opcode() == Opcode::kDot) {
    EmitGemmBody(*hero, *MatchGemm(*hero), out_ptr, lhs, rhs, packed, run_ctx_, epilogue.function,
                 buffers_);
  } else {
    EmitConvBody(*hero, *MatchConv2D(*hero), out_ptr, lhs, rhs, packed, run_ctx_, epilogue.function,
                 buffers_);
  }
  return absl::OkStatus();
}

// state = init; while (condition(state)) state = body(state). The state buffers are the
// while's own; the body may update them in place, and its result is copied back into them.
absl::Status CpuIrEmitter::EmitWhile(const Instruction& inst, const FramePlan& frame) {
  const Leaves& state = frame.leaves(&inst);
  const Leaves& init = frame.leaves(inst.operand(0));
  const std::vector<hlo::Shape> shapes = LeafShapes(inst.shape());
  for (size_t i = 0; i < state.size(); ++i) EmitCopy(state[i], init[i], shapes[i].byte_size());
  TFJIT_ASSIGN_OR_RETURN(FramePlan condition, PlanFrame(*inst.called_computations()[0], {state},
                                                        /*params_writable=*/false, plan_));
  TFJIT_ASSIGN_OR_RETURN(FramePlan body, PlanFrame(*inst.called_computations()[1], {state},
                                                   /*params_writable=*/true, plan_));
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::LLVMContext& ctx = module_->getContext();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx, "while.cond", fn);
  llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ctx, "while.body", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "while.exit", fn);
  plan_.BeginLoop();  // what the loop uses stays live across its iterations
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  // Each iteration polls the run's deadline and cancellation (runtime_abi.h): a loop whose
  // condition stays true still ends; the executable then discards the results.
  llvm::BasicBlock* cond_bb = llvm::BasicBlock::Create(ctx, "while.poll_ok", fn);
  llvm::FunctionCallee poll = module_->getOrInsertFunction(
      "tfjit_cpu_poll", llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy()}, false));
  b_.CreateCondBr(b_.CreateICmpNE(b_.CreateCall(poll, {run_ctx_}), b_.getInt32(0)), exit, cond_bb);
  b_.SetInsertPoint(cond_bb);
  ++loop_depth_;
  TFJIT_RETURN_IF_ERROR(EmitFrame(condition));
  b_.CreateCondBr(LoadScalar(condition.root()[0], DType::kBool), body_bb, exit);
  b_.SetInsertPoint(body_bb);
  TFJIT_RETURN_IF_ERROR(EmitFrame(body));
  --loop_depth_;
  EmitStateUpdate(state, body.root(), shapes);
  b_.CreateBr(header);
  plan_.EndLoop();
  b_.SetInsertPoint(exit);
  return absl::OkStatus();
}

// A pred selects branch 0 for true, 1 for false; an integer index outside [0, n) (negative
// too) selects the last branch (HLO.md). Branch b runs on operand b + 1.
absl::Status CpuIrEmitter::EmitConditional(const Instruction& inst, const FramePlan& frame) {
  const std::vector<hlo::Computation*>& branches = inst.called_computations();
  const int64_t n = static_cast<int64_t>(branches.size());
  const DType selector_type = inst.operand(0)->shape().element_type();
  llvm::Value* selector = LoadScalar(frame.leaves(inst.operand(0))[0], selector_type);
  llvm::Value* index;
  if (selector_type == DType::kBool) {
    index = b_.CreateSelect(selector, b_.getInt64(0), b_.getInt64(1));
  } else {
    index = elemental_.IndexToInt64(selector, selector_type);
    index = b_.CreateSelect(b_.CreateICmpULT(index, b_.getInt64(n)), index, b_.getInt64(n - 1));
  }
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::LLVMContext& ctx = module_->getContext();
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(ctx, "cond.merge", fn);
  std::vector<llvm::BasicBlock*> blocks;
  for (int64_t i = 0; i < n; ++i) {
    blocks.push_back(llvm::BasicBlock::Create(ctx, "cond.branch" + std::to_string(i), fn));
  }
  llvm::SwitchInst* sw = b_.CreateSwitch(index, blocks.back(), static_cast<unsigned>(n - 1));
  for (int64_t i = 0; i + 1 < n; ++i) sw->addCase(b_.getInt64(i), blocks[static_cast<size_t>(i)]);
  for (int64_t i = 0; i < n; ++i) {
    b_.SetInsertPoint(blocks[static_cast<size_t>(i)]);
    const Instruction* operand = inst.operand(static_cast<int>(i) + 1);
    TFJIT_RETURN_IF_ERROR(EmitCalledInto(*branches[static_cast<size_t>(i)], {frame.leaves(operand)},
                                         frame.leaves(&inst)));
    b_.CreateBr(merge);
  }
  b_.SetInsertPoint(merge);
  return absl::OkStatus();
}

absl::Status CpuIrEmitter::EmitCall(const Instruction& inst, const FramePlan& frame) {
  std::vector<Leaves> params;
  for (const Instruction* op : inst.operands()) params.push_back(frame.leaves(op));
  return EmitCalledInto(*inst.to_apply(), std::move(params), frame.leaves(&inst));
}

// The callee's buffers are reused by every run of this call site, so its result is copied
// into the caller's buffers (`out`), which nothing else writes.
absl::Status CpuIrEmitter::EmitCalledInto(const hlo::Computation& computation,
                                          std::vector<Leaves> params, const Leaves& out) {
  TFJIT_ASSIGN_OR_RETURN(FramePlan callee, PlanFrame(computation, std::move(params),
                                                     /*params_writable=*/false, plan_));
  TFJIT_RETURN_IF_ERROR(EmitFrame(callee));
  const std::vector<hlo::Shape> shapes = LeafShapes(computation.root()->shape());
  for (size_t i = 0; i < out.size(); ++i) EmitCopy(out[i], callee.root()[i], shapes[i].byte_size());
  return absl::OkStatus();
}

// Entry results that live in a buffer the entry owns are computed straight into the output
// tensor; the rest (parameters, constants, repeated values) are copied by Run.
void CpuIrEmitter::PlaceOutputs(const FramePlan& entry) {
  const Leaves& root = entry.root();
  for (size_t k = 0; k < root.size(); ++k) {
    OutputSource& source = plan_.mutable_outputs()[k];
    if (entry.owns(root[k]) && plan_.output_of(root[k].id) < 0) {
      plan_.PlaceInOutput(root[k].id, static_cast<int>(k));
      source.written_by_kernel = true;
    } else {
      source.copy_from = root[k];
    }
  }
}

absl::Status CpuIrEmitter::EmitEntry(const hlo::Computation& entry) {
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Function* fn = NewFunction(
      kEntryFunctionName, llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr}, false), false);
  // Not optimised: the entry is the launch sequence (library calls, kernel calls, profile
  // hooks, loop and branch control between them), whose cost is the kernels'. At -O3 LLVM
  // spent 16% of blazepose-heavy's instructions on it (opt + llc of the emitted module under
  // cachegrind: 4.78 -> 4.01 G), most in instruction selection over its one large block;
  // run times were the same within the host's noise (movenet-lightning, facemesh,
  // blazepose-heavy, best of alternating runs).
  fn->addFnAttr(llvm::Attribute::NoInline);
  fn->addFnAttr(llvm::Attribute::OptimizeNone);
  b_.SetInsertPoint(llvm::BasicBlock::Create(module_->getContext(), "entry", fn));
  parallel_for_ = module_->getOrInsertFunction(
      "tfjit_cpu_parallel_for",
      llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, ptr, i64, i64}, false));
  profile_begin_ = module_->getOrInsertFunction(
      "tfjit_cpu_profile_begin", llvm::FunctionType::get(b_.getVoidTy(), {ptr}, false));
  profile_end_ = module_->getOrInsertFunction(
      "tfjit_cpu_profile_end",
      llvm::FunctionType::get(b_.getVoidTy(), {ptr, b_.getInt32Ty()}, false));
  checkpoint_ = module_->getOrInsertFunction(
      "tfjit_cpu_checkpoint", llvm::FunctionType::get(b_.getInt32Ty(), {ptr}, false));
  buffers_ = fn->getArg(0);
  run_ctx_ = fn->getArg(1);
  if (symbolic_) {
    entry_batch_ = LoadBatch(b_, run_ctx_);
    elemental_.set_batch(entry_batch_);
  }
  std::vector<Leaves> params;
  for (int i = 0; i < entry.num_parameters(); ++i) params.push_back({ValueLocation{i, nullptr}});
  TFJIT_ASSIGN_OR_RETURN(FramePlan frame, PlanFrame(entry, std::move(params),
                                                    /*params_writable=*/false, plan_));
  PlaceOutputs(frame);
  TFJIT_RETURN_IF_ERROR(EmitFrame(frame));
  b_.CreateRetVoid();
  return absl::OkStatus();
}

absl::StatusOr<EmittedModule> EmitCpuModule(const hlo::Module& module,
                                            const IrEmitterOptions& options) {
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr || entry->root() == nullptr) {
    return InvalidArgument("module '%s' has no entry computation", module.name());
  }
  EmittedModule result;
  result.plan = BufferPlan(entry->num_parameters(), LeafShapes(entry->root()->shape()));
  result.context = std::make_unique<llvm::LLVMContext>();
  result.module = std::make_unique<llvm::Module>(module.name(), *result.context);
  CpuIrEmitter emitter(result.plan, options, result.module.get(),
                       module.batch_representative() != 0);
  TFJIT_RETURN_IF_ERROR(emitter.EmitEntry(*entry));
  result.plan.Finalize();
  result.num_kernels = emitter.num_kernels();
  result.kernel_names = emitter.kernel_names();
  result.profile_units = emitter.profile_units();
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::verifyModule(*result.module, &os)) {
    return Internal("cpu backend emitted invalid LLVM IR for module '%s': %s", module.name(),
                    os.str());
  }
  return result;
}

absl::StatusOr<std::string> EmitCpuModuleText(const hlo::Module& module,
                                              const IrEmitterOptions& options) {
  TFJIT_RETURN_IF_ERROR(CheckCpuSupport(module));
  TFJIT_ASSIGN_OR_RETURN(EmittedModule emitted, EmitCpuModule(module, options));
  std::string text;
  llvm::raw_string_ostream out(text);
  emitted.module->print(out, nullptr);
  out.flush();
  return text;
}

}  // namespace tfjit::cpu
