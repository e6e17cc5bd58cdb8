// The reduction family's kernels that walk one axis: ArgMax/ArgMin (ties pick the first
// index), Cumsum/Cumprod/CumulativeLogsumexp (exclusive, reverse), TopKV2 (stable: equal values
// keep index order), InTopKV2, NthElement and EuclideanNorm. (The plain reductions are in
// reduction_kernels.cc.)
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "core/top_k.h"
#include "frontend/attr.h"
#include "runtime/kernels/cwise_ops.h"

namespace tfjit::runtime {
namespace {

// A tensor viewed as [outer, n, inner] around `axis`.
struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
};
AxisView ViewAround(const Tensor& t, int64_t axis) {
  AxisView v;
  for (int d = 0; d < t.rank(); ++d) {
    if (d < axis) v.outer *= t.dim(d);
    if (d == axis) v.n = t.dim(d);
    if (d > axis) v.inner *= t.dim(d);
  }
  return v;
}

// Reads a scalar axis input and canonicalises it for a rank-`rank` tensor.
absl::StatusOr<int64_t> ScalarAxis(const KernelContext& ctx, const Tensor& t, int rank,
                                   const char* what) {
  std::vector<int64_t> v;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, t, what, &v));
  if (t.rank() != 0) return KernelError(ctx, "%s must be a scalar, got %s", what, t.ShapeString());
  int64_t axis;
  TFJIT_RETURN_IF_ERROR(CanonicalAxis(ctx, v[0], rank, &axis));
  return axis;
}

// ArgMax/ArgMin: NaN counts as the extreme (the first NaN wins, as XLA and NumPy do).
template <bool kMax>
absl::Status ArgKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(int64_t axis, ScalarAxis(ctx, ctx.input(1), in.rank(), "dimension"));
  TFJIT_ASSIGN_OR_RETURN(DType out_type, tf::GetTypeAttr(ctx.node(), "output_type"));
  if (out_type != DType::kInt32 && out_type != DType::kInt64) {
    return KernelError(ctx, "output_type must be int32 or int64, got %s", DTypeName(out_type));
  }
  const AxisView v = ViewAround(in, axis);
  if (v.n == 0) {
    return KernelError(ctx, "Reduction axis %d is empty in shape %s; nothing to pick from", axis,
                       DimsString(in.dims()));
  }
  std::vector<int64_t> out_dims = in.dims();
  out_dims.erase(out_dims.begin() + axis);
  Tensor out(out_type, out_dims);
  const bool ok = DispatchReal(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* p = in.data<T>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        const T* row = p + o * v.n * v.inner + i;
        int64_t best = 0;
        C best_v = C(row[0]);
        for (int64_t k = 1; k < v.n; ++k) {
          const C x = C(row[k * v.inner]);
          bool better = kMax ? x > best_v : x < best_v;
          if constexpr (kIsFloat<C>) better = better || (std::isnan(x) && !std::isnan(best_v));
          if (better) best = k, best_v = x;
        }
        const int64_t at = o * v.inner + i;
        if (out_type == DType::kInt64)
          out.data<int64_t>()[at] = best;
        else
          out.data<int32_t>()[at] = static_cast<int32_t>(best);
      }
    }
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), TypeSetName(TypeSet::kReal));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// Cumsum/Cumprod along `axis`; exclusive shifts by one (the first output is the identity);
// reverse scans from the end.
template <bool kProd>
absl::Status CumKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  if (in.rank() == 0) return KernelError(ctx, "input must be at least rank 1, got a scalar");
  TFJIT_ASSIGN_OR_RETURN(int64_t axis, ScalarAxis(ctx, ctx.input(1), in.rank(), "axis"));
  TFJIT_ASSIGN_OR_RETURN(bool exclusive, tf::GetBoolAttrOr(ctx.node(), "exclusive", false));
  TFJIT_ASSIGN_OR_RETURN(bool reverse, tf::GetBoolAttrOr(ctx.node(), "reverse", false));
  const AxisView v = ViewAround(in, axis);
  Tensor out(in.dtype(), in.dims());
  const bool ok = DispatchReal(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* p = in.data<T>();
    T* q = out.data<T>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        C acc = C(kProd ? 1 : 0);
        for (int64_t s = 0; s < v.n; ++s) {
          const int64_t k = reverse ? v.n - 1 - s : s;
          const int64_t at = (o * v.n + k) * v.inner + i;
          const C x = C(p[at]);
          if (exclusive) q[at] = static_cast<T>(acc);
          acc = Wrapping(acc, x, [](auto a, auto b) { return kProd ? a * b : a + b; });
          if (!exclusive) q[at] = static_cast<T>(acc);
        }
      }
    }
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), TypeSetName(TypeSet::kReal));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// log(exp(a) + exp(b)) without overflow; -inf is the identity.
template <typename C>
C LogAddExp(C a, C b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
  const C hi = std::max(a, b), lo = std::min(a, b);
  if (std::isinf(hi)) return hi;
  return hi + std::log1p(std::exp(lo - hi));
}

// CumulativeLogsumexp along `axis`, with Cumsum's exclusive and reverse; the empty sum is
// -inf (log 0).
absl::Status CumulativeLogsumexpKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  if (in.rank() == 0) return KernelError(ctx, "input must be at least rank 1, got a scalar");
  std::vector<int64_t> axis_v;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(1), "axis", &axis_v));
  if (ctx.input(1).rank() != 0) {
    return KernelError(ctx, "ScanOp: axis must be a scalar, not %s", ctx.input(1).ShapeString());
  }
  int64_t axis;
  TFJIT_RETURN_IF_ERROR(CanonicalAxis(ctx, axis_v[0], in.rank(), &axis));
  TFJIT_ASSIGN_OR_RETURN(bool exclusive, tf::GetBoolAttrOr(ctx.node(), "exclusive", false));
  TFJIT_ASSIGN_OR_RETURN(bool reverse, tf::GetBoolAttrOr(ctx.node(), "reverse", false));
  int64_t outer = 1, n = in.dim(static_cast<int>(axis)), inner = 1;
  for (int d = 0; d < in.rank(); ++d) {
    if (d < axis) outer *= in.dim(d);
    if (d > axis) inner *= in.dim(d);
  }
  Tensor out(in.dtype(), in.dims());
  const bool ok = DispatchFloat(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* p = in.data<T>();
    T* q = out.data<T>();
    ParallelFor(ctx, outer * inner, 20 * n, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t o = r / inner, i = r % inner;
        C acc = -std::numeric_limits<C>::infinity();
        for (int64_t s = 0; s < n; ++s) {
          const int64_t at = (o * n + (reverse ? n - 1 - s : s)) * inner + i;
          if (exclusive) q[at] = static_cast<T>(acc);
          acc = LogAddExp(acc, C(p[at]));
          if (!exclusive) q[at] = static_cast<T>(acc);
        }
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), "float16, float32, float64");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// TopKV2: the k largest entries of each last-axis row, descending; equal values keep their
// index order (TF's kernel is stable) and NaN ranks first. core/top_k.h does the selection, the
// same routine as compiled code's custom-call, so both agree on ties by construction.
// sorted=false returns the same order.
absl::Status TopKKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  const Tensor& k_t = ctx.input(1);
  if (k_t.rank() != 0 || (k_t.dtype() != DType::kInt32 && k_t.dtype() != DType::kInt64)) {
    return KernelError(ctx, "k must be an int scalar, got %s", k_t.ShapeString());
  }
  const int64_t k = ElementAsInt64(k_t, 0);
  if (k < 0) return KernelError(ctx, "Need k >= 0, got %d", k);
  if (in.rank() < 1) {
    return KernelError(ctx, "input must be >= 1-D, got shape %s", in.ShapeString());
  }
  const int64_t n = in.dim(in.rank() - 1);
  if (n < k) {
    return KernelError(ctx, "input must have at least k columns. Had %d, needed %d", n, k);
  }
  if (n > std::numeric_limits<int32_t>::max()) {
    return KernelError(ctx, "rows of %d columns are too long (at most 2^31 - 1)", n);
  }
  TFJIT_ASSIGN_OR_RETURN(DType index_type, tf::GetTypeAttr(ctx.node(), "index_type"));
  if (index_type != DType::kInt32 && index_type != DType::kInt64) {
    return KernelError(ctx, "index_type must be int32 or int64, got %s", DTypeName(index_type));
  }
  if (!topk::IsTopKDType(in.dtype())) {
    return UnsupportedDType(ctx, in.dtype(), TypeSetName(TypeSet::kReal));
  }
  std::vector<int64_t> out_dims = in.dims();
  out_dims.back() = k;
  Tensor values(in.dtype(), out_dims), indices(DType::kInt32, out_dims);
  const int64_t rows = n == 0 ? 0 : in.num_elements() / n;
  const auto run = [&](int64_t begin, int64_t end) {
    topk::TopKRows(in.dtype(), in.raw_data(), n, k, values.raw_data(), indices.data<int32_t>(),
                   begin, end);
  };
  if (ctx.pool() != nullptr && rows > 1) {
    ctx.pool()->ParallelFor(rows, topk::TopKCostPerRow(n, k), run);
  } else {
    run(0, rows);
  }
  if (index_type == DType::kInt64) {
    Tensor wide(DType::kInt64, out_dims);
    for (int64_t i = 0; i < indices.num_elements(); ++i) {
      wide.data<int64_t>()[i] = indices.data<int32_t>()[i];
    }
    indices = std::move(wide);
  }
  ctx.set_output(0, std::move(values));
  ctx.set_output(1, std::move(indices));
  return absl::OkStatus();
}

// InTopKV2: whether each row's target class is among its k largest predictions: fewer than k
// predictions are strictly larger; false for an out-of-range target or a non-finite target
// prediction.
absl::Status InTopKKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& pred = ctx.input(0);
  const Tensor& targets_t = ctx.input(1);
  const Tensor& k_t = ctx.input(2);
  if (pred.rank() != 2) {
    return KernelError(ctx, "predictions must be 2-dimensional, got %s", pred.ShapeString());
  }
  if (targets_t.rank() != 1) {
    return KernelError(ctx, "targets must be 1-dimensional, got %s", targets_t.ShapeString());
  }
  if (pred.dim(0) != targets_t.dim(0)) {
    return KernelError(ctx, "First dimension of predictions %d must match length of targets %d",
                       pred.dim(0), targets_t.dim(0));
  }
  if (k_t.rank() != 0) {
    return KernelError(ctx, "k must be 0-D, got shape %s", DimsString(k_t.dims()));
  }
  if (pred.dtype() != DType::kFloat32) return UnsupportedDType(ctx, pred.dtype(), "float32");
  std::vector<int64_t> targets, k_v;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, targets_t, "targets", &targets));
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, k_t, "k", &k_v));
  const int64_t k = k_v[0];
  const int64_t classes = pred.dim(1);
  Tensor out(DType::kBool, {pred.dim(0)});
  const float* p = pred.data<float>();
  for (int64_t b = 0; b < pred.dim(0); ++b) {
    const int64_t t = targets[static_cast<size_t>(b)];
    bool in_top = false;
    if (t >= 0 && t < classes && std::isfinite(p[b * classes + t])) {
      const float target = p[b * classes + t];
      int64_t larger = 0;
      for (int64_t c = 0; c < classes; ++c) larger += p[b * classes + c] > target ? 1 : 0;
      in_top = larger < k;
    }
    out.data<bool>()[b] = in_top;
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// NthElement: the n-th smallest entry (n-th largest with reverse) of each last-axis row.
absl::Status NthElementKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  const Tensor& n_t = ctx.input(1);
  if (n_t.rank() != 0) {
    return KernelError(ctx, "N must be scalar but has rank %d", n_t.rank());
  }
  std::vector<int64_t> n_v;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, n_t, "n", &n_v));
  const int64_t n = n_v[0];
  if (n < 0) return KernelError(ctx, "N must be non-negative but is %d", n);
  if (in.rank() < 1) {
    return KernelError(ctx, "Input must be >= 1-D but is %d-D", in.rank());
  }
  const int64_t cols = in.dims().back();
  if (cols <= n) {
    return KernelError(ctx, "Input must have last dimension > n = %d", n);
  }
  TFJIT_ASSIGN_OR_RETURN(bool reverse, tf::GetBoolAttrOr(ctx.node(), "reverse", false));
  std::vector<int64_t> dims(in.dims().begin(), in.dims().end() - 1);
  Tensor out(in.dtype(), dims);
  const bool ok = DispatchReal(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const int64_t rows = out.num_elements();
    ParallelFor(ctx, rows, 4 * cols, [&](int64_t begin, int64_t end) {
      std::vector<C> row(static_cast<size_t>(cols));
      for (int64_t r = begin; r < end; ++r) {
        for (int64_t c = 0; c < cols; ++c)
          row[static_cast<size_t>(c)] = C(in.data<T>()[r * cols + c]);
        const int64_t at = reverse ? cols - 1 - n : n;
        std::nth_element(row.begin(), row.begin() + at, row.end());
        out.data<T>()[r] = static_cast<T>(row[static_cast<size_t>(at)]);
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), TypeSetName(TypeSet::kReal));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// EuclideanNorm: sqrt(sum(x^2)) over reduction_indices, with keep_dims.
absl::Status EuclideanNormKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> axes_v;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(1), "reduction_indices", &axes_v));
  TFJIT_ASSIGN_OR_RETURN(bool keep, tf::GetBoolAttrOr(ctx.node(), "keep_dims", false));
  std::vector<bool> reduced(static_cast<size_t>(in.rank()), false);
  for (int64_t a : axes_v) {
    int64_t axis;
    TFJIT_RETURN_IF_ERROR(CanonicalAxis(ctx, a, in.rank(), &axis));
    reduced[static_cast<size_t>(axis)] = true;
  }
  std::vector<int64_t> out_dims, kept_dims;
  for (int d = 0; d < in.rank(); ++d) {
    if (!reduced[static_cast<size_t>(d)]) out_dims.push_back(in.dim(d));
    kept_dims.push_back(reduced[static_cast<size_t>(d)] ? 1 : in.dim(d));
  }
  Tensor out(in.dtype(), keep ? kept_dims : out_dims);
  // Complex values: sqrt(sum x * conj(x)), real-valued in the complex dtype (TF's reducer).
  const auto norm = [&](auto tag) {
    using T = decltype(tag);
    std::vector<double> acc(static_cast<size_t>(out.num_elements()), 0.0);
    for (int64_t i = 0; i < in.num_elements(); ++i) {
      int64_t rest = i, at = 0, scale = 1;
      for (int d = in.rank(); d-- > 0;) {
        const int64_t idx = rest % in.dim(d);
        rest /= in.dim(d);
        if (!reduced[static_cast<size_t>(d)]) at += idx * scale, scale *= in.dim(d);
      }
      if constexpr (IsComplexType<T>) {
        acc[static_cast<size_t>(at)] += std::norm(complex128(in.data<T>()[i]));
      } else {
        const double x = static_cast<double>(static_cast<ComputeType<T>>(in.data<T>()[i]));
        acc[static_cast<size_t>(at)] += x * x;
      }
    }
    for (size_t j = 0; j < acc.size(); ++j) {
      if constexpr (IsComplexType<T>) {
        out.data<T>()[j] = T(static_cast<typename T::value_type>(std::sqrt(acc[j])));
      } else {
        out.data<T>()[j] = static_cast<T>(static_cast<ComputeType<T>>(std::sqrt(acc[j])));
      }
    }
  };
  const bool ok = DispatchReal(in.dtype(), norm) || DispatchComplex(in.dtype(), norm);
  if (!ok) return UnsupportedDType(ctx, in.dtype(), "real and complex types");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterReductionScanKernels(KernelRegistry& registry) {
  registry.Register("ArgMax", &ArgKernel<true>);
  registry.Register("ArgMin", &ArgKernel<false>);
  registry.Register("Cumsum", &CumKernel<false>);
  registry.Register("Cumprod", &CumKernel<true>);
  registry.Register("CumulativeLogsumexp", &CumulativeLogsumexpKernel);
  registry.Register("TopKV2", &TopKKernel);
  registry.Register("InTopKV2", &InTopKKernel);
  registry.Register("NthElement", &NthElementKernel);
  registry.Register("EuclideanNorm", &EuclideanNormKernel);
}

}  // namespace tfjit::runtime
