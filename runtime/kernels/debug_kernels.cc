// Debugging kernels that stay in the runtime: CheckNumerics.
#include <cmath>

#include "frontend/attr.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

// CheckNumerics: passes its input through, or fails with TF's message when it holds NaN/Inf.
absl::Status CheckNumericsKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& x = ctx.input(0);
  bool has_nan = false, has_inf = false;
  const bool supported = DispatchFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* data = x.data<T>();
    const int64_t n = x.num_elements();
    for (int64_t i = 0; i < n; ++i) {
      // Widening to double is exact for every float type, NaN and Inf included.
      const double v = static_cast<double>(data[i]);
      has_nan |= std::isnan(v);
      has_inf |= std::isinf(v);
    }
  });
  if (!supported) return UnsupportedDType(ctx, x.dtype(), "float16, bfloat16, float32, float64");
  if (has_nan || has_inf) {
    TFJIT_ASSIGN_OR_RETURN(std::string message, tf::GetStringAttrOr(ctx.node(), "message", ""));
    const char* what = has_nan && has_inf ? "NaN and Inf" : (has_nan ? "NaN" : "Inf");
    return KernelError(ctx, "%s : Tensor had %s values", message, what);
  }
  ctx.set_output(0, x);
  return absl::OkStatus();
}

}  // namespace

void RegisterDebugKernels(KernelRegistry& registry) {
  registry.Register("CheckNumerics", CheckNumericsKernel);
}

}  // namespace tfjit::runtime
