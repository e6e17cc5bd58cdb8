// Elemental generators whose operand coordinates are data: dynamic-slice, dynamic-update-slice
// and gather. Start indices clamp as HLO.md says (to [0, dim - size]), so every generated
// load stays inside its operand.
#include <algorithm>

#include "backends/llvm/elemental_emitter.h"
#include "compiler/hlo/symbolic.h"
#include "core/dtype.h"
#include "core/status.h"

namespace tfjit::llvm_ir {

using hlo::Instruction;

namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// clamp(x, 0, hi) on i64 values; hi >= 0.
// x clamped into [0, max(hi, 0)]; `hi` is an i64 value (a symbolic dim's extent may be in it).
llvm::Value* ClampStart(llvm::IRBuilder<>* b, llvm::Value* x, llvm::Value* hi) {
  llvm::Value* upper =
      llvm::isa<llvm::ConstantInt>(hi)
          ? b->getInt64(std::max<int64_t>(llvm::cast<llvm::ConstantInt>(hi)->getSExtValue(), 0))
          : b->CreateSelect(b->CreateICmpSLT(hi, b->getInt64(0)), b->getInt64(0), hi);
  llvm::Value* low = b->CreateSelect(b->CreateICmpSLT(x, b->getInt64(0)), b->getInt64(0), x);
  return b->CreateSelect(b->CreateICmpSGT(low, upper), upper, low);
}

}  // namespace

llvm::Value* ElementalEmitter::IndexToInt64(llvm::Value* v, DType dtype) {
  llvm::Type* i64 = b_->getInt64Ty();
  if (v->getType() == i64) return v;
  if (IsSignedIntegerDType(dtype)) return b_->CreateSExt(v, i64);
  return b_->CreateZExt(v, i64);
}

absl::StatusOr<std::vector<llvm::Value*>> ElementalEmitter::EmitClampedStarts(
    const Instruction& inst, const Generators& ops, int first, const hlo::Shape& sizes) {
  const hlo::Shape& operand = inst.operand(0)->shape();
  std::vector<llvm::Value*> starts;
  for (int d = 0; d < sizes.rank(); ++d) {
    const int i = first + d;
    TFJIT_ASSIGN_OR_RETURN(llvm::Value * raw, ops[static_cast<size_t>(i)](IrIndex()));
    llvm::Value* s = IndexToInt64(raw, inst.operand(i)->shape().element_type());
    // Both extents may follow the batch size (dim 0 of a symbolic module).
    starts.push_back(ClampStart(b_, s, b_->CreateSub(Dim(operand, d), Dim(sizes, d))));
  }
  return starts;
}

ElementGenerator ElementalEmitter::MakeDynamicSlice(const Instruction& inst, Generators ops) {
  const Instruction* in = &inst;
  return [this, in, ops](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    const hlo::Shape& operand = in->operand(0)->shape();
    TFJIT_ASSIGN_OR_RETURN(std::vector<llvm::Value*> starts,
                           EmitClampedStarts(*in, ops, 1, in->shape()));
    std::vector<llvm::Value*> coords(starts.size());
    for (size_t d = 0; d < starts.size(); ++d) {
      coords[d] = b_->CreateAdd(index[d], starts[d], "", true, true);
    }
    return ops[0](IrIndex(std::move(coords), operand.dims()));
  };
}

// out[i] = update[i - start] inside the update's window, operand[i] elsewhere. The update index
// is clamped into range so the (discarded) load outside the window is still in bounds; the
// select keeps the loop branch-free.
ElementGenerator ElementalEmitter::MakeDynamicUpdateSlice(const Instruction& inst, Generators ops) {
  const hlo::Shape update = inst.operand(1)->shape();
  if (update.num_elements() == 0) return ops[0];
  const Instruction* in = &inst;
  return [this, in, update, ops](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    TFJIT_ASSIGN_OR_RETURN(std::vector<llvm::Value*> starts,
                           EmitClampedStarts(*in, ops, 2, update));
    llvm::Value* inside = b_->getTrue();
    std::vector<llvm::Value*> coords(starts.size());
    for (size_t d = 0; d < starts.size(); ++d) {
      llvm::Value* rel = b_->CreateSub(index[d], starts[d]);
      llvm::Value* in_dim =
          b_->CreateAnd(b_->CreateICmpSGE(rel, b_->getInt64(0)),
                        b_->CreateICmpSLT(rel, b_->getInt64(update.dim(static_cast<int>(d)))));
      inside = b_->CreateAnd(inside, in_dim);
      coords[d] = b_->CreateSelect(in_dim, rel, b_->getInt64(0));
    }
    TFJIT_ASSIGN_OR_RETURN(llvm::Value * u, ops[1](IrIndex(std::move(coords), update.dims())));
    TFJIT_ASSIGN_OR_RETURN(llvm::Value * old, ops[0](index));
    return b_->CreateSelect(inside, u, old);
  };
}

// XLA's general gather: output dims split into batch dims (which pick a start-index vector) and
// offset dims (positions inside the slice); out-of-range starts clamp.
ElementGenerator ElementalEmitter::MakeGather(const Instruction& inst, Generators ops) {
  const Instruction* in = &inst;
  return [this, in, ops](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    const hlo::GatherDims& gd = in->attrs().gather;
    const hlo::Shape& operand = in->operand(0)->shape();
    const hlo::Shape& indices = in->operand(1)->shape();
    std::vector<llvm::Value*> batch, offset;
    for (size_t d = 0; d < index.size(); ++d) {
      (Contains(gd.offset_dims, static_cast<int64_t>(d)) ? offset : batch).push_back(index[d]);
    }
    const int64_t ivd = gd.index_vector_dim;
    const int64_t count = ivd < indices.rank() ? indices.dim(static_cast<int>(ivd)) : 1;
    std::vector<llvm::Value*> src(static_cast<size_t>(operand.rank()), b_->getInt64(0));
    for (int64_t k = 0; k < count && k < static_cast<int64_t>(gd.start_index_map.size()); ++k) {
      std::vector<llvm::Value*> full = batch;
      if (ivd < indices.rank()) full.insert(full.begin() + ivd, b_->getInt64(k));
      TFJIT_ASSIGN_OR_RETURN(llvm::Value * raw, ops[1](IrIndex(std::move(full), indices.dims())));
      const int64_t d = gd.start_index_map[static_cast<size_t>(k)];
      // A full gather along a symbolic dim 0 has one start there: 0.
      llvm::Value* slice = d == 0 && hlo::FullSymbolicGather(*in)
                               ? Dim(operand, 0)
                               : b_->getInt64(gd.slice_sizes[static_cast<size_t>(d)]);
      src[static_cast<size_t>(d)] =
          ClampStart(b_, IndexToInt64(raw, indices.element_type()),
                     b_->CreateSub(Dim(operand, static_cast<int>(d)), slice));
    }
    size_t next = 0;
    for (int64_t d = 0; d < operand.rank(); ++d) {
      if (Contains(gd.collapsed_slice_dims, d)) continue;
      src[static_cast<size_t>(d)] =
          b_->CreateAdd(src[static_cast<size_t>(d)], offset[next++], "", true, true);
    }
    return ops[0](IrIndex(std::move(src), operand.dims()));
  };
}

absl::StatusOr<std::vector<int64_t>> ElementalEmitter::ScatterWindow(const hlo::Instruction& inst) {
  const hlo::Shape& shape = inst.shape();
  const hlo::Shape& updates = inst.operand(2)->shape();
  const hlo::ScatterDims& sd = inst.attrs().scatter;
  std::vector<int64_t> window(static_cast<size_t>(shape.rank()), 1);
  size_t w = 0;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (Contains(sd.inserted_window_dims, d)) continue;
    if (w >= sd.update_window_dims.size()) {
      return InvalidArgument("scatter '%s': too few update_window_dims", inst.name());
    }
    window[static_cast<size_t>(d)] = updates.dim(static_cast<int>(sd.update_window_dims[w++]));
  }
  return window;
}

// Update element `ui`: its window's base from the index vector, a bounds check on the whole
// window, then out[base + offset] = combiner(out[...], update[ui]).
absl::Status ElementalEmitter::EmitScatterUpdate(const hlo::Instruction& inst,
                                                 const std::vector<ElementGenerator>& ops,
                                                 const IrArray& out,
                                                 const std::vector<int64_t>& window,
                                                 const IrIndex& ui) {
  const hlo::Shape& shape = inst.shape();
  const hlo::Shape& indices = inst.operand(1)->shape();
  const hlo::ScatterDims& sd = inst.attrs().scatter;
  const int64_t ivd = sd.index_vector_dim;
  const int64_t count =
      std::min<int64_t>(ivd < indices.rank() ? indices.dim(static_cast<int>(ivd)) : 1,
                        static_cast<int64_t>(sd.scatter_dims_to_operand_dims.size()));
  std::vector<llvm::Value*> batch, offset;
  for (size_t d = 0; d < ui.size(); ++d) {
    (Contains(sd.update_window_dims, static_cast<int64_t>(d)) ? offset : batch).push_back(ui[d]);
  }
  std::vector<llvm::Value*> base(static_cast<size_t>(shape.rank()), b_->getInt64(0));
  for (int64_t k = 0; k < count; ++k) {
    std::vector<llvm::Value*> full = batch;
    if (ivd < indices.rank()) full.insert(full.begin() + ivd, b_->getInt64(k));
    TFJIT_ASSIGN_OR_RETURN(llvm::Value * raw, ops[1](IrIndex(full, indices.dims())));
    base[static_cast<size_t>(sd.scatter_dims_to_operand_dims[static_cast<size_t>(k)])] =
        IndexToInt64(raw, indices.element_type());
  }
  llvm::Value* in_bounds = b_->getTrue();
  for (size_t d = 0; d < base.size(); ++d) {
    const int64_t limit = shape.dim(static_cast<int>(d)) - window[d];
    in_bounds = b_->CreateAnd(in_bounds, b_->CreateICmpSGE(base[d], b_->getInt64(0)));
    in_bounds = b_->CreateAnd(in_bounds, b_->CreateICmpSLE(base[d], b_->getInt64(limit)));
  }
  llvm::Function* fn = b_->GetInsertBlock()->getParent();
  llvm::BasicBlock* then = llvm::BasicBlock::Create(b_->getContext(), "scatter.in", fn);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(b_->getContext(), "scatter.next", fn);
  b_->CreateCondBr(in_bounds, then, merge);
  b_->SetInsertPoint(then);
  size_t next = 0;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (Contains(sd.inserted_window_dims, d)) continue;
    base[static_cast<size_t>(d)] = b_->CreateAdd(base[static_cast<size_t>(d)], offset[next++]);
  }
  const IrIndex dst(base, shape.dims());
  TFJIT_ASSIGN_OR_RETURN(llvm::Value * update, ops[2](ui));
  TFJIT_ASSIGN_OR_RETURN(llvm::Value * combined,
                         EmitScalarComputation(*inst.to_apply(), {out.EmitRead(dst, *b_), update}));
  out.EmitWrite(dst, combined, *b_);
  b_->CreateBr(merge);
  b_->SetInsertPoint(merge);
  return absl::OkStatus();
}

}  // namespace tfjit::llvm_ir
