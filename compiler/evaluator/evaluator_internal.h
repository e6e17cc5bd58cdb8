// Internal interface between the evaluator's opcode families (elementwise, shape ops,
// reductions/contractions, control flow, rng). Not part of the public evaluator API.
#ifndef TFJIT_COMPILER_EVALUATOR_EVALUATOR_INTERNAL_H_
#define TFJIT_COMPILER_EVALUATOR_EVALUATOR_INTERNAL_H_

#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"
#include "compiler/hlo/literal.h"
#include "core/dtype.h"

namespace tfjit::hlo::eval {

using Operands = std::vector<const Literal*>;

// f16/bf16 are computed in f32 and rounded back (HLO.md); every other type in itself.
template <typename T>
inline constexpr bool kIsHalfLike = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;
template <typename T>
inline constexpr bool kIsFloat = std::is_floating_point_v<T> || kIsHalfLike<T>;
template <typename T>
using ComputeT = std::conditional_t<kIsHalfLike<T>, float, T>;

// Odometer increment of a row-major multi-index; false once it wraps past the end.
inline bool NextIndex(std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

inline int64_t LinearIndex(const std::vector<int64_t>& index, const std::vector<int64_t>& strides) {
  int64_t linear = 0;
  for (size_t i = 0; i < index.size(); ++i) linear += index[i] * strides[i];
  return linear;
}

// Bytes per element of an array literal.
int64_t ElementBytes(const Literal& literal);
const uint8_t* ElementPtr(const Literal& literal, int64_t linear);
uint8_t* MutableElementPtr(Literal& literal, int64_t linear);

// out[i] = a[i] op b[i] for i < n, with HLO.md's semantics (integer wrap, x/0, NaN max...).
absl::Status ApplyBinary(Opcode opcode, DType dtype, const void* a, const void* b, void* out,
                         int64_t n);

// Applies a reduction computation (reduce, reduce-window, scatter) to N accumulators and N
// new values, all scalars given by element pointers. A plain `ROOT op(p0, p1)` combiner runs
// through ApplyBinary; anything else calls the evaluator on the computation.
class Combiner {
 public:
  Combiner(const Computation& computation, std::vector<DType> types);
  // acc[i] <- to_apply(acc..., x...)[i].
  absl::Status Combine(const std::vector<uint8_t*>& acc, const std::vector<const uint8_t*>& x);

 private:
  const Computation& computation_;
  std::vector<DType> types_;
  bool fast_ = false;
  bool swapped_ = false;  // the fast root is op(p1, p0)
  Opcode fast_opcode_ = Opcode::kAdd;
};

// Opcode families. Each takes the instruction and its evaluated operands.
absl::StatusOr<Literal> EvalUnary(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalBinary(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalCompare(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalSelect(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalClamp(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalConvert(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalBitcastConvert(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalIsFinite(const Instruction& inst, const Operands& ops);

absl::StatusOr<Literal> EvalBroadcast(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalReshape(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalTranspose(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalSlice(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalDynamicSlice(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalDynamicUpdateSlice(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalConcatenate(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalPad(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalReverse(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalIota(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalGather(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalScatter(const Instruction& inst, const Operands& ops);

absl::StatusOr<Literal> EvalReduce(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalReduceWindow(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalDot(const Instruction& inst, const Operands& ops);
absl::StatusOr<Literal> EvalConvolution(const Instruction& inst, const Operands& ops);

absl::StatusOr<Literal> EvalRngBitGenerator(const Instruction& inst, const Operands& ops);
// The custom-call targets of HLO.md (core/random_fill.h's Philox fills).
absl::StatusOr<Literal> EvalCustomCall(const Instruction& inst, const Operands& ops);

}  // namespace tfjit::hlo::eval

#endif  // TFJIT_COMPILER_EVALUATOR_EVALUATOR_INTERNAL_H_
