// Inline, branch-free f32 approximations of exp, log, tanh and logistic, emitted as plain LLVM
// IR (fma, bit casts, selects, no calls) so that loops containing them vectorize. Accuracy
// bounds (measured against the exact value) are in fast_math.cc; HLO.md allows them. Used for
// f32, f16 and bf16 (which compute in f32); f64 keeps calling libm.
#ifndef TFJIT_BACKENDS_LLVM_FAST_MATH_H_
#define TFJIT_BACKENDS_LLVM_FAST_MATH_H_

#include "llvm/IR/IRBuilder.h"

namespace tfjit::llvm_ir {

// Each takes `x` of type float (or a vector of float) and returns a value of the same type,
// emitted at `b`'s insertion point. NaN inputs return NaN; ±inf and ±0 give the exact limits.
llvm::Value* EmitFastExpF32(llvm::IRBuilder<>* b, llvm::Value* x);
llvm::Value* EmitFastLogF32(llvm::IRBuilder<>* b, llvm::Value* x);
llvm::Value* EmitFastTanhF32(llvm::IRBuilder<>* b, llvm::Value* x);
llvm::Value* EmitFastLogisticF32(llvm::IRBuilder<>* b, llvm::Value* x);

}  // namespace tfjit::llvm_ir

#endif  // TFJIT_BACKENDS_LLVM_FAST_MATH_H_
