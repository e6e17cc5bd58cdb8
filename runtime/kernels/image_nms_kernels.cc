// The NonMaxSuppression family (image ops whose output size depends on input values), with
// the semantics of TF's non_max_suppression_op.cc; the selection is core/nms.h's, which the
// compiled NonMaxSuppressionV4 (padded) calls too.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <queue>
#include <string>
#include <vector>

#include "core/nms.h"
#include "frontend/attr.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

// ---- NonMaxSuppression ----

absl::StatusOr<float> ScalarFloat(const KernelContext& ctx, int i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (t.rank() != 0) return KernelError(ctx, "%s must be 0-D, got shape %s", what, t.ShapeString());
  if (!IsFloatingDType(t.dtype())) {
    return KernelError(ctx, "%s must be a floating-point scalar, got %s", what, t.ShapeString());
  }
  return static_cast<float>(ElementAsDouble(t, 0));
}

// NonMaxSuppression's scalar arguments (defaults where a version lacks them).
struct NmsArgs {
  int64_t max_output = 0;
  float iou_threshold = 0.5f;
  float score_threshold = std::numeric_limits<float>::lowest();
  float sigma = 0.0f;
};

// Reads and checks max_output_size, iou_threshold (an attr in version 1), score_threshold
// (version 3 on) and soft_nms_sigma (version 5).
template <int kVersion>
absl::StatusOr<NmsArgs> ReadNmsArgs(const KernelContext& ctx) {
  NmsArgs a;
  const Tensor& max_t = ctx.input(2);
  if (max_t.rank() != 0 || !IsIntegerDType(max_t.dtype())) {
    return KernelError(ctx, "max_output_size must be 0-D, got shape %s", max_t.ShapeString());
  }
  a.max_output = ElementAsInt64(max_t, 0);
  if (a.max_output < 0) {
    return KernelError(ctx, "max_output_size must be non-negative, got %d", a.max_output);
  }
  if constexpr (kVersion == 1) {
    TFJIT_ASSIGN_OR_RETURN(a.iou_threshold, tf::GetFloatAttrOr(ctx.node(), "iou_threshold", 0.5f));
  } else {
    TFJIT_ASSIGN_OR_RETURN(a.iou_threshold, ScalarFloat(ctx, 3, "iou_threshold"));
  }
  if (!(a.iou_threshold >= 0.0f && a.iou_threshold <= 1.0f)) {
    return KernelError(ctx, "iou_threshold must be in [0, 1], got %g", a.iou_threshold);
  }
  if (kVersion >= 3) {
    TFJIT_ASSIGN_OR_RETURN(a.score_threshold, ScalarFloat(ctx, 4, "score_threshold"));
  }
  if (kVersion == 5) {
    TFJIT_ASSIGN_OR_RETURN(a.sigma, ScalarFloat(ctx, 5, "soft_nms_sigma"));
    if (!(a.sigma >= 0.0f)) return KernelError(ctx, "soft_nms_sigma must be non-negative");
  }
  return a;
}

// Checks boxes [n, 4] and scores [n]: one floating-point dtype.
absl::Status CheckNmsBoxes(const KernelContext& ctx, const Tensor& boxes_t,
                           const Tensor& scores_t) {
  if (!IsFloatingDType(boxes_t.dtype()) || boxes_t.dtype() != scores_t.dtype()) {
    return UnsupportedDType(ctx, boxes_t.dtype(), "float16 and float32 boxes and scores");
  }
  if (boxes_t.rank() != 2)
    return KernelError(ctx, "boxes must be 2-D, got %s", boxes_t.ShapeString());
  if (boxes_t.dim(1) != 4) {
    return KernelError(ctx, "boxes must have 4 columns, got %s", boxes_t.ShapeString());
  }
  const int64_t n = boxes_t.dim(0);
  if (scores_t.rank() != 1)
    return KernelError(ctx, "scores must be 1-D, got %s", scores_t.ShapeString());
  if (scores_t.dim(0) != n) {
    return KernelError(ctx, "scores has incompatible shape: %s for boxes %s",
                       scores_t.ShapeString(), boxes_t.ShapeString());
  }
  return absl::OkStatus();
}

// Versions: 1 (iou_threshold an attr), 2 (no score_threshold), 3, 4 (padding, valid_outputs),
// 5 (+soft_nms_sigma and selected_scores).
template <int kVersion>
absl::Status NmsKernel(KernelContext& ctx) {
  constexpr int kInputs = kVersion == 1 ? 3 : kVersion == 2 ? 4 : kVersion == 5 ? 6 : 5;
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, kInputs));
  const Tensor& boxes_t = ctx.input(0);
  const Tensor& scores_t = ctx.input(1);
  TFJIT_ASSIGN_OR_RETURN(const NmsArgs a, ReadNmsArgs<kVersion>(ctx));
  const int64_t max_output = a.max_output;
  TFJIT_RETURN_IF_ERROR(CheckNmsBoxes(ctx, boxes_t, scores_t));
  const int64_t n = boxes_t.dim(0);
  std::vector<float> boxes(static_cast<size_t>(n * 4));
  std::vector<float> scores(static_cast<size_t>(n));
  for (int64_t i = 0; i < n * 4; ++i) {
    boxes[static_cast<size_t>(i)] = static_cast<float>(ElementAsDouble(boxes_t, i));
  }
  for (int64_t i = 0; i < n; ++i) {
    scores[static_cast<size_t>(i)] = static_cast<float>(ElementAsDouble(scores_t, i));
  }
  nms::Selection r = nms::Select(boxes.data(), scores.data(), n, max_output, a.iou_threshold,
                                 a.score_threshold, a.sigma);
  const int32_t valid = static_cast<int32_t>(r.indices.size());
  bool pad = false;
  if (kVersion >= 4) {
    TFJIT_ASSIGN_OR_RETURN(pad, tf::GetBoolAttrOr(ctx.node(), "pad_to_max_output_size", false));
  }
  if (pad) {
    TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, DType::kInt32, {max_output}, "padded indices"));
    r.indices.resize(static_cast<size_t>(max_output), 0);
    r.scores.resize(static_cast<size_t>(max_output), 0.0f);
  }
  const int64_t count = static_cast<int64_t>(r.indices.size());
  ctx.set_output(0, Tensor::FromVector<int32_t>(DType::kInt32, {count}, r.indices));
  if (kVersion == 5) {
    Tensor s(scores_t.dtype(), {count});
    DispatchFloat(s.dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (int64_t i = 0; i < count; ++i)
        s.data<T>()[i] = static_cast<T>(r.scores[static_cast<size_t>(i)]);
    });
    ctx.set_output(1, std::move(s));
  }
  if (kVersion >= 4) {
    ctx.set_output(kVersion == 5 ? 2 : 1, Tensor::FromVector<int32_t>(DType::kInt32, {}, {valid}));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterNmsKernels(KernelRegistry& registry) {
  registry.Register("NonMaxSuppression", &NmsKernel<1>);
  registry.Register("NonMaxSuppressionV2", &NmsKernel<2>);
  registry.Register("NonMaxSuppressionV3", &NmsKernel<3>);
  registry.Register("NonMaxSuppressionV4", &NmsKernel<4>);
  registry.Register("NonMaxSuppressionV5", &NmsKernel<5>);
}

}  // namespace tfjit::runtime
