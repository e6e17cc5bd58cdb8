// Lowerings of the array_more ops to HLO (docs/DESIGN.md, "Op families"), with the semantics of
// TF's XLA kernels (tf2xla) and the fallback kernels of array_more_kernels.cc: reversals and
// rolls, permutations, LinSpace, BroadcastArgs, searches as compare-and-count, bit casts and
// counts, data-format maps, the v1 space/batch ops, ReverseSequence as a gather, and fake
// quantization.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::ComparisonDirection;
using hlo::Instruction;
using hlo::Opcode;

// x[start:limit] along `dim`, every other dim whole.
absl::StatusOr<Instruction*> SliceDim(LoweringContext& ctx, Instruction* x, int64_t dim,
                                      int64_t start, int64_t limit) {
  std::vector<hlo::SliceDim> s;
  for (int64_t d : x->shape().dims()) s.push_back({0, d, 1});
  s[static_cast<size_t>(dim)] = {start, limit, 1};
  return ctx.b().Slice(x, s);
}

// An iota of `t` over `dims` along `d`.
absl::StatusOr<Instruction*> IotaOf(LoweringContext& ctx, DType t, const std::vector<int64_t>& dims,
                                    int64_t d) {
  return ctx.b().Iota(hlo::Shape(t, dims), d);
}

// ---- Reverse, Roll, ReverseSequence ----

absl::Status LowerReverse(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Tensor dims, ctx.ConstantInput(node, 1));
  if (dims.rank() != 1 || dims.dtype() != DType::kBool) {
    return InvalidArgument("node %s: 'dims' must be 1-dimension, not %d", node.DebugName(),
                           dims.rank());
  }
  const int rank = x->shape().rank();
  if (dims.num_elements() != rank) {
    return InvalidArgument(
        "node %s: 'dims' must have the same number of values as 'input' has "
        "dimensions. 'input' has %d'dimensions, but 'dims' has %d values",
        node.DebugName(), rank, dims.num_elements());
  }
  std::vector<int64_t> axes;
  for (int d = 0; d < rank; ++d) {
    if (dims.data<bool>()[d]) axes.push_back(d);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ReverseDims(ctx, x, axes));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Roll: per rolled dim, the last `s` entries move to the front (a concatenation of two slices).
absl::Status LowerRoll(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> shift, ctx.ConstantInputAsInts(node, 1));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> axis, ctx.ConstantInputAsInts(node, 2));
  const int rank = x->shape().rank();
  if (rank < 1) return InvalidArgument("node %s: input must be 1-D or higher", node.DebugName());
  for (int i = 1; i <= 2; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * v, ctx.Input(node, i));
    if (v->shape().rank() > 1) {
      return InvalidArgument("node %s: %s must be a scalar or a 1-D vector. Found: %s",
                             node.DebugName(), i == 1 ? "shift" : "axis", v->shape().ToString());
    }
  }
  if (shift.size() != axis.size()) {
    return InvalidArgument("node %s: shift and axis must have the same size", node.DebugName());
  }
  std::vector<int64_t> total(static_cast<size_t>(rank), 0);
  for (size_t i = 0; i < axis.size(); ++i) {
    const int64_t a = axis[i] < 0 ? axis[i] + rank : axis[i];
    if (a < 0 || a >= rank) {
      return InvalidArgument("node %s: axis %d is out of range", node.DebugName(), axis[i]);
    }
    total[static_cast<size_t>(a)] += shift[i];
  }
  for (int d = 0; d < rank; ++d) {
    const int64_t n = x->shape().dim(d);
    if (n == 0) continue;
    const int64_t s = ((total[static_cast<size_t>(d)] % n) + n) % n;
    if (s == 0) continue;
    TFJIT_ASSIGN_OR_RETURN(Instruction * tail, SliceDim(ctx, x, d, n - s, n));
    TFJIT_ASSIGN_OR_RETURN(Instruction * head, SliceDim(ctx, x, d, 0, n - s));
    TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Concatenate({tail, head}, d));
  }
  ctx.SetOutput(node, 0, x);
  return absl::OkStatus();
}

// ReverseSequence: a gather of every element, whose seq_dim coordinate j becomes
// len - 1 - j where j < len (len: the batch row's seq_lengths entry).
absl::Status LowerReverseSequence(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * lens, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(int64_t seq_dim, tf::GetIntAttr(node, "seq_dim"));
  TFJIT_ASSIGN_OR_RETURN(int64_t batch_dim, tf::GetIntAttrOr(node, "batch_dim", 0));
  const std::vector<int64_t> dims = x->shape().dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (seq_dim < 0) seq_dim += rank;
  if (batch_dim < 0) batch_dim += rank;
  if (seq_dim == batch_dim || seq_dim < 0 || seq_dim >= rank || batch_dim < 0 ||
      batch_dim >= rank) {
    return InvalidArgument(
        "node %s: seq_dim %d and batch_dim %d must be distinct dims of the "
        "rank-%d input",
        node.DebugName(), seq_dim, batch_dim, rank);
  }
  if (lens->shape().rank() != 1 || lens->shape().dim(0) != dims[static_cast<size_t>(batch_dim)]) {
    return InvalidArgument("node %s: Length of seq_lengths != input.dims(%d), (%s vs. %s)",
                           node.DebugName(), batch_dim, lens->shape().ToString(), DimsString(dims));
  }
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  if (count == 0) {
    ctx.SetOutput(node, 0, x);
    return absl::OkStatus();
  }
  const DType it = DType::kInt64;
  TFJIT_ASSIGN_OR_RETURN(lens, ctx.b().Convert(lens, it));
  TFJIT_ASSIGN_OR_RETURN(Instruction * len, ctx.b().Broadcast(lens, dims, {batch_dim}));
  std::vector<int64_t> one = dims;
  one.push_back(1);
  std::vector<Instruction*> coords;
  for (int64_t d = 0; d < rank; ++d) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * c, IotaOf(ctx, it, dims, d));
    if (d == seq_dim) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * inside,
                             ctx.b().Compare(ComparisonDirection::kLt, c, len));
      TFJIT_ASSIGN_OR_RETURN(Instruction * one_v, ctx.Splat(it, 1.0, dims));
      TFJIT_ASSIGN_OR_RETURN(Instruction * last, ctx.b().Binary(Opcode::kSubtract, len, one_v));
      TFJIT_ASSIGN_OR_RETURN(Instruction * flipped, ctx.b().Binary(Opcode::kSubtract, last, c));
      TFJIT_ASSIGN_OR_RETURN(c, ctx.b().Select(inside, flipped, c));
    }
    TFJIT_ASSIGN_OR_RETURN(c, ctx.b().Reshape(c, one));
    coords.push_back(c);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * indices, ctx.b().Concatenate(coords, rank));
  hlo::Attributes attrs;
  hlo::GatherDims& g = attrs.gather;
  g.index_vector_dim = rank;
  for (int64_t d = 0; d < rank; ++d) {
    g.start_index_map.push_back(d);
    g.collapsed_slice_dims.push_back(d);
    g.slice_sizes.push_back(1);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r,
                         ctx.b().Add(Opcode::kGather, {x, indices}, std::move(attrs)));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- Permutations, sequences, shapes ----

// InvertPermutation: y[x[i]] = i, as a scatter-add of iota into zeros (each slot is hit once
// for a valid permutation; XLA does not check validity, nor does this).
absl::Status LowerInvertPermutation(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  if (x->shape().rank() != 1) {
    return InvalidArgument("node %s: invert_permutation expects a 1D vector.", node.DebugName());
  }
  const DType t = x->shape().element_type();
  const int64_t n = x->shape().dim(0);
  TFJIT_ASSIGN_OR_RETURN(Instruction * zeros, ctx.Splat(t, 0.0, {n}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * iota, IotaOf(ctx, t, {n}, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * idx, ctx.b().Reshape(x, {n, 1}));
  hlo::Attributes attrs;
  attrs.scatter.inserted_window_dims = {0};
  attrs.scatter.scatter_dims_to_operand_dims = {0};
  attrs.scatter.index_vector_dim = 1;
  hlo::Computation* add = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, t);
  TFJIT_ASSIGN_OR_RETURN(
      Instruction * r, ctx.b().Add(Opcode::kScatter, {zeros, idx, iota}, std::move(attrs), {add}));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// LinSpace: start + i * step, with the first entry exactly start and the last exactly stop
// (16-bit floats compute in f32, as the kernel does).
absl::Status LowerLinSpace(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * start, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * stop, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> num_v, ctx.ConstantInputAsInts(node, 2));
  if (start->shape().rank() != 0 || stop->shape().rank() != 0 || num_v.size() != 1) {
    return InvalidArgument(
        "node %s: start, stop and num must be scalars, got %s, %s and %d "
        "values",
        node.DebugName(), start->shape().ToString(), stop->shape().ToString(), num_v.size());
  }
  const int64_t num = num_v[0];
  if (num <= 0) return InvalidArgument("node %s: Requires num > 0: %d", node.DebugName(), num);
  const DType t = start->shape().element_type();
  const DType c = (t == DType::kFloat16 || t == DType::kBFloat16) ? DType::kFloat32 : t;
  TFJIT_ASSIGN_OR_RETURN(start, ctx.b().Convert(start, c));
  TFJIT_ASSIGN_OR_RETURN(stop, ctx.b().Convert(stop, c));
  TFJIT_ASSIGN_OR_RETURN(Instruction * starts, ctx.b().Broadcast(start, {num}, {}));
  Instruction* r = starts;
  if (num > 1) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * span, ctx.b().Binary(Opcode::kSubtract, stop, start));
    TFJIT_ASSIGN_OR_RETURN(Instruction * denom, ctx.Splat(c, static_cast<double>(num - 1), {}));
    TFJIT_ASSIGN_OR_RETURN(Instruction * step, ctx.b().Binary(Opcode::kDivide, span, denom));
    TFJIT_ASSIGN_OR_RETURN(Instruction * steps, ctx.b().Broadcast(step, {num}, {}));
    TFJIT_ASSIGN_OR_RETURN(Instruction * i, IotaOf(ctx, c, {num}, 0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * off, ctx.b().Binary(Opcode::kMultiply, steps, i));
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Binary(Opcode::kAdd, starts, off));
    TFJIT_ASSIGN_OR_RETURN(Instruction * pos, IotaOf(ctx, DType::kInt64, {num}, 0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(DType::kInt64, 0.0, {num}));
    TFJIT_ASSIGN_OR_RETURN(Instruction * last, ctx.Splat(DType::kInt64, num - 1.0, {num}));
    TFJIT_ASSIGN_OR_RETURN(Instruction * is_first,
                           ctx.b().Compare(ComparisonDirection::kEq, pos, zero));
    TFJIT_ASSIGN_OR_RETURN(Instruction * is_last,
                           ctx.b().Compare(ComparisonDirection::kEq, pos, last));
    TFJIT_ASSIGN_OR_RETURN(Instruction * stops, ctx.b().Broadcast(stop, {num}, {}));
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Select(is_first, starts, r));
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Select(is_last, stops, r));
  }
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(r, t));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// BroadcastArgs: both shapes are compile-time constants, so the result is one too.
absl::Status LowerBroadcastArgs(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> s0, ctx.ConstantInputAsInts(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> s1, ctx.ConstantInputAsInts(node, 1));
  absl::StatusOr<std::vector<int64_t>> r = BroadcastDims(s0, s1);
  if (!r.ok()) {
    return InvalidArgument("node %s: Incompatible shapes: %s vs. %s", node.DebugName(),
                           DimsString(s0), DimsString(s1));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * in, ctx.Input(node, 0));
  const DType t = in->shape().element_type();
  Tensor v(t, {static_cast<int64_t>(r->size())});
  for (size_t i = 0; i < r->size(); ++i) {
    if (t == DType::kInt32) {
      v.data<int32_t>()[i] = static_cast<int32_t>((*r)[i]);
    } else {
      v.data<int64_t>()[i] = (*r)[i];
    }
  }
  ctx.SetOutput(node, 0, ctx.b().Constant(hlo::Literal::FromTensor(v)));
  return absl::OkStatus();
}

// ---- Searches: compare against every candidate and count ----

// Bucketize: the count of boundaries <= x, compared in f32 (f64 for double input) as tf2xla
// does.
absl::Status LowerBucketize(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<float> bounds, tf::GetFloatListAttr(node, "boundaries"));
  if (!std::is_sorted(bounds.begin(), bounds.end())) {
    return InvalidArgument("node %s: Expected sorted boundaries", node.DebugName());
  }
  const std::vector<int64_t> dims = x->shape().dims();
  const DType c = x->shape().element_type() == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  const int64_t nb = static_cast<int64_t>(bounds.size());
  if (nb == 0) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * z, ctx.Splat(DType::kInt32, 0.0, dims));
    ctx.SetOutput(node, 0, z);
    return absl::OkStatus();
  }
  Tensor b(c, {nb});
  for (int64_t i = 0; i < nb; ++i) {
    if (c == DType::kFloat64) {
      b.data<double>()[i] = bounds[static_cast<size_t>(i)];
    } else {
      b.data<float>()[i] = bounds[static_cast<size_t>(i)];
    }
  }
  TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, c));
  std::vector<int64_t> wide = dims, kept;
  wide.push_back(nb);
  for (size_t d = 0; d < dims.size(); ++d) kept.push_back(static_cast<int64_t>(d));
  TFJIT_ASSIGN_OR_RETURN(Instruction * xb, ctx.b().Broadcast(x, wide, kept));
  TFJIT_ASSIGN_OR_RETURN(Instruction * bb,
                         ctx.b().Broadcast(ctx.b().Constant(hlo::Literal::FromTensor(b)), wide,
                                           {static_cast<int64_t>(dims.size())}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ge, ctx.b().Compare(ComparisonDirection::kGe, xb, bb));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ones, ctx.b().Convert(ge, DType::kInt32));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, SumOver(ctx, ones, {static_cast<int64_t>(dims.size())}));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// LowerBound/UpperBound: per row, the count of sorted entries < v (<= v).
template <bool kUpper>
absl::Status LowerBound(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * s, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * v, ctx.Input(node, 1));
  if (s->shape().rank() != 2 || v->shape().rank() != 2 || s->shape().dim(0) != v->shape().dim(0)) {
    return InvalidArgument(
        "node %s: sorted_inputs and values must be matrices with one leading "
        "dim (Leading dim_size of both tensors must match.): %s vs %s",
        node.DebugName(), s->shape().ToString(), v->shape().ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(DType out_t, tf::GetTypeAttr(node, "out_type"));
  const int64_t b = s->shape().dim(0), n = s->shape().dim(1), m = v->shape().dim(1);
  TFJIT_ASSIGN_OR_RETURN(Instruction * sb, ctx.b().Broadcast(s, {b, m, n}, {0, 2}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * vb, ctx.b().Broadcast(v, {b, m, n}, {0, 1}));
  TFJIT_ASSIGN_OR_RETURN(
      Instruction * below,
      ctx.b().Compare(kUpper ? ComparisonDirection::kLe : ComparisonDirection::kLt, sb, vb));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ones, ctx.b().Convert(below, out_t));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, SumOver(ctx, ones, {2}));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- Bits ----

DType UnsignedOfWidth(size_t bytes) {
  switch (bytes) {
    case 1:
      return DType::kUInt8;
    case 2:
      return DType::kUInt16;
    case 4:
      return DType::kUInt32;
    default:
      return DType::kUInt64;
  }
}

// An unsigned scalar constant of type `t` (exact: no trip through double).
Instruction* UnsignedConst(LoweringContext& ctx, DType t, uint64_t v) {
  switch (t) {
    case DType::kUInt8:
      return ctx.b().ScalarConstant<uint8_t>(t, static_cast<uint8_t>(v));
    case DType::kUInt16:
      return ctx.b().ScalarConstant<uint16_t>(t, static_cast<uint16_t>(v));
    case DType::kUInt32:
      return ctx.b().ScalarConstant<uint32_t>(t, static_cast<uint32_t>(v));
    default:
      return ctx.b().ScalarConstant<uint64_t>(t, v);
  }
}

absl::StatusOr<Instruction*> UConst(LoweringContext& ctx, DType t, uint64_t v,
                                    const std::vector<int64_t>& dims) {
  return ctx.b().Broadcast(UnsignedConst(ctx, t, v), dims, {});
}

absl::StatusOr<Instruction*> BitcastTo(LoweringContext& ctx, Instruction* x, DType t) {
  if (x->shape().element_type() == t) return x;
  return ctx.b().Add(Opcode::kBitcastConvert, {x}, {}, {}, hlo::Shape(t, x->shape().dims()));
}

// The bytes of the real value x as element type `to` with dims `out` (the same byte count):
// equal widths reinterpret; a wider input splits into little-endian pieces along a new last
// dim; a narrower one, viewed as out + [k], joins its last dim's k pieces.
absl::StatusOr<Instruction*> ReinterpretBytes(LoweringContext& ctx, Instruction* x, DType to,
                                              const std::vector<int64_t>& out) {
  const DType from = x->shape().element_type();
  const size_t in_size = DTypeSize(from), out_size = DTypeSize(to);
  const DType ui = UnsignedOfWidth(in_size), uo = UnsignedOfWidth(out_size);
  TFJIT_ASSIGN_OR_RETURN(Instruction * u, BitcastTo(ctx, x, ui));
  Instruction* r = nullptr;
  if (in_size == out_size) {
    r = u;
  } else if (in_size > out_size) {
    const std::vector<int64_t> dims = u->shape().dims();
    const int64_t k = static_cast<int64_t>(in_size / out_size);
    std::vector<int64_t> wide = dims, kept;
    wide.push_back(k);
    for (size_t d = 0; d < dims.size(); ++d) kept.push_back(static_cast<int64_t>(d));
    TFJIT_ASSIGN_OR_RETURN(Instruction * ub, ctx.b().Broadcast(u, wide, kept));
    TFJIT_ASSIGN_OR_RETURN(Instruction * j,
                           IotaOf(ctx, ui, wide, static_cast<int64_t>(dims.size())));
    TFJIT_ASSIGN_OR_RETURN(Instruction * bits, UConst(ctx, ui, out_size * 8, wide));
    TFJIT_ASSIGN_OR_RETURN(Instruction * amount, ctx.b().Binary(Opcode::kMultiply, j, bits));
    TFJIT_ASSIGN_OR_RETURN(Instruction * shifted,
                           ctx.b().Binary(Opcode::kShiftRightLogical, ub, amount));
    TFJIT_ASSIGN_OR_RETURN(Instruction * mask,
                           UConst(ctx, ui, (uint64_t{1} << (out_size * 8)) - 1, wide));
    TFJIT_ASSIGN_OR_RETURN(Instruction * piece, ctx.b().Binary(Opcode::kAnd, shifted, mask));
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(piece, uo));
  } else {
    const int64_t k = static_cast<int64_t>(out_size / in_size);
    std::vector<int64_t> pieces = out;
    pieces.push_back(k);
    TFJIT_ASSIGN_OR_RETURN(u, ctx.b().Reshape(u, pieces));
    TFJIT_ASSIGN_OR_RETURN(Instruction * wide, ctx.b().Convert(u, uo));
    const int64_t last = static_cast<int64_t>(out.size());
    for (int64_t j = 0; j < k; ++j) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * piece, SliceDim(ctx, wide, last, j, j + 1));
      TFJIT_ASSIGN_OR_RETURN(piece, ctx.b().Reshape(piece, out));
      TFJIT_ASSIGN_OR_RETURN(Instruction * amount, UConst(ctx, uo, j * in_size * 8, out));
      TFJIT_ASSIGN_OR_RETURN(piece, ctx.b().Binary(Opcode::kShiftLeft, piece, amount));
      if (r == nullptr) {
        r = piece;
      } else {
        TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Binary(Opcode::kOr, r, piece));
      }
    }
  }
  if (r->shape().dims() != out) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, out));
  }
  return BitcastTo(ctx, r, to);
}

// Bitcast, TF's shape rule: equal widths keep the dims; a wider input gains a last dim of
// in/out pieces; a narrower one must end in a dim of out/in pieces, which goes. Complex values
// (either side) are held as (real, imaginary) pairs, the bytes of std::complex
// (complex_values.h), so the reinterpretation runs on the held parts: the complex table lists
// this lowering too.
absl::Status LowerBitcast(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(DType to, tf::GetTypeAttr(node, "type"));
  const DType from = node.input_types()[0];
  std::vector<int64_t> dims = x->shape().dims();
  if (IsComplexDType(from)) dims.pop_back();
  const size_t in_size = DTypeSize(from), out_size = DTypeSize(to);
  std::vector<int64_t> out = dims;
  if (in_size > out_size) {
    out.push_back(static_cast<int64_t>(in_size / out_size));
  } else if (in_size < out_size) {
    if (dims.empty() || dims.back() != static_cast<int64_t>(out_size / in_size)) {
      return InvalidArgument("node %s: Cannot bitcast from %s to %s: shape %s", node.DebugName(),
                             DTypeName(from), DTypeName(to), DimsString(dims));
    }
    out.pop_back();
  }
  DType held = to;
  if (IsComplexDType(to)) {
    out.push_back(2);
    held = ComplexPartDType(to);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ReinterpretBytes(ctx, x, held, out));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// PopulationCount: the SWAR bit count on the unsigned type of the input's width.
absl::Status LowerPopulationCount(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const size_t bytes = DTypeSize(x->shape().element_type());
  const DType u = UnsignedOfWidth(bytes);
  const std::vector<int64_t> dims = x->shape().dims();
  TFJIT_ASSIGN_OR_RETURN(x, BitcastTo(ctx, x, u));
  auto bin = [&](Opcode op, Instruction* a, Instruction* b) { return ctx.b().Binary(op, a, b); };
  auto k = [&](uint64_t v) { return UConst(ctx, u, v, dims); };
  TFJIT_ASSIGN_OR_RETURN(Instruction * one, k(1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * two, k(2));
  TFJIT_ASSIGN_OR_RETURN(Instruction * four, k(4));
  TFJIT_ASSIGN_OR_RETURN(Instruction * m1, k(0x5555555555555555ull));
  TFJIT_ASSIGN_OR_RETURN(Instruction * m2, k(0x3333333333333333ull));
  TFJIT_ASSIGN_OR_RETURN(Instruction * m4, k(0x0f0f0f0f0f0f0f0full));
  // x - ((x >> 1) & m1): 2-bit counts; then 4-bit; then per-byte counts.
  TFJIT_ASSIGN_OR_RETURN(Instruction * t, bin(Opcode::kShiftRightLogical, x, one));
  TFJIT_ASSIGN_OR_RETURN(t, bin(Opcode::kAnd, t, m1));
  TFJIT_ASSIGN_OR_RETURN(x, bin(Opcode::kSubtract, x, t));
  TFJIT_ASSIGN_OR_RETURN(t, bin(Opcode::kShiftRightLogical, x, two));
  TFJIT_ASSIGN_OR_RETURN(t, bin(Opcode::kAnd, t, m2));
  TFJIT_ASSIGN_OR_RETURN(x, bin(Opcode::kAnd, x, m2));
  TFJIT_ASSIGN_OR_RETURN(x, bin(Opcode::kAdd, x, t));
  TFJIT_ASSIGN_OR_RETURN(t, bin(Opcode::kShiftRightLogical, x, four));
  TFJIT_ASSIGN_OR_RETURN(x, bin(Opcode::kAdd, x, t));
  TFJIT_ASSIGN_OR_RETURN(x, bin(Opcode::kAnd, x, m4));
  if (bytes > 1) {
    // Sum the bytes into the top byte (the multiply wraps), then move it down.
    TFJIT_ASSIGN_OR_RETURN(Instruction * ones, k(0x0101010101010101ull));
    TFJIT_ASSIGN_OR_RETURN(x, bin(Opcode::kMultiply, x, ones));
    TFJIT_ASSIGN_OR_RETURN(Instruction * top, k(bytes * 8 - 8));
    TFJIT_ASSIGN_OR_RETURN(x, bin(Opcode::kShiftRightLogical, x, top));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Convert(x, DType::kUInt8));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- Data formats ----

absl::Status ReadFormats(const tf::Node& node, std::string* src, std::string* dst) {
  TFJIT_ASSIGN_OR_RETURN(*src, tf::GetStringAttrOr(node, "src_format", "NHWC"));
  TFJIT_ASSIGN_OR_RETURN(*dst, tf::GetStringAttrOr(node, "dst_format", "NCHW"));
  std::string a = *src, b = *dst;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if ((src->size() != 4 && src->size() != 5) || a != b) {
    return InvalidArgument(
        "node %s: src_format %s and dst_format %s must be permutations of one "
        "another, of length 4 or 5",
        node.DebugName(), *src, *dst);
  }
  return absl::OkStatus();
}

// DataFormatDimMap: r = (x + n) % n picks dst's index of src[r]; any other r maps like n - 1
// (the kernel's select chain).
absl::Status LowerDataFormatDimMap(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  std::string src, dst;
  TFJIT_RETURN_IF_ERROR(ReadFormats(node, &src, &dst));
  const DType t = x->shape().element_type();
  const std::vector<int64_t> dims = x->shape().dims();
  const int64_t n = static_cast<int64_t>(src.size());
  TFJIT_ASSIGN_OR_RETURN(Instruction * nv, ctx.Splat(t, static_cast<double>(n), dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kAdd, x, nv));
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Binary(Opcode::kRemainder, r, nv));
  TFJIT_ASSIGN_OR_RETURN(Instruction * y,
                         ctx.Splat(t, static_cast<double>(dst.find(src[n - 1])), dims));
  for (int64_t i = n - 2; i >= 0; --i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * iv, ctx.Splat(t, static_cast<double>(i), dims));
    TFJIT_ASSIGN_OR_RETURN(Instruction * is, ctx.b().Compare(ComparisonDirection::kEq, r, iv));
    TFJIT_ASSIGN_OR_RETURN(Instruction * to,
                           ctx.Splat(t, static_cast<double>(dst.find(src[i])), dims));
    TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Select(is, to, y));
  }
  ctx.SetOutput(node, 0, y);
  return absl::OkStatus();
}

// DataFormatVecPermute: rows of x in dst order (spatial letters only for spatial-size input).
absl::Status LowerDataFormatVecPermute(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  std::string src, dst;
  TFJIT_RETURN_IF_ERROR(ReadFormats(node, &src, &dst));
  const hlo::Shape& s = x->shape();
  const int64_t full = static_cast<int64_t>(src.size());
  const bool ok = (s.rank() == 1 || (s.rank() == 2 && s.dim(1) == 2)) &&
                  (s.dim(0) == full || s.dim(0) == full - 2);
  if (!ok) {
    return InvalidArgument(
        "node %s: input must be a vector of %d or %d values or a [%d or %d, 2] "
        "matrix, got %s",
        node.DebugName(), full - 2, full, full - 2, full, s.ToString());
  }
  if (s.dim(0) == full - 2) {
    auto strip = [](std::string f) {
      f.erase(std::remove_if(f.begin(), f.end(), [](char c) { return c == 'N' || c == 'C'; }),
              f.end());
      return f;
    };
    src = strip(src);
    dst = strip(dst);
  }
  std::vector<Instruction*> rows;
  for (char c : dst) {
    const int64_t from = static_cast<int64_t>(src.find(c));
    TFJIT_ASSIGN_OR_RETURN(Instruction * row, SliceDim(ctx, x, 0, from, from + 1));
    rows.push_back(row);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Concatenate(rows, 0));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- SpaceToBatch / BatchToSpace (v1): 4-D, block [b, b] ----

absl::StatusOr<std::vector<int64_t>> ReadV1Block(LoweringContext& ctx, const tf::Node& node,
                                                 Instruction* x, int64_t* block) {
  TFJIT_ASSIGN_OR_RETURN(*block, tf::GetIntAttr(node, "block_size"));
  if (*block <= 1) {
    return InvalidArgument("node %s: Block size should be > 1: %d", node.DebugName(), *block);
  }
  if (x->shape().rank() != 4) {
    return InvalidArgument("node %s: input rank should be 4 instead of %d", node.DebugName(),
                           x->shape().rank());
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ctx.ConstantInputAsInts(node, 1));
  if (pads.size() != 4) {
    return InvalidArgument("node %s: paddings/crops must be a 2 x 2 matrix, got %d values",
                           node.DebugName(), pads.size());
  }
  for (int64_t p : pads) {
    if (p < 0) {
      return InvalidArgument("node %s: paddings/crops must be non-negative, got %s",
                             node.DebugName(), DimsString(pads));
    }
  }
  return pads;
}

// reshape -> transpose -> reshape.
absl::StatusOr<Instruction*> Shuffle(LoweringContext& ctx, Instruction* x,
                                     const std::vector<int64_t>& split,
                                     const std::vector<int64_t>& perm,
                                     const std::vector<int64_t>& merged) {
  TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Reshape(x, split));
  TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Transpose(x, perm));
  return ctx.b().Reshape(x, merged);
}

absl::Status LowerSpaceToBatch(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  int64_t b = 0;
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> p, ReadV1Block(ctx, node, x, &b));
  const hlo::Shape s = x->shape();
  const int64_t h = s.dim(1) + p[0] + p[1], w = s.dim(2) + p[2] + p[3];
  if (h % b != 0 || w % b != 0) {
    return InvalidArgument("node %s: padded_shape [%d, %d] is not divisible by block_size %d",
                           node.DebugName(), h, w, b);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(s.element_type(), 0.0, {}));
  hlo::Attributes pad;
  pad.padding = {{0, 0, 0}, {p[0], p[1], 0}, {p[2], p[3], 0}, {0, 0, 0}};
  TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Add(Opcode::kPad, {x, zero}, pad));
  const int64_t n = s.dim(0), c = s.dim(3);
  TFJIT_ASSIGN_OR_RETURN(x, Shuffle(ctx, x, {n, h / b, b, w / b, b, c}, {2, 4, 0, 1, 3, 5},
                                    {b * b * n, h / b, w / b, c}));
  ctx.SetOutput(node, 0, x);
  return absl::OkStatus();
}

absl::Status LowerBatchToSpace(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  int64_t b = 0;
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> p, ReadV1Block(ctx, node, x, &b));
  const hlo::Shape s = x->shape();
  if (s.dim(0) % (b * b) != 0) {
    return InvalidArgument(
        "node %s: Input batch dimension (%d) is not divisible by product of "
        "block sizes (%d)",
        node.DebugName(), s.dim(0), b * b);
  }
  const int64_t n = s.dim(0) / (b * b), h = s.dim(1) * b, w = s.dim(2) * b, c = s.dim(3);
  if (p[0] + p[1] > h || p[2] + p[3] > w) {
    return InvalidArgument("node %s: Cropped size must be non-negative: crops %s, size [%d, %d]",
                           node.DebugName(), DimsString(p), h, w);
  }
  TFJIT_ASSIGN_OR_RETURN(
      x, Shuffle(ctx, x, {b, b, n, s.dim(1), s.dim(2), c}, {2, 3, 0, 4, 1, 5}, {n, h, w, c}));
  TFJIT_ASSIGN_OR_RETURN(
      x, ctx.b().Slice(x, {{0, n, 1}, {p[0], h - p[1], 1}, {p[2], w - p[3], 1}, {0, c, 1}}));
  ctx.SetOutput(node, 0, x);
  return absl::OkStatus();
}

// ---- Fake quantization ----

struct QuantRange {
  double quant_min = 0, quant_max = 255;
};

absl::StatusOr<QuantRange> ReadQuantRange(const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(int64_t bits, tf::GetIntAttrOr(node, "num_bits", 8));
  TFJIT_ASSIGN_OR_RETURN(bool narrow, tf::GetBoolAttrOr(node, "narrow_range", false));
  if (bits < 2 || bits > 16) {
    return InvalidArgument("node %s: num_bits must be between 2 and 16, inclusive, got %d",
                           node.DebugName(), bits);
  }
  return QuantRange{narrow ? 1.0 : 0.0, static_cast<double>((int64_t{1} << bits) - 1)};
}

// The nudged range as f32 values of `dims` (scalars broadcast, or per-channel vectors
// broadcast along the last dim): TF's Nudge, op by op in f32.
struct NudgedValues {
  Instruction* min = nullptr;
  Instruction* max = nullptr;
  Instruction* scale = nullptr;
};

absl::StatusOr<NudgedValues> NudgeInHlo(LoweringContext& ctx, Instruction* min, Instruction* max,
                                        const QuantRange& q, const std::vector<int64_t>& dims) {
  const DType f = DType::kFloat32;
  const std::vector<int64_t> md = min->shape().dims();
  auto k = [&](double v) { return ctx.Splat(f, v, md); };
  auto bin = [&](Opcode op, Instruction* a, Instruction* b) { return ctx.b().Binary(op, a, b); };
  TFJIT_ASSIGN_OR_RETURN(Instruction * qmin, k(q.quant_min));
  TFJIT_ASSIGN_OR_RETURN(Instruction * qmax, k(q.quant_max));
  TFJIT_ASSIGN_OR_RETURN(Instruction * steps, k(q.quant_max - q.quant_min));
  TFJIT_ASSIGN_OR_RETURN(Instruction * span, bin(Opcode::kSubtract, max, min));
  TFJIT_ASSIGN_OR_RETURN(Instruction * scale, bin(Opcode::kDivide, span, steps));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zf, bin(Opcode::kDivide, min, scale));
  TFJIT_ASSIGN_OR_RETURN(zf, bin(Opcode::kSubtract, qmin, zf));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.b().Unary(Opcode::kRoundNearestAfz, zf));
  TFJIT_ASSIGN_OR_RETURN(Instruction * above, ctx.b().Compare(ComparisonDirection::kGt, zf, qmax));
  TFJIT_ASSIGN_OR_RETURN(zero, ctx.b().Select(above, qmax, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * below, ctx.b().Compare(ComparisonDirection::kLt, zf, qmin));
  TFJIT_ASSIGN_OR_RETURN(zero, ctx.b().Select(below, qmin, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * lo, bin(Opcode::kSubtract, qmin, zero));
  TFJIT_ASSIGN_OR_RETURN(lo, bin(Opcode::kMultiply, lo, scale));
  TFJIT_ASSIGN_OR_RETURN(Instruction * hi, bin(Opcode::kSubtract, qmax, zero));
  TFJIT_ASSIGN_OR_RETURN(hi, bin(Opcode::kMultiply, hi, scale));
  std::vector<int64_t> map;
  if (!md.empty()) map.push_back(static_cast<int64_t>(dims.size()) - 1);
  NudgedValues n;
  TFJIT_ASSIGN_OR_RETURN(n.min, ctx.b().Broadcast(lo, dims, map));
  TFJIT_ASSIGN_OR_RETURN(n.max, ctx.b().Broadcast(hi, dims, map));
  TFJIT_ASSIGN_OR_RETURN(n.scale, ctx.b().Broadcast(scale, dims, map));
  return n;
}

// floor((clamp(x) - min) op scale' + 0.5) * scale + min, with op = multiply by `inv` (Args) or
// divide by scale (Vars).
absl::StatusOr<Instruction*> Quantize(LoweringContext& ctx, Instruction* x, const NudgedValues& n,
                                      Instruction* inv) {
  const std::vector<int64_t>& dims = x->shape().dims();
  TFJIT_ASSIGN_OR_RETURN(Instruction * v, ctx.b().Binary(Opcode::kMinimum, x, n.max));
  TFJIT_ASSIGN_OR_RETURN(v, ctx.b().Binary(Opcode::kMaximum, v, n.min));
  TFJIT_ASSIGN_OR_RETURN(v, ctx.b().Binary(Opcode::kSubtract, v, n.min));
  if (inv != nullptr) {
    TFJIT_ASSIGN_OR_RETURN(v, ctx.b().Binary(Opcode::kMultiply, v, inv));
  } else {
    TFJIT_ASSIGN_OR_RETURN(v, ctx.b().Binary(Opcode::kDivide, v, n.scale));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * half, ctx.Splat(DType::kFloat32, 0.5, dims));
  TFJIT_ASSIGN_OR_RETURN(v, ctx.b().Binary(Opcode::kAdd, v, half));
  TFJIT_ASSIGN_OR_RETURN(v, ctx.b().Unary(Opcode::kFloor, v));
  TFJIT_ASSIGN_OR_RETURN(v, ctx.b().Binary(Opcode::kMultiply, v, n.scale));
  return ctx.b().Binary(Opcode::kAdd, v, n.min);
}

// The Args forms' nudged range, computed at compile time as the kernel computes it.
absl::StatusOr<NudgedValues> ArgsNudge(LoweringContext& ctx, const tf::Node& node,
                                       const std::vector<int64_t>& dims, Instruction** inv) {
  TFJIT_ASSIGN_OR_RETURN(QuantRange q, ReadQuantRange(node));
  TFJIT_ASSIGN_OR_RETURN(float min, tf::GetFloatAttrOr(node, "min", -6.f));
  TFJIT_ASSIGN_OR_RETURN(float max, tf::GetFloatAttrOr(node, "max", 6.f));
  if (!(min < max)) {
    return InvalidArgument("node %s: min has to be smaller than max, was: %g >= %g",
                           node.DebugName(), min, max);
  }
  const float qmin = static_cast<float>(q.quant_min), qmax = static_cast<float>(q.quant_max);
  const float scale = (max - min) / (qmax - qmin);
  const float zero_from_min = qmin - min / scale;
  float zero = std::round(zero_from_min);
  if (zero_from_min < qmin) zero = qmin;
  if (zero_from_min > qmax) zero = qmax;
  NudgedValues n;
  TFJIT_ASSIGN_OR_RETURN(n.min, ctx.Splat(DType::kFloat32, (qmin - zero) * scale, dims));
  TFJIT_ASSIGN_OR_RETURN(n.max, ctx.Splat(DType::kFloat32, (qmax - zero) * scale, dims));
  TFJIT_ASSIGN_OR_RETURN(n.scale, ctx.Splat(DType::kFloat32, scale, dims));
  TFJIT_ASSIGN_OR_RETURN(*inv, ctx.Splat(DType::kFloat32, 1.0f / scale, dims));
  return n;
}

absl::StatusOr<Instruction*> InsideMask(LoweringContext& ctx, Instruction* x,
                                        const NudgedValues& n) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * ge, ctx.b().Compare(ComparisonDirection::kGe, x, n.min));
  TFJIT_ASSIGN_OR_RETURN(Instruction * le, ctx.b().Compare(ComparisonDirection::kLe, x, n.max));
  return ctx.b().Binary(Opcode::kAnd, ge, le);
}

absl::Status LowerFakeQuantArgs(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  Instruction* inv = nullptr;
  TFJIT_ASSIGN_OR_RETURN(NudgedValues n, ArgsNudge(ctx, node, x->shape().dims(), &inv));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, Quantize(ctx, x, n, inv));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerFakeQuantArgsGradient(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * g, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 1));
  if (g->shape().dims() != x->shape().dims()) {
    return InvalidArgument("node %s: gradient and input must be the same size: %s vs %s",
                           node.DebugName(), g->shape().ToString(), x->shape().ToString());
  }
  Instruction* inv = nullptr;
  TFJIT_ASSIGN_OR_RETURN(NudgedValues n, ArgsNudge(ctx, node, x->shape().dims(), &inv));
  TFJIT_ASSIGN_OR_RETURN(Instruction * inside, InsideMask(ctx, x, n));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zeros, ctx.Splat(DType::kFloat32, 0.0, x->shape().dims()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Select(inside, g, zeros));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// The Vars forms' min/max inputs (scalars, or last-dim vectors for PerChannel).
absl::StatusOr<NudgedValues> VarsNudge(LoweringContext& ctx, const tf::Node& node, int first,
                                       const std::vector<int64_t>& dims, bool per_channel) {
  TFJIT_ASSIGN_OR_RETURN(QuantRange q, ReadQuantRange(node));
  TFJIT_ASSIGN_OR_RETURN(Instruction * min, ctx.Input(node, first));
  TFJIT_ASSIGN_OR_RETURN(Instruction * max, ctx.Input(node, first + 1));
  const std::vector<int64_t> want =
      per_channel ? std::vector<int64_t>{dims.empty() ? -1 : dims.back()} : std::vector<int64_t>{};
  if (min->shape().dims() != want || max->shape().dims() != want) {
    return InvalidArgument("node %s: min and max must have shape %s, got %s and %s",
                           node.DebugName(), DimsString(want), min->shape().ToString(),
                           max->shape().ToString());
  }
  return NudgeInHlo(ctx, min, max, q, dims);
}

absl::Status LowerFakeQuantVars(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(NudgedValues n, VarsNudge(ctx, node, 1, x->shape().dims(), false));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, Quantize(ctx, x, n, nullptr));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerFakeQuantVarsGradient(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * g, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 1));
  const std::vector<int64_t> dims = x->shape().dims();
  if (g->shape().dims() != dims) {
    return InvalidArgument("node %s: gradients and inputs must be the same size: %s vs %s",
                           node.DebugName(), g->shape().ToString(), x->shape().ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(NudgedValues n, VarsNudge(ctx, node, 2, dims, false));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zeros, ctx.Splat(DType::kFloat32, 0.0, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * inside, InsideMask(ctx, x, n));
  TFJIT_ASSIGN_OR_RETURN(Instruction * dx, ctx.b().Select(inside, g, zeros));
  std::vector<int64_t> all;
  for (size_t d = 0; d < dims.size(); ++d) all.push_back(static_cast<int64_t>(d));
  TFJIT_ASSIGN_OR_RETURN(Instruction * below, ctx.b().Compare(ComparisonDirection::kLt, x, n.min));
  TFJIT_ASSIGN_OR_RETURN(below, ctx.b().Select(below, g, zeros));
  TFJIT_ASSIGN_OR_RETURN(below, SumOver(ctx, below, all));
  TFJIT_ASSIGN_OR_RETURN(Instruction * above, ctx.b().Compare(ComparisonDirection::kGt, x, n.max));
  TFJIT_ASSIGN_OR_RETURN(above, ctx.b().Select(above, g, zeros));
  TFJIT_ASSIGN_OR_RETURN(above, SumOver(ctx, above, all));
  ctx.SetOutput(node, 0, dx);
  ctx.SetOutput(node, 1, below);
  ctx.SetOutput(node, 2, above);
  return absl::OkStatus();
}

// ---- QuantizeAndDequantizeV2 (per tensor) ----

bool QdqCanLower(const tf::Node& node, std::string* why) {
  absl::StatusOr<int64_t> axis = tf::GetIntAttrOr(node, "axis", -1);
  if (axis.ok() && *axis == -1) return true;
  *why = "QuantizeAndDequantizeV2 compiles per-tensor quantization (axis -1) only";
  return false;
}

// The kernel's range selection on the scalars lo/hi: the clamp range and the two scales.
struct QdqScalars {
  Instruction* min_r = nullptr;
  Instruction* max_r = nullptr;
  Instruction* scale = nullptr;
  Instruction* inv = nullptr;
};

absl::StatusOr<QdqScalars> QdqRangeHlo(LoweringContext& ctx, DType c, Instruction* lo,
                                       Instruction* hi, double min_q, double max_q) {
  auto k = [&](double v) { return ctx.Splat(c, v, {}); };
  auto bin = [&](Opcode op, Instruction* a, Instruction* b) { return ctx.b().Binary(op, a, b); };
  const double big =
      c == DType::kFloat64 ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
  TFJIT_ASSIGN_OR_RETURN(Instruction * qmin, k(min_q));
  TFJIT_ASSIGN_OR_RETURN(Instruction * qmax, k(max_q));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, k(0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * most, k(big));
  // from_side = q * range > 0 ? q / range : max, for both sides.
  Instruction* from[2];
  Instruction* ranges[2] = {lo, hi};
  Instruction* qs[2] = {qmin, qmax};
  for (int i = 0; i < 2; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * prod, bin(Opcode::kMultiply, qs[i], ranges[i]));
    TFJIT_ASSIGN_OR_RETURN(Instruction * pos,
                           ctx.b().Compare(ComparisonDirection::kGt, prod, zero));
    TFJIT_ASSIGN_OR_RETURN(Instruction * q, bin(Opcode::kDivide, qs[i], ranges[i]));
    TFJIT_ASSIGN_OR_RETURN(from[i], ctx.b().Select(pos, q, most));
  }
  QdqScalars r;
  TFJIT_ASSIGN_OR_RETURN(Instruction * use_min,
                         ctx.b().Compare(ComparisonDirection::kLt, from[0], from[1]));
  TFJIT_ASSIGN_OR_RETURN(r.scale, ctx.b().Select(use_min, from[0], from[1]));
  TFJIT_ASSIGN_OR_RETURN(Instruction * inv_a, bin(Opcode::kDivide, lo, qmin));
  TFJIT_ASSIGN_OR_RETURN(Instruction * inv_b, bin(Opcode::kDivide, hi, qmax));
  TFJIT_ASSIGN_OR_RETURN(r.inv, ctx.b().Select(use_min, inv_a, inv_b));
  TFJIT_ASSIGN_OR_RETURN(Instruction * hi_a, bin(Opcode::kMultiply, qmax, r.inv));
  TFJIT_ASSIGN_OR_RETURN(Instruction * lo_b, bin(Opcode::kMultiply, qmin, r.inv));
  TFJIT_ASSIGN_OR_RETURN(r.min_r, ctx.b().Select(use_min, lo, lo_b));
  TFJIT_ASSIGN_OR_RETURN(r.max_r, ctx.b().Select(use_min, hi_a, hi));
  return r;
}

// The range: the min/max inputs (range_given) or the input's own extremes.
absl::Status QdqInputRange(LoweringContext& ctx, const tf::Node& node, Instruction* x, bool given,
                           Instruction** lo, Instruction** hi) {
  const DType c = x->shape().element_type();
  if (given) {
    TFJIT_ASSIGN_OR_RETURN(*lo, ctx.Input(node, 1));
    TFJIT_ASSIGN_OR_RETURN(*hi, ctx.Input(node, 2));
    if ((*lo)->shape().rank() != 0 || (*hi)->shape().rank() != 0) {
      return InvalidArgument("node %s: input_min and input_max must be scalars, got %s and %s",
                             node.DebugName(), (*lo)->shape().ToString(),
                             (*hi)->shape().ToString());
    }
    TFJIT_ASSIGN_OR_RETURN(*lo, ctx.b().Convert(*lo, c));
    TFJIT_ASSIGN_OR_RETURN(*hi, ctx.b().Convert(*hi, c));
    return absl::OkStatus();
  }
  std::vector<int64_t> all;
  for (int64_t d = 0; d < x->shape().rank(); ++d) all.push_back(d);
  const double inf = std::numeric_limits<double>::infinity();
  TFJIT_ASSIGN_OR_RETURN(Instruction * pinf, ctx.Splat(c, inf, {}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ninf, ctx.Splat(c, -inf, {}));
  TFJIT_ASSIGN_OR_RETURN(
      *lo, ctx.b().Reduce(x, pinf, all,
                          hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kMinimum, c)));
  TFJIT_ASSIGN_OR_RETURN(
      *hi, ctx.b().Reduce(x, ninf, all,
                          hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kMaximum, c)));
  return absl::OkStatus();
}

// Clamp to the range, scale, round (half to even or half up), scale back.
absl::Status LowerQuantizeAndDequantizeV2(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(bool is_signed, tf::GetBoolAttrOr(node, "signed_input", true));
  TFJIT_ASSIGN_OR_RETURN(int64_t bits, tf::GetIntAttrOr(node, "num_bits", 8));
  TFJIT_ASSIGN_OR_RETURN(bool given, tf::GetBoolAttrOr(node, "range_given", false));
  TFJIT_ASSIGN_OR_RETURN(std::string mode, tf::GetStringAttrOr(node, "round_mode", "HALF_TO_EVEN"));
  TFJIT_ASSIGN_OR_RETURN(bool narrow, tf::GetBoolAttrOr(node, "narrow_range", false));
  if (bits <= 0 || bits > (is_signed ? 62 : 63) || (mode != "HALF_TO_EVEN" && mode != "HALF_UP")) {
    return InvalidArgument("node %s: num_bits %d or round_mode %s is invalid", node.DebugName(),
                           bits, mode);
  }
  const double half_range = std::ldexp(1.0, static_cast<int>(bits) - 1);
  const double min_q = is_signed ? (narrow ? 1 - half_range : -half_range) : 0;
  const double max_q = is_signed ? half_range - 1 : std::ldexp(1.0, static_cast<int>(bits)) - 1;
  const DType t = x->shape().element_type();
  const DType c = (t == DType::kFloat16 || t == DType::kBFloat16) ? DType::kFloat32 : t;
  const std::vector<int64_t> dims = x->shape().dims();
  TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, c));
  Instruction* lo = nullptr;
  Instruction* hi = nullptr;
  TFJIT_RETURN_IF_ERROR(QdqInputRange(ctx, node, x, given, &lo, &hi));
  TFJIT_ASSIGN_OR_RETURN(QdqScalars q, QdqRangeHlo(ctx, c, lo, hi, min_q, max_q));
  auto wide = [&](Instruction* s) { return ctx.b().Broadcast(s, dims, {}); };
  auto bin = [&](Opcode op, Instruction* a, Instruction* b) { return ctx.b().Binary(op, a, b); };
  TFJIT_ASSIGN_OR_RETURN(Instruction * min_r, wide(q.min_r));
  TFJIT_ASSIGN_OR_RETURN(Instruction * max_r, wide(q.max_r));
  TFJIT_ASSIGN_OR_RETURN(Instruction * scale, wide(q.scale));
  TFJIT_ASSIGN_OR_RETURN(Instruction * inv, wide(q.inv));
  TFJIT_ASSIGN_OR_RETURN(Instruction * v, bin(Opcode::kMaximum, x, min_r));
  TFJIT_ASSIGN_OR_RETURN(v, bin(Opcode::kMinimum, v, max_r));
  TFJIT_ASSIGN_OR_RETURN(v, bin(Opcode::kMultiply, v, scale));
  if (mode == "HALF_UP") {
    TFJIT_ASSIGN_OR_RETURN(Instruction * half, ctx.Splat(c, 0.5, dims));
    TFJIT_ASSIGN_OR_RETURN(v, bin(Opcode::kAdd, v, half));
    TFJIT_ASSIGN_OR_RETURN(v, ctx.b().Unary(Opcode::kFloor, v));
  } else {
    TFJIT_ASSIGN_OR_RETURN(v, ctx.b().Unary(Opcode::kRoundNearestEven, v));
  }
  TFJIT_ASSIGN_OR_RETURN(v, bin(Opcode::kMultiply, v, inv));
  TFJIT_ASSIGN_OR_RETURN(v, ctx.b().Convert(v, t));
  ctx.SetOutput(node, 0, v);
  return absl::OkStatus();
}

}  // namespace

void AppendArrayMoreLowerings(std::vector<OpLowering>* table) {
  const OpLowering lowerings[] = {
      {"Reverse", LowerReverse},
      {"Roll", LowerRoll},
      {"ReverseSequence", LowerReverseSequence},
      {"InvertPermutation", LowerInvertPermutation},
      {"LinSpace", LowerLinSpace},
      {"BroadcastArgs", LowerBroadcastArgs},
      {"Bucketize", LowerBucketize},
      {"LowerBound", LowerBound<false>},
      {"UpperBound", LowerBound<true>},
      {"Bitcast", LowerBitcast},
      {"PopulationCount", LowerPopulationCount},
      {"DataFormatDimMap", LowerDataFormatDimMap},
      {"DataFormatVecPermute", LowerDataFormatVecPermute},
      {"SpaceToBatch", LowerSpaceToBatch},
      {"BatchToSpace", LowerBatchToSpace},
      {"FakeQuantWithMinMaxArgs", LowerFakeQuantArgs},
      {"FakeQuantWithMinMaxArgsGradient", LowerFakeQuantArgsGradient},
      {"FakeQuantWithMinMaxVars", LowerFakeQuantVars},
      {"FakeQuantWithMinMaxVarsGradient", LowerFakeQuantVarsGradient},
      {"QuantizeAndDequantizeV2", LowerQuantizeAndDequantizeV2, true, QdqCanLower},
  };
  table->insert(table->end(), std::begin(lowerings), std::end(lowerings));
}

}  // namespace tfjit::tf2hlo
