// Element types, index arithmetic and element loads/stores for IrArray.
#include "backends/llvm/ir_array.h"

#include "core/dtype.h"

namespace tfjit::llvm_ir {

llvm::Type* ValueType(DType dtype, llvm::LLVMContext& context) {
  switch (dtype) {
    case DType::kBool:
      return llvm::Type::getInt1Ty(context);
    case DType::kInt8:
    case DType::kUInt8:
      return llvm::Type::getInt8Ty(context);
    case DType::kInt16:
    case DType::kUInt16:
      return llvm::Type::getInt16Ty(context);
    case DType::kInt32:
    case DType::kUInt32:
      return llvm::Type::getInt32Ty(context);
    case DType::kInt64:
    case DType::kUInt64:
      return llvm::Type::getInt64Ty(context);
    case DType::kFloat16:
      return llvm::Type::getHalfTy(context);
    case DType::kBFloat16:
      // Raw bits: bf16 math converts to f32 by hand (elemental_math.cc), which keeps LLVM's
      // partial bfloat lowering out of the picture.
      return llvm::Type::getInt16Ty(context);
    case DType::kFloat32:
      return llvm::Type::getFloatTy(context);
    case DType::kFloat64:
      return llvm::Type::getDoubleTy(context);
    default:
      return nullptr;
  }
}

llvm::Type* StorageType(DType dtype, llvm::LLVMContext& context) {
  if (dtype == DType::kBool) return llvm::Type::getInt8Ty(context);
  return ValueType(dtype, context);
}

IrIndex IrIndex::FromLinear(llvm::Value* linear, const std::vector<int64_t>& dims,
                            llvm::IRBuilder<>& b) {
  std::vector<llvm::Value*> multidim(dims.size());
  std::vector<int64_t> strides = hlo::RowMajorStrides(dims);
  for (size_t i = 0; i < dims.size(); ++i) {
    llvm::Value* v = linear;
    if (strides[i] != 1) v = b.CreateUDiv(v, b.getInt64(strides[i]));
    // The outermost dimension needs no wrap-around.
    if (i > 0 && dims[i] != 1) v = b.CreateURem(v, b.getInt64(dims[i]));
    // Size-1 (and empty) dimensions always index 0; this also keeps division by a zero
    // stride out of the IR.
    if (dims[i] <= 1 || strides[i] == 0) v = b.getInt64(0);
    multidim[i] = v;
  }
  return IrIndex(std::move(multidim), dims, linear);
}

llvm::Value* IrIndex::Linearize(const std::vector<int64_t>& dims, llvm::IRBuilder<>& b) const {
  if (linear_ != nullptr && dims == dims_) return linear_;
  std::vector<int64_t> strides = hlo::RowMajorStrides(dims);
  llvm::Value* sum = b.getInt64(0);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    llvm::Value* term = multidim_[i];
    if (strides[i] != 1) term = b.CreateMul(term, b.getInt64(strides[i]), "", true, true);
    sum = b.CreateAdd(sum, term, "", true, true);
  }
  return sum;
}

llvm::Value* IrArray::EmitAddress(const IrIndex& index, llvm::IRBuilder<>& b) const {
  llvm::Type* type = StorageType(shape_.element_type(), b.getContext());
  if (shape_.rank() == 0) return base_;
  llvm::Value* linear = index.Linearize(shape_.dims(), b);
  return b.CreateInBoundsGEP(type, base_, linear);
}

llvm::Value* IrArray::EmitRead(const IrIndex& index, llvm::IRBuilder<>& b) const {
  DType dtype = shape_.element_type();
  llvm::Type* type = StorageType(dtype, b.getContext());
  llvm::LoadInst* load =
      b.CreateAlignedLoad(type, EmitAddress(index, b), llvm::Align(DTypeSize(dtype)));
  if (dtype == DType::kBool) return b.CreateICmpNE(load, b.getInt8(0));
  return load;
}

void IrArray::EmitWrite(const IrIndex& index, llvm::Value* value, llvm::IRBuilder<>& b) const {
  DType dtype = shape_.element_type();
  if (dtype == DType::kBool) value = b.CreateZExt(value, b.getInt8Ty());
  b.CreateAlignedStore(value, EmitAddress(index, b), llvm::Align(DTypeSize(dtype)));
}

}  // namespace tfjit::llvm_ir
