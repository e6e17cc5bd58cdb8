// Elemental generators per opcode: elementwise math (via elemental_math.cc), data movement
// (broadcast, reshape, transpose, slice, reverse, concatenate, pad, iota, constant) and the
// loop-carrying reduce and dot. Fusion composes these through MakeComputationGenerator.
#include "backends/llvm/elemental_emitter.h"

#include <memory>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "backends/llvm/loop_emitter.h"
#include "core/dtype.h"
#include "core/status.h"
#include "llvm/IR/Module.h"

namespace tfjit::llvm_ir {

using hlo::Instruction;
using hlo::Opcode;

namespace {

// Index into `shape` whose coordinates are `coords`.
IrIndex MakeIndex(std::vector<llvm::Value*> coords, const hlo::Shape& shape) {
  return IrIndex(std::move(coords), shape.dims());
}

bool IsNumeric(DType d) { return IsNumericDType(d) && d != DType::kInvalid; }

}  // namespace

bool ElementalEmitter::Supports(const Instruction& inst) {
  const hlo::Shape& shape = inst.shape();
  if (!shape.IsArray() || !IsNumeric(shape.element_type())) return false;
  for (const Instruction* op : inst.operands()) {
    if (!op->shape().IsArray() || !IsNumeric(op->shape().element_type())) return false;
  }
  const Opcode op = inst.opcode();
  if (hlo::IsElementwiseUnary(op) || hlo::IsElementwiseBinary(op)) return true;
  switch (op) {
    case Opcode::kCompare:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kConvert:
    case Opcode::kIsFinite:
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kIota:
    case Opcode::kGetDimensionSize:
    case Opcode::kConstant:
    case Opcode::kDot:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
      return true;
    case Opcode::kGather:
      return IsIntegerDType(inst.operand(1)->shape().element_type());
    case Opcode::kConvolution:
      return inst.attrs().feature_group_count >= 1;
    case Opcode::kBitcastConvert:
      return DTypeSize(shape.element_type()) == DTypeSize(inst.operand(0)->shape().element_type());
    case Opcode::kReduceWindow:  // single output, as reduce (elemental_window.cc)
    case Opcode::kReduce:
      return inst.operand_count() == 2;  // single-output reduce
    case Opcode::kFusion:
      return inst.attrs().fusion_kind == "kLoop" || inst.attrs().fusion_kind == "kInput" ||
             inst.attrs().fusion_kind == "kOutput";
    default:
      return false;
  }
}

absl::StatusOr<ElementGenerator> ElementalEmitter::MakeGenerator(const Instruction& inst,
                                                                 Generators ops,
                                                                 bool operands_invariant) {
  if (!Supports(inst)) {
    return Unimplemented("elemental emitter: opcode '%s' is not supported (instruction '%s')",
                         std::string(hlo::OpcodeName(inst.opcode())), inst.name());
  }
  switch (inst.opcode()) {
    case Opcode::kBroadcast:
      return MakeBroadcast(inst, std::move(ops));
    case Opcode::kReshape:
      return MakeReshape(inst, std::move(ops));
    case Opcode::kTranspose:
      return MakeTranspose(inst, std::move(ops));
    case Opcode::kSlice:
      return MakeSlice(inst, std::move(ops));
    case Opcode::kReverse:
      return MakeReverse(inst, std::move(ops));
    case Opcode::kConcatenate:
      return MakeConcatenate(inst, std::move(ops));
    case Opcode::kPad:
      return MakePad(inst, std::move(ops));
    case Opcode::kIota:
      return MakeIota(inst);
    case Opcode::kGetDimensionSize: {
      // The operand's dim, read from the batch size where it is symbolic.
      const hlo::Shape shape = inst.operand(0)->shape();
      const int d = static_cast<int>(inst.attrs().dimensions.at(0));
      return [this, shape, d](const IrIndex&) -> absl::StatusOr<llvm::Value*> {
        return b_->CreateTrunc(Dim(shape, d), b_->getInt32Ty());
      };
    }
    case Opcode::kConstant:
      return MakeConstant(inst);
    case Opcode::kReduce:
      return MakeReduce(inst, std::move(ops));
    case Opcode::kReduceWindow:
      return MakeReduceWindow(inst, std::move(ops));
    case Opcode::kDot:
      return MakeDot(inst, std::move(ops));
    case Opcode::kConvolution:
      return MakeConvolution(inst, std::move(ops));
    case Opcode::kDynamicSlice:
      return MakeDynamicSlice(inst, std::move(ops));
    case Opcode::kDynamicUpdateSlice:
      return MakeDynamicUpdateSlice(inst, std::move(ops));
    case Opcode::kGather:
      return MakeGather(inst, std::move(ops));
    case Opcode::kFusion:
      return MakeComputationGenerator(*inst.called_computations()[0], std::move(ops), nullptr,
                                      nullptr, operands_invariant);
    default:
      return MakeElementwise(inst, std::move(ops));
  }
}

absl::StatusOr<ElementGenerator> ElementalEmitter::MakeElementwise(const Instruction& inst,
                                                                   Generators ops) {
  const Instruction* in = &inst;
  const DType out_type = inst.shape().element_type();
  const DType in_type = inst.operand(0)->shape().element_type();
  // select's pred and clamp's bounds may be scalars broadcast over the result.
  std::vector<bool> scalar_operand;
  for (const Instruction* op : inst.operands()) {
    scalar_operand.push_back(op->shape().IsScalar() && !inst.shape().IsScalar());
  }
  return ElementGenerator([this, in, out_type, in_type, ops,
                           scalar_operand](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    std::vector<llvm::Value*> v;
    for (size_t i = 0; i < ops.size(); ++i) {
      TFJIT_ASSIGN_OR_RETURN(llvm::Value * x, ops[i](scalar_operand[i] ? IrIndex() : index));
      v.push_back(x);
    }
    const Opcode op = in->opcode();
    switch (op) {
      case Opcode::kCompare:
        return EmitCompare(in->attrs().comparison, in_type, v[0], v[1]);
      case Opcode::kSelect:
        return b_->CreateSelect(v[0], v[1], v[2]);
      case Opcode::kClamp: {
        TFJIT_ASSIGN_OR_RETURN(llvm::Value * m, EmitBinary(Opcode::kMaximum, out_type, v[1], v[0]));
        return EmitBinary(Opcode::kMinimum, out_type, m, v[2]);
      }
      case Opcode::kConvert:
        return EmitConvert(v[0], in_type, out_type);
      case Opcode::kIsFinite:
        return EmitIsFinite(in_type, v[0]);
      case Opcode::kBitcastConvert:
        return b_->CreateBitCast(v[0], ValueType(out_type, b_->getContext()));
      default:
        if (hlo::IsElementwiseUnary(op)) return EmitUnary(op, out_type, v[0]);
        return EmitBinary(op, out_type, v[0], v[1]);
    }
  });
}

ElementGenerator ElementalEmitter::MakeBroadcast(const Instruction& inst, Generators ops) {
  const hlo::Shape out = inst.shape();
  const hlo::Shape in = inst.operand(0)->shape();
  const std::vector<int64_t> dims = inst.dimensions();
  // Adding only size-1 dimensions keeps the row-major order: the linear index carries over.
  const bool same_order = in.num_elements() == out.num_elements();
  return [this, out, in, dims, same_order, g = ops[0]](const IrIndex& index) {
    std::vector<llvm::Value*> coords;
    for (int64_t d : dims) coords.push_back(index[static_cast<size_t>(d)]);
    llvm::Value* linear =
        same_order && !in.dims().empty() ? index.Linearize(out.dims(), *b_) : nullptr;
    return g(IrIndex(std::move(coords), in.dims(), linear));
  };
}

ElementGenerator ElementalEmitter::MakeReshape(const Instruction& inst, Generators ops) {
  const hlo::Shape out = inst.shape();
  const hlo::Shape in = inst.operand(0)->shape();
  return [this, out, in, g = ops[0]](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    if (in.dims() == out.dims()) return g(index);
    if (in.rank() == 0) return g(IrIndex());
    llvm::Value* linear = out.rank() == 0 ? b_->getInt64(0) : index.Linearize(out.dims(), *b_);
    return g(IrIndex::FromLinear(linear, in.dims(), *b_));
  };
}

ElementGenerator ElementalEmitter::MakeTranspose(const Instruction& inst, Generators ops) {
  const hlo::Shape in = inst.operand(0)->shape();
  const std::vector<int64_t> perm = inst.dimensions();
  return [in, perm, g = ops[0]](const IrIndex& index) {
    std::vector<llvm::Value*> coords(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) coords[static_cast<size_t>(perm[i])] = index[i];
    return g(MakeIndex(std::move(coords), in));
  };
}

ElementGenerator ElementalEmitter::MakeSlice(const Instruction& inst, Generators ops) {
  const hlo::Shape in = inst.operand(0)->shape();
  const std::vector<hlo::SliceDim> slice = inst.attrs().slice;
  return [this, in, slice, g = ops[0]](const IrIndex& index) {
    std::vector<llvm::Value*> coords(slice.size());
    for (size_t i = 0; i < slice.size(); ++i) {
      llvm::Value* c = index[i];
      if (slice[i].stride != 1) c = b_->CreateMul(c, b_->getInt64(slice[i].stride), "", true, true);
      if (slice[i].start != 0) c = b_->CreateAdd(c, b_->getInt64(slice[i].start), "", true, true);
      coords[i] = c;
    }
    return g(MakeIndex(std::move(coords), in));
  };
}

ElementGenerator ElementalEmitter::MakeReverse(const Instruction& inst, Generators ops) {
  const hlo::Shape in = inst.operand(0)->shape();
  const std::vector<int64_t> dims = inst.dimensions();
  return [this, in, dims, g = ops[0]](const IrIndex& index) {
    std::vector<llvm::Value*> coords = index.multidim();
    for (int64_t d : dims) {
      const size_t i = static_cast<size_t>(d);
      coords[i] =
          b_->CreateSub(b_->CreateSub(Dim(in, static_cast<int>(d)), b_->getInt64(1)), coords[i]);
    }
    return g(MakeIndex(std::move(coords), in));
  };
}

ElementGenerator ElementalEmitter::MakeConcatenate(const Instruction& inst, Generators ops) {
  const hlo::Shape out = inst.shape();
  const size_t dim = static_cast<size_t>(inst.dimensions()[0]);
  std::vector<hlo::Shape> in_shapes;
  for (const Instruction* op : inst.operands()) in_shapes.push_back(op->shape());
  return [this, out, dim, in_shapes, ops](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    llvm::LLVMContext& ctx = b_->getContext();
    // Every operand is empty along `dim`: no element exists, but the code is still emitted
    // (e.g. inside a reduce loop over that empty dim), so it must be valid IR. Without this
    // no branch reached the merge block and the PHI had no incoming values
    // (tests/hlo/random/concat_all_empty_in_reduce.hlo).
    if (out.dim(static_cast<int>(dim)) == 0) {
      return llvm::Constant::getNullValue(ValueType(out.element_type(), ctx));
    }
    llvm::Function* fn = b_->GetInsertBlock()->getParent();
    llvm::BasicBlock* merge = llvm::BasicBlock::Create(ctx, "concat.merge", fn);
    std::vector<std::pair<llvm::Value*, llvm::BasicBlock*>> incoming;
    // Offsets as values: along a symbolic dim 0 they depend on the batch size.
    int64_t offset = 0;
    llvm::Value* offset_value = b_->getInt64(0);
    for (size_t i = 0; i < ops.size(); ++i) {
      const int64_t size = in_shapes[i].dim(static_cast<int>(dim));
      if (size == 0) continue;
      const bool last = offset + size == out.dim(static_cast<int>(dim));
      llvm::Value* end_value =
          b_->CreateAdd(offset_value, Dim(in_shapes[i], static_cast<int>(dim)), "", true, true);
      llvm::BasicBlock* next = nullptr;
      if (!last) {
        llvm::BasicBlock* take = llvm::BasicBlock::Create(ctx, "concat.take", fn);
        next = llvm::BasicBlock::Create(ctx, "concat.next", fn);
        b_->CreateCondBr(b_->CreateICmpSLT(index[dim], end_value), take, next);
        b_->SetInsertPoint(take);
      }
      std::vector<llvm::Value*> coords = index.multidim();
      coords[dim] = b_->CreateSub(coords[dim], offset_value);
      TFJIT_ASSIGN_OR_RETURN(llvm::Value * v, ops[i](MakeIndex(std::move(coords), in_shapes[i])));
      incoming.push_back({v, b_->GetInsertBlock()});
      b_->CreateBr(merge);
      offset += size;
      offset_value = end_value;
      if (last) break;
      b_->SetInsertPoint(next);
    }
    b_->SetInsertPoint(merge);
    llvm::PHINode* phi =
        b_->CreatePHI(ValueType(out.element_type(), ctx), static_cast<unsigned>(incoming.size()));
    for (auto& [v, bb] : incoming) phi->addIncoming(v, bb);
    return phi;
  };
}

ElementGenerator ElementalEmitter::MakePad(const Instruction& inst, Generators ops) {
  const hlo::Shape in = inst.operand(0)->shape();
  const hlo::Shape out = inst.shape();
  const std::vector<hlo::PadDim> pad = inst.attrs().padding;
  return [this, in, out, pad, ops](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    // Output coordinate c maps to t = c - lo; it is an operand element iff t >= 0,
    // t % (interior + 1) == 0 and t / (interior + 1) < size.
    llvm::Value* inside = b_->getTrue();
    std::vector<llvm::Value*> coords(pad.size());
    for (size_t i = 0; i < pad.size(); ++i) {
      llvm::Value* t = b_->CreateSub(index[i], b_->getInt64(pad[i].lo));
      llvm::Value* step = b_->getInt64(pad[i].interior + 1);
      llvm::Value* q = t;
      inside = b_->CreateAnd(inside, b_->CreateICmpSGE(t, b_->getInt64(0)));
      if (pad[i].interior != 0) {
        inside = b_->CreateAnd(inside, b_->CreateICmpEQ(b_->CreateSRem(t, step), b_->getInt64(0)));
        q = b_->CreateSDiv(t, step);
      }
      inside = b_->CreateAnd(inside, b_->CreateICmpSLT(q, Dim(in, static_cast<int>(i))));
      coords[i] = q;
    }
    llvm::LLVMContext& ctx = b_->getContext();
    llvm::Function* fn = b_->GetInsertBlock()->getParent();
    llvm::BasicBlock* in_bb = llvm::BasicBlock::Create(ctx, "pad.in", fn);
    llvm::BasicBlock* out_bb = llvm::BasicBlock::Create(ctx, "pad.out", fn);
    llvm::BasicBlock* merge = llvm::BasicBlock::Create(ctx, "pad.merge", fn);
    b_->CreateCondBr(inside, in_bb, out_bb);
    b_->SetInsertPoint(in_bb);
    TFJIT_ASSIGN_OR_RETURN(llvm::Value * v_in, ops[0](MakeIndex(coords, in)));
    llvm::BasicBlock* in_end = b_->GetInsertBlock();
    b_->CreateBr(merge);
    b_->SetInsertPoint(out_bb);
    TFJIT_ASSIGN_OR_RETURN(llvm::Value * v_pad, ops[1](IrIndex()));
    llvm::BasicBlock* out_end = b_->GetInsertBlock();
    b_->CreateBr(merge);
    b_->SetInsertPoint(merge);
    llvm::PHINode* phi = b_->CreatePHI(v_in->getType(), 2);
    phi->addIncoming(v_in, in_end);
    phi->addIncoming(v_pad, out_end);
    return phi;
  };
}

ElementGenerator ElementalEmitter::MakeIota(const Instruction& inst) {
  const DType type = inst.shape().element_type();
  const size_t dim = static_cast<size_t>(inst.attrs().iota_dimension);
  return [this, type, dim](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    return EmitConvert(index[dim], DType::kInt64, type);
  };
}

llvm::GlobalVariable* ElementalEmitter::ConstantGlobal(const Instruction& constant) {
  auto it = constant_globals_.find(&constant);
  if (it != constant_globals_.end()) return it->second;
  const hlo::Literal& literal = constant.literal();
  const DType dtype = literal.shape().element_type();
  llvm::Type* elem = StorageType(dtype, module_->getContext());
  const int64_t n = literal.shape().num_elements();
  const char* data = static_cast<const char*>(literal.tensor().raw_data());
  llvm::Constant* init = llvm::ConstantDataArray::getRaw(
      llvm::StringRef(data, static_cast<size_t>(n) * DTypeSize(dtype)), static_cast<uint64_t>(n),
      elem);
  auto* global =
      new llvm::GlobalVariable(*module_, init->getType(), /*isConstant=*/true,
                               llvm::GlobalValue::PrivateLinkage, init, "const." + constant.name());
  global->setAlignment(llvm::Align(64));
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  constant_globals_[&constant] = global;
  return global;
}

ElementGenerator ElementalEmitter::MakeConstant(const Instruction& inst) {
  const Instruction* c = &inst;
  return [this, c](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    if (c->shape().num_elements() == 1) return EmitLiteralElement(c->literal(), 0);
    return IrArray(ConstantGlobal(*c), c->shape()).EmitRead(index, *b_);
  };
}

llvm::Value* ElementalEmitter::Dim(const hlo::Shape& shape, int d) {
  if (d != 0 || !shape.has_symbolic_dim0() || batch_ == nullptr) return b_->getInt64(shape.dim(d));
  const hlo::SymbolicExtent& e = shape.symbolic_dim0();
  return b_->CreateAdd(b_->CreateMul(batch_, b_->getInt64(e.k), "", true, true), b_->getInt64(e.c),
                       "", false, true);
}

ElementGenerator ElementalEmitter::MakeReduce(const Instruction& inst, Generators ops) {
  const hlo::Shape in = inst.operand(0)->shape();
  const DType type = inst.shape().element_type();
  std::vector<bool> is_reduced(static_cast<size_t>(in.rank()), false);
  for (int64_t d : inst.dimensions()) is_reduced[static_cast<size_t>(d)] = true;
  const hlo::Computation* combiner = inst.to_apply();
  return [this, in, type, is_reduced, combiner,
          ops](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    llvm::Type* t = ValueType(type, b_->getContext());
    llvm::AllocaInst* acc = EmitEntryAlloca(*b_, t, "reduce.acc");
    TFJIT_ASSIGN_OR_RETURN(llvm::Value * init, ops[1](IrIndex()));
    b_->CreateStore(init, acc);
    std::vector<llvm::Value*> coords(is_reduced.size());
    std::vector<size_t> reduced;
    size_t kept = 0;
    for (size_t d = 0; d < is_reduced.size(); ++d) {
      if (is_reduced[d]) {
        reduced.push_back(d);
      } else {
        coords[d] = index[kept++];
      }
    }
    // Reduced dims loop outer to inner in dimension order, so reducing the minor dimension
    // walks memory contiguously.
    std::function<absl::Status(size_t)> level = [&](size_t r) -> absl::Status {
      if (r == reduced.size()) {
        TFJIT_ASSIGN_OR_RETURN(llvm::Value * x, ops[0](MakeIndex(coords, in)));
        llvm::Value* current = b_->CreateLoad(t, acc);
        // HLO.md lets reductions reassociate; this lets LLVM vectorise float reductions.
        llvm::IRBuilder<>::FastMathFlagGuard guard(*b_);
        llvm::FastMathFlags fmf;
        fmf.setAllowReassoc();
        b_->setFastMathFlags(fmf);
        TFJIT_ASSIGN_OR_RETURN(llvm::Value * next, EmitScalarComputation(*combiner, {current, x}));
        b_->CreateStore(next, acc);
        return absl::OkStatus();
      }
      const size_t d = reduced[r];
      return EmitForLoop(*b_, "reduce", b_->getInt64(0), Dim(in, static_cast<int>(d)),
                         [&](llvm::Value* i) -> absl::Status {
                           coords[d] = i;
                           return level(r + 1);
                         });
    };
    TFJIT_RETURN_IF_ERROR(level(0));
    return b_->CreateLoad(t, acc);
  };
}

namespace {

std::vector<size_t> FreeDims(int rank, const std::vector<int64_t>& batch,
                             const std::vector<int64_t>& contracting) {
  std::vector<size_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    bool used = false;
    for (int64_t x : batch) used = used || x == d;
    for (int64_t x : contracting) used = used || x == d;
    if (!used) free.push_back(static_cast<size_t>(d));
  }
  return free;
}

}  // namespace

ElementGenerator ElementalEmitter::MakeDot(const Instruction& inst, Generators ops) {
  const hlo::Shape lhs = inst.operand(0)->shape();
  const hlo::Shape rhs = inst.operand(1)->shape();
  const DType type = inst.shape().element_type();
  const hlo::DotDims dn = inst.attrs().dot;
  const std::vector<size_t> lfree = FreeDims(lhs.rank(), dn.lhs_batch, dn.lhs_contracting);
  const std::vector<size_t> rfree = FreeDims(rhs.rank(), dn.rhs_batch, dn.rhs_contracting);
  return [this, lhs, rhs, type, dn, lfree, rfree,
          ops](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    // f16/bf16 accumulate in f32, like the evaluator.
    const bool float_type = IsFloatingDType(type);
    const bool half_like = type == DType::kFloat16 || type == DType::kBFloat16;
    llvm::Type* acc_type = half_like ? b_->getFloatTy() : ValueType(type, b_->getContext());
    llvm::AllocaInst* acc = EmitEntryAlloca(*b_, acc_type, "dot.acc");
    b_->CreateStore(llvm::Constant::getNullValue(acc_type), acc);
    std::vector<llvm::Value*> lc(static_cast<size_t>(lhs.rank())),
        rc(static_cast<size_t>(rhs.rank()));
    size_t k = 0;
    for (size_t i = 0; i < dn.lhs_batch.size(); ++i, ++k) {
      lc[static_cast<size_t>(dn.lhs_batch[i])] = index[k];
      rc[static_cast<size_t>(dn.rhs_batch[i])] = index[k];
    }
    for (size_t d : lfree) lc[d] = index[k++];
    for (size_t d : rfree) rc[d] = index[k++];
    std::function<absl::Status(size_t)> level = [&](size_t c) -> absl::Status {
      if (c == dn.lhs_contracting.size()) {
        TFJIT_ASSIGN_OR_RETURN(llvm::Value * a, ops[0](MakeIndex(lc, lhs)));
        TFJIT_ASSIGN_OR_RETURN(llvm::Value * b, ops[1](MakeIndex(rc, rhs)));
        llvm::Value* cur = b_->CreateLoad(acc_type, acc);
        llvm::Value* next;
        if (type == DType::kBool) {
          next = b_->CreateOr(cur, b_->CreateAnd(a, b));
        } else if (float_type) {
          next =
              b_->CreateFAdd(cur, b_->CreateFMul(ToComputeFloat(type, a), ToComputeFloat(type, b)));
        } else {
          next = b_->CreateAdd(cur, b_->CreateMul(a, b));
        }
        b_->CreateStore(next, acc);
        return absl::OkStatus();
      }
      const size_t ld = static_cast<size_t>(dn.lhs_contracting[c]);
      const size_t rd = static_cast<size_t>(dn.rhs_contracting[c]);
      return EmitForLoop(*b_, "dot.k", b_->getInt64(0), b_->getInt64(lhs.dim(static_cast<int>(ld))),
                         [&](llvm::Value* i) -> absl::Status {
                           lc[ld] = i;
                           rc[rd] = i;
                           return level(c + 1);
                         });
    };
    TFJIT_RETURN_IF_ERROR(level(0));
    llvm::Value* result = b_->CreateLoad(acc_type, acc);
    return float_type ? FromComputeFloat(type, result) : result;
  };
}

absl::StatusOr<ElementGenerator> ElementalEmitter::MakeComputationGenerator(
    const hlo::Computation& computation, Generators params, const Overrides* overrides,
    const Instruction* target, bool params_invariant) {
  absl::flat_hash_map<const Instruction*, ElementGenerator> gens;
  // Instructions whose value depends on an override (a buffer written while the kernel runs).
  absl::flat_hash_set<const Instruction*> variant;
  for (const Instruction* inst : computation.MakePostOrder()) {
    // What follows the target in post order does not feed it (the root may be a tuple).
    if (target != nullptr && gens.contains(target)) break;
    if (overrides != nullptr) {
      auto it = overrides->find(inst);
      if (it != overrides->end()) {
        gens[inst] = inst->user_count() > 1 ? Cached(it->second) : it->second;
        variant.insert(inst);
        continue;
      }
    }
    for (const Instruction* op : inst->operands()) {
      if (variant.contains(op)) variant.insert(inst);
    }
    if (inst->opcode() == Opcode::kParameter) {
      const size_t p = static_cast<size_t>(inst->parameter_number());
      if (p >= params.size()) {
        return Internal("parameter %d of '%s' has no generator", static_cast<int>(p),
                        computation.name());
      }
      gens[inst] = params[p];
      continue;
    }
    Generators ops;
    for (const Instruction* op : inst->operands()) ops.push_back(gens.at(op));
    TFJIT_ASSIGN_OR_RETURN(ElementGenerator g,
                           MakeGenerator(*inst, std::move(ops), params_invariant));
    if (params_invariant && inst->shape().IsArray() && inst->shape().rank() == 0 &&
        inst != computation.root() && !variant.contains(inst)) {
      gens[inst] = Shared(Hoisted(std::move(g)));  // once per kernel, before its loops
      continue;
    }
    // Values used by several users are emitted once per index and block.
    gens[inst] = Shared(inst->user_count() > 1 ? Cached(std::move(g)) : std::move(g));
  }
  if (target != nullptr) {
    auto it = gens.find(target);
    if (it == gens.end()) {
      return Internal("'%s' is not an instruction of '%s'", target->name(), computation.name());
    }
    return it->second;
  }
  return gens.at(computation.root());
}

// Each generator's closure holds its operands' generators; copied by value, a DAG of shared
// subexpressions would be copied once per path through it (exponential in the depth of
// Philox's rounds). Shared copies are a reference count.
ElementGenerator ElementalEmitter::Shared(ElementGenerator generator) {
  auto shared = std::make_shared<const ElementGenerator>(std::move(generator));
  return [shared](const IrIndex& index) { return (*shared)(index); };
}

ElementGenerator ElementalEmitter::Cached(ElementGenerator generator) {
  struct Entry {
    llvm::BasicBlock* block;
    std::vector<llvm::Value*> key;
    llvm::Value* value;
  };
  auto cache = std::make_shared<std::vector<Entry>>();
  return [this, cache, generator](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    std::vector<llvm::Value*> key = index.multidim();
    key.push_back(index.linear());
    for (const Entry& e : *cache) {
      if (e.block == b_->GetInsertBlock() && e.key == key) return e.value;
    }
    TFJIT_ASSIGN_OR_RETURN(llvm::Value * v, generator(index));
    cache->push_back({b_->GetInsertBlock(), std::move(key), v});
    return v;
  };
}

void ElementalEmitter::OpenHoistRegion(llvm::BasicBlock* block) {
  hoist_block_ = block;
  in_hoist_region_ = false;
  ++hoist_region_;
}

llvm::BasicBlock* ElementalEmitter::CloseHoistRegion() {
  llvm::BasicBlock* last = hoist_block_;
  hoist_block_ = nullptr;
  return last;
}

ElementGenerator ElementalEmitter::Hoisted(ElementGenerator generator) {
  struct Placed {  // a value emitted inside the region, available in `block`
    int64_t region;
    llvm::BasicBlock* block;
    llvm::Value* value;
  };
  struct Memo {
    int64_t region = -1;  // the region `value` dominates the kernel's code in
    llvm::Value* value = nullptr;
    std::vector<Placed> placed;
  };
  auto memo = std::make_shared<Memo>();
  return [this, memo, generator](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    llvm::BasicBlock* here = b_->GetInsertBlock();
    if (hoist_block_ == nullptr || here == nullptr ||
        here->getParent() != hoist_block_->getParent()) {
      return generator(index);
    }
    if (memo->region == hoist_region_) return memo->value;
    if (in_hoist_region_) {
      // An operand of a value being hoisted: emitted where that value's code is. In the
      // region's top-level block it dominates everything after; elsewhere (inside a hoisted
      // reduce's loop) it is reused only within its block, as Cached does.
      for (const Placed& p : memo->placed) {
        if (p.region == hoist_region_ && p.block == here) return p.value;
      }
      TFJIT_ASSIGN_OR_RETURN(llvm::Value * value, generator(IrIndex()));
      if (here == hoist_block_ && b_->GetInsertBlock() == hoist_block_) {
        memo->region = hoist_region_;
        memo->value = value;
      } else {
        memo->placed.push_back({hoist_region_, b_->GetInsertBlock(), value});
      }
      return value;
    }
    const llvm::IRBuilderBase::InsertPoint saved = b_->saveIP();
    b_->SetInsertPoint(hoist_block_);
    in_hoist_region_ = true;
    absl::StatusOr<llvm::Value*> value = generator(IrIndex());
    in_hoist_region_ = false;
    hoist_block_ = b_->GetInsertBlock();
    b_->restoreIP(saved);
    if (!value.ok()) return value.status();
    memo->region = hoist_region_;
    memo->value = *value;
    return *value;
  };
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitScalarComputation(
    const hlo::Computation& computation, const std::vector<llvm::Value*>& args) {
  Generators params;
  for (llvm::Value* a : args) {
    params.push_back([a](const IrIndex&) -> absl::StatusOr<llvm::Value*> { return a; });
  }
  TFJIT_ASSIGN_OR_RETURN(ElementGenerator g, MakeComputationGenerator(computation, params));
  return g(IrIndex());
}

}  // namespace tfjit::llvm_ir
