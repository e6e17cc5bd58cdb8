// Math kernels: Cast; registers the basic elementwise ops (math_cwise_kernels.cc) and the
// reductions (reduction_kernels.cc) too.
#include <cmath>
#include <limits>
#include <type_traits>

#include "frontend/attr.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

// Float -> integer as x86's truncating conversions (what static_cast compiles to, and so what
// TF's CPU Cast produces): in-range values truncate toward zero; NaN and out-of-range values
// give the "integer indefinite" value (the lowest int32/int64), then narrow by wrapping.
template <typename To, typename F>
To FloatToInt(F f) {
  if constexpr (sizeof(To) == 8 || std::is_same_v<To, uint32_t>) {
    const bool in_range = f >= F(-9223372036854775808.0) && f < F(9223372036854775808.0);
    if constexpr (std::is_same_v<To, uint64_t>) {
      if (f >= F(0) && f < F(18446744073709551616.0)) return static_cast<uint64_t>(f);
    }
    const int64_t v = in_range ? static_cast<int64_t>(f) : std::numeric_limits<int64_t>::min();
    return static_cast<To>(v);
  } else {
    const bool in_range = f >= F(-2147483648.0) && f < F(2147483648.0);
    const int32_t v = in_range ? static_cast<int32_t>(f) : std::numeric_limits<int32_t>::min();
    return static_cast<To>(v);
  }
}

template <typename To, typename From>
To CastScalar(From from) {
  using C = ComputeType<From>;
  const C v = C(from);
  if constexpr (std::is_same_v<To, bool>) {
    return v != C(0);
  } else if constexpr (kIsInt<To> && kIsFloat<C>) {
    return FloatToInt<To>(v);
  } else if constexpr (std::is_same_v<To, half> || std::is_same_v<To, bfloat16>) {
    return To(static_cast<float>(v));
  } else {
    // int -> narrower int wraps (defined since C++20); int/bool -> float rounds.
    return static_cast<To>(v);
  }
}

absl::Status CastKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(DType dst, tf::GetTypeAttr(ctx.node(), "DstT"));
  Tensor out(dst, in.dims());
  bool dst_ok = true;
  const bool src_ok = DispatchNumeric(in.dtype(), [&](auto src_tag) {
    using From = decltype(src_tag);
    dst_ok = DispatchNumeric(dst, [&](auto dst_tag) {
      using To = decltype(dst_tag);
      const From* src = in.data<From>();
      To* dst_data = out.data<To>();
      ParallelFor(ctx, in.num_elements(), 2, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) dst_data[i] = CastScalar<To>(src[i]);
      });
    });
  });
  if (!src_ok || !dst_ok) {
    return KernelError(ctx, "cannot cast %s to %s: only numeric types and bool are supported",
                       in.ShapeString(), DTypeName(dst));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterMathKernels(KernelRegistry& registry) {
  RegisterMathCwiseKernels(registry);
  RegisterReductionKernels(registry);
  registry.Register("Cast", &CastKernel);
}

}  // namespace tfjit::runtime
