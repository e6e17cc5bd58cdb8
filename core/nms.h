// TF's non-max suppression (greedy, with soft-NMS): the one selection routine behind the
// fallback kernels of the NonMaxSuppression family and the evaluator's and CPU backend's
// custom-call `tfjit.non_max_suppression` (HLO.md, custom-call), which compiles
// NonMaxSuppressionV4 with pad_to_max_output_size as XLA does, so every path selects the same
// boxes by construction.
#ifndef TFJIT_CORE_NMS_H_
#define TFJIT_CORE_NMS_H_

#include <cstdint>
#include <vector>

namespace tfjit::nms {

// Custom-call target: operands boxes f32[n, 4], scores f32[n], iou_threshold f32[],
// score_threshold f32[] → (s32[k], s32[]); with a fifth operand soft_nms_sigma f32[] →
// (s32[k], s32[], f32[k]), the selected boxes' decayed scores third (HLO.md).
inline constexpr char kNmsTarget[] = "tfjit.non_max_suppression";

struct Selection {
  std::vector<int32_t> indices;  // selected boxes, best first
  std::vector<float> scores;     // their (soft-NMS decayed) scores
};

// Greedy selection by score (ties: lower index first) among boxes [n, 4] (y1, x1, y2, x2, the
// corners in either order) whose score exceeds score_threshold. A candidate is dropped when
// its IoU with a selected box reaches iou_threshold; with sigma > 0 (soft-NMS) each overlap
// below the threshold scales its score by exp(-iou^2 / (2 sigma)) and it re-enters the queue
// while its score stays above score_threshold. At most max_output boxes.
Selection Select(const float* boxes, const float* scores, int64_t n, int64_t max_output,
                 float iou_threshold, float score_threshold, float sigma);

// The padded form (the custom-call's): indices[max_output] with the selection first and zeros
// after it, *valid the selection's size, and when selected_scores is not null their scores
// the same way (zeros after them).
void SelectPadded(const float* boxes, const float* scores, int64_t n, int64_t max_output,
                  float iou_threshold, float score_threshold, float sigma, int32_t* indices,
                  int32_t* valid, float* selected_scores);

}  // namespace tfjit::nms

#endif  // TFJIT_CORE_NMS_H_
