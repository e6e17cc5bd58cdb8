// Array kernels: Const, Identity-like ops, Placeholder (an error: it must be fed), Reshape,
// Transpose, ConcatV2, Pack, Shape, Squeeze, ExpandDims, Fill, ZerosLike and OnesLike.
// Data movement works on raw element widths, so every dtype (bool included) is supported.
#include <cstring>
#include <numeric>

#include "absl/strings/str_join.h"
#include "frontend/attr.h"
#include "frontend/reshape_rule.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

template <typename W>
void TransposeLoop(const KernelContext& ctx, const Tensor& in, const std::vector<int>& perm,
                   Tensor& out) {
  const std::vector<int64_t> in_strides = RowMajorStrides(in.dims());
  const size_t rank = perm.size();
  std::vector<int64_t> strides(rank);  // input stride along each output dim
  for (size_t d = 0; d < rank; ++d) strides[d] = in_strides[static_cast<size_t>(perm[d])];
  const std::vector<int64_t>& dims = out.dims();
  const W* src = in.data<W>();
  W* dst = out.data<W>();
  ParallelFor(ctx, out.num_elements(), 4, [&](int64_t begin, int64_t end) {
    // Odometer over the output index, starting at `begin`.
    std::vector<int64_t> idx(rank, 0);
    int64_t offset = 0;
    for (size_t d = rank, rest = static_cast<size_t>(begin); d-- > 0;) {
      idx[d] = static_cast<int64_t>(rest) % dims[d];
      rest /= static_cast<size_t>(dims[d]);
      offset += idx[d] * strides[d];
    }
    for (int64_t i = begin; i < end; ++i) {
      dst[i] = src[offset];
      for (size_t d = rank; d-- > 0;) {
        offset += strides[d];
        if (++idx[d] < dims[d]) break;
        offset -= strides[d] * dims[d];
        idx[d] = 0;
      }
    }
  });
}

absl::Status IdentityKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status IdentityNKernel(KernelContext& ctx) {
  for (int i = 0; i < ctx.num_inputs(); ++i) ctx.set_output(i, ctx.input(i));
  return absl::OkStatus();
}

absl::Status NoOpKernel(KernelContext&) { return absl::OkStatus(); }

absl::Status PlaceholderKernel(KernelContext& ctx) {
  const DType dtype =
      ctx.node().output_types().empty() ? DType::kInvalid : ctx.node().output_types()[0];
  return KernelError(ctx,
                     "You must feed a value for placeholder tensor '%s' with dtype %s; "
                     "pass it in the feeds",
                     ctx.node().name(), DTypeName(dtype));
}

absl::Status ConstKernel(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(Tensor value, tf::GetTensorAttr(ctx.node(), "value"));
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "dtype"));
  if (value.dtype() != dtype) {
    return KernelError(ctx, "Type mismatch between value (%s) and dtype (%s)",
                       DTypeName(value.dtype()), DTypeName(dtype));
  }
  ctx.set_output(0, std::move(value));
  return absl::OkStatus();
}

absl::Status ShapeKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(DType out_type, tf::GetTypeAttr(ctx.node(), "out_type"));
  Tensor out(out_type, {in.rank()});
  for (int d = 0; d < in.rank(); ++d) {
    if (out_type == DType::kInt32) {
      out.data<int32_t>()[d] = static_cast<int32_t>(in.dim(d));
    } else if (out_type == DType::kInt64) {
      out.data<int64_t>()[d] = in.dim(d);
    } else {
      return UnsupportedDType(ctx, out_type, "int32, int64");
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status ReshapeKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& shape = ctx.input(1);
  if (shape.rank() != 1) {
    return KernelError(ctx, "shape must be a vector, got %s", shape.ShapeString());
  }
  std::vector<int64_t> dims;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, shape, "shape", &dims));
  absl::StatusOr<std::vector<int64_t>> resolved =
      tf::ResolveReshape(ctx.input(0).dims(), std::move(dims));
  if (!resolved.ok()) return NodeError(ctx, resolved.status().message());
  dims = *std::move(resolved);
  ctx.set_output(0, ctx.input(0).Reshaped(std::move(dims)));
  return absl::OkStatus();
}

absl::Status TransposeKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> perm64;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(1), "perm", &perm64));
  if (static_cast<int>(perm64.size()) != in.rank()) {
    return KernelError(ctx,
                       "transpose expects a vector of size %d (the rank of %s), but perm "
                       "is %s",
                       in.rank(), in.ShapeString(), DimsString(perm64));
  }
  std::vector<bool> seen(perm64.size(), false);
  std::vector<int> perm;
  for (int64_t p : perm64) {
    if (p < 0 || p >= in.rank() || seen[static_cast<size_t>(p)]) {
      return KernelError(ctx, "perm %s is not a permutation of [0, %d) for input %s",
                         DimsString(perm64), in.rank(), in.ShapeString());
    }
    seen[static_cast<size_t>(p)] = true;
    perm.push_back(static_cast<int>(p));
  }
  ctx.set_output(0, TransposeTensor(ctx, in, perm));
  return absl::OkStatus();
}

// ConjugateTranspose: Transpose, then the complex conjugate (the identity on real types).
absl::Status ConjugateTransposeKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(TransposeKernel(ctx));
  if (!IsComplexDType(ctx.input(0).dtype())) return absl::OkStatus();
  Tensor out = ctx.outputs()[0];
  if (out.SharesBufferWith(ctx.input(0))) out = out.Clone();
  DispatchComplex(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = out.data<T>();
    for (int64_t i = 0; i < out.num_elements(); ++i) p[i] = std::conj(p[i]);
  });
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// Copies `rows` rows of each part (part i contributing widths[i] bytes per row) side by side.
void InterleaveRows(const std::vector<const char*>& parts, const std::vector<size_t>& widths,
                    int64_t rows, char* out) {
  for (int64_t r = 0; r < rows; ++r) {
    for (size_t i = 0; i < parts.size(); ++i) {
      if (widths[i] == 0) continue;
      std::memcpy(out, parts[i] + static_cast<size_t>(r) * widths[i], widths[i]);
      out += widths[i];
    }
  }
}

}  // namespace

// Declared in kernel_util.h: Concat (v1) forwards to it.
absl::Status ConcatV2Kernel(KernelContext& ctx) {
  const int n = ctx.num_inputs() - 1;
  if (n < 1) return KernelError(ctx, "ConcatV2 needs at least one value and an axis");
  std::vector<int64_t> axis_vec;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(n), "axis", &axis_vec));
  const Tensor& first = ctx.input(0);
  if (axis_vec.size() != 1 || ctx.input(n).rank() != 0) {
    return KernelError(ctx, "axis must be a scalar, got %s", ctx.input(n).ShapeString());
  }
  if (first.rank() == 0) return KernelError(ctx, "Can't concatenate scalars (use Pack instead)");
  int64_t axis;
  TFJIT_RETURN_IF_ERROR(CanonicalAxis(ctx, axis_vec[0], first.rank(), &axis));
  std::vector<int64_t> out_dims = first.dims();
  out_dims[static_cast<size_t>(axis)] = 0;
  for (int i = 0; i < n; ++i) {
    const Tensor& t = ctx.input(i);
    bool match = t.dtype() == first.dtype() && t.rank() == first.rank();
    for (int d = 0; match && d < t.rank(); ++d) match = d == axis || t.dim(d) == first.dim(d);
    if (!match) {
      return KernelError(ctx,
                         "values[0] is %s but values[%d] is %s: all values must have the "
                         "same dtype and rank and match in every dimension except axis %d",
                         first.ShapeString(), i, t.ShapeString(), axis);
    }
    out_dims[static_cast<size_t>(axis)] += t.dim(static_cast<int>(axis));
  }
  Tensor out(first.dtype(), out_dims);
  const int64_t rows = std::accumulate(out_dims.begin(), out_dims.begin() + axis, int64_t{1},
                                       std::multiplies<int64_t>());
  std::vector<const char*> parts;
  std::vector<size_t> widths;
  for (int i = 0; i < n; ++i) {
    const Tensor& t = ctx.input(i);
    parts.push_back(static_cast<const char*>(t.raw_data()));
    widths.push_back(rows == 0 ? 0 : t.byte_size() / static_cast<size_t>(rows));
  }
  InterleaveRows(parts, widths, rows, static_cast<char*>(out.raw_data()));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

namespace {

absl::Status PackKernel(KernelContext& ctx) {
  const int n = ctx.num_inputs();
  if (n < 1) return KernelError(ctx, "Pack needs at least one value");
  const Tensor& first = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(int64_t axis_attr, tf::GetIntAttrOr(ctx.node(), "axis", 0));
  int64_t axis;
  TFJIT_RETURN_IF_ERROR(CanonicalAxis(ctx, axis_attr, first.rank() + 1, &axis));
  for (int i = 1; i < n; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.dtype() != first.dtype() || t.dims() != first.dims()) {
      return KernelError(ctx,
                         "Shapes of all inputs must match: values[0] is %s != values[%d] "
                         "is %s",
                         first.ShapeString(), i, t.ShapeString());
    }
  }
  std::vector<int64_t> out_dims = first.dims();
  out_dims.insert(out_dims.begin() + axis, n);
  Tensor out(first.dtype(), out_dims);
  const int64_t rows = std::accumulate(out_dims.begin(), out_dims.begin() + axis, int64_t{1},
                                       std::multiplies<int64_t>());
  std::vector<const char*> parts;
  std::vector<size_t> widths;
  for (int i = 0; i < n; ++i) {
    parts.push_back(static_cast<const char*>(ctx.input(i).raw_data()));
    widths.push_back(rows == 0 ? 0 : first.byte_size() / static_cast<size_t>(rows));
  }
  InterleaveRows(parts, widths, rows, static_cast<char*>(out.raw_data()));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status SqueezeKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> axes;
  if (tf::FindAttr(ctx.node(), "squeeze_dims") != nullptr) {
    TFJIT_ASSIGN_OR_RETURN(axes, tf::GetIntListAttr(ctx.node(), "squeeze_dims"));
  }
  std::vector<bool> squeeze(static_cast<size_t>(in.rank()), axes.empty());
  for (int64_t a : axes) {
    int64_t axis;
    TFJIT_RETURN_IF_ERROR(CanonicalAxis(ctx, a, in.rank(), &axis));
    if (in.dim(static_cast<int>(axis)) != 1) {
      return KernelError(ctx,
                         "Can not squeeze dim[%d], expected a dimension of 1, got %d "
                         "(input is %s)",
                         axis, in.dim(static_cast<int>(axis)), in.ShapeString());
    }
    squeeze[static_cast<size_t>(axis)] = true;
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < in.rank(); ++d) {
    if (!(squeeze[static_cast<size_t>(d)] && in.dim(d) == 1)) dims.push_back(in.dim(d));
  }
  ctx.set_output(0, in.Reshaped(std::move(dims)));
  return absl::OkStatus();
}

absl::Status ExpandDimsKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> dim;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(1), "dim", &dim));
  if (dim.size() != 1) {
    return KernelError(ctx, "dim must hold exactly one value, got %s", ctx.input(1).ShapeString());
  }
  int64_t axis;
  TFJIT_RETURN_IF_ERROR(CanonicalAxis(ctx, dim[0], in.rank() + 1, &axis));
  std::vector<int64_t> dims = in.dims();
  dims.insert(dims.begin() + axis, 1);
  ctx.set_output(0, in.Reshaped(std::move(dims)));
  return absl::OkStatus();
}

// Fills `out` with copies of the one element at `value`.
void FillWith(const void* value, Tensor& out) {
  const size_t width = DTypeSize(out.dtype());
  char* p = static_cast<char*>(out.raw_data());
  for (int64_t i = 0; i < out.num_elements(); ++i) std::memcpy(p + i * width, value, width);
}

absl::Status FillKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& value = ctx.input(1);
  std::vector<int64_t> dims;
  if (ctx.input(0).rank() != 1) {
    return KernelError(ctx, "dims must be a vector, got %s", ctx.input(0).ShapeString());
  }
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(0), "dims", &dims));
  if (value.rank() != 0) {
    return KernelError(ctx, "value must be a scalar, got %s", value.ShapeString());
  }
  for (int64_t d : dims) {
    if (d < 0) return KernelError(ctx, "dims %s has a negative size", DimsString(dims));
  }
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, value.dtype(), dims));
  Tensor out(value.dtype(), dims);
  FillWith(value.raw_data(), out);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status ZerosLikeKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  ctx.set_output(0, Tensor(ctx.input(0).dtype(), ctx.input(0).dims()));
  return absl::OkStatus();
}

absl::Status OnesLikeKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  Tensor out(in.dtype(), in.dims());
  const bool ok = DispatchNumeric(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T one = T(1);
    FillWith(&one, out);
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), "numeric types and bool");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

Tensor TransposeTensor(const KernelContext& ctx, const Tensor& in, const std::vector<int>& perm) {
  std::vector<int64_t> dims;
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) {
    dims.push_back(in.dim(perm[i]));
    identity = identity && perm[i] == static_cast<int>(i);
  }
  if (identity) return in;
  Tensor out(in.dtype(), std::move(dims));
  DispatchByWidth(in.dtype(), [&](auto tag) { TransposeLoop<decltype(tag)>(ctx, in, perm, out); });
  return out;
}

void RegisterArrayKernels(KernelRegistry& registry) {
  registry.Register("Const", &ConstKernel);
  registry.Register("Placeholder", &PlaceholderKernel);
  registry.Register("Identity", &IdentityKernel);
  registry.Register("StopGradient", &IdentityKernel);
  registry.Register("Snapshot", &IdentityKernel);
  registry.Register("PlaceholderWithDefault", &IdentityKernel);
  registry.Register("IdentityN", &IdentityNKernel);
  registry.Register("NoOp", &NoOpKernel);
  registry.Register("Shape", &ShapeKernel);
  registry.Register("Reshape", &ReshapeKernel);
  registry.Register("Transpose", &TransposeKernel);
  registry.Register("ConjugateTranspose", &ConjugateTransposeKernel);
  registry.Register("ConcatV2", &ConcatV2Kernel);
  registry.Register("Pack", &PackKernel);
  registry.Register("Squeeze", &SqueezeKernel);
  registry.Register("ExpandDims", &ExpandDimsKernel);
  registry.Register("Fill", &FillKernel);
  registry.Register("ZerosLike", &ZerosLikeKernel);
  registry.Register("OnesLike", &OnesLikeKernel);
}

}  // namespace tfjit::runtime
