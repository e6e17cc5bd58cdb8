// Builder: creates shape-checked instructions in one computation. The only factory for
// instructions outside the parser (no Create* zoo on Instruction).
#ifndef TFJIT_COMPILER_HLO_BUILDER_H_
#define TFJIT_COMPILER_HLO_BUILDER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/hlo/computation.h"

namespace tfjit::hlo {

class Builder {
 public:
  explicit Builder(Computation* computation) : computation_(computation) {}

  Computation* computation() const { return computation_; }
  // Metadata stamped on every instruction created from now on.
  void set_metadata(Metadata m) { metadata_ = std::move(m); }
  const Metadata& metadata() const { return metadata_; }

  // The general form: infers the shape (InferShape), checks arity, adds the instruction.
  absl::StatusOr<Instruction*> Add(Opcode opcode, const std::vector<Instruction*>& operands,
                                   Attributes attrs = {}, std::vector<Computation*> called = {},
                                   const Shape& result_hint = Shape());

  Instruction* Parameter(int64_t number, const Shape& shape, const std::string& name = "");
  Instruction* Constant(Literal literal);
  template <typename T>
  Instruction* ScalarConstant(DType dtype, T value) {
    return Constant(Literal::Scalar<T>(dtype, value));
  }

  absl::StatusOr<Instruction*> Unary(Opcode opcode, Instruction* x);
  absl::StatusOr<Instruction*> Binary(Opcode opcode, Instruction* a, Instruction* b);
  absl::StatusOr<Instruction*> Compare(ComparisonDirection dir, Instruction* a, Instruction* b);
  absl::StatusOr<Instruction*> Select(Instruction* pred, Instruction* on_true,
                                      Instruction* on_false);
  absl::StatusOr<Instruction*> Clamp(Instruction* lo, Instruction* x, Instruction* hi);
  absl::StatusOr<Instruction*> Convert(Instruction* x, DType to);
  // result dims = `dims`; operand dim i maps to result dim broadcast_dimensions[i].
  absl::StatusOr<Instruction*> Broadcast(Instruction* x, const std::vector<int64_t>& dims,
                                         const std::vector<int64_t>& broadcast_dimensions);
  absl::StatusOr<Instruction*> Reshape(Instruction* x, const std::vector<int64_t>& dims);
  absl::StatusOr<Instruction*> Transpose(Instruction* x, const std::vector<int64_t>& perm);
  absl::StatusOr<Instruction*> Slice(Instruction* x, const std::vector<SliceDim>& slice);
  absl::StatusOr<Instruction*> Concatenate(const std::vector<Instruction*>& xs, int64_t dim);
  absl::StatusOr<Instruction*> Iota(const Shape& shape, int64_t dimension);
  // Single-output reduce over `dims` with the scalar computation `to_apply`.
  absl::StatusOr<Instruction*> Reduce(Instruction* x, Instruction* init,
                                      const std::vector<int64_t>& dims, Computation* to_apply);
  absl::StatusOr<Instruction*> Dot(Instruction* lhs, Instruction* rhs, const DotDims& dims);
  absl::StatusOr<Instruction*> Tuple(const std::vector<Instruction*>& xs);
  absl::StatusOr<Instruction*> GetTupleElement(Instruction* x, int64_t index);

 private:
  Computation* computation_;
  Metadata metadata_;
};

// Adds to `module` a scalar computation `(a: T[], b: T[]) -> T[] { ROOT opcode(a, b) }`,
// e.g. the `add` combiner of a sum reduction. Reuses an identical one if present.
Computation* GetOrAddScalarBinaryComputation(Module* module, Opcode opcode, DType dtype);

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_HLO_BUILDER_H_
