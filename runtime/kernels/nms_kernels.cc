// Kernels whose output shape depends on input values, so they never compile (tf2hlo reports
// them as runtime-only): NonMaxSuppressionV2..V5 and SparseToDense. Semantics follow TF's
// non_max_suppression_op.cc and sparse_to_dense_op.cc.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <queue>
#include <string>
#include <vector>

#include "frontend/attr.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

// ---- NonMaxSuppression ----

// A box as given (corners in either order), read as float.
struct Box {
  float y1, x1, y2, x2;
};

// Intersection over union with normalised corners; 0 when either box has no area (TF).
float IoU(const Box& a, const Box& b) {
  const float ay0 = std::min(a.y1, a.y2), ay1 = std::max(a.y1, a.y2);
  const float ax0 = std::min(a.x1, a.x2), ax1 = std::max(a.x1, a.x2);
  const float by0 = std::min(b.y1, b.y2), by1 = std::max(b.y1, b.y2);
  const float bx0 = std::min(b.x1, b.x2), bx1 = std::max(b.x1, b.x2);
  const float area_a = (ay1 - ay0) * (ax1 - ax0);
  const float area_b = (by1 - by0) * (bx1 - bx0);
  if (area_a <= 0.0f || area_b <= 0.0f) return 0.0f;
  const float ih = std::max(std::min(ay1, by1) - std::max(ay0, by0), 0.0f);
  const float iw = std::max(std::min(ax1, bx1) - std::max(ax0, bx0), 0.0f);
  const float inter = ih * iw;
  return inter / (area_a + area_b - inter);
}

struct NmsResult {
  std::vector<int32_t> indices;
  std::vector<float> scores;
};

// Greedy selection by score (ties: lower index first). A candidate is dropped when its IoU
// with a selected box reaches iou_threshold; with sigma > 0 (soft-NMS) each overlap below the
// threshold scales its score by exp(-iou^2 / (2 sigma)) and it re-enters the queue while its
// score stays above score_threshold. Overlaps are checked against each selected box once.
NmsResult NonMaxSuppression(const std::vector<Box>& boxes, const std::vector<float>& scores,
                            int64_t max_output, float iou_threshold, float score_threshold,
                            float sigma) {
  struct Candidate {
    int32_t index;
    float score;
    size_t checked;  // selected boxes [0, checked) were already applied to `score`
  };
  auto later = [](const Candidate& a, const Candidate& b) {
    return a.score < b.score || (a.score == b.score && a.index > b.index);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(later)> queue(later);
  for (size_t i = 0; i < scores.size(); ++i) {
    if (scores[i] > score_threshold) queue.push({static_cast<int32_t>(i), scores[i], 0});
  }
  const float scale = sigma > 0.0f ? -0.5f / sigma : 0.0f;
  NmsResult r;
  while (static_cast<int64_t>(r.indices.size()) < max_output && !queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    const float original = c.score;
    bool suppressed = false;
    // Most recently selected boxes first: overlapping boxes tend to have close scores.
    for (size_t j = r.indices.size(); j-- > c.checked;) {
      const float iou = IoU(boxes[static_cast<size_t>(c.index)],
                            boxes[static_cast<size_t>(r.indices[j])]);
      if (iou >= iou_threshold) {
        suppressed = true;
        break;
      }
      c.score *= std::exp(scale * iou * iou);
      if (c.score <= score_threshold) break;
    }
    c.checked = r.indices.size();
    if (suppressed) continue;
    if (c.score == original) {
      r.indices.push_back(c.index);
      r.scores.push_back(c.score);
    } else if (c.score > score_threshold) {
      queue.push(c);
    }
  }
  return r;
}

absl::StatusOr<float> ScalarFloat(const KernelContext& ctx, int i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (t.rank() != 0) return KernelError(ctx, "%s must be 0-D, got shape %s", what, t.ShapeString());
  if (!IsFloatingDType(t.dtype())) {
    return KernelError(ctx, "%s must be a floating-point scalar, got %s", what, t.ShapeString());
  }
  return static_cast<float>(ElementAsDouble(t, 0));
}

// Versions: 1 (iou_threshold an attr), 2 (no score_threshold), 3, 4 (padding, valid_outputs),
// 5 (+soft_nms_sigma and selected_scores).
template <int kVersion>
absl::Status NmsKernel(KernelContext& ctx) {
  constexpr int kInputs = kVersion == 1 ? 3 : kVersion == 2 ? 4 : kVersion == 5 ? 6 : 5;
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, kInputs));
  const Tensor& boxes_t = ctx.input(0);
  const Tensor& scores_t = ctx.input(1);
  const Tensor& max_t = ctx.input(2);
  if (max_t.rank() != 0 || !IsIntegerDType(max_t.dtype())) {
    return KernelError(ctx, "max_output_size must be 0-D, got shape %s", max_t.ShapeString());
  }
  const int64_t max_output = ElementAsInt64(max_t, 0);
  if (max_output < 0) {
    return KernelError(ctx, "max_output_size must be non-negative, got %d", max_output);
  }
  float iou_threshold = 0.5f;
  if constexpr (kVersion == 1) {
    TFJIT_ASSIGN_OR_RETURN(iou_threshold, tf::GetFloatAttrOr(ctx.node(), "iou_threshold", 0.5f));
  } else {
    TFJIT_ASSIGN_OR_RETURN(iou_threshold, ScalarFloat(ctx, 3, "iou_threshold"));
  }
  if (!(iou_threshold >= 0.0f && iou_threshold <= 1.0f)) {
    return KernelError(ctx, "iou_threshold must be in [0, 1], got %g", iou_threshold);
  }
  float score_threshold = std::numeric_limits<float>::lowest();
  if (kVersion >= 3) {
    TFJIT_ASSIGN_OR_RETURN(score_threshold, ScalarFloat(ctx, 4, "score_threshold"));
  }
  float sigma = 0.0f;
  if (kVersion == 5) {
    TFJIT_ASSIGN_OR_RETURN(sigma, ScalarFloat(ctx, 5, "soft_nms_sigma"));
    if (!(sigma >= 0.0f)) return KernelError(ctx, "soft_nms_sigma must be non-negative");
  }
  if (!IsFloatingDType(boxes_t.dtype()) || boxes_t.dtype() != scores_t.dtype()) {
    return UnsupportedDType(ctx, boxes_t.dtype(), "float16 and float32 boxes and scores");
  }
  if (boxes_t.rank() != 2) return KernelError(ctx, "boxes must be 2-D, got %s", boxes_t.ShapeString());
  if (boxes_t.dim(1) != 4) {
    return KernelError(ctx, "boxes must have 4 columns, got %s", boxes_t.ShapeString());
  }
  const int64_t n = boxes_t.dim(0);
  if (scores_t.rank() != 1) return KernelError(ctx, "scores must be 1-D, got %s", scores_t.ShapeString());
  if (scores_t.dim(0) != n) {
    return KernelError(ctx, "scores has incompatible shape: %s for boxes %s",
                       scores_t.ShapeString(), boxes_t.ShapeString());
  }
  std::vector<Box> boxes(static_cast<size_t>(n));
  std::vector<float> scores(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    auto v = [&](int64_t k) { return static_cast<float>(ElementAsDouble(boxes_t, i * 4 + k)); };
    boxes[static_cast<size_t>(i)] = {v(0), v(1), v(2), v(3)};
    scores[static_cast<size_t>(i)] = static_cast<float>(ElementAsDouble(scores_t, i));
  }
  NmsResult r = NonMaxSuppression(boxes, scores, max_output, iou_threshold, score_threshold, sigma);
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
      for (int64_t i = 0; i < count; ++i) s.data<T>()[i] = static_cast<T>(r.scores[static_cast<size_t>(i)]);
    });
    ctx.set_output(1, std::move(s));
  }
  if (kVersion >= 4) {
    ctx.set_output(kVersion == 5 ? 2 : 1, Tensor::FromVector<int32_t>(DType::kInt32, {}, {valid}));
  }
  return absl::OkStatus();
}

// ---- SparseToDense ----

// dense = default_value everywhere, then dense[sparse_indices[i]] = sparse_values[i] (or the
// scalar sparse_values). With validate_indices, indices must be in bounds, sorted
// lexicographically and unique, as TF checks; without it, out-of-bounds indices still fail.
absl::Status SparseToDenseKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 4));
  const Tensor& idx = ctx.input(0);
  const Tensor& shape_t = ctx.input(1);
  const Tensor& values = ctx.input(2);
  const Tensor& def = ctx.input(3);
  if (idx.dtype() != DType::kInt32 && idx.dtype() != DType::kInt64) {
    return KernelError(ctx, "sparse_indices must be int32 or int64, got %s", DTypeName(idx.dtype()));
  }
  if (idx.rank() > 2) {
    return KernelError(ctx, "sparse_indices should be a scalar, vector, or matrix, got shape %s",
                       idx.ShapeString());
  }
  const int64_t num_elems = idx.rank() > 0 ? idx.dim(0) : 1;
  const int64_t num_dims = idx.rank() > 1 ? idx.dim(1) : 1;
  if (shape_t.rank() != 1) {
    return KernelError(ctx, "output_shape should be a vector, got shape %s", shape_t.ShapeString());
  }
  std::vector<int64_t> dims;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, shape_t, "output_shape", &dims));
  if (static_cast<int64_t>(dims.size()) != num_dims) {
    return KernelError(ctx, "output_shape has incorrect number of elements: %d should be: %d",
                       dims.size(), num_dims);
  }
  for (int64_t d : dims) {
    if (d < 0) return KernelError(ctx, "output_shape has a negative dimension: %s", DimsString(dims));
  }
  if (!(values.rank() == 0 || (values.rank() == 1 && values.dim(0) == num_elems))) {
    return KernelError(ctx, "sparse_values has incorrect shape %s, should be [] or [%d]",
                       values.ShapeString(), num_elems);
  }
  if (def.rank() != 0) {
    return KernelError(ctx, "default_value should be a scalar, got shape %s", def.ShapeString());
  }
  if (values.dtype() != def.dtype() || DTypeSize(values.dtype()) == 0) {
    return UnsupportedDType(ctx, values.dtype(), "numeric types (sparse_values and "
                            "default_value of one type)");
  }
  TFJIT_ASSIGN_OR_RETURN(bool validate, tf::GetBoolAttrOr(ctx.node(), "validate_indices", true));
  Tensor out(values.dtype(), dims);
  const size_t elem = DTypeSize(values.dtype());
  char* y = static_cast<char*>(out.raw_data());
  for (int64_t i = 0; i < out.num_elements(); ++i) std::memcpy(y + i * elem, def.raw_data(), elem);
  std::vector<int64_t> prev, cur(static_cast<size_t>(num_dims));
  for (int64_t i = 0; i < num_elems; ++i) {
    int64_t flat = 0;
    bool in_bounds = true;
    for (int64_t d = 0; d < num_dims; ++d) {
      cur[static_cast<size_t>(d)] = ElementAsInt64(idx, i * num_dims + d);
      const int64_t v = cur[static_cast<size_t>(d)];
      in_bounds = in_bounds && v >= 0 && v < dims[static_cast<size_t>(d)];
      flat = flat * dims[static_cast<size_t>(d)] + v;
    }
    if (!in_bounds) {
      return KernelError(ctx, "indices[%d] = %s is out of bounds: need 0 <= index < %s", i,
                         DimsString(cur), DimsString(dims));
    }
    if (validate && i > 0) {
      if (cur == prev) return KernelError(ctx, "indices[%d] = %s is repeated", i, DimsString(cur));
      if (cur < prev) return KernelError(ctx, "indices[%d] = %s is out of order", i, DimsString(cur));
    }
    prev = cur;
    const char* src = static_cast<const char*>(values.raw_data()) +
                      (values.rank() == 0 ? 0 : static_cast<size_t>(i) * elem);
    std::memcpy(y + static_cast<size_t>(flat) * elem, src, elem);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterNmsKernels(KernelRegistry& registry) {
  registry.Register("NonMaxSuppression", &NmsKernel<1>);
  registry.Register("NonMaxSuppressionV2", &NmsKernel<2>);
  registry.Register("NonMaxSuppressionV3", &NmsKernel<3>);
  registry.Register("NonMaxSuppressionV4", &NmsKernel<4>);
  registry.Register("NonMaxSuppressionV5", &NmsKernel<5>);
  registry.Register("SparseToDense", &SparseToDenseKernel);
}

}  // namespace tfjit::runtime
