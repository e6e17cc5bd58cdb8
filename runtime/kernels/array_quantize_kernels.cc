// Fallback kernels of the array family's quantization ops (docs/DESIGN.md, "Op families"),
// with TF's CPU semantics and error messages: FakeQuantWithMinMaxArgs/Vars/VarsPerChannel and
// their gradients (TF's fake_quant_ops functors, computed in float) and
// QuantizeAndDequantizeV2.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/attr.h"
#include "runtime/kernels/cwise_ops.h"

namespace tfjit::runtime {
namespace {

// ---- Fake quantization (TF's fake_quant_ops functors, in float) ----

struct Nudged {
  float min = 0, max = 0, scale = 1;
};

// TF's Nudge: shift [min, max] so that 0 is exactly representable on the integer grid
// [quant_min, quant_max].
Nudged Nudge(float min, float max, int64_t quant_min, int64_t quant_max) {
  const float qmin = static_cast<float>(quant_min), qmax = static_cast<float>(quant_max);
  Nudged n;
  n.scale = (max - min) / (qmax - qmin);
  const float zero_from_min = qmin - min / n.scale;
  float zero = std::round(zero_from_min);
  if (zero_from_min < qmin) zero = qmin;
  if (zero_from_min > qmax) zero = qmax;
  n.min = (qmin - zero) * n.scale;
  n.max = (qmax - zero) * n.scale;
  return n;
}

struct QuantRange {
  int64_t quant_min = 0, quant_max = 255;
};

absl::StatusOr<QuantRange> ReadQuantRange(const KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(int64_t bits, tf::GetIntAttrOr(ctx.node(), "num_bits", 8));
  TFJIT_ASSIGN_OR_RETURN(bool narrow, tf::GetBoolAttrOr(ctx.node(), "narrow_range", false));
  if (bits < 2 || bits > 16) {
    return KernelError(ctx, "num_bits must be between 2 and 16, inclusive, got %d", bits);
  }
  return QuantRange{narrow ? 1 : 0, (int64_t{1} << bits) - 1};
}

absl::Status CheckFloat(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (t.dtype() != DType::kFloat32) {
    return KernelError(ctx, "%s must be float32, got %s", what, t.ShapeString());
  }
  return absl::OkStatus();
}

// FakeQuantWithMinMaxArgs: x clamped to the nudged range and rounded to the grid; the
// multiply by 1 / scale is TF's (the Vars forms divide).
absl::Status FakeQuantArgsKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  TFJIT_ASSIGN_OR_RETURN(QuantRange q, ReadQuantRange(ctx));
  TFJIT_ASSIGN_OR_RETURN(float min, tf::GetFloatAttrOr(ctx.node(), "min", -6.f));
  TFJIT_ASSIGN_OR_RETURN(float max, tf::GetFloatAttrOr(ctx.node(), "max", 6.f));
  if (!(min < max)) {
    return KernelError(ctx, "min has to be smaller than max, was: %g >= %g", min, max);
  }
  const Tensor& x = ctx.input(0);
  TFJIT_RETURN_IF_ERROR(CheckFloat(ctx, x, "inputs"));
  const Nudged n = Nudge(min, max, q.quant_min, q.quant_max);
  const float inv = 1.0f / n.scale;
  Tensor out(DType::kFloat32, x.dims());
  const float* src = x.data<float>();
  float* dst = out.data<float>();
  ParallelFor(ctx, x.num_elements(), 6, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float shifted = std::max(std::min(src[i], n.max), n.min) - n.min;
      dst[i] = std::floor(shifted * inv + 0.5f) * n.scale + n.min;
    }
  });
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// The gradient of the Args form: passes gradients where the input is inside the nudged range.
absl::Status FakeQuantArgsGradientKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  TFJIT_ASSIGN_OR_RETURN(QuantRange q, ReadQuantRange(ctx));
  TFJIT_ASSIGN_OR_RETURN(float min, tf::GetFloatAttrOr(ctx.node(), "min", -6.f));
  TFJIT_ASSIGN_OR_RETURN(float max, tf::GetFloatAttrOr(ctx.node(), "max", 6.f));
  if (!(min < max)) {
    return KernelError(ctx, "min has to be smaller than max, was: %g >= %g", min, max);
  }
  const Tensor& g = ctx.input(0);
  const Tensor& x = ctx.input(1);
  TFJIT_RETURN_IF_ERROR(CheckFloat(ctx, g, "gradients"));
  TFJIT_RETURN_IF_ERROR(CheckFloat(ctx, x, "inputs"));
  if (g.dims() != x.dims()) {
    return KernelError(ctx, "gradient and input must be the same size: %s vs %s", g.ShapeString(),
                       x.ShapeString());
  }
  const Nudged n = Nudge(min, max, q.quant_min, q.quant_max);
  Tensor out(DType::kFloat32, x.dims());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const float v = x.data<float>()[i];
    out.data<float>()[i] = (v >= n.min && v <= n.max) ? g.data<float>()[i] : 0.0f;
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// Reads the min/max inputs of the Vars forms: scalars, or vectors of `channels` entries.
absl::Status ReadMinMax(const KernelContext& ctx, int first, int64_t channels,
                        std::vector<float>* min, std::vector<float>* max) {
  for (int i = first; i < first + 2; ++i) {
    const Tensor& t = ctx.input(i);
    TFJIT_RETURN_IF_ERROR(CheckFloat(ctx, t, i == first ? "min" : "max"));
    const bool ok = channels < 0 ? t.rank() == 0 : (t.rank() == 1 && t.dim(0) == channels);
    if (!ok) {
      return KernelError(ctx, "%s must be %s, got %s", i == first ? "min" : "max",
                         channels < 0 ? std::string("a scalar")
                                      : absl::StrCat("a vector of ", channels, " values"),
                         t.ShapeString());
    }
    std::vector<float>& v = i == first ? *min : *max;
    v.assign(t.data<float>(), t.data<float>() + t.num_elements());
  }
  return absl::OkStatus();
}

// FakeQuantWithMinMaxVars(PerChannel): the Args quantization with min/max from inputs
// (per last-dim channel for PerChannel), dividing by the scale as TF's functors do.
template <bool kPerChannel>
absl::Status FakeQuantVarsKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  TFJIT_ASSIGN_OR_RETURN(QuantRange q, ReadQuantRange(ctx));
  const Tensor& x = ctx.input(0);
  TFJIT_RETURN_IF_ERROR(CheckFloat(ctx, x, "inputs"));
  int64_t channels = -1;
  if (kPerChannel) {
    if (x.rank() < 1 || x.rank() > 4) {
      return KernelError(ctx, "Only inputs of dimensions 1, 2 or 4 supported, inputs are %s",
                         x.ShapeString());
    }
    channels = x.dims().back();
  }
  std::vector<float> min, max;
  TFJIT_RETURN_IF_ERROR(ReadMinMax(ctx, 1, channels, &min, &max));
  std::vector<Nudged> nudged;
  for (size_t c = 0; c < min.size(); ++c) {
    nudged.push_back(Nudge(min[c], max[c], q.quant_min, q.quant_max));
  }
  Tensor out(DType::kFloat32, x.dims());
  const int64_t width = kPerChannel ? channels : 1;
  const float* src = x.data<float>();
  float* dst = out.data<float>();
  ParallelFor(ctx, x.num_elements(), 8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const Nudged& n = nudged[static_cast<size_t>(kPerChannel ? i % width : 0)];
      const float shifted = std::max(std::min(src[i], n.max), n.min) - n.min;
      dst[i] = std::floor(shifted / n.scale + 0.5f) * n.scale + n.min;
    }
  });
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// The gradient of the Vars form: the input gradient inside the nudged range, and the sums of
// the gradients below min and above max.
absl::Status FakeQuantVarsGradientKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 4));
  TFJIT_ASSIGN_OR_RETURN(QuantRange q, ReadQuantRange(ctx));
  const Tensor& g = ctx.input(0);
  const Tensor& x = ctx.input(1);
  TFJIT_RETURN_IF_ERROR(CheckFloat(ctx, g, "gradients"));
  TFJIT_RETURN_IF_ERROR(CheckFloat(ctx, x, "inputs"));
  if (g.dims() != x.dims()) {
    return KernelError(ctx, "gradients and inputs must be the same size: %s vs %s", g.ShapeString(),
                       x.ShapeString());
  }
  std::vector<float> min, max;
  TFJIT_RETURN_IF_ERROR(ReadMinMax(ctx, 2, -1, &min, &max));
  const Nudged n = Nudge(min[0], max[0], q.quant_min, q.quant_max);
  Tensor dx(DType::kFloat32, x.dims()), dmin(DType::kFloat32, {}), dmax(DType::kFloat32, {});
  float below = 0, above = 0;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const float v = x.data<float>()[i], gi = g.data<float>()[i];
    dx.data<float>()[i] = (v >= n.min && v <= n.max) ? gi : 0.0f;
    if (v < n.min) below += gi;
    if (v > n.max) above += gi;
  }
  dmin.data<float>()[0] = below;
  dmax.data<float>()[0] = above;
  ctx.set_output(0, std::move(dx));
  ctx.set_output(1, std::move(dmin));
  ctx.set_output(2, std::move(dmax));
  return absl::OkStatus();
}

// ---- QuantizeAndDequantizeV2 ----

// TF's simulated integer quantization: the scale that maps [min, max] into the signed or
// unsigned num_bits grid without moving 0, then clamp, scale, round and scale back.
struct QdqParams {
  double min_q = 0, max_q = 0;
  bool half_up = false;
};

template <typename C>
void QdqRange(const QdqParams& p, C min_range, C max_range, C* lo, C* hi, C* scale, C* inv) {
  const C min_q = static_cast<C>(p.min_q), max_q = static_cast<C>(p.max_q);
  const C from_min = min_q * min_range > C(0) ? min_q / min_range : std::numeric_limits<C>::max();
  const C from_max = max_q * max_range > C(0) ? max_q / max_range : std::numeric_limits<C>::max();
  if (from_min < from_max) {
    *scale = from_min;
    *inv = min_range / min_q;
    *lo = min_range;
    *hi = max_q * *inv;
  } else {
    *scale = from_max;
    *inv = max_range / max_q;
    *lo = min_q * *inv;
    *hi = max_range;
  }
}

// The attrs: the integer grid [min_q, max_q], the rounding and the axis (-1: per tensor).
absl::StatusOr<QdqParams> ReadQdqParams(const KernelContext& ctx, const Tensor& x, int64_t* axis) {
  TFJIT_ASSIGN_OR_RETURN(bool is_signed, tf::GetBoolAttrOr(ctx.node(), "signed_input", true));
  TFJIT_ASSIGN_OR_RETURN(int64_t bits, tf::GetIntAttrOr(ctx.node(), "num_bits", 8));
  TFJIT_ASSIGN_OR_RETURN(std::string mode,
                         tf::GetStringAttrOr(ctx.node(), "round_mode", "HALF_TO_EVEN"));
  TFJIT_ASSIGN_OR_RETURN(bool narrow, tf::GetBoolAttrOr(ctx.node(), "narrow_range", false));
  TFJIT_ASSIGN_OR_RETURN(*axis, tf::GetIntAttrOr(ctx.node(), "axis", -1));
  if (bits <= 0 || bits > (is_signed ? 62 : 63)) {
    return KernelError(ctx, "num_bits is out of range: %d with signed_input %s", bits,
                       is_signed ? "true" : "false");
  }
  if (mode != "HALF_TO_EVEN" && mode != "HALF_UP") {
    return KernelError(ctx, "round_mode is not valid, got %s (HALF_TO_EVEN or HALF_UP)", mode);
  }
  if (*axis < -1 || *axis >= x.rank()) {
    return KernelError(ctx,
                       "Axis requested is larger than input dimensions. Axis: %d Input "
                       "Dimensions: %d",
                       *axis, x.rank());
  }
  QdqParams p;
  p.half_up = mode == "HALF_UP";
  const double half_range = std::ldexp(1.0, static_cast<int>(bits) - 1);
  p.min_q = is_signed ? (narrow ? 1 - half_range : -half_range) : 0;
  p.max_q = is_signed ? half_range - 1 : std::ldexp(1.0, static_cast<int>(bits)) - 1;
  return p;
}

// One channel (elements k with (k / inner) % depth == c; everything for per-tensor).
template <typename T>
absl::Status QdqChannel(const KernelContext& ctx, const QdqParams& p, bool given, int64_t c,
                        int64_t depth, int64_t inner, Tensor& out) {
  using C = ComputeType<T>;
  const Tensor& x = ctx.input(0);
  const T* src = x.data<T>();
  auto at = [&](int64_t k) { return (k / inner) % depth == c; };
  C lo = std::numeric_limits<C>::infinity(), hi = -std::numeric_limits<C>::infinity();
  if (given) {
    lo = C(ctx.input(1).data<T>()[c]);
    hi = C(ctx.input(2).data<T>()[c]);
    if (lo > hi) {
      return KernelError(ctx, "Invalid range: input_min %g > input_max %g", static_cast<double>(lo),
                         static_cast<double>(hi));
    }
  } else {
    for (int64_t k = 0; k < x.num_elements(); ++k) {
      if (at(k)) lo = std::min(lo, C(src[k])), hi = std::max(hi, C(src[k]));
    }
  }
  C min_r, max_r, scale, inv;
  QdqRange<C>(p, lo, hi, &min_r, &max_r, &scale, &inv);
  for (int64_t k = 0; k < x.num_elements(); ++k) {
    if (!at(k)) continue;
    const C v = std::min(std::max(C(src[k]), min_r), max_r) * scale;
    const C r = p.half_up ? std::floor(v + C(0.5)) : std::nearbyint(v);
    out.data<T>()[k] = static_cast<T>(r * inv);
  }
  return absl::OkStatus();
}

absl::Status QuantizeAndDequantizeV2Kernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& x = ctx.input(0);
  int64_t axis = -1;
  TFJIT_ASSIGN_OR_RETURN(QdqParams p, ReadQdqParams(ctx, x, &axis));
  TFJIT_ASSIGN_OR_RETURN(bool given, tf::GetBoolAttrOr(ctx.node(), "range_given", false));
  const int64_t depth = axis == -1 ? 1 : x.dim(static_cast<int>(axis));
  int64_t inner = 1;
  for (int d = static_cast<int>(axis) + 1; axis != -1 && d < x.rank(); ++d) inner *= x.dim(d);
  for (int i = 1; i <= 2 && given; ++i) {
    const Tensor& r = ctx.input(i);
    const bool ok = axis == -1 ? r.rank() == 0 : (r.rank() == 1 && r.dim(0) == depth);
    if (!ok || r.dtype() != x.dtype()) {
      return KernelError(ctx, "%s must be %s of the input's dtype, got %s",
                         i == 1 ? "input_min" : "input_max",
                         axis == -1 ? "a scalar" : "a vector of the axis' size", r.ShapeString());
    }
  }
  Tensor out(x.dtype(), x.dims());
  absl::Status status;
  const bool ok = DispatchFloat(x.dtype(), [&](auto tag) {
    for (int64_t c = 0; c < depth && status.ok(); ++c) {
      status = QdqChannel<decltype(tag)>(ctx, p, given, c, depth, inner, out);
    }
  });
  if (!ok) return UnsupportedDType(ctx, x.dtype(), TypeSetName(TypeSet::kFloat));
  TFJIT_RETURN_IF_ERROR(status);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterArrayQuantizeKernels(KernelRegistry& registry) {
  registry.Register("FakeQuantWithMinMaxArgs", &FakeQuantArgsKernel);
  registry.Register("FakeQuantWithMinMaxArgsGradient", &FakeQuantArgsGradientKernel);
  registry.Register("FakeQuantWithMinMaxVars", &FakeQuantVarsKernel<false>);
  registry.Register("FakeQuantWithMinMaxVarsPerChannel", &FakeQuantVarsKernel<true>);
  registry.Register("FakeQuantWithMinMaxVarsGradient", &FakeQuantVarsGradientKernel);
  registry.Register("QuantizeAndDequantizeV2", &QuantizeAndDequantizeV2Kernel);
}

}  // namespace tfjit::runtime
