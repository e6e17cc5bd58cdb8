// Debugging kernels of the graph family that stay in the runtime: CheckNumerics and
// CheckNumericsV2, Assert, and PreventGradient (an identity at run time).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/string_tensor.h"
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
    // At most three entries. Reserving them also spares GCC 12 a false -Wstringop-overflow on
    // push_back once Assert's string vectors share this file.
    what.reserve(3);
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

// TF's SummarizeValue: the first `max` elements separated by spaces, "..." when there are more.
std::string Summarize(const Tensor& t, int64_t max) {
  if (const std::vector<std::string>* strings = StringValues(t)) {
    // Strings print bare, as TF's SummarizeValue does ("x must be positive").
    const size_t n = std::min(strings->size(), static_cast<size_t>(std::max<int64_t>(max, 0)));
    std::string s = absl::StrJoin(strings->begin(), strings->begin() + n, " ");
    if (strings->size() > n) absl::StrAppend(&s, "...");
    return s;
  }
  if (!IsNumericDType(t.dtype())) return t.DebugString(static_cast<int>(max));
  std::vector<std::string> parts;
  const int64_t n = std::min(t.num_elements(), max);
  for (int64_t i = 0; i < n; ++i) {
    if (t.dtype() == DType::kBool) {
      parts.push_back(t.data<bool>()[i] ? "1" : "0");
    } else if (IsFloatingDType(t.dtype())) {
      parts.push_back(absl::StrCat(ElementAsDouble(t, i)));
    } else {
      parts.push_back(absl::StrCat(ElementAsInt64(t, i)));
    }
  }
  std::string s = absl::StrJoin(parts, " ");
  if (t.num_elements() > max) absl::StrAppend(&s, "...");
  return s;
}

// Assert: fails with "assertion failed: [data0] [data1] ..." when the condition is false.
absl::Status AssertKernel(KernelContext& ctx) {
  if (ctx.num_inputs() < 1) return absl::InternalError("Assert without a condition input");
  const Tensor& cond = ctx.input(0);
  if (cond.dtype() != DType::kBool || cond.rank() != 0) {
    return KernelError(ctx, "In[0] (condition) must be a scalar but has shape %s",
                       cond.ShapeString());
  }
  if (cond.data<bool>()[0]) return absl::OkStatus();
  TFJIT_ASSIGN_OR_RETURN(int64_t summarize, tf::GetIntAttrOr(ctx.node(), "summarize", 3));
  std::vector<std::string> parts;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    parts.push_back(absl::StrCat("[", Summarize(ctx.input(i), summarize), "]"));
  }
  return KernelError(ctx, "assertion failed: %s", absl::StrJoin(parts, " "));
}

absl::Status PreventGradientKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

}  // namespace

void RegisterDebugKernels(KernelRegistry& registry) {
  registry.Register("CheckNumerics", CheckNumericsKernel);
  registry.Register("CheckNumericsV2", CheckNumericsKernel);
  registry.Register("Assert", AssertKernel);
  registry.Register("PreventGradient", PreventGradientKernel);
}

}  // namespace tfjit::runtime
