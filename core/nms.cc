// TF's non-max suppression (nms.h).
#include "core/nms.h"

#include <algorithm>
#include <cmath>
#include <queue>

namespace tfjit::nms {
namespace {

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

}  // namespace

// Overlaps are checked against each selected box once.
Selection Select(const float* box_data, const float* scores, int64_t n, int64_t max_output,
                 float iou_threshold, float score_threshold, float sigma) {
  std::vector<Box> boxes(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float* b = box_data + i * 4;
    boxes[static_cast<size_t>(i)] = {b[0], b[1], b[2], b[3]};
  }
  struct Candidate {
    int32_t index;
    float score;
    size_t checked;  // selected boxes [0, checked) were already applied to `score`
  };
  auto later = [](const Candidate& a, const Candidate& b) {
    return a.score < b.score || (a.score == b.score && a.index > b.index);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(later)> queue(later);
  for (int64_t i = 0; i < n; ++i) {
    if (scores[i] > score_threshold) queue.push({static_cast<int32_t>(i), scores[i], 0});
  }
  const float scale = sigma > 0.0f ? -0.5f / sigma : 0.0f;
  Selection r;
  while (static_cast<int64_t>(r.indices.size()) < max_output && !queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    const float original = c.score;
    bool suppressed = false;
    // Most recently selected boxes first: overlapping boxes tend to have close scores.
    for (size_t j = r.indices.size(); j-- > c.checked;) {
      const float iou =
          IoU(boxes[static_cast<size_t>(c.index)], boxes[static_cast<size_t>(r.indices[j])]);
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

void SelectPadded(const float* boxes, const float* scores, int64_t n, int64_t max_output,
                  float iou_threshold, float score_threshold, float sigma, int32_t* indices,
                  int32_t* valid, float* selected_scores) {
  const Selection s = Select(boxes, scores, n, max_output, iou_threshold, score_threshold, sigma);
  std::fill(indices, indices + max_output, 0);
  std::copy(s.indices.begin(), s.indices.end(), indices);
  *valid = static_cast<int32_t>(s.indices.size());
  if (selected_scores != nullptr) {
    std::fill(selected_scores, selected_scores + max_output, 0.0f);
    std::copy(s.scores.begin(), s.scores.end(), selected_scores);
  }
}

}  // namespace tfjit::nms
