// Elemental convolution: the element at an output index is a loop over the kernel's spatial
// positions and, innermost, over the input features of the output feature's group. Padding,
// strides, lhs dilation (transposed convolution) and rhs dilation are index arithmetic; taps
// that land on padding or on a hole of lhs dilation are skipped by a branch, which is omitted
// for a dim whose taps are provably always inside (VALID windows), so the inner loop stays a
// plain counted loop over contiguous features that LLVM vectorises.
#include "backends/llvm/elemental_emitter.h"
#include "backends/llvm/loop_emitter.h"
#include "core/dtype.h"
#include "core/status.h"

namespace tfjit::llvm_ir {

using hlo::Instruction;

namespace {

// if (cond) body(); the builder ends after the join.
absl::Status EmitIf(llvm::IRBuilder<>& b, llvm::Value* cond,
                    const std::function<absl::Status()>& body) {
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx, "conv.tap", fn);
  llvm::BasicBlock* join = llvm::BasicBlock::Create(ctx, "conv.join", fn);
  b.CreateCondBr(cond, then_bb, join);
  b.SetInsertPoint(then_bb);
  TFJIT_RETURN_IF_ERROR(body());
  b.CreateBr(join);
  b.SetInsertPoint(join);
  return absl::OkStatus();
}

// Whether every tap of a window dim reads inside the (undilated) input, for any output.
bool AlwaysInside(const hlo::WindowDim& w, int64_t in, int64_t out) {
  if (w.lhs_dilate != 1) return false;
  if (out == 0) return true;  // no element is ever generated
  if (w.pad_lo > 0) return false;
  const int64_t last = (out - 1) * w.stride + (w.size - 1) * w.rhs_dilate - w.pad_lo;
  return last < in;
}

}  // namespace

ElementGenerator ElementalEmitter::MakeConvolution(const Instruction& inst, Generators ops) {
  const hlo::Shape lhs = inst.operand(0)->shape();
  const hlo::Shape rhs = inst.operand(1)->shape();
  const hlo::Shape out = inst.shape();
  const DType type = out.element_type();
  const hlo::ConvDims cd = inst.attrs().conv;
  const std::vector<hlo::WindowDim> window = inst.attrs().window;
  const int64_t groups = inst.attrs().feature_group_count;
  const int64_t in_per_group = rhs.dim(static_cast<int>(cd.kernel_input_feature));
  const int64_t out_per_group = out.dim(static_cast<int>(cd.output_feature)) / groups;
  std::vector<bool> inside;
  for (size_t s = 0; s < window.size(); ++s) {
    inside.push_back(AlwaysInside(window[s], lhs.dim(static_cast<int>(cd.input_spatial[s])),
                                  out.dim(static_cast<int>(cd.output_spatial[s]))));
  }
  return [this, lhs, rhs, type, cd, window, groups, in_per_group, out_per_group, inside,
          ops](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    // f16/bf16 accumulate in f32, like the evaluator.
    const bool float_type = IsFloatingDType(type);
    const bool half_like = type == DType::kFloat16 || type == DType::kBFloat16;
    llvm::Type* acc_type = half_like ? b_->getFloatTy() : ValueType(type, b_->getContext());
    llvm::AllocaInst* acc = EmitEntryAlloca(*b_, acc_type, "conv.acc");
    b_->CreateStore(llvm::Constant::getNullValue(acc_type), acc);

    std::vector<llvm::Value*> lc(static_cast<size_t>(lhs.rank()));
    std::vector<llvm::Value*> rc(static_cast<size_t>(rhs.rank()));
    llvm::Value* of = index[static_cast<size_t>(cd.output_feature)];
    lc[static_cast<size_t>(cd.input_batch)] = index[static_cast<size_t>(cd.output_batch)];
    rc[static_cast<size_t>(cd.kernel_output_feature)] = of;
    llvm::Value* feature_base = b_->getInt64(0);
    if (groups > 1) {
      feature_base = b_->CreateMul(b_->CreateUDiv(of, b_->getInt64(out_per_group)),
                                   b_->getInt64(in_per_group), "conv.group_base", true, true);
    }

    auto accumulate = [&](llvm::Value* ci) -> absl::Status {
      lc[static_cast<size_t>(cd.input_feature)] =
          groups > 1 || in_per_group > 1 ? b_->CreateAdd(feature_base, ci, "", true, true) : ci;
      rc[static_cast<size_t>(cd.kernel_input_feature)] = ci;
      TFJIT_ASSIGN_OR_RETURN(llvm::Value * a, ops[0](IrIndex(lc, lhs.dims())));
      TFJIT_ASSIGN_OR_RETURN(llvm::Value * w, ops[1](IrIndex(rc, rhs.dims())));
      llvm::Value* cur = b_->CreateLoad(acc_type, acc);
      llvm::Value* next;
      if (type == DType::kBool) {
        next = b_->CreateOr(cur, b_->CreateAnd(a, w));
      } else if (float_type) {
        // Convolutions may reassociate (HLO.md); this lets LLVM vectorise the feature loop.
        llvm::IRBuilder<>::FastMathFlagGuard guard(*b_);
        llvm::FastMathFlags fmf;
        fmf.setAllowReassoc();
        b_->setFastMathFlags(fmf);
        next =
            b_->CreateFAdd(cur, b_->CreateFMul(ToComputeFloat(type, a), ToComputeFloat(type, w)));
      } else {
        next = b_->CreateAdd(cur, b_->CreateMul(a, w));
      }
      b_->CreateStore(next, acc);
      return absl::OkStatus();
    };

    std::function<absl::Status(size_t)> level = [&](size_t s) -> absl::Status {
      if (s == window.size()) {
        if (in_per_group == 1) return accumulate(b_->getInt64(0));
        return EmitForLoop(*b_, "conv.f", b_->getInt64(0), b_->getInt64(in_per_group), accumulate);
      }
      const hlo::WindowDim& w = window[s];
      const size_t in_dim = static_cast<size_t>(cd.input_spatial[s]);
      llvm::Value* o = index[static_cast<size_t>(cd.output_spatial[s])];
      return EmitForLoop(
          *b_, "conv.k", b_->getInt64(0), b_->getInt64(w.size),
          [&](llvm::Value* k) -> absl::Status {
            rc[static_cast<size_t>(cd.kernel_spatial[s])] = k;
            // pos = o * stride + k * rhs_dilate - pad_lo, in the lhs-dilated, padded input.
            llvm::Value* pos = b_->CreateAdd(
                b_->CreateMul(o, b_->getInt64(w.stride), "", true, true),
                b_->CreateMul(k, b_->getInt64(w.rhs_dilate), "", true, true), "", true, true);
            pos = b_->CreateSub(pos, b_->getInt64(w.pad_lo), "conv.pos", false, true);
            if (inside[s]) {
              lc[in_dim] = pos;
              return level(s + 1);
            }
            llvm::Value* i = pos;
            llvm::Value* ok = b_->CreateICmpSGE(pos, b_->getInt64(0));
            if (w.lhs_dilate != 1) {
              llvm::Value* step = b_->getInt64(w.lhs_dilate);
              ok = b_->CreateAnd(ok, b_->CreateICmpEQ(b_->CreateSRem(pos, step), b_->getInt64(0)));
              i = b_->CreateSDiv(pos, step);
            }
            ok = b_->CreateAnd(
                ok, b_->CreateICmpSLT(i, b_->getInt64(lhs.dim(static_cast<int>(in_dim)))));
            return EmitIf(*b_, ok, [&]() -> absl::Status {
              lc[in_dim] = i;
              return level(s + 1);
            });
          });
    };
    if (in_per_group > 0) TFJIT_RETURN_IF_ERROR(level(0));
    llvm::Value* result = b_->CreateLoad(acc_type, acc);
    return float_type ? FromComputeFloat(type, result) : result;
  };
}

}  // namespace tfjit::llvm_ir
