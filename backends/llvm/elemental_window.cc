// The elemental generator of reduce-window (single output): an output element is the
// `to_apply` combination of init and every cell of its window, where a cell outside the input
// (padding, or a hole of lhs dilation) contributes init, as HLO.md and the evaluator define.
// Pooling (MaxPool/AvgPool) lowers to it.
#include <functional>
#include <vector>

#include "backends/llvm/elemental_emitter.h"
#include "backends/llvm/loop_emitter.h"
#include "core/status.h"

namespace tfjit::llvm_ir {

using hlo::Instruction;

ElementGenerator ElementalEmitter::MakeReduceWindow(const Instruction& inst, Generators ops) {
  const hlo::Shape in = inst.operand(0)->shape();
  const DType type = inst.shape().element_type();
  const std::vector<hlo::WindowDim> window = inst.attrs().window;
  const hlo::Computation* combiner = inst.to_apply();
  return [this, in, type, window, combiner,
          ops](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    llvm::Type* t = ValueType(type, b_->getContext());
    llvm::AllocaInst* acc = EmitEntryAlloca(*b_, t, "rw.acc");
    TFJIT_ASSIGN_OR_RETURN(llvm::Value * init, ops[1](IrIndex()));
    b_->CreateStore(init, acc);
    const size_t rank = window.size();
    // An empty input has no cell to read: every window cell is then padding.
    const bool empty = in.num_elements() == 0;
    std::vector<llvm::Value*> coords(rank);
    // Window dims loop outer to inner. `inside` (i1) says whether every coordinate chosen so
    // far lies in the input; outside cells read a clamped (valid) coordinate and are replaced
    // by init, which keeps the loop body free of branches.
    std::function<absl::Status(size_t, llvm::Value*)> level =
        [&](size_t d, llvm::Value* inside) -> absl::Status {
      if (d == rank) {
        llvm::Value* x = init;
        if (!empty) {
          TFJIT_ASSIGN_OR_RETURN(llvm::Value * v, ops[0](IrIndex(coords, in.dims())));
          x = b_->CreateSelect(inside, v, init);
        }
        llvm::Value* current = b_->CreateLoad(t, acc);
        // HLO.md lets reductions reassociate, as reduce does.
        llvm::IRBuilder<>::FastMathFlagGuard guard(*b_);
        llvm::FastMathFlags fmf;
        fmf.setAllowReassoc();
        b_->setFastMathFlags(fmf);
        TFJIT_ASSIGN_OR_RETURN(llvm::Value * next, EmitScalarComputation(*combiner, {current, x}));
        b_->CreateStore(next, acc);
        return absl::OkStatus();
      }
      const hlo::WindowDim& w = window[d];
      llvm::Value* size = Dim(in, static_cast<int>(d));
      return EmitForLoop(
          *b_, "rw", b_->getInt64(0), b_->getInt64(w.size), [&](llvm::Value* k) -> absl::Status {
            // pos = out * stride + k * rhs_dilate - pad_lo, in the lhs-dilated input.
            llvm::Value* pos =
                b_->CreateSub(b_->CreateAdd(b_->CreateMul(index[d], b_->getInt64(w.stride)),
                                            b_->CreateMul(k, b_->getInt64(w.rhs_dilate))),
                              b_->getInt64(w.pad_lo));
            llvm::Value* ok = b_->CreateICmpSGE(pos, b_->getInt64(0));
            llvm::Value* src = pos;
            if (w.lhs_dilate != 1) {
              llvm::Value* dil = b_->getInt64(w.lhs_dilate);
              ok = b_->CreateAnd(ok, b_->CreateICmpEQ(b_->CreateSRem(pos, dil), b_->getInt64(0)));
              src = b_->CreateSDiv(pos, dil);
            }
            ok = b_->CreateAnd(ok, b_->CreateICmpSLT(src, size));
            coords[d] = b_->CreateSelect(ok, src, b_->getInt64(0));
            return level(d + 1, inside == nullptr ? ok : b_->CreateAnd(inside, ok));
          });
    };
    TFJIT_RETURN_IF_ERROR(level(0, rank == 0 ? b_->getTrue() : nullptr));
    return b_->CreateLoad(t, acc);
  };
}

}  // namespace tfjit::llvm_ir
