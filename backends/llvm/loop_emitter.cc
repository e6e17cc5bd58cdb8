// Counted loops, shape loop nests with a partitioned outermost range, entry-block allocas.
#include "backends/llvm/loop_emitter.h"

#include "absl/strings/str_cat.h"

#include <string>

#include "core/status.h"

namespace tfjit::llvm_ir {

namespace {
// Counted loops with at most this many iterations may still be fully unrolled (3x3 windows).
constexpr int64_t kMaxUnrolledTripCount = 8;
}  // namespace

absl::Status EmitForLoop(llvm::IRBuilder<>& b, absl::string_view name, llvm::Value* start,
                         llvm::Value* end, const std::function<absl::Status(llvm::Value*)>& body) {
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  std::string n(name);
  llvm::BasicBlock* preheader = b.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx, n + ".header", fn);
  llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ctx, n + ".body", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, n + ".exit", fn);
  b.CreateBr(header);

  b.SetInsertPoint(header);
  llvm::PHINode* iv = b.CreatePHI(b.getInt64Ty(), 2, n + ".iv");
  iv->addIncoming(start, preheader);
  b.CreateCondBr(b.CreateICmpSLT(iv, end), body_bb, exit);

  b.SetInsertPoint(body_bb);
  TFJIT_RETURN_IF_ERROR(body(iv));
  llvm::Value* next = b.CreateAdd(iv, b.getInt64(1), n + ".next", /*HasNUW=*/true,
                                  /*HasNSW=*/true);
  iv->addIncoming(next, b.GetInsertBlock());
  llvm::BranchInst* latch = b.CreateBr(header);
  // A counted loop longer than a few iterations is never unrolled: fully unrolling window
  // and reduction loops (then vectorising the loop around them with gathers) multiplied code
  // size and LLVM compile time about tenfold for no speedup. The vectoriser still interleaves.
  auto* c_start = llvm::dyn_cast<llvm::ConstantInt>(start);
  auto* c_end = llvm::dyn_cast<llvm::ConstantInt>(end);
  if (c_start == nullptr || c_end == nullptr ||
      c_end->getSExtValue() - c_start->getSExtValue() > kMaxUnrolledTripCount) {
    llvm::MDNode* disable =
        llvm::MDNode::get(ctx, llvm::MDString::get(ctx, "llvm.loop.unroll.disable"));
    llvm::MDNode* loop_id = llvm::MDNode::getDistinct(ctx, {nullptr, disable});
    loop_id->replaceOperandWith(0, loop_id);
    latch->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
  }

  b.SetInsertPoint(exit);
  return absl::OkStatus();
}

int64_t PartitionExtent(const std::vector<int64_t>& dims, LoopShape loop_shape) {
  if (loop_shape == LoopShape::kFlat) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  return dims.empty() ? 1 : dims[0];
}

namespace {

// Emits loops for dimensions [dim, rank) below the already fixed outer coordinates.
absl::Status EmitNestedLevel(llvm::IRBuilder<>& b, const std::vector<int64_t>& dims, size_t dim,
                             std::vector<llvm::Value*>& coords, llvm::Value* linear_base,
                             const std::function<absl::Status(const IrIndex&)>& body) {
  if (dim == dims.size()) {
    return body(IrIndex(coords, dims, linear_base));
  }
  return EmitForLoop(b, absl::StrCat("d", dim), b.getInt64(0), b.getInt64(dims[dim]),
                     [&](llvm::Value* i) -> absl::Status {
                       coords[dim] = i;
                       llvm::Value* linear = b.CreateAdd(
                           b.CreateMul(linear_base, b.getInt64(dims[dim]), "", true, true), i, "",
                           true, true);
                       return EmitNestedLevel(b, dims, dim + 1, coords, linear, body);
                     });
}

}  // namespace

absl::Status EmitShapeLoop(llvm::IRBuilder<>& b, const std::vector<int64_t>& dims,
                           LoopShape loop_shape, llvm::Value* begin, llvm::Value* end,
                           const std::function<absl::Status(const IrIndex&)>& body) {
  if (loop_shape == LoopShape::kFlat || dims.empty()) {
    return EmitForLoop(b, "elem", begin, end, [&](llvm::Value* i) -> absl::Status {
      if (dims.empty()) return body(IrIndex());
      return body(IrIndex::FromLinear(i, dims, b));
    });
  }
  std::vector<llvm::Value*> coords(dims.size());
  return EmitForLoop(b, "d0", begin, end, [&](llvm::Value* i) -> absl::Status {
    coords[0] = i;
    return EmitNestedLevel(b, dims, 1, coords, i, body);
  });
}

llvm::AllocaInst* EmitEntryAlloca(llvm::IRBuilder<>& b, llvm::Type* type, absl::string_view name) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry_builder(&fn->getEntryBlock(), fn->getEntryBlock().begin());
  return entry_builder.CreateAlloca(type, nullptr, std::string(name));
}

}  // namespace tfjit::llvm_ir
