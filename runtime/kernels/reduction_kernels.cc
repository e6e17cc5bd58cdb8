// Reduction kernels: Sum, Prod, Max, Min, Mean (numeric) and Any, All (bool) over a set of
// axes, with keep_dims. Reduced axes are moved innermost (a transpose only when the layout
// needs it) so each output element reduces one contiguous row.
#include <cmath>
#include <limits>
#include <type_traits>

#include "frontend/attr.h"
#include "runtime/kernels/cwise.h"

namespace tfjit::runtime {
namespace {

enum class Reduce { kSum, kProd, kMax, kMin, kMean, kAny, kAll };

// The identity of each reduction, i.e. the result over zero elements (as Eigen's reducers
// initialise): Max starts at -inf (lowest for ints), Min at +inf (max for ints).
template <Reduce R, typename A>
A Identity() {
  if constexpr (R == Reduce::kProd || R == Reduce::kAll) {
    return A(1);
  } else if constexpr (R == Reduce::kMax) {
    if constexpr (kIsFloat<A>) return -std::numeric_limits<A>::infinity();
    return std::numeric_limits<A>::lowest();
  } else if constexpr (R == Reduce::kMin) {
    if constexpr (kIsFloat<A>) return std::numeric_limits<A>::infinity();
    return std::numeric_limits<A>::max();
  } else {
    return A(0);
  }
}

// Reduces p[0..n) to one value. Floats accumulate in ComputeType (float for 16-bit types);
// Max/Min propagate NaN as TF's reducers do; integer Mean truncates (sum / count).
template <Reduce R, typename T>
T ReduceRow(const T* p, int64_t n) {
  using A = ComputeType<T>;
  A acc = Identity<R, A>();
  if constexpr (R == Reduce::kSum || R == Reduce::kMean) {
    if constexpr (std::is_same_v<T, A>) {
      acc = n == 0 ? A(0) : ConstArrayMap<T>(p, n).sum();
    } else {
      for (int64_t i = 0; i < n; ++i) acc += A(p[i]);
    }
    if constexpr (R == Reduce::kMean) {
      if constexpr (kIsInt<A>) {
        // TF divides the integer sum; an empty integer mean would divide by zero, give 0.
        acc = n == 0 ? A(0) : static_cast<A>(static_cast<int64_t>(acc) / n);
      } else {
        acc = acc / A(n);  // 0/0 = NaN for an empty float mean, as in TF
      }
    }
  } else if constexpr (R == Reduce::kProd) {
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (kIsInt<A>) {
        // Integer products wrap (two's complement), as TF's; signed overflow is UB in C++, so
        // multiply unsigned (found by UBSan).
        using U = std::make_unsigned_t<A>;
        acc = static_cast<A>(static_cast<U>(acc) * static_cast<U>(A(p[i])));
      } else {
        acc = static_cast<A>(acc * A(p[i]));
      }
    }
  } else if constexpr (R == Reduce::kMax || R == Reduce::kMin) {
    for (int64_t i = 0; i < n; ++i) {
      const A v = A(p[i]);
      if constexpr (kIsFloat<A>) {
        if (std::isnan(v)) return T(v);
      }
      acc = (R == Reduce::kMax) == (v > acc) ? v : acc;
    }
  } else if constexpr (R == Reduce::kAny) {
    for (int64_t i = 0; i < n && !acc; ++i) acc = p[i];
  } else {
    for (int64_t i = 0; i < n && acc; ++i) acc = p[i];
  }
  return T(acc);
}

// Validated reduction axes as a mask over the input's dims.
absl::StatusOr<std::vector<bool>> ReductionMask(const KernelContext& ctx, const Tensor& in,
                                                const Tensor& axes_tensor) {
  std::vector<int64_t> axes;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, axes_tensor, "reduction_indices", &axes));
  const int rank = in.rank();
  std::vector<bool> mask(static_cast<size_t>(rank), false);
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) {
      return KernelError(ctx,
                         "Invalid reduction dimension %d for input %s: axes must be in "
                         "[%d, %d)",
                         axis, in.ShapeString(), -rank, rank);
    }
    const size_t a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
    if (mask[a]) {
      return KernelError(ctx, "reduction_indices %s contains dimension %d twice", DimsString(axes),
                         a);
    }
    mask[a] = true;
  }
  return mask;
}

// Moves reduced dims innermost. Returns `in` itself when the non-trivial dims already are.
Tensor ReducedDimsInnermost(const KernelContext& ctx, const Tensor& in,
                            const std::vector<bool>& mask) {
  std::vector<int> perm;
  for (int d = 0; d < in.rank(); ++d) {
    if (!mask[static_cast<size_t>(d)]) perm.push_back(d);
  }
  for (int d = 0; d < in.rank(); ++d) {
    if (mask[static_cast<size_t>(d)]) perm.push_back(d);
  }
  // Size-1 dims do not affect the layout: only the order of the others matters.
  int last = -1;
  bool in_order = true;
  for (int d : perm) {
    if (in.dim(d) == 1) continue;
    in_order = in_order && d > last;
    last = d;
  }
  return in_order ? in : TransposeTensor(ctx, in, perm);
}

template <Reduce R>
absl::Status ReduceKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(bool keep_dims, tf::GetBoolAttrOr(ctx.node(), "keep_dims", false));
  TFJIT_ASSIGN_OR_RETURN(std::vector<bool> mask, ReductionMask(ctx, in, ctx.input(1)));
  std::vector<int64_t> out_dims;
  int64_t outer = 1;
  int64_t inner = 1;
  for (int d = 0; d < in.rank(); ++d) {
    if (mask[static_cast<size_t>(d)]) {
      inner *= in.dim(d);
      if (keep_dims) out_dims.push_back(1);
    } else {
      outer *= in.dim(d);
      out_dims.push_back(in.dim(d));
    }
  }
  Tensor out(in.dtype(), out_dims);
  const Tensor src = ReducedDimsInnermost(ctx, in, mask);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* p = src.data<T>();
    T* o = out.data<T>();
    ParallelFor(ctx, outer, std::max<int64_t>(1, inner), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) o[i] = ReduceRow<R, T>(p + i * inner, inner);
    });
  };
  bool ok;
  if constexpr (R == Reduce::kAny || R == Reduce::kAll) {
    ok = in.dtype() == DType::kBool;
    if (ok) run(bool{});
  } else {
    ok = DispatchReal(in.dtype(), run);
  }
  if (!ok) {
    return UnsupportedDType(
        ctx, in.dtype(),
        R == Reduce::kAny || R == Reduce::kAll ? "bool" : "floating-point and integer types");
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterReductionKernels(KernelRegistry& registry) {
  registry.Register("Sum", &ReduceKernel<Reduce::kSum>);
  registry.Register("Prod", &ReduceKernel<Reduce::kProd>);
  registry.Register("Max", &ReduceKernel<Reduce::kMax>);
  registry.Register("Min", &ReduceKernel<Reduce::kMin>);
  registry.Register("Mean", &ReduceKernel<Reduce::kMean>);
  registry.Register("Any", &ReduceKernel<Reduce::kAny>);
  registry.Register("All", &ReduceKernel<Reduce::kAll>);
}

}  // namespace tfjit::runtime
