// Debugging kernels that stay in the runtime: CheckNumerics and CheckNumericsV2.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/attr.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

// CheckNumerics (V1) and CheckNumericsV2: pass the input through, or fail with TF's message
// naming what the tensor held. V1 says "Inf", "NaN" or "Inf and NaN"; V2 tells -Inf from +Inf
// and lists them in the order -Inf, +Inf, NaN ("-Inf, +Inf, and NaN").
absl::Status CheckNumericsKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& x = ctx.input(0);
  bool has_nan = false, has_neg_inf = false, has_pos_inf = false;
  const bool supported = DispatchFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* data = x.data<T>();
    const int64_t n = x.num_elements();
    for (int64_t i = 0; i < n; ++i) {
      // Widening to double is exact for every float type, NaN and Inf included.
      const double v = static_cast<double>(data[i]);
      has_nan |= std::isnan(v);
      has_neg_inf |= std::isinf(v) && v < 0;
      has_pos_inf |= std::isinf(v) && v > 0;
    }
  });
  if (!supported) return UnsupportedDType(ctx, x.dtype(), "float16, bfloat16, float32, float64");
  if (has_nan || has_neg_inf || has_pos_inf) {
    TFJIT_ASSIGN_OR_RETURN(std::string message, tf::GetStringAttrOr(ctx.node(), "message", ""));
    std::vector<std::string> what;
    if (ctx.node().op() == "CheckNumericsV2") {
      if (has_neg_inf) what.push_back("-Inf");
      if (has_pos_inf) what.push_back("+Inf");
    } else if (has_neg_inf || has_pos_inf) {
      what.push_back("Inf");
    }
    if (has_nan) what.push_back("NaN");
    const std::string listed = what.size() == 3
                                   ? absl::StrCat(what[0], ", ", what[1], ", and ", what[2])
                                   : absl::StrJoin(what, " and ");
    return KernelError(ctx, "%s : Tensor had %s values", message, listed);
  }
  ctx.set_output(0, x);
  return absl::OkStatus();
}

}  // namespace

void RegisterDebugKernels(KernelRegistry& registry) {
  registry.Register("CheckNumerics", CheckNumericsKernel);
  registry.Register("CheckNumericsV2", CheckNumericsKernel);
}

}  // namespace tfjit::runtime
