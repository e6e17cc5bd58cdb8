// Scalar math of the elemental emitter: unary/binary/compare/convert with HLO.md's edge cases,
// matching the evaluator (compiler/evaluator/elementwise.cc) bit for bit where HLO.md says so.
// f16 computes in f32 (as Eigen::half does); bf16 is kept as raw i16 bits and converted by hand
// (round-to-nearest-even, as Eigen::bfloat16), which keeps LLVM's bfloat lowering out of the way.
#include <cstring>

#include "backends/llvm/elemental_emitter.h"
#include "backends/llvm/fast_math.h"
#include "core/dtype.h"
#include "core/status.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace tfjit::llvm_ir {

using hlo::Opcode;

namespace {
bool IsHalfLike(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }
}  // namespace

llvm::Value* ElementalEmitter::ToComputeFloat(DType dtype, llvm::Value* x) {
  if (dtype == DType::kFloat16) return b_->CreateFPExt(x, b_->getFloatTy());
  if (dtype == DType::kBFloat16) {
    llvm::Value* bits = b_->CreateShl(b_->CreateZExt(x, b_->getInt32Ty()), 16);
    return b_->CreateBitCast(bits, b_->getFloatTy());
  }
  return x;
}

llvm::Value* ElementalEmitter::FromComputeFloat(DType dtype, llvm::Value* x) {
  if (dtype == DType::kFloat16) return b_->CreateFPTrunc(x, b_->getHalfTy());
  if (dtype != DType::kBFloat16) return x;
  // Round to nearest even on the upper 16 bits; NaN becomes a quiet NaN with x's sign.
  llvm::Value* bits = b_->CreateBitCast(x, b_->getInt32Ty());
  llvm::Value* lsb = b_->CreateAnd(b_->CreateLShr(bits, 16), 1);
  llvm::Value* rounded =
      b_->CreateLShr(b_->CreateAdd(bits, b_->CreateAdd(lsb, b_->getInt32(0x7fff))), 16);
  llvm::Value* sign = b_->CreateAnd(b_->CreateLShr(bits, 16), 0x8000);
  llvm::Value* nan_bits = b_->CreateOr(sign, 0x7fc0);
  llvm::Value* is_nan = b_->CreateFCmpUNO(x, x);
  return b_->CreateTrunc(b_->CreateSelect(is_nan, nan_bits, rounded), b_->getInt16Ty());
}

llvm::Value* ElementalEmitter::CallLibm(const char* base_name, llvm::Value* x) {
  std::string name(base_name);
  if (x->getType()->isFloatTy()) name += "f";
  llvm::FunctionType* type = llvm::FunctionType::get(x->getType(), {x->getType()}, false);
  llvm::FunctionCallee callee = module_->getOrInsertFunction(name, type);
  if (auto* fn = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    // errno is never read: let LLVM treat libm as pure (CSE, hoisting).
    fn->setDoesNotAccessMemory();
    fn->setDoesNotThrow();
    fn->setWillReturn();
  }
  return b_->CreateCall(callee, {x});
}

llvm::Value* ElementalEmitter::CallLibm2(const char* base_name, llvm::Value* x, llvm::Value* y) {
  std::string name(base_name);
  if (x->getType()->isFloatTy()) name += "f";
  llvm::FunctionType* type =
      llvm::FunctionType::get(x->getType(), {x->getType(), y->getType()}, false);
  llvm::FunctionCallee callee = module_->getOrInsertFunction(name, type);
  if (auto* fn = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    fn->setDoesNotAccessMemory();
    fn->setDoesNotThrow();
    fn->setWillReturn();
  }
  return b_->CreateCall(callee, {x, y});
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitFloatUnary(Opcode opcode, llvm::Value* x) {
  llvm::Type* t = x->getType();
  const bool is_f32 = t->isFloatTy();
  auto intrinsic = [&](llvm::Intrinsic::ID id) { return b_->CreateUnaryIntrinsic(id, x); };
  llvm::Value* one = llvm::ConstantFP::get(t, 1.0);
  llvm::Value* zero = llvm::ConstantFP::get(t, 0.0);
  switch (opcode) {
    case Opcode::kAbs:
      return intrinsic(llvm::Intrinsic::fabs);
    case Opcode::kNegate:
      return b_->CreateFNeg(x);
    case Opcode::kSign: {
      // NaN and ±0 are returned unchanged; otherwise ±1.
      llvm::Value* signed_one =
          b_->CreateSelect(b_->CreateFCmpOLT(x, zero), llvm::ConstantFP::get(t, -1.0), one);
      llvm::Value* keep = b_->CreateFCmpUEQ(x, zero);  // true for NaN and ±0
      return b_->CreateSelect(keep, x, signed_one);
    }
    case Opcode::kFloor:
      return intrinsic(llvm::Intrinsic::floor);
    case Opcode::kCeil:
      return intrinsic(llvm::Intrinsic::ceil);
    case Opcode::kRoundNearestAfz:
      return intrinsic(llvm::Intrinsic::round);
    case Opcode::kRoundNearestEven:
      return intrinsic(llvm::Intrinsic::roundeven);
    case Opcode::kSqrt:
      return intrinsic(llvm::Intrinsic::sqrt);
    case Opcode::kRsqrt:
      return b_->CreateFDiv(one, intrinsic(llvm::Intrinsic::sqrt));
    // f32 (and f16/bf16, computed in f32) use inline approximations that vectorize
    // (fast_math.h documents their ulp bounds); f64 calls libm.
    case Opcode::kExp:
      return is_f32 ? EmitFastExpF32(b_, x) : CallLibm("exp", x);
    case Opcode::kExpm1:
      return CallLibm("expm1", x);
    case Opcode::kLog:
      return is_f32 ? EmitFastLogF32(b_, x) : CallLibm("log", x);
    case Opcode::kLog1p:
      return CallLibm("log1p", x);
    case Opcode::kCbrt:
      return CallLibm("cbrt", x);
    case Opcode::kTanh:
      return is_f32 ? EmitFastTanhF32(b_, x) : CallLibm("tanh", x);
    case Opcode::kSine:
      return CallLibm("sin", x);
    case Opcode::kCosine:
      return CallLibm("cos", x);
    case Opcode::kTan:
      return CallLibm("tan", x);
    case Opcode::kErf:
      return CallLibm("erf", x);
    case Opcode::kLogistic: {
      if (is_f32) return EmitFastLogisticF32(b_, x);
      llvm::Value* e = CallLibm("exp", b_->CreateFNeg(x));
      return b_->CreateFDiv(one, b_->CreateFAdd(one, e));
    }
    default:
      return Unimplemented("elemental emitter: unary '%s' on floats",
                           std::string(hlo::OpcodeName(opcode)));
  }
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitIntUnary(Opcode opcode, DType dtype,
                                                            llvm::Value* x) {
  const bool is_signed = IsSignedIntegerDType(dtype);
  llvm::Value* zero = llvm::ConstantInt::get(x->getType(), 0);
  switch (opcode) {
    case Opcode::kAbs:
      if (!is_signed) return x;
      return b_->CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_->getFalse());
    case Opcode::kNegate:
      return b_->CreateSub(zero, x);
    case Opcode::kNot:
      return b_->CreateNot(x);
    case Opcode::kSign: {
      llvm::Value* pos = b_->CreateZExt(
          is_signed ? b_->CreateICmpSGT(x, zero) : b_->CreateICmpNE(x, zero), x->getType());
      if (!is_signed) return pos;
      llvm::Value* neg = b_->CreateZExt(b_->CreateICmpSLT(x, zero), x->getType());
      return b_->CreateSub(pos, neg);
    }
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
      return x;
    default:
      return Unimplemented("elemental emitter: unary '%s' on integers",
                           std::string(hlo::OpcodeName(opcode)));
  }
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitUnary(Opcode opcode, DType dtype,
                                                         llvm::Value* x) {
  if (dtype == DType::kBool) {
    if (opcode == Opcode::kNot) return b_->CreateNot(x);
    return x;  // abs/sign/floor/... of a pred is itself, as in the evaluator
  }
  if (IsFloatingDType(dtype)) {
    TFJIT_ASSIGN_OR_RETURN(llvm::Value * r, EmitFloatUnary(opcode, ToComputeFloat(dtype, x)));
    return FromComputeFloat(dtype, r);
  }
  return EmitIntUnary(opcode, dtype, x);
}

llvm::Value* ElementalEmitter::EmitNanPropagatingMinMax(bool is_max, llvm::Value* x,
                                                        llvm::Value* y) {
  // Evaluator: NaN in either operand gives a quiet NaN; else (x > y ? x : y) for maximum.
  llvm::Value* pick = is_max ? b_->CreateFCmpOGT(x, y) : b_->CreateFCmpOLT(x, y);
  llvm::Value* r = b_->CreateSelect(pick, x, y);
  llvm::Value* any_nan = b_->CreateFCmpUNO(x, y);
  return b_->CreateSelect(any_nan, llvm::ConstantFP::getNaN(x->getType()), r);
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitFloatBinary(Opcode opcode, llvm::Value* x,
                                                               llvm::Value* y) {
  switch (opcode) {
    case Opcode::kAdd:
      return b_->CreateFAdd(x, y);
    case Opcode::kSubtract:
      return b_->CreateFSub(x, y);
    case Opcode::kMultiply:
      return b_->CreateFMul(x, y);
    case Opcode::kDivide:
      return b_->CreateFDiv(x, y);
    case Opcode::kRemainder: {
      // fmod(±inf, y) is NaN for every y. NVPTX lowers frem as x - y * trunc(x / y) and
      // returns x when y is infinite, so fmod(-inf, -inf) came out -inf on a GPU (found on an
      // H200 by the differential suite); the select costs nothing next to fmodf on the CPU.
      llvm::Value* r = b_->CreateFRem(x, y);
      llvm::Value* inf = llvm::ConstantFP::getInfinity(x->getType());
      llvm::Value* x_inf =
          b_->CreateFCmpOEQ(b_->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), inf);
      return b_->CreateSelect(x_inf, llvm::ConstantFP::getNaN(x->getType()), r);
    }
    case Opcode::kMaximum:
      return EmitNanPropagatingMinMax(true, x, y);
    case Opcode::kMinimum:
      return EmitNanPropagatingMinMax(false, x, y);
    case Opcode::kPower:
      return CallLibm2("pow", x, y);
    case Opcode::kAtan2:
      return CallLibm2("atan2", x, y);
    default:
      return Unimplemented("elemental emitter: binary '%s' on floats",
                           std::string(hlo::OpcodeName(opcode)));
  }
}

llvm::Value* ElementalEmitter::EmitIntDivRem(bool divide, bool is_signed, llvm::Value* x,
                                             llvm::Value* y) {
  // x/0 = -1 (all ones), x%0 = x; signed MIN/-1 = MIN and MIN%-1 = 0. The divisor is made
  // safe first so the hardware never traps, then the special cases are selected in.
  llvm::Type* t = x->getType();
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  llvm::Value* one = llvm::ConstantInt::get(t, 1);
  llvm::Value* all_ones = llvm::ConstantInt::getAllOnesValue(t);
  llvm::Value* y_zero = b_->CreateICmpEQ(y, zero);
  llvm::Value* unsafe = y_zero;
  if (is_signed) {
    llvm::Value* y_minus_one = b_->CreateICmpEQ(y, all_ones);
    unsafe = b_->CreateOr(y_zero, y_minus_one);
    llvm::Value* safe_y = b_->CreateSelect(unsafe, one, y);
    llvm::Value* q = divide ? b_->CreateSDiv(x, safe_y) : b_->CreateSRem(x, safe_y);
    // y == -1: x / -1 = -x (wraps for MIN), x % -1 = 0.
    llvm::Value* by_minus_one = divide ? b_->CreateSub(zero, x) : zero;
    q = b_->CreateSelect(y_minus_one, by_minus_one, q);
    return b_->CreateSelect(y_zero, divide ? all_ones : x, q);
  }
  llvm::Value* safe_y = b_->CreateSelect(unsafe, one, y);
  llvm::Value* q = divide ? b_->CreateUDiv(x, safe_y) : b_->CreateURem(x, safe_y);
  return b_->CreateSelect(y_zero, divide ? all_ones : x, q);
}

llvm::Value* ElementalEmitter::EmitIntPower(bool is_signed, llvm::Value* base,
                                            llvm::Value* exponent) {
  // Square-and-multiply over every bit of the exponent (branch-free; LLVM folds the unused
  // tail for constant exponents).
  llvm::Type* t = base->getType();
  const unsigned bits = t->getIntegerBitWidth();
  llvm::Value* one = llvm::ConstantInt::get(t, 1);
  llvm::Value* result = one;
  llvm::Value* b = base;
  for (unsigned i = 0; i < bits; ++i) {
    llvm::Value* bit = b_->CreateTrunc(b_->CreateLShr(exponent, i), b_->getInt1Ty());
    result = b_->CreateSelect(bit, b_->CreateMul(result, b), result);
    b = b_->CreateMul(b, b);
  }
  if (!is_signed) return result;
  // Negative exponent: 1 for base 1, ±1 for base -1 (by parity), 0 otherwise.
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  llvm::Value* minus_one = llvm::ConstantInt::getAllOnesValue(t);
  llvm::Value* odd = b_->CreateTrunc(exponent, b_->getInt1Ty());
  llvm::Value* neg_result =
      b_->CreateSelect(b_->CreateICmpEQ(base, one), one,
                       b_->CreateSelect(b_->CreateICmpEQ(base, minus_one),
                                        b_->CreateSelect(odd, minus_one, one), zero));
  return b_->CreateSelect(b_->CreateICmpSLT(exponent, zero), neg_result, result);
}

llvm::Value* ElementalEmitter::EmitIntShift(Opcode opcode, llvm::Value* x, llvm::Value* y) {
  // Amounts are unsigned; >= width gives 0 (arithmetic right shift: the sign fill).
  llvm::Type* t = x->getType();
  const unsigned bits = t->getIntegerBitWidth();
  llvm::Value* too_big = b_->CreateICmpUGE(y, llvm::ConstantInt::get(t, bits));
  llvm::Value* safe_y = b_->CreateSelect(too_big, llvm::ConstantInt::get(t, 0), y);
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  switch (opcode) {
    case Opcode::kShiftLeft:
      return b_->CreateSelect(too_big, zero, b_->CreateShl(x, safe_y));
    case Opcode::kShiftRightLogical:
      return b_->CreateSelect(too_big, zero, b_->CreateLShr(x, safe_y));
    default: {
      llvm::Value* fill = b_->CreateAShr(x, llvm::ConstantInt::get(t, bits - 1));
      return b_->CreateSelect(too_big, fill, b_->CreateAShr(x, safe_y));
    }
  }
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitIntBinary(Opcode opcode, DType dtype,
                                                             llvm::Value* x, llvm::Value* y) {
  const bool is_signed = IsSignedIntegerDType(dtype);
  switch (opcode) {
    case Opcode::kAdd:
      return b_->CreateAdd(x, y);
    case Opcode::kSubtract:
      return b_->CreateSub(x, y);
    case Opcode::kMultiply:
      return b_->CreateMul(x, y);
    case Opcode::kDivide:
      return EmitIntDivRem(true, is_signed, x, y);
    case Opcode::kRemainder:
      return EmitIntDivRem(false, is_signed, x, y);
    case Opcode::kMaximum:
      return b_->CreateSelect(is_signed ? b_->CreateICmpSGT(x, y) : b_->CreateICmpUGT(x, y), x, y);
    case Opcode::kMinimum:
      return b_->CreateSelect(is_signed ? b_->CreateICmpSLT(x, y) : b_->CreateICmpULT(x, y), x, y);
    case Opcode::kPower:
      return EmitIntPower(is_signed, x, y);
    case Opcode::kAnd:
      return b_->CreateAnd(x, y);
    case Opcode::kOr:
      return b_->CreateOr(x, y);
    case Opcode::kXor:
      return b_->CreateXor(x, y);
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightLogical:
    case Opcode::kShiftRightArithmetic:
      return EmitIntShift(opcode, x, y);
    default:
      return Unimplemented("elemental emitter: binary '%s' on integers",
                           std::string(hlo::OpcodeName(opcode)));
  }
}

llvm::Value* ElementalEmitter::EmitPredBinary(Opcode opcode, llvm::Value* x, llvm::Value* y) {
  switch (opcode) {
    case Opcode::kAdd:
    case Opcode::kOr:
    case Opcode::kMaximum:
      return b_->CreateOr(x, y);
    case Opcode::kMultiply:
    case Opcode::kAnd:
    case Opcode::kMinimum:
      return b_->CreateAnd(x, y);
    default:  // xor, subtract
      return b_->CreateXor(x, y);
  }
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitBinary(Opcode opcode, DType dtype,
                                                          llvm::Value* x, llvm::Value* y) {
  if (dtype == DType::kBool) {
    switch (opcode) {
      case Opcode::kAdd:
      case Opcode::kOr:
      case Opcode::kMaximum:
      case Opcode::kMultiply:
      case Opcode::kAnd:
      case Opcode::kMinimum:
      case Opcode::kXor:
      case Opcode::kSubtract:
        return EmitPredBinary(opcode, x, y);
      default: {
        // The evaluator treats the rest as u8 arithmetic on 0/1.
        llvm::Value* xi = b_->CreateZExt(x, b_->getInt8Ty());
        llvm::Value* yi = b_->CreateZExt(y, b_->getInt8Ty());
        TFJIT_ASSIGN_OR_RETURN(llvm::Value * r, EmitIntBinary(opcode, DType::kUInt8, xi, yi));
        return b_->CreateICmpNE(r, b_->getInt8(0));
      }
    }
  }
  if (IsFloatingDType(dtype)) {
    TFJIT_ASSIGN_OR_RETURN(llvm::Value * r, EmitFloatBinary(opcode, ToComputeFloat(dtype, x),
                                                            ToComputeFloat(dtype, y)));
    return FromComputeFloat(dtype, r);
  }
  return EmitIntBinary(opcode, dtype, x, y);
}

llvm::Value* ElementalEmitter::EmitCompare(hlo::ComparisonDirection direction, DType dtype,
                                           llvm::Value* x, llvm::Value* y) {
  using D = hlo::ComparisonDirection;
  if (IsFloatingDType(dtype)) {
    x = ToComputeFloat(dtype, x);
    y = ToComputeFloat(dtype, y);
    switch (direction) {
      case D::kEq:
        return b_->CreateFCmpOEQ(x, y);
      case D::kNe:
        return b_->CreateFCmpUNE(x, y);
      case D::kLt:
        return b_->CreateFCmpOLT(x, y);
      case D::kLe:
        return b_->CreateFCmpOLE(x, y);
      case D::kGt:
        return b_->CreateFCmpOGT(x, y);
      case D::kGe:
        return b_->CreateFCmpOGE(x, y);
    }
  }
  const bool s = IsSignedIntegerDType(dtype);
  switch (direction) {
    case D::kEq:
      return b_->CreateICmpEQ(x, y);
    case D::kNe:
      return b_->CreateICmpNE(x, y);
    case D::kLt:
      return s ? b_->CreateICmpSLT(x, y) : b_->CreateICmpULT(x, y);
    case D::kLe:
      return s ? b_->CreateICmpSLE(x, y) : b_->CreateICmpULE(x, y);
    case D::kGt:
      return s ? b_->CreateICmpSGT(x, y) : b_->CreateICmpUGT(x, y);
    case D::kGe:
      return s ? b_->CreateICmpSGE(x, y) : b_->CreateICmpUGE(x, y);
  }
  return nullptr;
}

llvm::Value* ElementalEmitter::EmitConvert(llvm::Value* x, DType from, DType to) {
  llvm::LLVMContext& ctx = b_->getContext();
  if (from == to) return x;
  const bool from_float = IsFloatingDType(from), to_float = IsFloatingDType(to);
  if (to == DType::kBool) {
    if (from_float) {
      llvm::Value* f = ToComputeFloat(from, x);
      return b_->CreateFCmpUNE(f, llvm::ConstantFP::get(f->getType(), 0.0));
    }
    return b_->CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
  }
  if (from_float && to_float) {
    // Half-like types convert through f32 (Eigen's rounding, which the evaluator uses).
    llvm::Value* f = ToComputeFloat(from, x);
    if (IsHalfLike(to)) {
      if (!f->getType()->isFloatTy()) f = b_->CreateFPCast(f, b_->getFloatTy());
      return FromComputeFloat(to, f);
    }
    return b_->CreateFPCast(f, ValueType(to, ctx));
  }
  if (from_float) {
    // Saturating, NaN -> 0 (llvm.fpto[su]i.sat has exactly these semantics).
    llvm::Value* f = ToComputeFloat(from, x);
    auto id = IsSignedIntegerDType(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return b_->CreateIntrinsic(id, {ValueType(to, ctx), f->getType()}, {f});
  }
  const bool from_signed = IsSignedIntegerDType(from);  // pred zero-extends
  if (to_float) {
    llvm::Type* target = IsHalfLike(to) ? b_->getFloatTy() : ValueType(to, ctx);
    llvm::Value* f = from_signed ? b_->CreateSIToFP(x, target) : b_->CreateUIToFP(x, target);
    return FromComputeFloat(to, f);
  }
  return b_->CreateIntCast(x, ValueType(to, ctx), from_signed);
}

llvm::Value* ElementalEmitter::EmitIsFinite(DType dtype, llvm::Value* x) {
  if (!IsFloatingDType(dtype)) return b_->getTrue();
  llvm::Value* f = ToComputeFloat(dtype, x);
  llvm::Value* abs = b_->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, f);
  return b_->CreateFCmpOLT(abs, llvm::ConstantFP::getInfinity(f->getType()));
}

llvm::Value* ElementalEmitter::EmitLiteralElement(const hlo::Literal& literal, int64_t i) {
  DType dtype = literal.shape().element_type();
  llvm::Type* type = ValueType(dtype, b_->getContext());
  const auto* bytes = static_cast<const uint8_t*>(literal.tensor().raw_data());
  const size_t size = DTypeSize(dtype);
  uint64_t raw = 0;
  std::memcpy(&raw, bytes + static_cast<size_t>(i) * size, size);
  if (dtype == DType::kBool) return b_->getInt1(raw != 0);
  if (type->isIntegerTy()) return llvm::ConstantInt::get(type, raw);
  // Floats from their exact bits.
  const unsigned width = static_cast<unsigned>(size * 8);
  return llvm::ConstantFP::get(b_->getContext(),
                               llvm::APFloat(type->getFltSemantics(), llvm::APInt(width, raw)));
}

}  // namespace tfjit::llvm_ir
