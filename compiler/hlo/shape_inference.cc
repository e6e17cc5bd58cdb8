// Shape inference for every opcode (HLO.md): elementwise rules, data movement, reductions,
// contractions, windows and control flow. Errors are INVALID_ARGUMENT naming the opcode.
#include "compiler/hlo/shape_inference.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/hlo/computation.h"
#include "core/dtype.h"
#include "core/status.h"

namespace tfjit::hlo {
namespace {

using Shapes = std::vector<const Shape*>;

std::string Join(const std::vector<int64_t>& v) {
  return absl::StrCat("{", absl::StrJoin(v, ","), "}");
}

std::string ShapesString(const Shapes& shapes) {
  std::vector<std::string> parts;
  for (const Shape* s : shapes) parts.push_back(s->ToString());
  return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
}

absl::Status Error(Opcode op, const Shapes& operands, absl::string_view why) {
  return InvalidArgument("%s%s: %s", OpcodeName(op), ShapesString(operands), why);
}

bool IsFloat(const Shape& s) { return s.IsArray() && IsFloatingDType(s.element_type()); }
bool IsPredOrInt(const Shape& s) {
  return s.IsArray() && (s.element_type() == DType::kBool || IsIntegerDType(s.element_type()));
}

absl::Status CheckArrays(Opcode op, const Shapes& operands) {
  for (const Shape* s : operands) {
    if (!s->IsArray()) return Error(op, operands, "operands must be arrays");
  }
  return absl::OkStatus();
}

// Every dimension index in `dims` is in [0, rank) and appears once.
absl::Status CheckDimIndices(Opcode op, const Shapes& operands, const std::vector<int64_t>& dims,
                             int64_t rank, absl::string_view what) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[static_cast<size_t>(d)]) {
      return Error(
          op, operands,
          absl::StrCat(what, "=", Join(dims), " is out of range or repeats for rank ", rank));
    }
    seen[static_cast<size_t>(d)] = true;
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferUnary(Opcode op, const Shapes& operands) {
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  const Shape& x = *operands[0];
  switch (op) {
    case Opcode::kNot:
      if (!IsPredOrInt(x)) return Error(op, operands, "needs pred or integer operands");
      return x;
    case Opcode::kAbs:
    case Opcode::kNegate:
    case Opcode::kSign:
      if (x.element_type() == DType::kBool) return Error(op, operands, "pred is not allowed");
      return x;
    default:
      // floor/ceil/round and all transcendental functions are defined on floats only.
      if (!IsFloat(x)) return Error(op, operands, "needs a floating-point operand");
      return x;
  }
}

absl::StatusOr<Shape> InferBinary(Opcode op, const Shapes& operands) {
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  const Shape& a = *operands[0];
  if (a != *operands[1]) return Error(op, operands, "operand shapes must be identical");
  switch (op) {
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      if (!IsPredOrInt(a)) return Error(op, operands, "needs pred or integer operands");
      return a;
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
      if (!IsIntegerDType(a.element_type())) return Error(op, operands, "needs integers");
      return a;
    case Opcode::kAtan2:
      if (!IsFloat(a)) return Error(op, operands, "needs floating-point operands");
      return a;
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      return a;
    default:
      if (a.element_type() == DType::kBool) return Error(op, operands, "pred is not allowed");
      return a;
  }
}

absl::StatusOr<Shape> InferSelectOrClamp(Opcode op, const Shapes& operands) {
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  if (op == Opcode::kSelect) {
    const Shape &p = *operands[0], &t = *operands[1], &f = *operands[2];
    if (p.element_type() != DType::kBool) return Error(op, operands, "predicate must be pred");
    if (t != f) return Error(op, operands, "on_true and on_false shapes differ");
    if (!p.IsScalar() && p.dims() != t.dims()) {
      return Error(op, operands, "predicate must be a scalar or have the result's dims");
    }
    return t;
  }
  const Shape &lo = *operands[0], &x = *operands[1], &hi = *operands[2];
  for (const Shape* bound : {&lo, &hi}) {
    if (bound->element_type() != x.element_type() || (!bound->IsScalar() && *bound != x)) {
      return Error(op, operands, "min/max must be scalars or the operand's shape");
    }
  }
  return x;
}

absl::StatusOr<Shape> InferConvert(Opcode op, const Shapes& operands, const Shape& hint) {
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  const Shape& x = *operands[0];
  if (!hint.IsArray()) return Error(op, operands, "needs a result element type");
  if (hint.dims() != x.dims()) {
    return Error(op, operands, absl::StrCat("result ", hint.ToString(), " changes the dims"));
  }
  if (op == Opcode::kBitcastConvert &&
      DTypeSize(hint.element_type()) != DTypeSize(x.element_type())) {
    return Error(op, operands, absl::StrCat("bit widths differ for ", hint.ToString()));
  }
  return hint;
}

absl::StatusOr<Shape> InferBroadcast(const Shapes& operands, const Attributes& attrs,
                                     const Shape& hint) {
  const Opcode op = Opcode::kBroadcast;
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  const Shape& x = *operands[0];
  if (!hint.IsArray() || hint.element_type() != x.element_type()) {
    return Error(op, operands, absl::StrCat("bad result shape ", hint.ToString()));
  }
  const auto& dims = attrs.dimensions;
  if (static_cast<int>(dims.size()) != x.rank()) {
    return Error(op, operands, absl::StrCat("dimensions=", Join(dims), " must map every dim"));
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    const bool ok = dims[i] >= 0 && dims[i] < hint.rank() && (i == 0 || dims[i] > dims[i - 1]) &&
                    hint.dim(static_cast<int>(dims[i])) == x.dim(static_cast<int>(i));
    if (!ok) {
      return Error(op, operands,
                   absl::StrCat("dimensions=", Join(dims), " do not map onto ", hint.ToString(),
                                " (increasing, sizes equal)"));
    }
  }
  return hint;
}

absl::StatusOr<Shape> InferReshape(const Shapes& operands, const Shape& hint) {
  const Opcode op = Opcode::kReshape;
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  const Shape& x = *operands[0];
  if (!hint.IsArray() || hint.element_type() != x.element_type() ||
      hint.num_elements() != x.num_elements()) {
    return Error(op, operands,
                 absl::StrCat("cannot reshape to ", hint.ToString(), " (element count differs)"));
  }
  return hint;
}

absl::StatusOr<Shape> InferTranspose(const Shapes& operands, const Attributes& attrs) {
  const Opcode op = Opcode::kTranspose;
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  const Shape& x = *operands[0];
  const auto& perm = attrs.dimensions;
  if (static_cast<int>(perm.size()) != x.rank()) {
    return Error(op, operands, absl::StrCat("dimensions=", Join(perm), " is not a permutation"));
  }
  TFJIT_RETURN_IF_ERROR(CheckDimIndices(op, operands, perm, x.rank(), "dimensions"));
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(x.dim(static_cast<int>(p)));
  return Shape(x.element_type(), dims);
}

absl::StatusOr<Shape> InferSlice(const Shapes& operands, const Attributes& attrs) {
  const Opcode op = Opcode::kSlice;
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  const Shape& x = *operands[0];
  if (static_cast<int>(attrs.slice.size()) != x.rank()) {
    return Error(op, operands, "slice needs one [start:limit:stride] per dim");
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < x.rank(); ++i) {
    const SliceDim& s = attrs.slice[static_cast<size_t>(i)];
    if (s.start < 0 || s.start > s.limit || s.limit > x.dim(i) || s.stride < 1) {
      return Error(
          op, operands,
          absl::StrFormat("bad slice [%d:%d:%d] for dim %d", s.start, s.limit, s.stride, i));
    }
    dims.push_back((s.limit - s.start + s.stride - 1) / s.stride);
  }
  return Shape(x.element_type(), dims);
}

// Start indices: one integer scalar per dim of `x`, all of one type.
absl::Status CheckStartIndices(Opcode op, const Shapes& operands, size_t first, int rank) {
  if (operands.size() != first + static_cast<size_t>(rank)) {
    return Error(op, operands, absl::StrCat("needs ", rank, " start indices"));
  }
  for (size_t i = first; i < operands.size(); ++i) {
    if (!operands[i]->IsScalar() || !IsIntegerDType(operands[i]->element_type()) ||
        operands[i]->element_type() != operands[first]->element_type()) {
      return Error(op, operands, "start indices must be integer scalars of one type");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferDynamicSlice(const Shapes& operands, const Attributes& attrs) {
  const Opcode op = Opcode::kDynamicSlice;
  if (operands.empty()) return Error(op, operands, "needs an operand");
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  const Shape& x = *operands[0];
  TFJIT_RETURN_IF_ERROR(CheckStartIndices(op, operands, 1, x.rank()));
  const auto& sizes = attrs.dynamic_slice_sizes;
  if (static_cast<int>(sizes.size()) != x.rank()) {
    return Error(op, operands, "dynamic_slice_sizes needs one size per dim");
  }
  for (int i = 0; i < x.rank(); ++i) {
    if (sizes[static_cast<size_t>(i)] < 0 || sizes[static_cast<size_t>(i)] > x.dim(i)) {
      return Error(op, operands,
                   absl::StrCat("dynamic_slice_sizes=", Join(sizes), " exceeds the operand"));
    }
  }
  return Shape(x.element_type(), sizes);
}

absl::StatusOr<Shape> InferDynamicUpdateSlice(const Shapes& operands) {
  const Opcode op = Opcode::kDynamicUpdateSlice;
  if (operands.size() < 2) return Error(op, operands, "needs operand and update");
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  const Shape &x = *operands[0], &u = *operands[1];
  TFJIT_RETURN_IF_ERROR(CheckStartIndices(op, operands, 2, x.rank()));
  if (u.element_type() != x.element_type() || u.rank() != x.rank()) {
    return Error(op, operands, "update must have the operand's type and rank");
  }
  for (int i = 0; i < x.rank(); ++i) {
    if (u.dim(i) > x.dim(i)) return Error(op, operands, "update is larger than the operand");
  }
  return x;
}

absl::StatusOr<Shape> InferConcatenate(const Shapes& operands, const Attributes& attrs) {
  const Opcode op = Opcode::kConcatenate;
  if (operands.empty()) return Error(op, operands, "needs at least one operand");
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  const Shape& first = *operands[0];
  if (attrs.dimensions.size() != 1 || attrs.dimensions[0] < 0 ||
      attrs.dimensions[0] >= first.rank()) {
    return Error(op, operands, absl::StrCat("bad dimensions=", Join(attrs.dimensions)));
  }
  const int d = static_cast<int>(attrs.dimensions[0]);
  std::vector<int64_t> dims = first.dims();
  dims[static_cast<size_t>(d)] = 0;
  for (const Shape* s : operands) {
    bool ok = s->element_type() == first.element_type() && s->rank() == first.rank();
    for (int i = 0; ok && i < first.rank(); ++i) ok = i == d || s->dim(i) == first.dim(i);
    if (!ok) return Error(op, operands, "operands differ outside the concatenated dim");
    dims[static_cast<size_t>(d)] += s->dim(d);
  }
  return Shape(first.element_type(), dims);
}

absl::StatusOr<Shape> InferPad(const Shapes& operands, const Attributes& attrs) {
  const Opcode op = Opcode::kPad;
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  const Shape &x = *operands[0], &v = *operands[1];
  if (!v.IsScalar() || v.element_type() != x.element_type()) {
    return Error(op, operands, "padding value must be a scalar of the operand's type");
  }
  if (static_cast<int>(attrs.padding.size()) != x.rank()) {
    return Error(op, operands, "padding needs one lo_hi[_interior] per dim");
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < x.rank(); ++i) {
    const PadDim& p = attrs.padding[static_cast<size_t>(i)];
    const int64_t n = x.dim(i);
    const int64_t size = p.lo + p.hi + n + std::max<int64_t>(n - 1, 0) * p.interior;
    if (p.interior < 0 || size < 0) {
      return Error(op, operands,
                   absl::StrFormat("bad padding %d_%d_%d for dim %d", p.lo, p.hi, p.interior, i));
    }
    dims.push_back(size);
  }
  return Shape(x.element_type(), dims);
}

// The scalar signature (N scalars, N scalars) -> scalar or N-tuple that reduce, reduce-window
// and scatter require of `to_apply`.
absl::Status CheckReducer(Opcode op, const Shapes& operands, const std::vector<DType>& types,
                          const std::vector<Computation*>& called) {
  if (called.size() != 1 || called[0] == nullptr) {
    return Error(op, operands, "needs one to_apply computation");
  }
  const Computation& c = *called[0];
  const size_t n = types.size();
  bool ok = c.num_parameters() == static_cast<int>(2 * n) && c.root() != nullptr;
  for (size_t i = 0; ok && i < 2 * n; ++i) {
    const Instruction* p = c.parameter(static_cast<int>(i));
    ok = p != nullptr && p->shape() == Shape::Scalar(types[i % n]);
  }
  if (ok) {
    std::vector<Shape> outs;
    for (DType t : types) outs.push_back(Shape::Scalar(t));
    ok = c.ResultShape() == (n == 1 ? outs[0] : Shape::Tuple(outs));
  }
  if (!ok) {
    return Error(
        op, operands,
        absl::StrCat("to_apply=%", c.name(), " must map (N scalars, N scalars) to N scalars"));
  }
  return absl::OkStatus();
}

// Splits 2N operands into inputs and inits, checking inputs share dims and inits are scalars.
absl::StatusOr<std::vector<DType>> CheckInputsAndInits(Opcode op, const Shapes& operands) {
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  if (operands.empty() || operands.size() % 2 != 0) {
    return Error(op, operands, "needs N inputs followed by N init values");
  }
  const size_t n = operands.size() / 2;
  std::vector<DType> types;
  for (size_t i = 0; i < n; ++i) {
    if (operands[i]->dims() != operands[0]->dims()) {
      return Error(op, operands, "inputs must have the same dims");
    }
    if (*operands[n + i] != Shape::Scalar(operands[i]->element_type())) {
      return Error(op, operands, "init values must be scalars of the inputs' types");
    }
    types.push_back(operands[i]->element_type());
  }
  return types;
}

Shape MaybeTuple(const std::vector<DType>& types, const std::vector<int64_t>& dims) {
  if (types.size() == 1) return Shape(types[0], dims);
  std::vector<Shape> shapes;
  for (DType t : types) shapes.emplace_back(t, dims);
  return Shape::Tuple(shapes);
}

absl::StatusOr<Shape> InferReduce(const Shapes& operands, const Attributes& attrs,
                                  const std::vector<Computation*>& called) {
  const Opcode op = Opcode::kReduce;
  TFJIT_ASSIGN_OR_RETURN(std::vector<DType> types, CheckInputsAndInits(op, operands));
  const Shape& x = *operands[0];
  TFJIT_RETURN_IF_ERROR(CheckDimIndices(op, operands, attrs.dimensions, x.rank(), "dimensions"));
  TFJIT_RETURN_IF_ERROR(CheckReducer(op, operands, types, called));
  std::vector<int64_t> dims;
  for (int i = 0; i < x.rank(); ++i) {
    const auto& rd = attrs.dimensions;
    if (std::find(rd.begin(), rd.end(), i) == rd.end()) dims.push_back(x.dim(i));
  }
  return MaybeTuple(types, dims);
}

// Output size of one windowed dim (shared by reduce-window and convolution).
absl::StatusOr<int64_t> WindowedSize(Opcode op, const Shapes& operands, int64_t input,
                                     const WindowDim& w) {
  if (w.size < 1 || w.stride < 1 || w.lhs_dilate < 1 || w.rhs_dilate < 1) {
    return Error(op, operands, "window size, stride and dilations must be >= 1");
  }
  const int64_t dilated = input == 0 ? 0 : (input - 1) * w.lhs_dilate + 1;
  const int64_t padded = dilated + w.pad_lo + w.pad_hi;
  const int64_t window = (w.size - 1) * w.rhs_dilate + 1;
  if (padded < 0) return Error(op, operands, "negative padding removes more than the input");
  return padded < window ? 0 : (padded - window) / w.stride + 1;
}

absl::StatusOr<Shape> InferReduceWindow(const Shapes& operands, const Attributes& attrs,
                                        const std::vector<Computation*>& called) {
  const Opcode op = Opcode::kReduceWindow;
  TFJIT_ASSIGN_OR_RETURN(std::vector<DType> types, CheckInputsAndInits(op, operands));
  const Shape& x = *operands[0];
  if (static_cast<int>(attrs.window.size()) != x.rank()) {
    return Error(op, operands, "window needs one entry per dim");
  }
  TFJIT_RETURN_IF_ERROR(CheckReducer(op, operands, types, called));
  std::vector<int64_t> dims;
  for (int i = 0; i < x.rank(); ++i) {
    TFJIT_ASSIGN_OR_RETURN(
        int64_t d, WindowedSize(op, operands, x.dim(i), attrs.window[static_cast<size_t>(i)]));
    dims.push_back(d);
  }
  return MaybeTuple(types, dims);
}

absl::StatusOr<Shape> InferDot(const Shapes& operands, const Attributes& attrs) {
  const Opcode op = Opcode::kDot;
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  const Shape &lhs = *operands[0], &rhs = *operands[1];
  const DotDims& d = attrs.dot;
  if (lhs.element_type() != rhs.element_type()) return Error(op, operands, "types differ");
  if (d.lhs_batch.size() != d.rhs_batch.size() ||
      d.lhs_contracting.size() != d.rhs_contracting.size()) {
    return Error(op, operands, "lhs and rhs need as many batch and contracting dims");
  }
  std::vector<int64_t> lhs_used = d.lhs_batch, rhs_used = d.rhs_batch;
  lhs_used.insert(lhs_used.end(), d.lhs_contracting.begin(), d.lhs_contracting.end());
  rhs_used.insert(rhs_used.end(), d.rhs_contracting.begin(), d.rhs_contracting.end());
  TFJIT_RETURN_IF_ERROR(CheckDimIndices(op, operands, lhs_used, lhs.rank(), "lhs dims"));
  TFJIT_RETURN_IF_ERROR(CheckDimIndices(op, operands, rhs_used, rhs.rank(), "rhs dims"));
  for (size_t i = 0; i < lhs_used.size(); ++i) {
    if (lhs.dim(static_cast<int>(lhs_used[i])) != rhs.dim(static_cast<int>(rhs_used[i]))) {
      return Error(op, operands,
                   absl::StrCat("batch/contracting sizes differ: lhs dims ", Join(lhs_used),
                                ", rhs dims ", Join(rhs_used)));
    }
  }
  std::vector<int64_t> dims;
  for (int64_t b : d.lhs_batch) dims.push_back(lhs.dim(static_cast<int>(b)));
  for (int i = 0; i < lhs.rank(); ++i) {
    if (std::find(lhs_used.begin(), lhs_used.end(), i) == lhs_used.end())
      dims.push_back(lhs.dim(i));
  }
  for (int i = 0; i < rhs.rank(); ++i) {
    if (std::find(rhs_used.begin(), rhs_used.end(), i) == rhs_used.end())
      dims.push_back(rhs.dim(i));
  }
  return Shape(lhs.element_type(), dims);
}

absl::StatusOr<Shape> InferConvolution(const Shapes& operands, const Attributes& attrs) {
  const Opcode op = Opcode::kConvolution;
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  const Shape &lhs = *operands[0], &rhs = *operands[1];
  const ConvDims& c = attrs.conv;
  const size_t n = attrs.window.size();
  if (lhs.element_type() != rhs.element_type()) return Error(op, operands, "types differ");
  if (c.input_spatial.size() != n || c.kernel_spatial.size() != n || c.output_spatial.size() != n ||
      lhs.rank() != static_cast<int>(n + 2) || rhs.rank() != static_cast<int>(n + 2)) {
    return Error(op, operands, "dim_labels, window and operand ranks disagree");
  }
  std::vector<int64_t> in = c.input_spatial, ker = c.kernel_spatial, out = c.output_spatial;
  in.insert(in.end(), {c.input_batch, c.input_feature});
  ker.insert(ker.end(), {c.kernel_input_feature, c.kernel_output_feature});
  out.insert(out.end(), {c.output_batch, c.output_feature});
  const int64_t rank = static_cast<int64_t>(n + 2);
  TFJIT_RETURN_IF_ERROR(CheckDimIndices(op, operands, in, rank, "input dim_labels"));
  TFJIT_RETURN_IF_ERROR(CheckDimIndices(op, operands, ker, rank, "kernel dim_labels"));
  TFJIT_RETURN_IF_ERROR(CheckDimIndices(op, operands, out, rank, "output dim_labels"));
  const int64_t groups = attrs.feature_group_count;
  const int64_t in_features = lhs.dim(static_cast<int>(c.input_feature));
  const int64_t out_features = rhs.dim(static_cast<int>(c.kernel_output_feature));
  if (groups < 1 || in_features != rhs.dim(static_cast<int>(c.kernel_input_feature)) * groups ||
      out_features % groups != 0) {
    return Error(op, operands,
                 absl::StrCat("input features must equal kernel input features * "
                              "feature_group_count=",
                              groups, " and output features divide by it"));
  }
  std::vector<int64_t> dims(n + 2);
  dims[static_cast<size_t>(c.output_batch)] = lhs.dim(static_cast<int>(c.input_batch));
  dims[static_cast<size_t>(c.output_feature)] = out_features;
  for (size_t i = 0; i < n; ++i) {
    const WindowDim& w = attrs.window[i];
    if (w.size != rhs.dim(static_cast<int>(c.kernel_spatial[i]))) {
      return Error(op, operands, "window size differs from the kernel's spatial size");
    }
    TFJIT_ASSIGN_OR_RETURN(
        dims[static_cast<size_t>(c.output_spatial[i])],
        WindowedSize(op, operands, lhs.dim(static_cast<int>(c.input_spatial[i])), w));
  }
  return Shape(lhs.element_type(), dims);
}

bool Sorted(const std::vector<int64_t>& v) { return std::is_sorted(v.begin(), v.end()); }

absl::StatusOr<Shape> InferGather(const Shapes& operands, const Attributes& attrs) {
  const Opcode op = Opcode::kGather;
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  const Shape &x = *operands[0], &idx = *operands[1];
  const GatherDims& g = attrs.gather;
  if (!IsIntegerDType(idx.element_type())) return Error(op, operands, "indices must be integers");
  if (g.index_vector_dim < 0 || g.index_vector_dim > idx.rank()) {
    return Error(op, operands, "index_vector_dim is out of range");
  }
  const bool implicit = g.index_vector_dim == idx.rank();
  const int64_t index_len = implicit ? 1 : idx.dim(static_cast<int>(g.index_vector_dim));
  if (static_cast<int64_t>(g.start_index_map.size()) != index_len ||
      static_cast<int>(g.slice_sizes.size()) != x.rank() || !Sorted(g.offset_dims) ||
      !Sorted(g.collapsed_slice_dims) ||
      g.offset_dims.size() + g.collapsed_slice_dims.size() != static_cast<size_t>(x.rank())) {
    return Error(op, operands, "inconsistent gather dimension numbers");
  }
  TFJIT_RETURN_IF_ERROR(
      CheckDimIndices(op, operands, g.start_index_map, x.rank(), "start_index_map"));
  TFJIT_RETURN_IF_ERROR(
      CheckDimIndices(op, operands, g.collapsed_slice_dims, x.rank(), "collapsed_slice_dims"));
  for (int i = 0; i < x.rank(); ++i) {
    const int64_t s = g.slice_sizes[static_cast<size_t>(i)];
    const auto& cd = g.collapsed_slice_dims;
    const bool collapsed = std::find(cd.begin(), cd.end(), i) != cd.end();
    if (s < 0 || s > x.dim(i) || (collapsed && s != 1)) {
      return Error(op, operands, absl::StrCat("bad slice_sizes=", Join(g.slice_sizes)));
    }
  }
  std::vector<int64_t> batch, offsets;
  for (int i = 0; i < idx.rank(); ++i) {
    if (i != g.index_vector_dim) batch.push_back(idx.dim(i));
  }
  for (int i = 0; i < x.rank(); ++i) {
    const auto& cd = g.collapsed_slice_dims;
    if (std::find(cd.begin(), cd.end(), i) == cd.end()) {
      offsets.push_back(g.slice_sizes[static_cast<size_t>(i)]);
    }
  }
  const int64_t out_rank = static_cast<int64_t>(batch.size() + offsets.size());
  TFJIT_RETURN_IF_ERROR(CheckDimIndices(op, operands, g.offset_dims, out_rank, "offset_dims"));
  std::vector<int64_t> dims;
  size_t bi = 0, oi = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    const auto& od = g.offset_dims;
    const bool is_offset = std::find(od.begin(), od.end(), i) != od.end();
    dims.push_back(is_offset ? offsets[oi++] : batch[bi++]);
  }
  return Shape(x.element_type(), dims);
}

absl::StatusOr<Shape> InferScatter(const Shapes& operands, const Attributes& attrs,
                                   const std::vector<Computation*>& called) {
  const Opcode op = Opcode::kScatter;
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  const Shape &x = *operands[0], &idx = *operands[1], &upd = *operands[2];
  const ScatterDims& s = attrs.scatter;
  if (!IsIntegerDType(idx.element_type())) return Error(op, operands, "indices must be integers");
  if (upd.element_type() != x.element_type()) return Error(op, operands, "update type differs");
  if (s.index_vector_dim < 0 || s.index_vector_dim > idx.rank()) {
    return Error(op, operands, "index_vector_dim is out of range");
  }
  const bool implicit = s.index_vector_dim == idx.rank();
  const int64_t index_len = implicit ? 1 : idx.dim(static_cast<int>(s.index_vector_dim));
  std::vector<int64_t> scatter_batch;
  for (int i = 0; i < idx.rank(); ++i) {
    if (i != s.index_vector_dim) scatter_batch.push_back(idx.dim(i));
  }
  if (static_cast<int64_t>(s.scatter_dims_to_operand_dims.size()) != index_len ||
      !Sorted(s.update_window_dims) || !Sorted(s.inserted_window_dims) ||
      s.update_window_dims.size() + s.inserted_window_dims.size() !=
          static_cast<size_t>(x.rank()) ||
      upd.rank() != static_cast<int>(scatter_batch.size() + s.update_window_dims.size())) {
    return Error(op, operands, "inconsistent scatter dimension numbers");
  }
  TFJIT_RETURN_IF_ERROR(CheckDimIndices(op, operands, s.scatter_dims_to_operand_dims, x.rank(),
                                        "scatter_dims_to_operand_dims"));
  TFJIT_RETURN_IF_ERROR(
      CheckDimIndices(op, operands, s.inserted_window_dims, x.rank(), "inserted_window_dims"));
  TFJIT_RETURN_IF_ERROR(
      CheckDimIndices(op, operands, s.update_window_dims, upd.rank(), "update_window_dims"));
  size_t wi = 0, bi = 0;
  for (int i = 0; i < upd.rank(); ++i) {
    const auto& uw = s.update_window_dims;
    if (std::find(uw.begin(), uw.end(), i) != uw.end()) {
      // Window dim k of the update corresponds to the k-th operand dim not inserted.
      int64_t od = -1;
      for (size_t seen = 0; seen <= wi;) {
        ++od;
        const auto& ins = s.inserted_window_dims;
        if (std::find(ins.begin(), ins.end(), od) == ins.end()) ++seen;
      }
      ++wi;
      if (upd.dim(i) > x.dim(static_cast<int>(od))) {
        return Error(op, operands, "update window is larger than the operand");
      }
    } else if (upd.dim(i) != scatter_batch[bi++]) {
      return Error(op, operands, "update scatter dims differ from the index batch dims");
    }
  }
  TFJIT_RETURN_IF_ERROR(CheckReducer(op, operands, {x.element_type()}, called));
  return x;
}

absl::StatusOr<Shape> InferRngBitGenerator(const Shapes& operands, const Shape& hint) {
  const Opcode op = Opcode::kRngBitGenerator;
  TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
  const Shape& state = *operands[0];
  if (state != Shape(DType::kUInt64, {3})) return Error(op, operands, "state must be u64[3]");
  const Shape bits = hint.IsTuple() && hint.tuple_shapes().size() == 2 ? hint.tuple_shape(1) : hint;
  if (!bits.IsArray() || !IsIntegerDType(bits.element_type())) {
    return Error(op, operands,
                 absl::StrCat("bits must be an integer array, got ", bits.ToString()));
  }
  return Shape::Tuple({state, bits});
}

// Operands must match the computation's parameters one for one.
absl::Status CheckCallSignature(Opcode op, const Shapes& operands, const Computation& c) {
  bool ok = c.num_parameters() == static_cast<int>(operands.size()) && c.root() != nullptr;
  for (size_t i = 0; ok && i < operands.size(); ++i) {
    const Instruction* p = c.parameter(static_cast<int>(i));
    ok = p != nullptr && p->shape() == *operands[i];
  }
  if (!ok) {
    return Error(op, operands, absl::StrCat("operands do not match the parameters of %", c.name()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferCall(Opcode op, const Shapes& operands,
                                const std::vector<Computation*>& called) {
  if (called.size() != 1 || called[0] == nullptr) return Error(op, operands, "needs one callee");
  TFJIT_RETURN_IF_ERROR(CheckCallSignature(op, operands, *called[0]));
  return called[0]->ResultShape();
}

absl::StatusOr<Shape> InferWhile(const Shapes& operands, const std::vector<Computation*>& called) {
  const Opcode op = Opcode::kWhile;
  if (called.size() != 2 || called[0] == nullptr || called[1] == nullptr) {
    return Error(op, operands, "needs condition and body");
  }
  TFJIT_RETURN_IF_ERROR(CheckCallSignature(op, operands, *called[0]));
  TFJIT_RETURN_IF_ERROR(CheckCallSignature(op, operands, *called[1]));
  if (called[0]->ResultShape() != Shape::Scalar(DType::kBool)) {
    return Error(op, operands,
                 absl::StrCat("condition %", called[0]->name(), " must return pred[]"));
  }
  if (called[1]->ResultShape() != *operands[0]) {
    return Error(op, operands,
                 absl::StrCat("body %", called[1]->name(), " must return the loop state's shape"));
  }
  return *operands[0];
}

absl::StatusOr<Shape> InferConditional(const Shapes& operands,
                                       const std::vector<Computation*>& called) {
  const Opcode op = Opcode::kConditional;
  if (called.empty() || operands.size() != called.size() + 1) {
    return Error(op, operands, "needs a selector and one operand per branch");
  }
  const Shape& selector = *operands[0];
  const bool is_pred = selector == Shape::Scalar(DType::kBool);
  if (!(is_pred && called.size() == 2) && selector != Shape::Scalar(DType::kInt32)) {
    return Error(op, operands, "selector must be pred[] (2 branches) or s32[]");
  }
  for (size_t i = 0; i < called.size(); ++i) {
    if (called[i] == nullptr) return Error(op, operands, "missing branch computation");
    TFJIT_RETURN_IF_ERROR(CheckCallSignature(op, {operands[i + 1]}, *called[i]));
    if (called[i]->ResultShape() != called[0]->ResultShape()) {
      return Error(op, operands, "branches return different shapes");
    }
  }
  return called[0]->ResultShape();
}

absl::StatusOr<Shape> InferTupleOps(Opcode op, const Shapes& operands, const Attributes& attrs) {
  if (op == Opcode::kTuple) {
    std::vector<Shape> shapes;
    for (const Shape* s : operands) shapes.push_back(*s);
    return Shape::Tuple(shapes);
  }
  const Shape& t = *operands[0];
  if (!t.IsTuple() || attrs.tuple_index < 0 ||
      attrs.tuple_index >= static_cast<int64_t>(t.tuple_shapes().size())) {
    return Error(op, operands, absl::StrCat("index=", attrs.tuple_index, " is not an element"));
  }
  return t.tuple_shape(static_cast<int>(attrs.tuple_index));
}

// parameter, constant, iota and custom-call: the shape comes from the instruction itself.
absl::StatusOr<Shape> InferLeaf(Opcode op, const Shapes& operands, const Attributes& attrs,
                                const Shape& hint) {
  switch (op) {
    case Opcode::kConstant:
      if (!attrs.literal.has_value()) return Error(op, operands, "has no literal");
      if ((hint.IsArray() || hint.IsTuple()) && hint != attrs.literal->shape()) {
        return Error(op, operands,
                     absl::StrCat("literal is ", attrs.literal->shape().ToString(), ", not ",
                                  hint.ToString()));
      }
      return attrs.literal->shape();
    case Opcode::kIota:
      if (!hint.IsArray() || hint.rank() == 0 || attrs.iota_dimension < 0 ||
          attrs.iota_dimension >= hint.rank() || hint.element_type() == DType::kBool) {
        return Error(op, operands,
                     absl::StrCat("bad result ", hint.ToString(),
                                  " for iota_dimension=", attrs.iota_dimension));
      }
      return hint;
    default:
      if (!hint.IsArray() && !hint.IsTuple()) return Error(op, operands, "needs a result shape");
      if (op == Opcode::kParameter && attrs.parameter_number < 0) {
        return Error(op, operands, "needs a parameter number >= 0");
      }
      return hint;
  }
}

absl::StatusOr<Shape> InferOther(Opcode op, const Shapes& operands, const Attributes& attrs,
                                 const std::vector<Computation*>& called, const Shape& hint) {
  switch (op) {
    case Opcode::kCompare:
      TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
      if (*operands[0] != *operands[1])
        return Error(op, operands, "operand shapes must be identical");
      return operands[0]->WithElementType(DType::kBool);
    case Opcode::kIsFinite:
      TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
      if (!IsFloat(*operands[0])) return Error(op, operands, "needs a floating-point operand");
      return operands[0]->WithElementType(DType::kBool);
    case Opcode::kSelect:
    case Opcode::kClamp:
      return InferSelectOrClamp(op, operands);
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
      return InferConvert(op, operands, hint);
    case Opcode::kBroadcast:
      return InferBroadcast(operands, attrs, hint);
    case Opcode::kReshape:
      return InferReshape(operands, hint);
    case Opcode::kTranspose:
      return InferTranspose(operands, attrs);
    case Opcode::kSlice:
      return InferSlice(operands, attrs);
    case Opcode::kDynamicSlice:
      return InferDynamicSlice(operands, attrs);
    case Opcode::kDynamicUpdateSlice:
      return InferDynamicUpdateSlice(operands);
    case Opcode::kConcatenate:
      return InferConcatenate(operands, attrs);
    case Opcode::kPad:
      return InferPad(operands, attrs);
    case Opcode::kReverse:
      TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
      TFJIT_RETURN_IF_ERROR(
          CheckDimIndices(op, operands, attrs.dimensions, operands[0]->rank(), "dimensions"));
      return *operands[0];
    case Opcode::kGetDimensionSize:
      TFJIT_RETURN_IF_ERROR(CheckArrays(op, operands));
      if (attrs.dimensions.size() != 1) {
        return Error(op, operands, "needs one dimension in dimensions={d}");
      }
      TFJIT_RETURN_IF_ERROR(
          CheckDimIndices(op, operands, attrs.dimensions, operands[0]->rank(), "dimensions"));
      return Shape::Scalar(DType::kInt32);
    case Opcode::kReduce:
      return InferReduce(operands, attrs, called);
    case Opcode::kReduceWindow:
      return InferReduceWindow(operands, attrs, called);
    case Opcode::kDot:
      return InferDot(operands, attrs);
    case Opcode::kConvolution:
      return InferConvolution(operands, attrs);
    case Opcode::kGather:
      return InferGather(operands, attrs);
    case Opcode::kScatter:
      return InferScatter(operands, attrs, called);
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
      return InferTupleOps(op, operands, attrs);
    case Opcode::kCall:
    case Opcode::kFusion:
      return InferCall(op, operands, called);
    case Opcode::kWhile:
      return InferWhile(operands, called);
    case Opcode::kConditional:
      return InferConditional(operands, called);
    case Opcode::kRngBitGenerator:
      return InferRngBitGenerator(operands, hint);
    default:
      return InferLeaf(op, operands, attrs, hint);
  }
}

}  // namespace

absl::StatusOr<Shape> InferShape(Opcode opcode, const std::vector<const Shape*>& operands,
                                 const Attributes& attrs, const std::vector<Computation*>& called,
                                 const Shape& result_hint) {
  const int arity = OpcodeArity(opcode);
  if (arity >= 0 && static_cast<int>(operands.size()) != arity) {
    return InvalidArgument("%s: expected %d operands, got %d", OpcodeName(opcode), arity,
                           static_cast<int>(operands.size()));
  }
  if (IsElementwiseUnary(opcode)) return InferUnary(opcode, operands);
  if (IsElementwiseBinary(opcode)) return InferBinary(opcode, operands);
  return InferOther(opcode, operands, attrs, called, result_hint);
}

}  // namespace tfjit::hlo
