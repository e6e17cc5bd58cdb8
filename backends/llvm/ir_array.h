// IR-level arrays and indices: element types of HLO shapes in LLVM, multi-dimensional indices
// (with an optional linear form for contiguous access), and loads/stores of elements.
#ifndef TFJIT_BACKENDS_LLVM_IR_ARRAY_H_
#define TFJIT_BACKENDS_LLVM_IR_ARRAY_H_

#include <cstdint>
#include <vector>

#include "compiler/hlo/shape.h"
#include "llvm/IR/IRBuilder.h"

namespace tfjit::llvm_ir {

// The type an element has in registers: i1 for pred, iN for integers, half/float/double, and
// i16 (raw bits) for bf16.
llvm::Type* ValueType(DType dtype, llvm::LLVMContext& context);
// The type an element has in memory: as ValueType except pred, stored as i8 (C++ bool).
llvm::Type* StorageType(DType dtype, llvm::LLVMContext& context);

// An index into an array of `dims`: one i64 per dimension, plus, when the producer knows it,
// the row-major linear index (lets same-shaped accesses use one contiguous GEP, which the loop
// vectoriser turns into vector loads).
class IrIndex {
 public:
  IrIndex() = default;  // the index of a scalar
  IrIndex(std::vector<llvm::Value*> multidim, std::vector<int64_t> dims,
          llvm::Value* linear = nullptr)
      : multidim_(std::move(multidim)), dims_(std::move(dims)), linear_(linear) {}
  // Builds the multi-dimensional form of `linear` (div/rem by constant strides; unused parts
  // are removed by DCE).
  static IrIndex FromLinear(llvm::Value* linear, const std::vector<int64_t>& dims,
                            llvm::IRBuilder<>& b);

  const std::vector<llvm::Value*>& multidim() const { return multidim_; }
  llvm::Value* operator[](size_t i) const { return multidim_[i]; }
  size_t size() const { return multidim_.size(); }
  const std::vector<int64_t>& dims() const { return dims_; }
  // The linear index, or null when not known.
  llvm::Value* linear() const { return linear_; }
  // The linear index valid for an array of `dims` (the known one if dims match, else computed).
  llvm::Value* Linearize(const std::vector<int64_t>& dims, llvm::IRBuilder<>& b) const;

 private:
  std::vector<llvm::Value*> multidim_;
  std::vector<int64_t> dims_;
  llvm::Value* linear_ = nullptr;
};

// A dense row-major array in memory: a base pointer and an HLO array shape.
class IrArray {
 public:
  IrArray() = default;
  IrArray(llvm::Value* base, hlo::Shape shape) : base_(base), shape_(std::move(shape)) {}

  llvm::Value* base() const { return base_; }
  const hlo::Shape& shape() const { return shape_; }

  llvm::Value* EmitAddress(const IrIndex& index, llvm::IRBuilder<>& b) const;
  // Loads the element (pred becomes i1).
  llvm::Value* EmitRead(const IrIndex& index, llvm::IRBuilder<>& b) const;
  // Stores `value` (of ValueType) at `index`.
  void EmitWrite(const IrIndex& index, llvm::Value* value, llvm::IRBuilder<>& b) const;

 private:
  llvm::Value* base_ = nullptr;
  hlo::Shape shape_;
};

}  // namespace tfjit::llvm_ir

#endif  // TFJIT_BACKENDS_LLVM_IR_ARRAY_H_
