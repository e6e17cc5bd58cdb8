// Index-driven kernels: GatherV2 (axis, batch_dims), Gather (v1), GatherNd, OneHot and Where.
// Out-of-range gather indices fail as TF's CPU kernels do ("indices[i] = v is not in [0, n)",
// GatherNd's "does not index into param shape"); they are never clamped.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "core/where.h"
#include "frontend/attr.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t d = begin; d < end; ++d) p *= dims[d];
  return p;
}

// "[i,j]": the multi-index of flat element `flat` of `dims`, as TF's SliceDebugString.
std::string IndexString(const std::vector<int64_t>& dims, int64_t flat) {
  if (dims.empty()) return "";  // scalar indices: TF prints "indices = 7 is not in ..."
  std::vector<int64_t> idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = flat % dims[d];
    flat /= dims[d];
  }
  return DimsString(idx);
}

// params [batch, outer, n, inner] gathered by indices [batch, count] into
// [batch, outer, count, inner] (bytes copied per inner slice).
absl::Status GatherCore(KernelContext& ctx, const Tensor& params, const Tensor& indices,
                        int64_t axis, int64_t batch_dims) {
  std::vector<int64_t> idx;
  if (indices.dtype() != DType::kInt32 && indices.dtype() != DType::kInt64) {
    return KernelError(ctx, "indices must be int32 or int64, got %s", indices.ShapeString());
  }
  const std::vector<int64_t>& pd = params.dims();
  const size_t a = static_cast<size_t>(axis), b = static_cast<size_t>(batch_dims);
  const int64_t n = pd[a];
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    const int64_t v = ElementAsInt64(indices, i);
    if (v < 0 || v >= n) {
      return KernelError(ctx, "indices%s = %d is not in [0, %d)", IndexString(indices.dims(), i), v,
                         n);
    }
    idx.push_back(v);
  }
  std::vector<int64_t> out_dims(pd.begin(), pd.begin() + axis);
  out_dims.insert(out_dims.end(), indices.dims().begin() + batch_dims, indices.dims().end());
  out_dims.insert(out_dims.end(), pd.begin() + axis + 1, pd.end());
  Tensor out(params.dtype(), out_dims);
  const int64_t batch = Product(pd, 0, b);
  const int64_t outer = Product(pd, b, a);
  const int64_t inner_bytes =
      Product(pd, a + 1, pd.size()) * static_cast<int64_t>(DTypeSize(params.dtype()));
  const int64_t count = batch == 0 ? 0 : indices.num_elements() / std::max<int64_t>(batch, 1);
  const char* src = static_cast<const char*>(params.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  ParallelFor(ctx, batch * outer, count * inner_bytes / 4 + 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t bi = r / outer;
      const char* row = src + r * n * inner_bytes;
      char* out_row = dst + r * count * inner_bytes;
      for (int64_t j = 0; j < count; ++j) {
        std::memcpy(out_row + j * inner_bytes,
                    row + idx[static_cast<size_t>(bi * count + j)] * inner_bytes,
                    static_cast<size_t>(inner_bytes));
      }
    }
  });
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status GatherV2Kernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& params = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  std::vector<int64_t> axis_v;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(2), "axis", &axis_v));
  if (ctx.input(2).rank() != 0) {
    return KernelError(ctx, "axis must be a scalar, got %s", ctx.input(2).ShapeString());
  }
  if (params.rank() == 0) {
    return KernelError(ctx, "params must be at least 1 dimensional, got %s", params.ShapeString());
  }
  int64_t axis;
  TFJIT_RETURN_IF_ERROR(CanonicalAxis(ctx, axis_v[0], params.rank(), &axis));
  TFJIT_ASSIGN_OR_RETURN(int64_t batch_dims, tf::GetIntAttrOr(ctx.node(), "batch_dims", 0));
  if (batch_dims < 0) batch_dims += indices.rank();
  if (batch_dims < 0 || batch_dims > indices.rank() || batch_dims > axis) {
    return KernelError(ctx,
                       "batch_dims must be in [-rank(indices), rank(indices)] = [%d, %d] and "
                       "<= axis (%d), got %d",
                       -indices.rank(), indices.rank(), axis, batch_dims);
  }
  for (int d = 0; d < batch_dims; ++d) {
    if (params.dim(d) != indices.dim(d)) {
      return KernelError(ctx,
                         "params.shape[%d]: %d should be equal to indices.shape[%d]: %d (the "
                         "first batch_dims = %d dimensions must match)",
                         d, params.dim(d), d, indices.dim(d), batch_dims);
    }
  }
  return GatherCore(ctx, params, indices, axis, batch_dims);
}

absl::Status GatherKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  if (ctx.input(0).rank() == 0) {
    return KernelError(ctx, "params must be at least 1 dimensional, got %s",
                       ctx.input(0).ShapeString());
  }
  return GatherCore(ctx, ctx.input(0), ctx.input(1), 0, 0);
}

// GatherNd: output[i..., :] = params[indices[i..., 0], ..., indices[i..., K-1], :]; an index
// outside params fails as TF's CPU kernel does (never clamped).
absl::Status GatherNdKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& params = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  if (indices.dtype() != DType::kInt32 && indices.dtype() != DType::kInt64) {
    return KernelError(ctx, "indices must be int32 or int64, got %s", DTypeName(indices.dtype()));
  }
  if (params.rank() < 1) {
    return KernelError(ctx, "params must be at least a vector, got %s", params.ShapeString());
  }
  if (indices.rank() < 1) {
    return KernelError(ctx, "indices must be at least a vector, got %s", indices.ShapeString());
  }
  const int64_t k = indices.dim(indices.rank() - 1);
  if (k > params.rank()) {
    return KernelError(ctx,
                       "index innermost dimension length must be <= params rank; saw: %d "
                       "vs. %d",
                       k, params.rank());
  }
  if (DTypeSize(params.dtype()) == 0) return UnsupportedDType(ctx, params.dtype(), "numeric types");
  std::vector<int64_t> out_dims(indices.dims().begin(), indices.dims().end() - 1);
  int64_t slice = 1;
  for (int d = static_cast<int>(k); d < params.rank(); ++d) {
    out_dims.push_back(params.dim(d));
    slice *= params.dim(d);
  }
  Tensor out(params.dtype(), out_dims);
  // One slice per index vector: the product of indices' outer dims (1 for a [K] vector).
  int64_t count = 1;
  for (int d = 0; d + 1 < indices.rank(); ++d) count *= indices.dim(d);
  const size_t bytes = static_cast<size_t>(slice) * DTypeSize(params.dtype());
  const char* x = static_cast<const char*>(params.raw_data());
  char* y = static_cast<char*>(out.raw_data());
  for (int64_t r = 0; r < count && out.num_elements() > 0; ++r) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t v = ElementAsInt64(indices, r * k + j);
      const int64_t dim = params.dim(static_cast<int>(j));
      if (v < 0 || v >= dim) {
        std::vector<int64_t> idx;
        for (int64_t q = 0; q < k; ++q) idx.push_back(ElementAsInt64(indices, r * k + q));
        return KernelError(ctx, "indices[%d] = [%s] does not index into param shape %s", r,
                           absl::StrJoin(idx, ", "), DimsString(params.dims()));
      }
      offset = offset * dim + v;
    }
    std::memcpy(y + static_cast<size_t>(r) * bytes, x + static_cast<size_t>(offset) * bytes, bytes);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// OneHot: the depth axis inserted at `axis` (-1 = last); out[..., j, ...] = on when
// indices[...] == j, else off. Negative and out-of-range indices give a row of off.
absl::Status OneHotKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 4));
  const Tensor& indices = ctx.input(0);
  const Tensor& depth_t = ctx.input(1);
  const Tensor& on = ctx.input(2);
  const Tensor& off = ctx.input(3);
  TFJIT_ASSIGN_OR_RETURN(int64_t axis, tf::GetIntAttrOr(ctx.node(), "axis", -1));
  const int out_rank = indices.rank() + 1;
  if (axis < -1 || axis >= out_rank) {
    return KernelError(ctx, "Expected axis to be -1 or between [0, %d).  But received: %d",
                       out_rank, axis);
  }
  if (depth_t.rank() != 0 ||
      (depth_t.dtype() != DType::kInt32 && depth_t.dtype() != DType::kInt64)) {
    return KernelError(ctx, "depth must be an int32 scalar, but got: %s", depth_t.ShapeString());
  }
  const int64_t depth = ElementAsInt64(depth_t, 0);
  if (depth < 0) return KernelError(ctx, "depth must be non-negative, got: %d", depth);
  if (on.num_elements() != 1 || on.rank() != 0 || off.rank() != 0 || on.dtype() != off.dtype()) {
    return KernelError(ctx,
                       "on_value and off_value must be scalars of one dtype, but got: %s and %s",
                       on.ShapeString(), off.ShapeString());
  }
  if (indices.dtype() != DType::kInt32 && indices.dtype() != DType::kInt64 &&
      indices.dtype() != DType::kUInt8) {
    return UnsupportedDType(ctx, indices.dtype(), "indices of uint8, int32, int64");
  }
  const size_t a = static_cast<size_t>(axis < 0 ? indices.rank() : axis);
  std::vector<int64_t> out_dims = indices.dims();
  out_dims.insert(out_dims.begin() + static_cast<int64_t>(a), depth);
  Tensor out(on.dtype(), out_dims);
  const int64_t prefix = Product(indices.dims(), 0, a);
  const int64_t suffix = Product(indices.dims(), a, indices.dims().size());
  const size_t width = DTypeSize(on.dtype());
  char* dst = static_cast<char*>(out.raw_data());
  for (int64_t p = 0; p < prefix; ++p) {
    for (int64_t j = 0; j < depth; ++j) {
      for (int64_t s = 0; s < suffix; ++s) {
        const int64_t v = ElementAsInt64(indices, p * suffix + s);
        const Tensor& src = v == j ? on : off;
        std::memcpy(dst + ((p * depth + j) * suffix + s) * static_cast<int64_t>(width),
                    src.raw_data(), width);
      }
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// Where: the coordinates of the true (non-zero) elements, [num_true, rank] int64, row-major.
absl::Status WhereKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  const int64_t n = in.num_elements();
  std::unique_ptr<bool[]> mask(new bool[static_cast<size_t>(n)]);
  const auto nonzero = [&](auto tag) {
    using T = decltype(tag);
    const T* p = in.data<T>();
    for (int64_t i = 0; i < n; ++i) mask[static_cast<size_t>(i)] = p[i] != T(0);
  };
  const bool ok = DispatchNumeric(in.dtype(), nonzero) || DispatchComplex(in.dtype(), nonzero);
  if (!ok) return UnsupportedDType(ctx, in.dtype(), "numeric types, bool and complex");
  // The rows of core/where.h's routine, which the compiled custom-call tfjit.where shares.
  const int64_t count = where::CountTrue(mask.get(), n);
  Tensor out(DType::kInt64, {count, in.rank()});
  where::TrueCoordinates(mask.get(), in.dims().data(), in.rank(), count, out.data<int64_t>());
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterGatherKernels(KernelRegistry& registry) {
  registry.Register("GatherV2", &GatherV2Kernel);
  registry.Register("Gather", &GatherKernel);
  registry.Register("GatherNd", &GatherNdKernel);
  registry.Register("OneHot", &OneHotKernel);
  registry.Register("Where", &WhereKernel);
}

}  // namespace tfjit::runtime
