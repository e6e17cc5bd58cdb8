// Builder: shape-checked instruction creation and the shared scalar combiner computations.
#include "compiler/hlo/builder.h"

#include "absl/strings/str_cat.h"
#include "compiler/hlo/module.h"
#include "compiler/hlo/shape_inference.h"
#include "core/dtype.h"
#include "core/status.h"

namespace tfjit::hlo {

absl::StatusOr<Instruction*> Builder::Add(Opcode opcode, const std::vector<Instruction*>& operands,
                                          Attributes attrs, std::vector<Computation*> called,
                                          const Shape& result_hint) {
  std::vector<const Shape*> shapes;
  shapes.reserve(operands.size());
  for (const Instruction* o : operands) {
    if (o == nullptr) return InvalidArgument("%s: null operand", OpcodeName(opcode));
    if (o->parent() != computation_) {
      return InvalidArgument("%s: operand %%%s belongs to another computation", OpcodeName(opcode),
                             o->name());
    }
    shapes.push_back(&o->shape());
  }
  TFJIT_ASSIGN_OR_RETURN(Shape shape, InferShape(opcode, shapes, attrs, called, result_hint));
  auto inst = std::make_unique<Instruction>(opcode, std::move(shape));
  inst->mutable_attrs() = std::move(attrs);
  inst->set_called_computations(std::move(called));
  inst->set_metadata(metadata_);
  return computation_->AddInstruction(std::move(inst), operands);
}

Instruction* Builder::Parameter(int64_t number, const Shape& shape, const std::string& name) {
  auto inst = std::make_unique<Instruction>(Opcode::kParameter, shape);
  inst->mutable_attrs().parameter_number = number;
  inst->set_name(name);
  inst->set_metadata(metadata_);
  return computation_->AddInstruction(std::move(inst));
}

Instruction* Builder::Constant(Literal literal) {
  auto inst = std::make_unique<Instruction>(Opcode::kConstant, literal.shape());
  inst->mutable_attrs().literal = std::move(literal);
  inst->set_metadata(metadata_);
  return computation_->AddInstruction(std::move(inst));
}

absl::StatusOr<Instruction*> Builder::Unary(Opcode opcode, Instruction* x) {
  return Add(opcode, {x});
}

absl::StatusOr<Instruction*> Builder::Binary(Opcode opcode, Instruction* a, Instruction* b) {
  return Add(opcode, {a, b});
}

absl::StatusOr<Instruction*> Builder::Compare(ComparisonDirection dir, Instruction* a,
                                              Instruction* b) {
  Attributes attrs;
  attrs.comparison = dir;
  return Add(Opcode::kCompare, {a, b}, std::move(attrs));
}

absl::StatusOr<Instruction*> Builder::Select(Instruction* pred, Instruction* on_true,
                                             Instruction* on_false) {
  return Add(Opcode::kSelect, {pred, on_true, on_false});
}

absl::StatusOr<Instruction*> Builder::Clamp(Instruction* lo, Instruction* x, Instruction* hi) {
  return Add(Opcode::kClamp, {lo, x, hi});
}

absl::StatusOr<Instruction*> Builder::Convert(Instruction* x, DType to) {
  return Add(Opcode::kConvert, {x}, {}, {}, x->shape().WithElementType(to));
}

absl::StatusOr<Instruction*> Builder::Broadcast(Instruction* x, const std::vector<int64_t>& dims,
                                                const std::vector<int64_t>& broadcast_dimensions) {
  Attributes attrs;
  attrs.dimensions = broadcast_dimensions;
  return Add(Opcode::kBroadcast, {x}, std::move(attrs), {}, Shape(x->shape().element_type(), dims));
}

absl::StatusOr<Instruction*> Builder::Reshape(Instruction* x, const std::vector<int64_t>& dims) {
  return Add(Opcode::kReshape, {x}, {}, {}, Shape(x->shape().element_type(), dims));
}

absl::StatusOr<Instruction*> Builder::Transpose(Instruction* x, const std::vector<int64_t>& perm) {
  Attributes attrs;
  attrs.dimensions = perm;
  return Add(Opcode::kTranspose, {x}, std::move(attrs));
}

absl::StatusOr<Instruction*> Builder::Slice(Instruction* x, const std::vector<SliceDim>& slice) {
  Attributes attrs;
  attrs.slice = slice;
  return Add(Opcode::kSlice, {x}, std::move(attrs));
}

absl::StatusOr<Instruction*> Builder::Concatenate(const std::vector<Instruction*>& xs,
                                                  int64_t dim) {
  Attributes attrs;
  attrs.dimensions = {dim};
  return Add(Opcode::kConcatenate, xs, std::move(attrs));
}

absl::StatusOr<Instruction*> Builder::Iota(const Shape& shape, int64_t dimension) {
  Attributes attrs;
  attrs.iota_dimension = dimension;
  return Add(Opcode::kIota, {}, std::move(attrs), {}, shape);
}

absl::StatusOr<Instruction*> Builder::Reduce(Instruction* x, Instruction* init,
                                             const std::vector<int64_t>& dims,
                                             Computation* to_apply) {
  Attributes attrs;
  attrs.dimensions = dims;
  return Add(Opcode::kReduce, {x, init}, std::move(attrs), {to_apply});
}

absl::StatusOr<Instruction*> Builder::Dot(Instruction* lhs, Instruction* rhs, const DotDims& dims) {
  Attributes attrs;
  attrs.dot = dims;
  return Add(Opcode::kDot, {lhs, rhs}, std::move(attrs));
}

absl::StatusOr<Instruction*> Builder::Tuple(const std::vector<Instruction*>& xs) {
  return Add(Opcode::kTuple, xs);
}

absl::StatusOr<Instruction*> Builder::GetTupleElement(Instruction* x, int64_t index) {
  Attributes attrs;
  attrs.tuple_index = index;
  return Add(Opcode::kGetTupleElement, {x}, std::move(attrs));
}

namespace {

// "add_f32", "max_f32": short, readable combiner names (max/min abbreviated as in XLA dumps).
std::string CombinerName(Opcode opcode, DType dtype) {
  std::string op(OpcodeName(opcode));
  if (opcode == Opcode::kMaximum) op = "max";
  if (opcode == Opcode::kMinimum) op = "min";
  for (char& c : op) {
    if (c == '-') c = '_';
  }
  return absl::StrCat(op, "_", DTypeHloName(dtype));
}

bool IsScalarCombiner(const Computation& c, Opcode opcode, DType dtype) {
  const Instruction* root = c.root();
  const Shape scalar = Shape::Scalar(dtype);
  return c.num_parameters() == 2 && c.instruction_count() == 3 && root != nullptr &&
         root->opcode() == opcode && root->shape() == scalar && root->operand_count() == 2 &&
         root->operand(0) == c.parameter(0) && root->operand(1) == c.parameter(1) &&
         c.parameter(0)->shape() == scalar && c.parameter(1)->shape() == scalar;
}

}  // namespace

Computation* GetOrAddScalarBinaryComputation(Module* module, Opcode opcode, DType dtype) {
  for (Computation* c : module->computations()) {
    if (IsScalarCombiner(*c, opcode, dtype)) return c;
  }
  Computation* c = module->AddComputation(CombinerName(opcode, dtype));
  Builder b(c);
  Instruction* lhs = b.Parameter(0, Shape::Scalar(dtype), "lhs");
  Instruction* rhs = b.Parameter(1, Shape::Scalar(dtype), "rhs");
  auto root = b.Binary(opcode, lhs, rhs);
  // Only reachable with a dtype the opcode rejects (e.g. and on f32): keep a well-formed
  // computation and let the caller's own shape check report the error.
  if (root.ok()) c->set_root(*root);
  return c;
}

}  // namespace tfjit::hlo
